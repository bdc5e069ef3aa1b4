"""The book's formulas typeset when it is built (book/_ext/typeset_math.py and typeset_math.cjs).

The script dissolves MathJax's groups into the glyphs they hold (half the elements of a formula): here
every glyph and rule of a set of formulas is found, with and without that, at the same place (the
product of the transforms above it, computed here), so the page draws what MathJax drew. The Python
side puts each formula in its place and the page's glyphs at the top of its body, from a cache.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import typeset_math  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not typeset_math.MATHJAX_PACKAGE.is_file(),
    reason="needs Node.js and node_modules (`make install`)",
)

#: Formulas with every construct MathJax draws with nested groups: scripts, fractions, roots, stretchy
#: delimiters, matrices, alignments, accents, operators, limits, text, and the book's own notation.
FORMULAS = [
    (r"x^2 + \frac{a}{b}", False),
    (r"\operatorname{erf}(x) = \frac{2}{\sqrt{\pi}} \int_0^x e^{-t^2}\,dt", True),
    (r"\left( \sum_{\ell=1}^{L} \frac{e^{\lambda \langle k, x_\ell \rangle}}{Z} \right)^{1/2}", True),
    (r"\begin{pmatrix} \kappa & \nu \\ \theta & \eta \end{pmatrix}", True),
    (r"\begin{aligned} R(\lambda) &= \gamma^2 + \varepsilon^2 - 2\,\mathbb{E}[y \hat y] \\ &\le \tfrac12 \end{aligned}", True),
    (r"\hat{\mathcal R}_\lambda(k, v) \to \min_{\|k\| = \|v\| = 1}", False),
    (r"\sqrt[3]{\frac{1 + \sqrt{d}}{\log d}} \overset{d\to\infty}{\longrightarrow} 0", True),
    (r"\mathbb{P}\bigl(J_0 = \ell \mid X\bigr) \propto \pi_\ell \exp\Bigl(\tfrac{q}{\gamma^2} \langle k^\star, x_\ell\rangle\Bigr)", True),
    (r"\text{risk} \approx 0.08 \pm 3\times 10^{-4}", False),
    (r"\underbrace{a + b}_{\text{two}} + \overline{c} + \vec v + \widetilde{w}", True),
]


def _node(request: dict, keep_groups: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SLR_MATH_KEEP_GROUPS"}
    if keep_groups:
        env["SLR_MATH_KEEP_GROUPS"] = "1"
    result = subprocess.run(["node", str(typeset_math.SCRIPT)], input=json.dumps(request), capture_output=True,
                            text=True, env=env, check=True, cwd=str(ROOT))
    return json.loads(result.stdout)


def _matrix(transform: str) -> np.ndarray:
    """The 3 x 3 matrix of an SVG transform list."""
    m = np.eye(3)
    for name, args in re.findall(r"(\w+)\(([^)]*)\)", transform or ""):
        v = [float(a) for a in re.split(r"[\s,]+", args.strip()) if a]
        if name == "translate":
            t = np.array([[1, 0, v[0]], [0, 1, v[1] if len(v) > 1 else 0], [0, 0, 1]])
        elif name == "scale":
            t = np.diag([v[0], v[1] if len(v) > 1 else v[0], 1])
        elif name == "matrix":
            t = np.array([[v[0], v[2], v[4]], [v[1], v[3], v[5]], [0, 0, 1]])
        elif name == "rotate":
            c, s = math.cos(math.radians(v[0])), math.sin(math.radians(v[0]))
            t = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        else:
            raise AssertionError(f"a transform this test does not know: {name}")
        m = m @ t
    return m


def _leaves(svg_html: str) -> list[tuple[str, tuple, np.ndarray]]:
    """(tag, attributes, placement) of every glyph (<use>) and rule (<rect>, <path>) of a formula."""
    svg = re.search(r"<svg.*</svg>", svg_html, re.S).group(0)
    root = ET.fromstring(svg)
    out = []

    def walk(element, placement):
        placement = placement @ _matrix(element.get("transform"))
        tag = element.tag.split("}")[-1]
        if tag in ("use", "rect", "path"):
            attributes = tuple(sorted((k.split("}")[-1], v) for k, v in element.attrib.items()
                                      if k != "transform" and not k.startswith("data-")))
            out.append((tag, attributes, placement))
        for child in element:
            walk(child, placement)

    walk(root, np.eye(3))
    return out


def test_dissolving_groups_keeps_every_glyph_in_its_place():
    request = {"formulas": [[tex, display] for tex, display in FORMULAS]}
    ours, mathjax = _node(request, keep_groups=False), _node(request, keep_groups=True)
    assert ours["errors"] == [] and mathjax["errors"] == []
    fewer = 0
    for (tex, _), a, b in zip(FORMULAS, ours["svg"], mathjax["svg"]):
        leaves_a, leaves_b = _leaves(a), _leaves(b)
        assert [x[:2] for x in leaves_a] == [x[:2] for x in leaves_b], tex
        for (_, _, pa), (_, _, pb) in zip(leaves_a, leaves_b):
            # MathJax writes its numbers to 0.1 of its unit (1/1000 em); summed translations are rounded so
            np.testing.assert_allclose(pa, pb, atol=0.1, rtol=1e-9, err_msg=tex)
        fewer += b.count("<g") - a.count("<g")
        assert "data-" not in re.search(r"<svg.*</svg>", a, re.S).group(0), tex
    assert fewer > 2 * len(FORMULAS)  # the groups were dissolved (most of them)


def test_a_page_gets_its_formulas_and_the_glyphs_they_use(tmp_path):
    cache = tmp_path / "cache.json"
    page = ('<html><body class="x"><p>Inline <span class="math notranslate nohighlight">\\(x &lt; 1\\)</span>.</p>'
            '<div class="math notranslate nohighlight" id="equation-e"><span class="eqno">(1.1)<a class="headerlink" '
            'href="#equation-e">#</a></span>\\[\\frac{a}{b}\\]</div></body></html>')
    typesetter = typeset_math.Typesetter(cache)
    typesetter.typeset({name: "page" for name in typeset_math.formulas_of(page)})
    assert typesetter.typeset_now == 2 and typesetter.css
    out = typeset_math.render(page, typesetter)
    assert "\\(" not in out and "\\[" not in out
    assert out.count('<mjx-container class="MathJax" jax="SVG"') == 2
    assert '<span class="eqno">(1.1)' in out  # the number and its link stay
    used = set(re.findall(r'xlink:href="#([^"]+)"', out))
    defined = set(re.findall(r'<path id="([^"]+)"', out))
    assert used and used == defined  # every glyph the page uses, and only those
    assert out.index(typeset_math.GLYPHS_ID) < out.index("<p>")  # at the top of the body
    assert typeset_math.render(out, typesetter) == out  # rendered once: nothing more to do
    typesetter.save()
    again = typeset_math.Typesetter(cache)
    again.typeset({name: "page" for name in typeset_math.formulas_of(page)})
    assert again.typeset_now == 0  # from the cache


def test_a_formula_mathjax_cannot_typeset_fails_naming_it(tmp_path):
    typesetter = typeset_math.Typesetter(tmp_path / "cache.json")
    with pytest.raises(Exception, match=r"book/x\.html: '\\\\frac\{': Missing close brace"):
        typesetter.typeset({"I:\\frac{": "book/x.html"})

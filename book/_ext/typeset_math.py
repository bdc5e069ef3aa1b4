"""Sphinx extension: every formula typeset when the book is built, not in the reader's browser.

MathJax in the browser kept a reader waiting: a chapter showed its TeX source until MathJax had
typeset the whole page, 3 s on a laptop and 15-28 s on a mid-range phone (issue 40). Here the same
MathJax (``mathjax-full`` 3.2.2 from the npm registry, pinned in ``package-lock.json``, run by Node)
typesets each formula into SVG once, at build time, and the page arrives with its formulas drawn.

* **The same formulas.** MathJax's TeX input with all its packages, its SVG output and its TeX fonts'
  outlines: a formula has the look it had when MathJax typeset it in the browser. Its size is in ``ex``,
  so it scales with the text around it; its colour is the text's (``currentColor``), light or dark.
* **What a screen reader reads.** Each formula carries MathJax's assistive MathML beside its SVG (which
  is ``aria-hidden``), as in the browser.
* **One copy of each glyph per page.** A formula refers to its glyphs by id (``<use href="#MJX-...">``);
  the outlines of the glyphs a page uses are written once at the top of its body (``#slr-math-glyphs``).
* **No script.** No MathJax is loaded by the page; MathJax's style sheet for SVG output is
  ``_static/slr-math.css``.

How: the book's math renderer (``html_math_renderer: slr_svg`` in ``_config.yml``) writes each formula
as Sphinx's MathJax renderer does, ``\\(...\\)`` in a ``span.math`` and ``\\[...\\]`` in a
``div.math`` (with its equation number and link); when the build has written its pages, this extension
finds those formulas in every page, typesets the ones no earlier build typeset (one Node process,
``typeset_math.cjs``), puts the SVG in their place and the glyphs at the top of the page. Formulas are
cached in ``_build/.math_cache.json`` by their TeX, under the MathJax version and the script's own
text, so an incremental build typesets only new formulas. A formula MathJax cannot typeset fails the
build, naming the page and the TeX.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "typeset_math.cjs"
MATHJAX_PACKAGE = ROOT / "node_modules" / "mathjax-full" / "package.json"
#: The renderer's name (``html_math_renderer`` in ``_config.yml``).
RENDERER = "slr_svg"
#: MathJax's style sheet for SVG output, in the build's ``_static``.
CSS = "slr-math.css"
#: The id of the hidden ``<svg>`` that holds a page's glyphs.
GLYPHS_ID = "slr-math-glyphs"

INLINE = re.compile(r'<span class="math notranslate nohighlight">\\\((.*?)\\\)</span>', re.S)
DISPLAY = re.compile(r'(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?)'
                     r'\\\[(.*?)\\\](\s*</div>)', re.S)
GLYPH_REF = re.compile(r'xlink:href="#(MJX-[A-Za-z0-9-]+)"')
GLYPHS_BLOCK = re.compile(r'<svg id="' + GLYPHS_ID + r'"[^>]*>.*?</svg>', re.S)
BODY = re.compile(r"<body[^>]*>")
#: Build output that holds no page.
NOT_PAGES = ("_static", "_sources", "_images", "_downloads")


# ------------------------------------------------------------------ the renderer's visitors
def visit_math(self, node: nodes.math) -> None:
    """An inline formula, written as Sphinx's MathJax renderer writes it (typeset after the build)."""
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(r"\(" + self.encode(node.astext()) + r"\)</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    """A display formula, its number and its link, as Sphinx's MathJax renderer writes them; an
    environment written whole (``nowrap``: amsmath's ``\\begin{align}``) is display math too."""
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["nowrap"]:
        self.body.append(r"\[" + self.encode(node.astext()) + r"\]</div>")
        raise nodes.SkipNode
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append('<span class="eqno">(%s)' % number)
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    tex = []
    for part in parts:
        part = self.encode(part)
        tex.append(r"\begin{split}" + part + r"\end{split}" if r"\\" in part else part)
    body = r"\\".join(tex)
    if len(parts) > 1:
        body = r" \begin{align}\begin{aligned}" + body + r"\end{aligned}\end{align} "
    self.body.append(r"\[" + body + r"\]</div>" + "\n")
    raise nodes.SkipNode


# ------------------------------------------------------------------ typesetting, cached
def _renderer_key() -> str:
    """MathJax's version and the script's text: a cached formula is reused only under both."""
    if not MATHJAX_PACKAGE.is_file():
        raise ExtensionError(f"typeset_math: {MATHJAX_PACKAGE.parent} is missing: run `make install` "
                             "(npm ci, from package-lock.json)")
    version = json.loads(MATHJAX_PACKAGE.read_text(encoding="utf-8"))["version"]
    return f"mathjax-full {version} " + hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:16]


class Typesetter:
    """Formulas typeset by ``typeset_math.cjs``, cached in a JSON file under the renderer's key."""

    def __init__(self, cache: Path):
        self.path = cache
        self.key = _renderer_key()
        data = {}
        if cache.is_file():
            try:
                data = json.loads(cache.read_text(encoding="utf-8"))
            except ValueError:
                data = {}
        if data.get("key") != self.key:
            data = {}
        self.formulas: dict[str, str] = data.get("formulas", {})
        self.glyphs: dict[str, str] = data.get("glyphs", {})
        self.css: str = data.get("css", "")
        self.typeset_now = 0

    @staticmethod
    def name(tex: str, display: bool) -> str:
        return ("D:" if display else "I:") + tex

    def typeset(self, wanted: dict[str, str]) -> None:
        """Typeset the formulas of ``wanted`` (name -> where it was found) that the cache lacks."""
        missing = [name for name in wanted if name not in self.formulas]
        if not missing and self.css:
            return
        node = shutil.which("node")
        if node is None:
            raise ExtensionError("typeset_math: Node.js (`node`) is not on PATH; the book's formulas are "
                                 "typeset at build time by MathJax in Node")
        request = {"formulas": [[name[2:], name.startswith("D:")] for name in missing]}
        result = subprocess.run([node, str(SCRIPT)], input=json.dumps(request), capture_output=True,
                                text=True, cwd=str(ROOT))
        if result.returncode != 0:
            raise ExtensionError(f"typeset_math: {SCRIPT.name} failed ({result.returncode}):\n{result.stderr[-3000:]}")
        reply = json.loads(result.stdout)
        if reply["errors"]:
            lines = [f"  {wanted[missing[i]]}: {missing[i][2:]!r}: {message}" for i, message in reply["errors"]]
            raise ExtensionError("typeset_math: MathJax cannot typeset these formulas:\n" + "\n".join(lines))
        self.formulas.update(zip(missing, reply["svg"]))
        self.glyphs.update(reply["glyphs"])
        self.css = reply["css"]
        self.typeset_now += len(missing)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": self.key, "formulas": self.formulas, "glyphs": self.glyphs,
                                   "css": self.css}), encoding="utf-8")
        tmp.replace(self.path)

    def glyph_block(self, ids: list[str]) -> str:
        """The hidden ``<svg>`` with the outlines of the glyphs ``ids``."""
        paths = "".join(f'<path id="{i}" d="{self.glyphs[i]}"></path>' for i in ids)
        return (f'<svg id="{GLYPHS_ID}" style="display: none" aria-hidden="true" focusable="false" '
                f'xmlns="http://www.w3.org/2000/svg"><defs>{paths}</defs></svg>')


def _pages(outdir: Path) -> list[Path]:
    return sorted(p for p in outdir.rglob("*.html") if p.relative_to(outdir).parts[0] not in NOT_PAGES)


def formulas_of(text: str) -> list[str]:
    """The formulas an HTML page holds as TeX (its renderer's ``\\(...\\)`` and ``\\[...\\]``), by name."""
    return ([Typesetter.name(html.unescape(m.group(1)), False) for m in INLINE.finditer(text)]
            + [Typesetter.name(html.unescape(m.group(2)), True) for m in DISPLAY.finditer(text)])


def render(text: str, typesetter: Typesetter, where: str = "the page") -> str:
    """``text`` with its formulas typeset (``typesetter`` has them all) and the glyphs it uses at the top
    of its body."""
    new = INLINE.sub(lambda m: '<span class="math notranslate nohighlight">'
                     + typesetter.formulas[Typesetter.name(html.unescape(m.group(1)), False)] + "</span>", text)
    new = DISPLAY.sub(lambda m: m.group(1) + typesetter.formulas[Typesetter.name(html.unescape(m.group(2)), True)]
                      + m.group(3), new)
    new = GLYPHS_BLOCK.sub("", new)
    ids = sorted(set(GLYPH_REF.findall(new)))
    missing = [i for i in ids if i not in typesetter.glyphs]
    if missing:
        raise ExtensionError(f"typeset_math: {where} uses glyphs with no outline in the cache {typesetter.path}: "
                             f"{missing[:5]} (remove the cache and build again)")
    if ids:
        body = BODY.search(new)
        if body is None:
            raise ExtensionError(f"typeset_math: {where} has formulas but no <body>")
        new = new[:body.end()] + typesetter.glyph_block(ids) + new[body.end():]
    return new


def typeset_pages(outdir: Path, cache: Path) -> dict:
    """Typeset the formulas of every page in ``outdir`` and give each page the glyphs it uses; what was done."""
    start = time.perf_counter()
    typesetter = Typesetter(cache)
    texts = {page: page.read_text(encoding="utf-8") for page in _pages(outdir)}
    wanted: dict[str, str] = {}
    found = 0
    for page, text in texts.items():
        names = formulas_of(text)
        found += len(names)
        for name in names:
            wanted.setdefault(name, str(page.relative_to(outdir)))
    typesetter.typeset(wanted)
    changed = 0
    for page, text in texts.items():
        new = render(text, typesetter, str(page.relative_to(outdir)))
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed += 1
    (outdir / "_static").mkdir(exist_ok=True)
    css_path = outdir / "_static" / CSS
    if not css_path.is_file() or css_path.read_text(encoding="utf-8") != typesetter.css:
        css_path.write_text(typesetter.css, encoding="utf-8")
    typesetter.save()
    return {"formulas": found, "distinct": len(wanted), "typeset": typesetter.typeset_now, "pages": changed,
            "seconds": time.perf_counter() - start}


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    if getattr(app.builder, "math_renderer_name", None) != RENDERER:
        return
    outdir = Path(app.outdir)
    done = typeset_pages(outdir, outdir.parent / ".math_cache.json")
    logger.info(f"typeset_math: {done['formulas']} formulas ({done['distinct']} distinct, {done['typeset']} "
                f"typeset now, the rest from the cache) into {done['pages']} pages in {done['seconds']:.1f} s")


def setup(app):
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_displaymath, None))
    app.add_css_file(CSS)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

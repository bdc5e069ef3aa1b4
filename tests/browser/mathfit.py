"""Does each display equation of a chapter fit the column? A quick loop for rewriting them.

    .venv/bin/python tests/browser/mathfit.py book/03_oracle_risk.md [--all] [--width 1300]

Reads the chapter's source, takes every display equation (``$$ ... $$``, with its label),
typesets them all as the build does (``book/_ext/typeset_math.py``: MathJax in Node, into SVG,
with the build's cache of formulas) into a copy of the built chapter page (``_build/html``: the
same styles and the same column), measures them at 1300 px and as printed (``test_layout.PRINT``),
then prints, for each equation that does not fit (or each, with ``--all``), its line in the source,
its width and the column's. No Sphinx build is needed, only a built book to borrow the page from.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))

from layout import EQUATIONS  # noqa: E402
from sitepaths import CHROMIUM_FLAGS, ROOT, SITE  # noqa: E402
import typeset_math  # noqa: E402

BLOCK = re.compile(r"^(?P<indent>[ \t]*)\$\$[ \t]*\n(.*?)\n[ \t]*\$\$[ \t]*(?:\((?P<label>[^)\s]+)\))?[ \t]*$",
                   re.S | re.M)
VIEWPORTS = {"1300": ({"width": 1300, "height": 900}, "screen"), "print": ({"width": 718, "height": 1010}, "print")}
FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\{[^}]+\})?")


def boxed_lines(source: str) -> set[int]:
    """Lines (1-based) inside a directive (a theorem, a proof, an exercise): drawn in a box."""
    inside, stack = set(), []
    for number, text in enumerate(source.splitlines(), start=1):
        m = FENCE.match(text)
        if m:
            fence, name = m.group(1), m.group(2)
            if name and not name.startswith("{code-cell"):
                stack.append(fence)
            elif stack and not name and fence[0] == stack[-1][0] and len(fence) >= len(stack[-1]) \
                    and text.strip() == fence:
                stack.pop()
        if stack:
            inside.add(number)
    return inside


def equations(source: str) -> list[tuple[int, str, str | None, bool]]:
    """(line, TeX, label, in a box) of every display equation of a MyST source."""
    boxed = boxed_lines(source)
    found = []
    for m in BLOCK.finditer(source):
        line = source.count("\n", 0, m.start()) + 1
        # An indented equation sits in a list item: drawn in a box, as narrow as the widest one.
        found.append((line, m.group(2), m.group("label"), line in boxed or bool(m.group("indent"))))
    return found


def page_html(template: str, eqs: list[tuple[int, str, str | None, bool]]) -> str:
    blocks = []
    for i, (line, tex, label, boxed) in enumerate(eqs):
        # As wide as the widest number the book prints, "(16.12)", with its hidden link.
        number = ('<span class="eqno">(16.12)<a class="headerlink" href="#">#</a></span>' if label else "")
        block = (f'<p>line {line}</p><div class="math notranslate nohighlight" id="line-{line}">'
                 f"{number}\\[{html.escape(tex, quote=False)}\\]</div>")
        if boxed:
            block = ('<div class="proof theorem admonition"><p class="admonition-title">Box</p>'
                     f'<section class="theorem-content">{block}</section></div>')
        blocks.append(block)
    body = "\n".join(blocks)
    start = template.index("<article")
    start = template.index(">", start) + 1
    end = template.index("</article>")
    return template[:start] + body + template[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", help="book/NN_name.md")
    parser.add_argument("--all", action="store_true", help="list every equation, not only those that do not fit")
    args = parser.parse_args()
    source_path = Path(args.chapter)
    built = SITE / "book" / (source_path.stem + ".html")
    if not built.is_file():
        built = next((SITE / "book").glob("[0-9][0-9]_*.html"))
    eqs = equations(source_path.read_text(encoding="utf-8"))
    probe = built.with_name(f"_mathfit_{source_path.stem}.html")
    text = page_html(built.read_text(encoding="utf-8"), eqs)
    typesetter = typeset_math.Typesetter(SITE.parent / ".math_cache.json")
    typesetter.typeset({name: f"{source_path}" for name in typeset_math.formulas_of(text)})
    probe.write_text(typeset_math.render(text, typesetter, str(source_path)), encoding="utf-8")
    from playwright.sync_api import sync_playwright

    bad = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
            page = browser.new_page()
            results = {}
            for name, (viewport, media) in VIEWPORTS.items():
                page.emulate_media(media=media)
                page.set_viewport_size(viewport)
                page.goto(probe.as_uri(), wait_until="load")
                results[name] = {e["id"]: e for e in page.evaluate(EQUATIONS)}
            browser.close()
    finally:
        probe.unlink(missing_ok=True)
    for line, tex, label, boxed in eqs:
        key = f"line-{line}"
        desk, printed = results["1300"].get(key), results["print"].get(key)
        if desk is None:
            print(f"line {line}: not typeset")
            bad += 1
            continue
        fails = (desk["wider"] or desk["outside"] or desk["overlap"] or desk["error"]
                 or printed["wider"] or printed["outside"])
        bad += bool(fails)
        if fails or args.all:
            flags = " ".join(f for f, on in (("WIDE", desk["wider"] or desk["outside"]),
                                            ("NUMBER-OVERLAP", desk["overlap"]),
                                            ("TEX-ERROR", desk["error"]),
                                            ("PRINT-WIDE", printed["wider"] or printed["outside"])) if on)
            print(f"{source_path}:{line} {label or ''}{' (in a box)' if boxed else ''} 1300: {desk['width']}/{desk['box']} px, "
                  f"print: {printed['width']}/{printed['box']} px {flags}")
    print(f"{len(eqs)} display equations, {bad} do not fit")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The reader's-eye audit of the built book: clipped equations, over-wide code, figure scale, verdicts.

    .venv/bin/python tests/browser/audit.py [--pages 03_oracle_risk,07_theorem5] [--json out.json]
    .venv/bin/python tests/browser/audit.py --axe [--whole]

Opens every chapter page (or those named) of ``_build/html`` in headless Chromium at
1300×900 and at 390×844 and prints, per page and in total, what ``test_layout.py`` holds:
display equations wider than their box (and whether they scroll with an affordance), code
lines wider than their cell, the scale at which figures are shown, the verdicts a reader
sees without opening a fold, sideways scrolling on a phone, and unrendered markup.

``--axe`` instead runs axe-core's WCAG 2.1 A and AA rules on every page of the book (the chapters,
the preface, the appendices, the API reference, search and index pages: the tests check the chapters
and the preface), in light mode and, for the rules on colours, in dark mode, as ``visits.accessibility``
does, and prints the violations; ``--whole`` checks every formula, code block and table rather than
``visits.SET_ASIDE``'s selection, and every element for the rules on colours rather than one of each kind
(``visits.AXE_SAMPLE``): slower, about 15 s for a chapter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from layout import CODE, EQUATIONS, FIGURES, RAW_MARKUP, SIDEWAYS, VERDICTS  # noqa: E402
from sitepaths import CHROMIUM_FLAGS, SITE  # noqa: E402

DESKTOP = {"width": 1300, "height": 900}
PHONE = {"width": 390, "height": 844}


def measure(page, url: str, viewport: dict) -> dict:
    page.set_viewport_size(viewport)
    page.goto(url)
    page.wait_for_load_state("load")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    result = {"equations": page.evaluate(EQUATIONS), "sideways": page.evaluate(SIDEWAYS)}
    if viewport is DESKTOP:
        result.update(code=page.evaluate(CODE), figures=page.evaluate(FIGURES), verdicts=page.evaluate(VERDICTS),
                      raw=page.evaluate(RAW_MARKUP))
    return result


def summarise(name: str, desk: dict, phone: dict) -> dict:
    eqs = desk["equations"]
    figs = [f for f in desk["figures"]]
    code = desk["code"]
    return {
        "page": name,
        "equations": len(eqs),
        "clipped_1300": sum(e["wider"] and not e["shown"] for e in eqs),
        "wider_1300": sum(e["wider"] for e in eqs),
        "number_overlaps_1300": sum(e["overlap"] for e in eqs),
        "clipped_390": sum(e["wider"] and not e["shown"] for e in phone["equations"]),
        "code_cells": len(code),
        "code_cells_with_wide_lines": sum(c["wide"] > 0 for c in code),
        "code_lines": sum(c["lines"] for c in code),
        "code_lines_wide": sum(c["wide"] for c in code),
        "chars_per_line": min((c["chars"] for c in code), default=0),
        "figures": len(figs),
        "figure_scale_min": round(min((f["scale"] for f in figs), default=1), 3),
        "figures_below_0.8": sum(f["scale"] < 0.8 for f in figs),
        "figures_without_caption": sum(not f["caption"] for f in figs),
        "figures_without_alt": sum((not f["alt"]) or f["altIsPath"] for f in figs),
        "figures_not_2x": sum(f["density"] < 1.9 for f in figs),
        "verdicts": desk["verdicts"]["total"],
        "verdicts_visible": desk["verdicts"]["visible"],
        "verdict_share": round(desk["verdicts"]["share"], 3),
        "sideways_390": phone["sideways"]["scrollWidth"] > phone["sideways"]["width"] + 1,
        "raw_markup": len(desk["raw"]),
    }


def axe_every_page(whole: bool) -> int:
    """axe-core on every page, light and dark; the number of violating elements."""
    from playwright.sync_api import sync_playwright

    import visits
    from sitepaths import html_pages

    if whole:
        visits.SET_ASIDE = "keep => ({formulas: -1, code_blocks: -1, elements: document.getElementsByTagName('*').length})"
    found = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        for path in html_pages():
            if 'http-equiv="Refresh"' in path.read_text(encoding="utf-8")[:500]:
                continue  # the root's index.html: a redirect to the preface, checked as itself
            page = browser.new_page(viewport=DESKTOP)
            page.goto(path.as_uri(), wait_until="load")
            # A screen at a step: every block that scrolls is made reachable by keyboard as a reader's
            # scroll would (slr-book.js); the visits' two screens can step over one on the long pages of
            # the API reference, whose sections take their size as they are laid out.
            page.evaluate(visits.SCROLL_THROUGH, 1)
            result = visits.accessibility(page, sample=not whole)
            counts = {mode: sum(v["count"] for v in result[mode]) for mode in ("light", "dark")}
            found += sum(counts.values())
            print(f"{str(path.relative_to(SITE)):<34} light {counts['light']:>3}  dark {counts['dark']:>3}", flush=True)
            for mode in ("light", "dark"):
                for v in result[mode]:
                    print(f"    {mode}: {v['id']} ({v['count']}): {v['nodes'][:2]}")
            page.close()
        browser.close()
    print(f"{found} violating elements in all")
    return 1 if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="", help="chapter stems, comma-separated (default: every chapter)")
    parser.add_argument("--json", default="", help="write every measurement to this file")
    parser.add_argument("--axe", action="store_true", help="axe-core on every page, light and dark, instead")
    parser.add_argument("--whole", action="store_true", help="with --axe: every formula and code block")
    args = parser.parse_args()
    if args.axe:
        return axe_every_page(args.whole)
    from playwright.sync_api import sync_playwright

    pages = sorted((SITE / "book").glob("[0-9][0-9]_*.html"))
    if args.pages:
        wanted = set(args.pages.split(","))
        pages = [p for p in pages if p.stem in wanted]
    rows, details = [], {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        page = browser.new_page()
        for path in pages:
            desk = measure(page, path.as_uri(), DESKTOP)
            phone = measure(page, path.as_uri(), PHONE)
            rows.append(summarise(path.stem, desk, phone))
            details[path.stem] = {"desktop": desk, "phone": phone}
        browser.close()
    keys = list(rows[0].keys())[1:]
    print("page".ljust(22) + " ".join(k[:10].rjust(10) for k in keys))
    for r in rows:
        print(r["page"][:22].ljust(22) + " ".join(str(r[k])[:10].rjust(10) for k in keys))
    total = {k: (sum(r[k] for r in rows) if not k.startswith(("figure_scale", "chars", "verdict_share"))
                 else min(r[k] for r in rows)) for k in keys}
    print("total".ljust(22) + " ".join(str(total[k])[:10].rjust(10) for k in keys))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": rows, "total": total, "details": details}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

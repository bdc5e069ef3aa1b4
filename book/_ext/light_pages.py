"""Sphinx extension: what the theme sends with every page, cut to what the book uses.

pydata-sphinx-theme 0.17.1 (pinned in requirements.lock) gave each page three costs that a reader paid
on every visit (issue 40); the book's templates (``book/_templates``) and this extension remove them.

* **Icons.** The theme draws its icons (the menu, search, the colour-mode switch, the download menu)
  with Font Awesome: a 1.49 MB script (``fontawesome.js``, no longer loaded: the book's copy of
  ``static/webpack-macros.html``) and, through its CSS, the 156 kB font ``fa-solid-900.woff2``. When the
  build has written its pages, this extension cuts that font down to the glyphs of the icons the pages
  use, in the pages (``<i class="fa-solid fa-bars">``) and in the style sheets (the admonitions' and
  the contents' icons: ``content: "\\f107"``), with fontTools (which matplotlib already needs):
  about 3 kB, which the build's copy of the theme's CSS carries in place of the whole font (a data: URL,
  so that no request waits for it; ``_static/slr-icons.woff`` is the same font as a file). An icon
  class with no glyph fails the build.
* **The search index.** The theme loaded ``searchindex.js`` (0.5 MB) on every page: the book's
  ``layout.html`` leaves it to the search page.
* **A pass over the whole page.** On load, the theme's script measures every code block and output
  (``scrollWidth``) to make those that scroll reachable by keyboard (``tabindex``). Measuring them lays
  out the whole page at once, which undid the book's lazy layout (``content-visibility`` in
  ``static/slr-book.css``): on a chapter it cost about a second on a laptop. The call is removed from the
  build's copy of the script (the match is checked: a theme that changed fails the build), and
  ``static/slr-book.js`` does the same work for each block as it nears the screen.
* **Scripts that stopped the page.** Sphinx, the theme and their extensions put their scripts in the
  page's head as plain ``<script src>``: the browser stops reading the page at each until it has run.
  Those in :data:`DEFERRED` wait only for the DOM (each acts on ``DOMContentLoaded``), and are loaded
  ``defer``, in the same order: measured with ``make bench``'s pages row on chapters 6, 13 and 16
  (three first visits each, a CPU slowed 4x), the first screen was readable at 1.4 to 1.9 s rather
  than 1.9 to 2.8 s. ``documentation_options.js`` stays as it was: the page's inline scripts use what
  it defines as they are read, and the search page keeps them all (its ``searchtools.js`` runs as it
  comes, with ``doctools.js``'s functions). A script of :data:`DEFERRED` missing from a page's head
  fails the build.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

ICONS_FONT = "slr-icons.woff"
#: The theme's font of solid icons (Font Awesome 6 Free, weight 900), under the build's _static.
#: (Its TrueType copy: reading the .woff2 would need the brotli module.)
SOLID_FONT = Path("vendor") / "fontawesome" / "webfonts" / "fa-solid-900.ttf"
THEME_CSS = Path("styles") / "pydata-sphinx-theme.css"
THEME_JS = Path("scripts") / "pydata-sphinx-theme.js"
#: The theme script's call of its whole-page pass (pydata-sphinx-theme 0.17.1, minified), and what replaces it.
THEME_PASS_CALL = '"complete"===document.readyState?I():window.addEventListener("load",I)'
THEME_PASS_REPLACEMENT = "void 0/* slr-book: this pass runs lazily in slr-book.js (book/_ext/light_pages.py) */"
#: Icons the theme's script may insert (the version banner's close button), beyond those in the pages.
SCRIPT_ICONS = {"fa-xmark"}
#: Font Awesome's classes that are not icons (style, size, animation).
NOT_ICONS = {"fa-solid", "fa-regular", "fa-brands", "fa-lg", "fa-sm", "fa-xs", "fa-xl", "fa-2x", "fa-fw",
             "fa-spin", "fa-pulse", "fa-border", "fa-inverse", "fa-flip", "fa-beat", "fa-fade", "fa-bounce",
             "fa-shake", "fa-stack", "fa-stack-1x", "fa-stack-2x", "fa-ul", "fa-li", "fa-rotate-90",
             "fa-rotate-180", "fa-rotate-270", "fa-flip-horizontal", "fa-flip-vertical", "fa-pull-left",
             "fa-pull-right", "fa-width-auto"}
ICON_CLASS = re.compile(r'class="([^"]*\bfa-[^"]*)"')
NOT_PAGES = ("_static", "_sources", "_images", "_downloads")


def icons_used(outdir: Path) -> set[str]:
    """The Font Awesome icon classes (``fa-bars``, ...) that the built pages use, and the theme script's."""
    icons = set(SCRIPT_ICONS)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in NOT_PAGES:
            continue
        for classes in ICON_CLASS.findall(page.read_text(encoding="utf-8")):
            icons |= {c for c in classes.split() if c.startswith("fa-") and c not in NOT_ICONS}
    return icons


#: One icon's rule in Font Awesome's CSS: ``.fa-bars:before,.fa-navicon:before{content:"\f0c9"}``.
ICON_RULE = re.compile(r'([^{}]+)\{content:"\\([0-9a-f]+)"\}')
#: A character of Font Awesome's private use area, as a CSS escape or as itself.
PRIVATE_USE = re.compile(r"\\(f[0-9a-f]{3})\b|([\ue000-\uf8ff])")


def icon_codepoints(theme_css: str, icons: set[str]) -> dict[str, int]:
    """Each icon class's character in Font Awesome's font, read from the theme's CSS."""
    found = {}
    for selectors, code in ICON_RULE.findall(theme_css):
        for selector in selectors.split(","):
            m = re.fullmatch(r"\.(fa-[a-z0-9-]+):(?::)?before", selector.strip())
            if m and m.group(1) in icons:
                found[m.group(1)] = int(code, 16)
    return found


def css_codepoints(css: str) -> set[int]:
    """The icon characters a style sheet draws itself (``content: "\f107"``, the theme's
    ``--pst-icon-*`` variables, the admonitions' icons), outside the rules of Font Awesome's icon classes."""
    rest = ICON_RULE.sub("", css)
    return {int(escaped, 16) if escaped else ord(raw) for escaped, raw in PRIVATE_USE.findall(rest)}


def subset_font(font: Path, codepoints: set[int]) -> bytes:
    """``font`` cut down to ``codepoints``, as WOFF (zlib: no extra compressor needed)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    ttf = TTFont(str(font))
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(ttf)
    out = io.BytesIO()
    ttf.flavor = "woff"
    ttf.save(out)
    return out.getvalue()


def write_icons(outdir: Path) -> dict[str, int]:
    """Cut the theme's solid icon font down to the icons the book uses, and point the theme's CSS at it."""
    from fontTools.ttLib import TTFont

    static = outdir / "_static"
    theme_css_path = static / THEME_CSS
    theme_css = theme_css_path.read_text(encoding="utf-8")
    icons = icons_used(outdir)
    codes = icon_codepoints(theme_css, icons)
    unknown = sorted(icons - set(codes))
    if unknown:
        raise ExtensionError(f"light_pages: icon classes with no glyph in the theme's CSS: {unknown}")
    solid = set(TTFont(str(static / SOLID_FONT)).getBestCmap())
    missing = sorted(hex(c) for c in codes.values() if c not in solid)
    if missing:
        raise ExtensionError(f"light_pages: icons the pages use that the solid font lacks: {missing}")
    drawn = set()
    for css in static.rglob("*.css"):
        if css.name != "slr-math.css":
            drawn |= css_codepoints(css.read_text(encoding="utf-8"))
    # The style sheets' own icons in the solid font (the others are in Font Awesome's brands font,
    # which the theme still declares, and which no page of the book uses).
    wanted = set(codes.values()) | (drawn & solid)
    font = subset_font(static / SOLID_FONT, wanted)
    (static / ICONS_FONT).write_bytes(font)
    if "slr-icons" not in theme_css:
        declaration = re.search(r"@font-face\{[^}]*font-weight:900;src:url\(\.\./vendor/fontawesome/webfonts/"
                                r"fa-solid-900\.woff2\)[^}]*\}", theme_css)
        if declaration is None:
            raise ExtensionError(f"light_pages: {THEME_CSS} no longer declares the solid icon font as "
                                 "pydata-sphinx-theme 0.17.1 did: check the theme's version")
        # In the style sheet itself (a data: URL): no request to wait for once the CSS is there.
        data = base64.b64encode(font).decode("ascii")
        font_face = re.sub(r"src:[^;}]*", f'src:url(data:font/woff;base64,{data}) format("woff")/* slr-icons */',
                           declaration.group(0))
        theme_css_path.write_text(theme_css.replace(declaration.group(0), font_face), encoding="utf-8")
    return {**codes, "(style sheets)": len(wanted) - len(set(codes.values()))}


def patch_theme_script(outdir: Path) -> None:
    path = outdir / "_static" / THEME_JS
    text = path.read_text(encoding="utf-8")
    if THEME_PASS_REPLACEMENT in text:
        return
    if text.count(THEME_PASS_CALL) != 1:
        raise ExtensionError(f"light_pages: {THEME_JS} no longer calls its whole-page pass as "
                             f"pydata-sphinx-theme 0.17.1 did ({THEME_PASS_CALL!r}): check the theme's version")
    path.write_text(text.replace(THEME_PASS_CALL, THEME_PASS_REPLACEMENT), encoding="utf-8")


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    codes = write_icons(outdir)
    patch_theme_script(outdir)
    font = (outdir / "_static" / ICONS_FONT).stat().st_size
    logger.info(f"light_pages: the icons {sorted(k for k in codes if k.startswith('fa-'))} and "
                f"{codes['(style sheets)']} more drawn by the style sheets in {ICONS_FONT} ({font} bytes); "
                "the theme's whole-page pass removed")


#: The head's scripts loaded ``defer`` (their paths under ``_static``): each waits for the DOM.
DEFERRED = ("doctools.js", "sphinx_highlight.js", "clipboard.min.js", "copybutton.js",
            "scripts/sphinx-book-theme.js", "togglebutton.js", "design-tabs.js")


def _defer_scripts(app, pagename, templatename, context, doctree) -> None:
    """The page's scripts of :data:`DEFERRED` loaded ``defer`` (order kept)."""
    from sphinx.builders.html._assets import _JavaScript

    scripts = context.get("script_files")
    if not scripts or pagename == "search":
        return  # the search page: its template's searchtools.js, read as it comes, uses doctools.js
    found = set()
    deferred = []
    for js in scripts:
        name = str(js.filename).removeprefix("_static/")
        if isinstance(js, _JavaScript) and name in DEFERRED and js.filename and not js.attributes.get("async"):
            found.add(name)
            js = _JavaScript(js.filename, priority=js.priority, **{**js.attributes, "defer": "defer"})
        deferred.append(js)
    missing = set(DEFERRED) - found
    if missing:
        raise ExtensionError(f"light_pages: {pagename} has none of the scripts {sorted(missing)} to defer "
                             "(did the theme or an extension change? see DEFERRED)")
    context["script_files"] = deferred


def setup(app):
    app.connect("build-finished", _build_finished)
    app.connect("html-page-context", _defer_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

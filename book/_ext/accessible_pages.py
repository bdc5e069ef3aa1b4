"""Sphinx extension: the names a screen reader announces, where the theme and myst-nb gave none or
a wrong one (WCAG 2.1 A and AA, as axe-core checks them in tests/browser).

* **The sidebar's disclosure buttons.** pydata-sphinx-theme 0.17.1 gives an entry of the book's contents
  that has sub-pages (the API reference) a ``<summary>`` holding only a chevron icon: a button with no
  name (axe-core's ``summary-name``). Its function that builds them (``toctree.add_collapse_checkboxes``)
  is wrapped here: each such ``<summary>`` is named after its entry ("Pages under API reference"), and
  its icon is hidden from screen readers.
* **A hidden cell's button.** myst-nb 1.4.0 names the button of a folded code cell "Toggle hidden
  content" while it shows "Show code cell source", which WCAG 2.5.3 (label in name; axe-core's
  ``label-content-name-mismatch``) does not allow: the node's HTML visitor is replaced by one that
  writes the same button without that name, so that its name is what it shows.
* **The bibliography's entries.** docutils 0.21 gives each entry the role ``doc-biblioentry``, which
  WAI-ARIA's DPUB module deprecates (axe-core's ``aria-deprecated-role``; the list that holds them then
  has no list item, ``aria-required-children``): each entry is a ``listitem`` of its list, as the module
  advises.

The search button, the other such case, is a template (``book/_templates/search-button-field.html``). Colours are in
``static/slr-book.css``; blocks that scroll are made reachable by keyboard by ``static/slr-book.js``.
"""

from __future__ import annotations

from html import escape


def _name_the_sidebar_toggles() -> None:
    from pydata_sphinx_theme import toctree

    original = toctree.add_collapse_checkboxes
    if getattr(original, "slr_names_toggles", False):
        return

    def add_collapse_checkboxes(soup) -> None:
        original(soup)
        for summary in soup.select("li.has-children > details > summary"):
            if summary.get_text(strip=True) or summary.get("aria-label"):
                continue
            entry = summary.parent.find_previous_sibling("a")
            name = entry.get_text(" ", strip=True) if entry is not None else "this entry"
            summary["aria-label"] = f"Pages under {name}"
            for icon in summary.select("i"):
                icon["aria-hidden"] = "true"

    add_collapse_checkboxes.slr_names_toggles = True
    toctree.add_collapse_checkboxes = add_collapse_checkboxes


def visit_hidden_cell_input(self, node) -> None:
    """myst-nb's ``visit_HideCellInput`` (1.4.0), less the button's ``aria-label``."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def visit_citation(self, node) -> None:
    """docutils' ``visit_citation`` (0.21), the entry a ``listitem`` rather than a ``doc-biblioentry``."""
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def setup(app):
    from docutils import nodes
    from docutils.writers._html_base import HTMLTranslator
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    _name_the_sidebar_toggles()
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell_input, depart_HideCellInput))
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTMLTranslator.depart_citation))
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Where the preface says the book lives (book/_ext/launch_setting.py): the site's address follows
``repository.url``, and the preface's ``{only} binder`` paragraph names it, with its PDF, exactly when
that setting is set (issue 41). The built book (``_config.yml`` as committed) is checked by
tests/browser/test_site.py; here the paragraph itself is built by Sphinx both ways."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import launch_setting  # noqa: E402
from test_readme import _pages_and_binder  # noqa: E402  (the README's check derives the address on its own)


@pytest.mark.parametrize("url", ["https://github.com/Org/slr-book", "https://github.com/org/slr-book/",
                                 "https://github.com/Some-Org/book.v2.git"])
def test_site_address_is_the_readme_checks_address(url):
    assert launch_setting.site_address(url) == _pages_and_binder(url, "main")[0]


def test_site_address_of_no_repository_is_empty_and_of_another_host_an_error():
    assert launch_setting.site_address("  ") == ""
    assert launch_setting.site_substitutions("") == {"book_site": "", "book_pdf": ""}
    with pytest.raises(ValueError, match=r"repository\.url = 'https://gitlab\.com/org/book'.*github\.com/ORG/REPO"):
        launch_setting.site_address("https://gitlab.com/org/book")


def _published_paragraph() -> str:
    """The preface's ``{only} binder`` block, as book/index.md has it."""
    text = (ROOT / "book" / "index.md").read_text(encoding="utf-8")
    found = re.search(r"^```\{only\} binder\n.*?^```\n", text, flags=re.M | re.S)
    assert found, "book/index.md has no {only} binder block"
    return found.group(0)


def _build_preface(tmp_path: Path, url: str) -> str:
    from sphinx.application import Sphinx

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir(parents=True)
    (src / "index.md").write_text("# Preface\n\n" + _published_paragraph(), encoding="utf-8")
    overrides = {"extensions": ["myst_parser", "launch_setting"],
                 "myst_enable_extensions": ["substitution", "colon_fence"],
                 "html_theme_options": {"repository_url": url, "launch_buttons": {}}}
    app = Sphinx(str(src), None, str(out), str(tmp_path / "doctrees"), "html", confoverrides=overrides,
                 status=None, warning=None, freshenv=True)
    app.build()
    from bs4 import BeautifulSoup

    return BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")


def test_preface_names_the_site_and_its_pdf_when_the_repository_is_set(tmp_path):
    soup = _build_preface(tmp_path / "set", "https://github.com/Org/slr-book")
    links = {a["href"] for a in soup.select("a[href^='https://']")}
    assert {"https://org.github.io/slr-book/", "https://org.github.io/slr-book/book.pdf"} <= links
    assert "The book lives at https://org.github.io/slr-book/," in " ".join(soup.get_text().split())
    assert "{{" not in soup.get_text()


def test_preface_says_nothing_of_a_site_when_the_repository_is_empty(tmp_path):
    soup = _build_preface(tmp_path / "empty", "")
    text = soup.get_text()
    assert "Published" not in text and "Binder" not in text and "github.io" not in text

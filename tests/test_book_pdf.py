"""The join that makes the whole-book PDF (book/_ext/book_pdf.py), on a small page: ids, links,
formulas, glyphs, sliders. The PDF itself is read back by tests/browser/test_pdf.py."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import book_pdf  # noqa: E402

FORMULA = ('<mjx-container class="MathJax" jax="SVG"><svg><use xlink:href="#MJX-1-TEX-I-1D458"></use></svg>'
           '<mjx-assistive-mml><math><mi>k</mi></math></mjx-assistive-mml></mjx-container>')
PAGE = f"""<html><body><svg id="slr-math-glyphs" style="display:none"><defs>
<path id="MJX-1-TEX-I-1D458" d="M1 2"></path><path id="MJX-1-TEX-N-31" d="M3 4"></path></defs></svg>
<article class="bd-article" role="main"><section id="the-task"><h1>1. The task</h1>
<p>See <a class="reference internal" href="04_bayes.html#eq-bayes">(4.2)</a>, <a href="#the-task">above</a>,
<a href="api/core.html#slrlib.core.risk.oracle_risk"><code>oracle_risk</code></a>,
<a href="https://arxiv.org/abs/2410.01537">the paper</a> and {FORMULA}.</p>
<img src="../_images/fig.png" loading="lazy" alt="a figure">
<div class="slr-slider-figure" id="slr-1"><label><span>λ</span><input type="range" value="1">
<output data-readout="0">0.1</output><script type="application/json" data-labels="0">["0", "0.1", "1"]</script>
</label><img src="data:image/png;base64,AAAA" alt="frame"><script type="application/json" class="slr-frames">{{}}</script>
<script>(function(){{}})();</script></div>
<a class="headerlink" href="#the-task">#</a></section></article></body></html>"""


def test_join_prefixes_ids_keeps_links_inside_and_formulas_whole(tmp_path):
    html_dir = tmp_path / "html"
    (html_dir / "_images").mkdir(parents=True)
    out_dir = tmp_path / "pdf"
    out_dir.mkdir()
    glyphs, formulas = {}, []
    joined = book_pdf.join_page("book/01_task", PAGE, {"book/01_task", "book/04_bayes"}, html_dir, out_dir,
                                glyphs, formulas)
    # Ids carry their page; links to pages of the PDF point inside it, to the same target.
    assert 'id="book-01_task--the-task"' in joined and 'id="the-task"' not in joined
    assert 'href="#book-04_bayes--eq-bayes"' in joined and 'href="#book-01_task--the-task"' in joined
    # A link to a page left out keeps its text, unlinked; an external link stays as it was.
    assert "api/core.html" not in joined and "<code>oracle_risk</code>" in joined
    assert 'href="https://arxiv.org/abs/2410.01537"' in joined
    # The formula comes back byte for byte, its glyph reference untouched; the page's glyphs are gathered.
    assert FORMULA in joined and formulas == [FORMULA]
    assert glyphs == {"MJX-1-TEX-I-1D458": "M1 2", "MJX-1-TEX-N-31": "M3 4"}
    # Images are found from the PDF's folder, loaded at once.
    assert 'src="../html/_images/fig.png"' in joined and "loading=" not in joined
    # The slider shows its frame and says what it moves; its controls, scripts and the permalink are gone.
    assert "<input" not in joined and "<script>" not in joined and "headerlink" not in joined
    assert "Shown at λ = 0.1 (the slider moves it over 0 … 1)" in joined
    assert 'src="data:image/png;base64,AAAA"' in joined


def test_the_pdf_holds_the_toc_less_the_api_reference():
    pages = book_pdf.toc_pages()
    docs = [doc for doc, _ in pages]
    assert docs[0] == "book/index" and "book/bibliography" in docs and "book/status" in docs
    assert sum(doc.startswith("book/") and doc[5:7].isdigit() for doc in docs) == 16
    assert not any(doc.startswith("book/api") for doc in docs)
    assert len(set(docs)) == len(docs)

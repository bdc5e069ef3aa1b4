"""What a reader sees on a page, measured in the browser: the JavaScript behind the layout tests.

Each constant is a function for Playwright's ``page.evaluate``; each returns plain data
(lists of offenders, or counts) so that the tests (``test_layout.py``) and the audit
(``python tests/browser/audit.py``) read the same measurements.
"""

from __future__ import annotations

#: Display equations (typeset into SVG when the book is built: book/_ext/typeset_math.py): for each,
#: is its formula wider than its box, and if so does the box scroll and show that it does (the edge
#: shadows of book/_ext/static/slr-book.css, in its background)? Does its number overlap the formula?
#: Returns one record per equation.
EQUATIONS = r"""() => {
  const out = [];
  const article = document.querySelector('article');
  for (const container of article.querySelectorAll('div.math mjx-container[display="true"]')) {
    const math = container.querySelector(':scope > svg');
    if (!math) continue;
    const box = container.getBoundingClientRect();
    const formula = math.getBoundingClientRect();
    const style = getComputedStyle(container);
    const scrolls = ['auto', 'scroll'].includes(style.overflowX) && container.scrollWidth > container.clientWidth + 1;
    // Within 1.5 px: a formula's width is a fraction of a pixel (its SVG is sized in ex), and a
    // box's scroll width is rounded; what that leaves out is at most the last glyph's side bearing.
    const wider = formula.width > box.width + 1.5 || container.scrollWidth > container.clientWidth + 1;
    const shown = scrolls && style.backgroundImage.includes('radial-gradient');
    // Is any part of the formula outside the article (cut by an ancestor)?
    const frame = article.getBoundingClientRect();
    const outside = !scrolls && (formula.right > frame.right + 1 || formula.left < frame.left - 1);
    const number = container.parentElement.querySelector('span.eqno');
    let overlap = false;
    if (number) {
      const n = number.getBoundingClientRect();
      const visibleRight = Math.min(formula.right, box.right);
      overlap = n.left < visibleRight - 1 && n.right > formula.left + 1 && n.bottom > formula.top && n.top < formula.bottom;
    }
    const label = container.parentElement.id || '';
    const error = !!container.querySelector('mjx-merror, [data-mjx-error]');
    out.push({id: label, width: Math.round(formula.width), box: Math.round(box.width),
              wider, scrolls, shown, outside, overlap, error,
              text: container.parentElement.getAttribute('data-tex') || ''});
  }
  return out;
}"""

#: Code blocks: every block of code in the article (code cells, the library's code included by
#: ``literalinclude``, the code of solutions and of folded cells, opened for the measurement and folded
#: again), not the cells' outputs: for each, the number of lines and of lines wider than the block.
CODE = r"""() => {
  const opened = [];
  for (const box of document.querySelectorAll('article .admonition.toggle-hidden')) {
    box.classList.remove('toggle-hidden');
    opened.push(() => box.classList.add('toggle-hidden'));
  }
  for (const fold of document.querySelectorAll('article details.hide:not([open])')) {
    fold.open = true;
    opened.push(() => { fold.open = false; });
  }
  const out = [];
  for (const pre of document.querySelectorAll('article pre')) {
    if (pre.closest('.cell_output')) continue;
    const style = getComputedStyle(pre);
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    probe.style.visibility = 'hidden';
    probe.style.whiteSpace = 'pre';
    pre.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 100;
    pre.removeChild(probe);
    const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const lines = pre.textContent.replace(/\n$/, '').split('\n');
    const wide = lines.filter(l => l.length * charWidth > room + 0.5);
    out.push({lines: lines.length, wide: wide.length, chars: Math.floor(room / charWidth),
              longest: Math.max(...lines.map(l => l.length)), scrolls: pre.scrollWidth > pre.clientWidth + 1,
              cell: !!pre.closest('div.cell_input'), solution: !!pre.closest('.solution'),
              first: wide.length ? wide[0].slice(0, 90) : ''});
  }
  opened.forEach(close => close());
  return out;
}"""

#: Figures: every image in the article's outputs and figures. Drawn CSS width: the width
#: the image asks for (its width attribute, set from the figure's size), else its natural
#: width; scale: shown / drawn; density: natural pixels per shown pixel; caption and alt.
FIGURES = r"""() => {
  const out = [];
  for (const img of document.querySelectorAll('article img')) {
    if (img.closest('.slr-slider-figure') && img.closest('.slr-slider-figure').querySelector('img') !== img) continue;
    const shown = img.getBoundingClientRect().width;
    // The width the image asks for: its CSS width (myst-nb writes the figure's size there), its
    // width attribute (the sliders' frames), else its natural width.
    const asked = parseFloat(img.style.width) || parseFloat(img.getAttribute('width')) || img.naturalWidth;
    const figure = img.closest('figure');
    const caption = figure ? figure.querySelector('figcaption') : null;
    const number = caption ? caption.querySelector('.caption-number') : null;
    const alt = (img.getAttribute('alt') || '').trim();
    out.push({src: (img.getAttribute('src') || '').slice(0, 40), shown: Math.round(shown), drawn: Math.round(asked),
              natural: img.naturalWidth, scale: asked ? shown / asked : 0, density: shown ? img.naturalWidth / shown : 0,
              caption: caption ? caption.textContent.trim().slice(0, 80) : '', numbered: !!number,
              alt: alt.slice(0, 80), altIsPath: /^\S+\.(png|svg|jpe?g|pdf)$/i.test(alt) || /^(\.\.\/|_images\/|\/)\S*$/.test(alt),
              slider: !!img.closest('.slr-slider-figure')});
  }
  return out;
}"""

#: Check verdicts: how many there are, and how many a reader sees without opening anything.
VERDICTS = r"""() => {
  const all = [...document.querySelectorAll('article .slr-check')];
  const visible = all.filter(v => v.checkVisibility());
  const folds = [...document.querySelectorAll('article details.slr-checks')];
  const articleHeight = document.querySelector('article').getBoundingClientRect().height;
  const verdictHeight = visible.reduce((s, v) => s + v.getBoundingClientRect().height, 0);
  return {total: all.length, visible: visible.length, folds: folds.length,
          failed: document.querySelectorAll('article .slr-check-fail').length,
          share: articleHeight ? verdictHeight / articleHeight : 0};
}"""

#: Is the page wider than the viewport (does it scroll sideways)? Which elements stick out?
SIDEWAYS = r"""() => {
  const width = document.documentElement.clientWidth;
  const wide = document.documentElement.scrollWidth > width + 1;
  const culprits = [];
  if (wide) {
    for (const el of document.querySelectorAll('article *')) {
      const r = el.getBoundingClientRect();
      if (r.right > width + 1 && r.width > 0) {
        let p = el.parentElement, inside = false;
        while (p && p !== document.body) {
          const s = getComputedStyle(p);
          if (['auto', 'scroll', 'hidden'].includes(s.overflowX) && p.getBoundingClientRect().right <= width + 1) { inside = true; break; }
          p = p.parentElement;
        }
        if (!inside) culprits.push(el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + ' ' + Math.round(r.right));
      }
      if (culprits.length > 5) break;
    }
  }
  return {width, scrollWidth: document.documentElement.scrollWidth, culprits};
}"""

#: Markup that should have been rendered: a `$` or a MyST role `{name}` left in the text of
#: the article (outside code, formulas and scripts).
RAW_MARKUP = r"""() => {
  const found = [];
  const article = document.querySelector('article');
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      const el = node.parentElement;
      if (!el || el.closest('pre, code, script, style, mjx-container, kbd, samp, textarea')) return NodeFilter.FILTER_REJECT;
      return NodeFilter.FILTER_ACCEPT;
    }
  });
  // A MyST role that was not parsed ({prf:ref}, {eq}, {glue:text}, ...), not a literal brace.
  const role = /\{(?:prf:ref|eq|ref|numref|doc|cite(?::[a-z]+)?|glue(?::[a-z]+)?|math|term|download|abbr|sub|sup|eval)\}/;
  let node;
  while ((node = walker.nextNode())) {
    const text = node.textContent;
    if (text.includes('$') || role.test(text) || /\\(?:mathbb|operatorname|frac|begin)\b/.test(text)) {
      found.push(text.trim().slice(0, 100));
    }
  }
  return found;
}"""

# For each table in the article: is it (or a box between it and the article) wider than its
# box, or does it reach past the article's right edge?
# A table overflows when it or a box around it scrolls or it sticks out of the article; it is
# too close to overflowing when its narrowest layout (CSS min-content) takes more than
# MIN_CONTENT_SHARE of the article's width: another machine's fonts (system-ui) may be a tenth
# wider than this one's, and the project's CI saw tables overflow that fit here.
MIN_CONTENT_SHARE = 0.88
OVERFLOWING_TABLES = """(share) => {
  const article = document.querySelector('article');
  const frame = article.getBoundingClientRect();
  const out = [];
  for (const table of article.querySelectorAll('table')) {
    let box = table, scrolls = false;
    while (box && box !== article) {
      if (box.scrollWidth > box.clientWidth + 1) { scrolls = true; break; }
      box = box.parentElement;
    }
    const width = table.style.width;
    table.style.width = 'min-content';
    const narrowest = table.getBoundingClientRect().width;
    table.style.width = width;
    if (scrolls || table.getBoundingClientRect().right > frame.right + 1 || narrowest > share * frame.width) {
      out.push(`${(narrowest / frame.width).toFixed(3)} of the width: ` + table.innerText.slice(0, 80));
    }
  }
  return out;
}"""

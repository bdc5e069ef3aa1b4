// Typeset TeX formulas into SVG with MathJax 3 (mathjax-full, pinned in package-lock.json), for
// book/_ext/typeset_math.py, which calls it once per build with the formulas no earlier build typeset.
//
//   node book/_ext/typeset_math.cjs < request.json > reply.json
//
// request: {"formulas": [[tex, display], ...]}
// reply:   {"version": "3.2.2",
//           "svg": [html, ...],          one <mjx-container> per formula (or null where it failed)
//           "glyphs": {id: path, ...},   the outline of every glyph the formulas use (<use href="#id">)
//           "css": "...",                MathJax's style sheet for SVG output
//           "errors": [[index, message], ...]}
//
// Each formula is typeset as MathJax typesets it in a browser: the TeX input with every package
// (AllPackages: what the browser's autoload would load), SVG output whose glyphs are shared through
// one cache ("global": each formula refers to its glyphs by id; the page carries their outlines once),
// and MathJax's assistive MathML beside it, which is what a screen reader reads. The font metrics are
// those of a 16 px font whose ex is 8 px; the SVG's sizes are in ex, so a formula scales with the text
// around it.
"use strict";

const fs = require("fs");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {SVG} = require("mathjax-full/js/output/svg.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
// A TeX error raises rather than being drawn in red into the page.
const tex = new TeX({
  packages: AllPackages.filter((name) => name !== "bussproofs"),
  formatError: (jax, err) => { throw err; },
});
const svg = new SVG({fontCache: "global"});
const doc = mathjax.document("", {InputJax: tex, OutputJax: svg});

// A glyph's place is the product of the transforms of the groups around it (one <g> per MathML node:
// <g><g transform="translate(605,363) scale(0.707)"><use href="#MJX-TEX-N-32"/></g></g>). A group that
// only moves its children is dissolved into them (each child's transform list starts with the
// group's: the same product), which leaves a formula about half the elements, and a page that much
// less to style and lay out. Only <g>, <use>, <rect> and <path> children take a transform attribute
// in SVG 1.1; a group with any other child, or another attribute, is kept.
const MOVABLE = new Set(["g", "use", "rect", "path"]);

function dissolveGroups(node) {
  // data-mml-node, data-c and data-mjx-texclass name each element's MathML node, character and TeX
  // class, for MathJax's explorer, which a page typeset here does not load: dropped (a quarter of the markup).
  for (const attribute of adaptor.allAttributes(node)) {
    if (attribute.name.startsWith("data-")) {
      adaptor.removeAttribute(node, attribute.name);
    }
  }
  for (const child of adaptor.childNodes(node).slice()) {
    if (MOVABLE.has(adaptor.kind(child)) || adaptor.kind(child) === "svg") {
      dissolveGroups(child);
    }
  }
  if (adaptor.kind(node) !== "g" || adaptor.kind(adaptor.parent(node)) !== "g") {
    return;
  }
  const attributes = adaptor.allAttributes(node).map((a) => a.name);
  const children = adaptor.childNodes(node).slice();
  if (attributes.some((name) => name !== "transform") || children.some((c) => !MOVABLE.has(adaptor.kind(c)))) {
    return;
  }
  const moved = adaptor.getAttribute(node, "transform");
  for (const child of children) {
    if (moved) {
      const own = adaptor.getAttribute(child, "transform");
      adaptor.setAttribute(child, "transform", mergeTranslations(own ? moved + " " + own : moved));
    }
    adaptor.insert(child, node);
  }
  adaptor.remove(node);
}

// "translate(736,0) translate(0,700) scale(0.707)" -> "translate(736,700) scale(0.707)": two translations
// in a row are one (their sum), rounded as MathJax rounds (to 0.1 of its unit, 1/1000 em).
const TRANSLATIONS = /translate\((-?[\d.]+)(?:[ ,]+(-?[\d.]+))?\)\s+translate\((-?[\d.]+)(?:[ ,]+(-?[\d.]+))?\)/;

function mergeTranslations(transform) {
  let m;
  while ((m = TRANSLATIONS.exec(transform))) {
    const x = Math.round((Number(m[1]) + Number(m[3])) * 10) / 10;
    const y = Math.round((Number(m[2] || 0) + Number(m[4] || 0)) * 10) / 10;
    transform = transform.slice(0, m.index) + `translate(${x},${y})` + transform.slice(m.index + m[0].length);
  }
  return transform;
}

const reply = {version: mathjax.version, svg: [], glyphs: {}, css: "", errors: []};
request.formulas.forEach(([source, display], index) => {
  try {
    const node = doc.convert(source, {display: Boolean(display), em: 16, ex: 8, containerWidth: 80 * 16});
    if (!process.env.SLR_MATH_KEEP_GROUPS) {  // (set: MathJax's own structure, to compare against)
      for (const svgNode of adaptor.tags(node, "svg")) {
        dissolveGroups(svgNode);
      }
    }
    reply.svg.push(adaptor.outerHTML(node).replace(/ data-mjx-texclass="[^"]*"/g, ""));
  } catch (err) {
    reply.svg.push(null);
    reply.errors.push([index, String((err && err.message) || err)]);
  }
});
// The glyphs of the shared cache: <defs><path id="MJX-TEX-I-1D465" d="..."></path>...</defs>
const defs = svg.fontCache.getCache();
for (const path of adaptor.childNodes(defs)) {
  reply.glyphs[adaptor.getAttribute(path, "id")] = adaptor.getAttribute(path, "d");
}
reply.css = adaptor.textContent(svg.styleSheet(doc));
process.stdout.write(JSON.stringify(reply));

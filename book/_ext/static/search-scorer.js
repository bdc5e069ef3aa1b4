/* The book's search ranking (html_search_scorer, set by book/_ext/search_tuning.py).

   Sphinx's defaults, plus one rule: results from the API reference (book/api/) rank below
   every page of the book's text, unless the query is an identifier that names an object
   ("oracle_risk", "slrlib.oracle_risk"; not a plain word such as "softmax", which is also a
   module's name). The API pages repeat the chapters' words in every docstring
   (a search for "Theorem 5" listed 82 pages, the API's first).
*/
var Scorer = {
  score: function (result) {
    var docname = result[0], title = String(result[1] || ""), score = result[4];
    if (docname.indexOf("book/api/") !== 0) {
      return score;
    }
    var query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    var name = title.toLowerCase();
    // An identifier ("oracle_risk", "slrlib.verify") that names the object: the API is the answer.
    var identifier = /^[a-z_][a-z0-9_.]*$/.test(query) && /[_.]/.test(query);
    if (identifier && (name === query || name.endsWith("." + query))) {
      return score;
    }
    return score - 1000;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

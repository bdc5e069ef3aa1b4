/* The search page's snippets without a request (book/_ext/search_tuning.py).

   Sphinx fetches each result's page to cut a summary out of it; a browser refuses such a
   fetch for a book opened from disk (file://). slr-page-texts.js holds the text of every
   page; a fetch of a page of this book is answered from it, any other fetch goes through.
*/
(function () {
  "use strict";
  var texts = window.SLR_PAGE_TEXTS || {};
  var root = new URL(document.documentElement.dataset.content_root || "./", window.location.href);
  var realFetch = window.fetch ? window.fetch.bind(window) : null;
  window.fetch = function (resource, init) {
    var url = new URL(typeof resource === "string" ? resource : resource.url, window.location.href);
    var path = url.href.split("#")[0].split("?")[0];
    if (path.indexOf(root.href) === 0) {
      var page = decodeURIComponent(path.slice(root.href.length));
      if (Object.prototype.hasOwnProperty.call(texts, page)) {
        return Promise.resolve(new Response(texts[page], { headers: { "Content-Type": "text/html" } }));
      }
    }
    return realFetch(resource, init);
  };
})();

/* The page a reader reads (book/_ext/page_assets.py adds this file to every page).

   1. Phones: the theme's menu (☰) and contents buttons open their dialogs. Under
      sphinx-book-theme 1.3.0, pydata-sphinx-theme 0.17.1 binds its handler to the first
      .primary-toggle (and .secondary-toggle) of the page only, which is not the button the
      header shows; a tap on the shown one did nothing. Every other toggle forwards its
      click to the first.
   2. A link to a check verdict (the ledger's links) opens the folded list that holds it.
   3. Display equations that are wider than their box, where the box is narrow (phones),
      scroll inside it: they are marked .slr-scrolls, which shows edge shadows and a
      scrollbar (slr-book.css). Each marking counts itself in <html data-slr-marked="n">,
      which the browser tests wait for.
*/
(function () {
  "use strict";

  function onReady(callback) {
    if (document.readyState !== "loading") {
      callback();
    } else {
      document.addEventListener("DOMContentLoaded", callback);
    }
  }

  /* 1. Sidebar toggles */
  function forwardToggles() {
    ["primary-toggle", "secondary-toggle"].forEach(function (name) {
      var toggles = document.querySelectorAll("." + name);
      for (var i = 1; i < toggles.length; i++) {
        toggles[i].addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          toggles[0].click();
        });
      }
    });
  }

  /* 2. Open the folded checks that hold the target of the URL's fragment */
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!id) {
      return;
    }
    var target = document.getElementById(id);
    if (!target) {
      return;
    }
    var folded = target.closest("details");
    var opened = false;
    while (folded) {
      if (!folded.open) {
        folded.open = true;
        opened = true;
      }
      folded = folded.parentElement ? folded.parentElement.closest("details") : null;
    }
    if (opened) {
      target.scrollIntoView();
    }
  }

  /* 3. Mark the display equations that scroll */
  var marked = 0;

  function markScrolling() {
    var boxes = document.querySelectorAll('div.math mjx-container[display="true"]');
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      box.classList.toggle("slr-scrolls", box.scrollWidth > box.clientWidth + 1);
    }
    marked += 1;
    document.documentElement.setAttribute("data-slr-marked", String(marked));
  }

  function whenTypeset(callback) {
    var tries = 0;
    (function wait() {
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) {
        mj.startup.promise.then(callback);
      } else if (tries++ < 100) {
        window.setTimeout(wait, 100);
      }
    })();
  }

  onReady(function () {
    forwardToggles();
    openTarget();
    if (document.querySelector("div.math")) {
      whenTypeset(markScrolling);
      var pending = null;
      window.addEventListener("resize", function () {
        window.clearTimeout(pending);
        pending = window.setTimeout(markScrolling, 100);
      });
    }
  });
  window.addEventListener("hashchange", openTarget);
})();

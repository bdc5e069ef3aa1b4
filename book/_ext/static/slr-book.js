/* The page a reader reads (book/_ext/page_assets.py adds this file to every page).

   1. Phones: the theme's menu (☰) and contents buttons open their dialogs. Under
      sphinx-book-theme 1.3.0, pydata-sphinx-theme 0.17.1 binds its handler to the first
      .primary-toggle (and .secondary-toggle) of the page only, which is not the button the
      header shows; a tap on the shown one did nothing. Every other toggle forwards its
      click to the first.
   2. A link to a check verdict (the ledger's links) opens the folded list that holds it.
   3. A block that scrolls sideways (a code block, an output, a table, a wide display equation
      on a phone) can be reached by keyboard (tabindex="0"), so that its hidden part can be
      scrolled into view without a mouse. The theme did this for the whole page at load, which
      laid out every section at once (book/_ext/light_pages.py removes that pass); here each
      block is measured as it nears the screen, and again after a resize.
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

  /* 3. Blocks that scroll sideways, reachable by keyboard, measured as they near the screen */
  var SCROLLING_BLOCKS = [
    "pre",
    ".nboutput > .output_area",
    ".cell_output > .output",
    ".jp-RenderedHTMLCommon",
    ".pst-scrollable-table-container",
    'div.math mjx-container[display="true"]'
  ].join(", ");
  var near = new Set();

  function markScrolling(block) {
    var scrolls = block.scrollWidth > block.clientWidth + 1 || block.scrollHeight > block.clientHeight + 1;
    if (scrolls) {
      block.tabIndex = 0;
    } else if (block.hasAttribute("tabindex") && block.tabIndex === 0) {
      block.removeAttribute("tabindex");
    }
  }

  function watchScrollingBlocks() {
    var blocks = document.querySelectorAll(SCROLLING_BLOCKS);
    if (!blocks.length) {
      return;
    }
    if (!("IntersectionObserver" in window)) {
      blocks.forEach(markScrolling);
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          near.add(entry.target);
          markScrolling(entry.target);
        } else {
          near.delete(entry.target);
        }
      });
    }, {rootMargin: "100% 0px"});
    blocks.forEach(function (block) {
      observer.observe(block);
    });
    var pending = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(pending);
      pending = window.setTimeout(function () {
        near.forEach(markScrolling);
      }, 150);
    });
  }

  onReady(function () {
    forwardToggles();
    openTarget();
    watchScrollingBlocks();
  });
  window.addEventListener("hashchange", openTarget);
})();

"""``make bench``'s ``pages`` row: how soon each chapter page can be read, and what it sends.

    .venv/bin/python -m benchmarks --only pages [--site _build/html] [--pages 03_oracle_risk,16_dynamics]

Every chapter page of the built book is opened in headless Chromium (Debian's, the browser tests' flags),
each in a fresh browser context with the cache off, as a first visit: at 1300 x 900, on this machine's
CPU (1x) and slowed 4x (Chrome DevTools' "mid-tier mobile": CDP ``Emulation.setCPUThrottlingRate``).
For each it records, in milliseconds from the navigation's start:

* *readable*: the first frame painted after the page's first screen can be read: the document parsed,
  every formula on the first screen typeset (an ``mjx-container`` holding ``mjx-math``; with MathJax in
  the browser that is after it has typeset the page) and the fonts loaded;
* *settled*: the load event, and the end of the last long task (over 50 ms) before the main thread stays
  free for :data:`QUIET_MS` (typesetting in the browser is such a task);

and the bytes a reader receives who scrolls through the whole page (lazy figures included), counted as a
web server that gzips text (HTML, CSS, JavaScript, SVG, JSON) would send them: the sum over every file
the page loaded. The page is read from disk (file://): no network time is in these numbers.

This is a benchmark, not a test: its goals (:data:`GOALS`, for the worst chapter) are reported, never
asserted. Run it on a quiet machine.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from sitepaths import CHROMIUM_FLAGS, chromium_path, sent_bytes  # noqa: E402

VIEWPORT = {"width": 1300, "height": 900}
RATES = (1, 4)
#: First visits per page and rate; the table shows their median (one visit varies by a quarter or more).
REPEATS = 3
#: The main thread counts as free once no long task has started for this long (at 1x; scaled by the rate).
QUIET_MS = 1_000
#: Goals on the developers' machine, for the worst chapter (issue 40): milliseconds, and bytes.
GOALS = {"readable_1x": 1_000, "readable_4x": 2_000, "settled_1x": 2_500, "settled_4x": 8_000,
         "bytes": 1_500_000}

#: Recorded in the page from its first script on: the first readable frame, and the long tasks.
PROBE = r"""
(() => {
  const slr = window.__slrPage = {readable: null, lastLongTaskEnd: 0, lastLongTaskStart: 0, longTasks: 0};
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) {
        slr.longTasks += 1;
        slr.lastLongTaskStart = Math.max(slr.lastLongTaskStart, e.startTime);
        slr.lastLongTaskEnd = Math.max(slr.lastLongTaskEnd, e.startTime + e.duration);
      }
    }).observe({type: 'longtask', buffered: true});
  } catch (e) {}
  // Both measure only the first screen: a layout query inside a part of the page the browser has not laid
  // out yet (CSS content-visibility) would lay it out, and cost what is being measured.
  function firstScreenTypeset() {
    const height = window.innerHeight;
    for (const el of document.querySelectorAll('span.math, div.math')) {  // in document order
      const r = el.getBoundingClientRect();
      if (r.top > height) break;
      if (r.bottom < 0 || r.width === 0) continue;
      if (!el.querySelector('mjx-container mjx-math, mjx-container svg, .katex')) return false;
    }
    return true;
  }
  function pastFirstScreen() {
    // The parser has finished, or reached two screens down: the first screen is all there.
    return document.readyState !== 'loading' || document.documentElement.scrollHeight > 2 * window.innerHeight;
  }
  // Checked in a frame's callback, before the browser paints that frame: the first screen is measured
  // first, which lays it out, and laying out text asks for the fonts it needs, so that a font still
  // loading shows in document.fonts.status. The first screen is on screen at the next frame.
  let ready = false;
  function frame() {
    if (ready) { slr.readable = performance.now(); return; }
    ready = pastFirstScreen() && firstScreenTypeset() && document.fonts.status === 'loaded';
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
})();
"""


def _local(url: str) -> Path | None:
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def measure_page(browser, url: str, rate: int) -> dict:
    """One first visit of ``url`` at CPU slowdown ``rate``: readable and settled (ms), bytes sent, files."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
        files: dict[str, Path] = {}
        page.on("request", lambda r: (p := _local(r.url)) is not None and files.setdefault(r.url.split("?")[0], p))
        page.add_init_script(PROBE)
        page.goto(url, wait_until="load", timeout=180_000)
        quiet = QUIET_MS * rate
        page.wait_for_function("() => window.__slrPage.readable !== null", timeout=120_000)
        # Settled: no long task started in the last `quiet` ms (and the load event passed).
        page.wait_for_function(
            "q => performance.now() - Math.max(window.__slrPage.lastLongTaskEnd, "
            "performance.timing.loadEventEnd - performance.timing.navigationStart) > q",
            arg=quiet, timeout=180_000, polling=100)
        timing = page.evaluate("""() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const paint = performance.getEntriesByName('first-contentful-paint')[0];
          const s = window.__slrPage;
          return {readable: s.readable, load: nav.loadEventEnd, long_end: s.lastLongTaskEnd,
                  long_tasks: s.longTasks, fcp: paint ? paint.startTime : null,
                  dom_elements: document.getElementsByTagName('*').length};
        }""")
        # Scroll through the page, so that lazy images and the fonts of every formula load, then count.
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        page.evaluate("""async () => {
          const step = window.innerHeight;
          for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
            window.scrollTo(0, y);
            await new Promise(r => requestAnimationFrame(() => setTimeout(r, 30)));
          }
          await document.fonts.ready;
          await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
        }""")
        page.wait_for_timeout(200)
        existing = {u: p for u, p in files.items() if p.is_file()}
        return {
            "readable_ms": round(max(timing["readable"], timing["fcp"] or 0)),
            "settled_ms": round(max(timing["load"], timing["long_end"])),
            "fcp_ms": round(timing["fcp"] or 0),
            "long_tasks": timing["long_tasks"],
            "dom_elements": timing["dom_elements"],
            "bytes": sum(sent_bytes(p) for p in existing.values()),
            "raw_bytes": sum(p.stat().st_size for p in existing.values()),
            "files": len(existing),
        }
    finally:
        context.close()


def chapter_pages(site: Path, only: list[str] | None = None) -> list[Path]:
    pages = sorted((site / "book").glob("[0-9][0-9]_*.html"))
    if only:
        pages = [p for p in pages if p.stem in only]
    return pages


def bench_pages(site: Path, only: list[str] | None = None, repeats: int = REPEATS) -> dict:
    """Every chapter page at each rate in :data:`RATES`, ``repeats`` first visits each (medians): the table
    printed, and a record for bench.json."""
    from playwright.sync_api import sync_playwright

    pages = chapter_pages(site, only)
    if not pages:
        raise SystemExit(f"no chapter pages in {site}: build the book first (`make book`)")
    rows: dict[str, dict] = {}
    print(f"pages: {len(pages)} chapter pages of {site}, {repeats} first visits each at "
          f"{VIEWPORT['width']}x{VIEWPORT['height']}, CPU at 1x and 4x (ms; bytes as gzipped by a server)")
    header = f"{'chapter':<22} {'readable 1x':>11} {'settled 1x':>10} {'readable 4x':>11} {'settled 4x':>10} {'KB sent':>8}"
    print(header)
    print("-" * len(header))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            for path in pages:
                row = {}
                for rate in RATES:
                    visits = [measure_page(browser, path.as_uri(), rate) for _ in range(repeats)]
                    row[f"readable_{rate}x_ms"] = statistics.median(m["readable_ms"] for m in visits)
                    row[f"settled_{rate}x_ms"] = statistics.median(m["settled_ms"] for m in visits)
                    row[f"readable_{rate}x_all"] = [m["readable_ms"] for m in visits]
                    row[f"settled_{rate}x_all"] = [m["settled_ms"] for m in visits]
                    last = visits[-1]
                    row.update(bytes=last["bytes"], raw_bytes=last["raw_bytes"], files=last["files"],
                               dom_elements=last["dom_elements"])
                rows[path.stem] = row
                print(f"{path.stem:<22} {row['readable_1x_ms']:>11.0f} {row['settled_1x_ms']:>10.0f} "
                      f"{row['readable_4x_ms']:>11.0f} {row['settled_4x_ms']:>10.0f} {row['bytes'] / 1000:>8.0f}",
                      flush=True)
        finally:
            browser.close()
    summary = {}
    for key in ("readable_1x_ms", "settled_1x_ms", "readable_4x_ms", "settled_4x_ms", "bytes"):
        values = [r[key] for r in rows.values()]
        worst = max(rows, key=lambda name: rows[name][key])
        summary[key] = {"median": statistics.median(values), "worst": rows[worst][key], "worst_page": worst}
    print("-" * len(header))
    for label, key, goal in (("readable 1x", "readable_1x_ms", "readable_1x"), ("settled 1x", "settled_1x_ms", "settled_1x"),
                             ("readable 4x", "readable_4x_ms", "readable_4x"), ("settled 4x", "settled_4x_ms", "settled_4x"),
                             ("sent", "bytes", "bytes")):
        s = summary[key]
        unit = " B" if key == "bytes" else " ms"
        verdict = "within" if s["worst"] <= GOALS[goal] else "ABOVE"
        print(f"{label:<12} median {s['median']:>9.0f}{unit}, worst {s['worst']:>9.0f}{unit} ({s['worst_page']}); "
              f"goal for the worst {GOALS[goal]}{unit}: {verdict}")
    return {"site": str(site), "pages": rows, "summary": summary, "goals": GOALS}


def main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=str(ROOT / "_build" / "html"))
    parser.add_argument("--pages", default="", help="chapter stems, comma-separated (default: every chapter)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="first visits per page and CPU rate (median shown)")
    parser.add_argument("--json", default="", help="also write the record to this file")
    args = parser.parse_args(argv)
    record = bench_pages(Path(args.site), [p for p in args.pages.split(",") if p] or None, args.repeats)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

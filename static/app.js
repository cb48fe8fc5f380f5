// perfdash: small progressive enhancements, no dependencies. Every page
// is complete without this script (charts are SVG, tables are HTML, the
// chart points have native <title> tooltips); it adds:
//   - sortable tables (table.sortable): header buttons, keyboard friendly
//   - filter boxes (input[data-filter="<table id>"]) with a "no match" line
//   - tooltips for chart points and heatmap cells (elements with a
//     <title> inside svg [data-tip-source]), on hover and on keyboard focus
//   - policy switching: a <select data-policy-switch> shows the
//     [data-policy="<value>"] elements of the chosen policy and hides the
//     others; without JavaScript every policy stays visible, one after
//     the other. The choice is remembered across pages.
//   - controls that only work with JavaScript carry data-needs-js and the
//     hidden attribute; they are revealed here.
//   - scroll boxes (wide tables, charts on a phone) that overflow and hold
//     no link become tab stops, so a keyboard can scroll them
//   - the trend chart's time range (nav.range): the range shown comes from
//     the URL (#range-13w) by CSS alone; this marks the chosen link
//     aria-current and keeps the page from jumping to the chart.
(function () {
  "use strict";

  var each = function (selector, fn, root) {
    Array.prototype.forEach.call((root || document).querySelectorAll(selector), fn);
  };

  // ---- Sorting ---------------------------------------------------------
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-sort");
    if (v === null) v = cell.textContent.trim();
    var n = Number(v.replace(/^[×]/, "").replace(/[,%]|\s.*$/g, ""));
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }

  function compare(x, y) {
    if (typeof x === "number" && typeof y === "number") return x - y;
    if (typeof x === "number") return -1; // numbers before "–"
    if (typeof y === "number") return 1;
    return x.localeCompare(y);
  }

  function makeSortable(table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var keyed = rows.map(function (r, i) { return { r: r, k: cellValue(r, index), i: i }; });
        keyed.sort(function (a, b) {
          var c = compare(a.k, b.k);
          return (ascending ? c : -c) || a.i - b.i;
        });
        keyed.forEach(function (x) { body.appendChild(x.r); });
      });
    });
  }

  // ---- Filtering -------------------------------------------------------
  function makeFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter"));
    if (!table) return;
    var empty = document.createElement("p");
    empty.className = "filter-empty";
    empty.setAttribute("data-filter-empty", "");
    empty.setAttribute("role", "status");
    empty.hidden = true;
    table.parentNode.insertBefore(empty, table.nextSibling);
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
        if (!row.hidden) shown++;
      });
      empty.hidden = shown > 0;
      empty.textContent = shown > 0 ? "" : "Nothing matches “" + input.value.trim() + "”.";
    });
  }

  // ---- Tooltips --------------------------------------------------------
  var tip = null;
  function tooltip() {
    if (!tip) {
      tip = document.createElement("div");
      tip.className = "pd-tooltip";
      tip.setAttribute("role", "tooltip");
      tip.hidden = true;
      document.body.appendChild(tip);
    }
    return tip;
  }

  // The text lives in one <title> (what screen readers and JS-less
  // browsers show). It moves to data-tip so that the native tooltip does
  // not show on top of this one; a link keeps it as its aria-label (other
  // elements have their words elsewhere: an aria-label on them would be
  // ignored, or prohibited).
  function adoptTitles(svg) {
    each("[data-tip-target]", function (el) {
      var title = el.querySelector("title");
      if (!title) return;
      var text = title.textContent;
      var link = el.closest("a");
      var target = link || el;
      target.setAttribute("data-tip", text);
      if (link && !link.hasAttribute("aria-label")) link.setAttribute("aria-label", text.replace(/\n/g, "; "));
      title.parentNode.removeChild(title);
    }, svg);
  }

  // Heatmap cells carry their tooltip in a title attribute (the word is in
  // the cell for screen readers).
  function adoptCellTitles(table) {
    each("td[title]", function (td) {
      td.setAttribute("data-tip", td.getAttribute("title"));
      td.removeAttribute("title");
    }, table);
  }

  // ---- Time range of the trend chart -----------------------------------
  function markRange() {
    var m = /^#range-(.+)$/.exec(window.location.hash);
    each("nav.range", function (nav) {
      var links = nav.querySelectorAll("a[data-range]");
      var chosen = m && nav.querySelector('a[data-range="' + m[1] + '"]');
      Array.prototype.forEach.call(links, function (a) {
        var current = chosen ? a === chosen : a.getAttribute("data-default") === "true";
        if (current) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
      });
    });
    keyboardScrolls(); // the view shown changed
  }
  function makeRange(nav) {
    each("a[data-range]", function (a) {
      if (a.getAttribute("aria-current") === "true") a.setAttribute("data-default", "true");
      a.addEventListener("click", function (e) {
        // Change the URL (so the view can be shared) without scrolling.
        e.preventDefault();
        if (window.history && window.history.replaceState) {
          window.history.replaceState(null, "", a.getAttribute("href"));
          // :target follows location.hash only on navigation: show the
          // view by hand, then re-mark the links.
          each("[data-range-view]", function (v) {
            v.style.display = v.id === "range-" + a.getAttribute("data-range") ? "block" : "none";
          });
        } else {
          window.location.hash = a.getAttribute("href");
        }
        markRange();
      });
    }, nav);
  }

  function showTip(el) {
    var t = tooltip();
    var lines = el.getAttribute("data-tip").split("\n");
    t.textContent = "";
    lines.forEach(function (line, i) {
      var div = document.createElement("div");
      var colon = line.indexOf(": ");
      if (i === 0) {
        div.className = "tip-head";
        div.textContent = line;
      } else if (colon > 0) {
        var k = document.createElement("span");
        k.className = "tip-key";
        k.textContent = line.slice(0, colon);
        div.appendChild(k);
        div.appendChild(document.createTextNode(" " + line.slice(colon + 2)));
      } else {
        div.textContent = line;
      }
      t.appendChild(div);
    });
    var verdict = el.getAttribute("data-verdict") ||
      (el.querySelector("[data-verdict]") || { getAttribute: function () { return ""; } }).getAttribute("data-verdict");
    t.setAttribute("data-verdict", verdict || "");
    t.hidden = false;
    var box = el.getBoundingClientRect();
    var w = t.offsetWidth, h = t.offsetHeight;
    var x = Math.min(Math.max(8, box.left + box.width / 2 - w / 2), document.documentElement.clientWidth - w - 8);
    var y = box.top - h - 10;
    if (y < 8) y = box.bottom + 10;
    t.style.left = x + window.scrollX + "px";
    t.style.top = y + window.scrollY + "px";
  }

  function hideTip() {
    if (tip) tip.hidden = true;
  }

  function tipTarget(e) {
    return e.target && e.target.closest ? e.target.closest("[data-tip]") : null;
  }

  // ---- Policy switching -----------------------------------------------
  var POLICY_KEY = "perfdash-policy";
  function storedPolicy() {
    try { return window.localStorage.getItem(POLICY_KEY); } catch (e) { return null; }
  }
  function applyPolicy(value) {
    each("[data-policy]", function (el) {
      el.hidden = el.getAttribute("data-policy") !== value;
    });
    each("select[data-policy-switch]", function (s) { s.value = value; });
  }
  function makePolicySwitch(select) {
    var saved = storedPolicy();
    var options = Array.prototype.map.call(select.options, function (o) { return o.value; });
    applyPolicy(saved && options.indexOf(saved) >= 0 ? saved : select.value);
    select.addEventListener("change", function () {
      applyPolicy(select.value);
      try { window.localStorage.setItem(POLICY_KEY, select.value); } catch (e) { /* private mode */ }
    });
  }

  // ---- Scroll boxes a keyboard can scroll -------------------------------
  // A wide table (.scroll) or chart (figure.chart-box, on a phone) scrolls
  // in its own box. A box with no link inside cannot be scrolled from the
  // keyboard unless it takes focus itself, so a box that overflows and has
  // nothing focusable becomes a tab stop, named after its caption; a box
  // that fits stays out of the tab order.
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])";
  function keyboardScroll(box) {
    var overflows = box.scrollWidth > box.clientWidth + 1;
    var own = box.getAttribute("data-scroll-stop") === "true";
    if (overflows && !own && !box.querySelector(FOCUSABLE)) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-scroll-stop", "true");
      // A group, not a region: a dozen "landmarks" named alike (one per
      // endpoint on a run page) would clutter a screen reader's list.
      if (!box.hasAttribute("role") && box.tagName !== "FIGURE") box.setAttribute("role", "group");
      var caption = box.querySelector("caption, figcaption");
      if (caption && !box.hasAttribute("aria-label")) {
        box.setAttribute("aria-label", caption.textContent.trim().slice(0, 120));
      }
    } else if (!overflows && own) {
      box.removeAttribute("tabindex");
      box.removeAttribute("data-scroll-stop");
    }
  }
  function keyboardScrolls() { each(".scroll, figure.chart-box", keyboardScroll); }

  each("[data-needs-js][hidden]", function (el) { el.hidden = false; });
  each("table.sortable", makeSortable);
  each("input[data-filter]", makeFilter);
  each("svg[data-tip-source]", adoptTitles);
  each("table.heatmap", adoptCellTitles);
  each("nav.range", makeRange);
  markRange();
  window.addEventListener("hashchange", function () {
    each("[data-range-view]", function (v) { v.style.display = ""; });
    markRange();
  });
  each("select[data-policy-switch]", makePolicySwitch);
  keyboardScrolls();
  var resizing = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(keyboardScrolls, 150);
  });
  document.addEventListener("toggle", keyboardScrolls, true); // <details> opened
  document.addEventListener("mouseover", function (e) {
    var el = tipTarget(e);
    if (el) showTip(el); else hideTip();
  });
  document.addEventListener("focusin", function (e) {
    var el = tipTarget(e);
    if (el) showTip(el); else hideTip();
  });
  document.addEventListener("focusout", hideTip);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") hideTip();
  });
  window.addEventListener("scroll", hideTip, { passive: true });
})();

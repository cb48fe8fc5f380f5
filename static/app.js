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
//   - zooming the trend chart's time axis (drag across it, or the zoom
//     buttons), the range kept in the URL (?from=…&to=…) so a reload or a
//     shared link shows the same stretch; hiding its series (?hide=…)
//   - the sort and the filter of a table marked data-url-state, kept in
//     the URL (?sort=ratio.desc&filter=regression)
//   - the heatmap's cells as keyboard stops: one Tab stop, arrow keys move
//     between cells, the focused cell shows its tooltip
(function () {
  "use strict";

  var each = function (selector, fn, root) {
    Array.prototype.forEach.call((root || document).querySelectorAll(selector), fn);
  };

  // ---- State in the URL's query (works over file:// too) ---------------
  function query() {
    try { return new URLSearchParams(window.location.search); } catch (e) { return null; }
  }
  function setQuery(update) {
    var q = query();
    if (!q || !window.history || !window.history.replaceState) return;
    Object.keys(update).forEach(function (k) {
      if (update[k] === null || update[k] === "") q.delete(k); else q.set(k, update[k]);
    });
    var text = q.toString();
    try {
      window.history.replaceState(null, "", window.location.pathname + (text ? "?" + text : "") + window.location.hash);
    } catch (e) { /* a browser that refuses it keeps the state on the page only */ }
  }
  // A column's name in the URL: its header's words, `median-p99-baseline-ms`.
  function columnKey(th) {
    return th.textContent.trim().toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  }

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
    var inUrl = table.hasAttribute("data-url-state");
    function sortBy(index, ascending) {
      var th = headers[index];
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
    }
    var keys = [];
    Array.prototype.forEach.call(headers, function (th, index) {
      keys.push(columnKey(th));
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        sortBy(index, ascending);
        if (inUrl) setQuery({ sort: keys[index] + "." + (ascending ? "asc" : "desc") });
      });
    });
    // A sort kept in the URL: `?sort=ratio.desc`.
    var q = inUrl && query();
    var m = q && /^(.+)\.(asc|desc)$/.exec(q.get("sort") || "");
    if (m && keys.indexOf(m[1]) >= 0) sortBy(keys.indexOf(m[1]), m[2] === "asc");
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
    var inUrl = table.hasAttribute("data-url-state");
    function apply() {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
        if (!row.hidden) shown++;
      });
      empty.hidden = shown > 0;
      empty.textContent = shown > 0 ? "" : "Nothing matches “" + input.value.trim() + "”.";
    }
    input.addEventListener("input", function () {
      apply();
      if (inUrl) setQuery({ filter: input.value.trim() });
    });
    // A filter kept in the URL: `?filter=regression`.
    var q = inUrl && query();
    if (q && q.get("filter")) {
      input.value = q.get("filter");
      apply();
    }
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
        // Another range is another chart: its zoom starts afresh.
        each("[data-trend]", function (block) { if (block.pdTrend) block.pdTrend.reset(); });
      });
    }, nav);
  }

  var tipFor = null; // the element whose tooltip is shown
  function showTip(el) {
    tipFor = el;
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
    tipFor = null;
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
  function keyboardScrolls() { each(".scroll, figure.chart-box, .chart-scroll", keyboardScroll); }

  // ---- Zooming the trend chart's time axis ------------------------------
  // The chart says where its time axis is (data-zoom="x0 x1 t0 t1": the
  // SVG x of its first and last moment, in seconds) and where its plot is
  // (data-plot="left top right bottom"). What moves is in g.t-zoom (the
  // series and the markers) and g.pd-overlay (the linked points); x is
  // mapped, y stays. Shapes are drawn with relative path commands after an
  // absolute move, so mapping the absolute x's keeps their size.
  var SVGNS = "http://www.w3.org/2000/svg";
  var MIN_ZOOM_SECONDS = 1800;
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

  function mapPath(d, map) {
    var tokens = d.match(/[A-Za-z]|-?\d*\.?\d+(?:e[-+]?\d+)?/g) || [];
    var out = [];
    var cmd = "";
    var arg = 0;
    tokens.forEach(function (t) {
      if (/[A-Za-z]/.test(t)) {
        cmd = t;
        arg = 0;
        out.push(t);
        return;
      }
      var v = parseFloat(t);
      if ((cmd === "M" || cmd === "L") && arg % 2 === 0) v = map(v);
      else if (cmd === "H") v = map(v);
      arg++;
      out.push(String(Math.round(v * 10) / 10));
    });
    return out.join(" ").replace(/ ([A-Za-z]) /g, "$1").replace(/^([A-Za-z]) /, "$1");
  }

  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function isoMinute(seconds) {
    var d = new Date(seconds * 1000);
    return d.getUTCFullYear() + "-" + pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate()) +
      "T" + pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) + "Z";
  }
  function dayWords(d, year) {
    return MONTHS[d.getUTCMonth()] + " " + d.getUTCDate() + (year ? ", " + d.getUTCFullYear() : "");
  }

  // Ticks of a time axis from ta to tb (seconds), as the chart draws them
  // (src/render/charts/axis.rs, date_ticks): minutes within three hours,
  // hours within two days, days
  // within two weeks, Mondays within ten weeks, else months; labels
  // thinned to at least minGap units apart.
  function timeTicks(ta, tb, width, minGap) {
    var spanDays = (tb - ta) / 86400;
    var step, stepDays;
    if (spanDays * 1440 <= 180) {
      var minutes = spanDays * 1440;
      var m = [5, 10, 15, 30].filter(function (n) { return minutes / n <= 12; })[0] || 30;
      step = { minutes: m };
      stepDays = m / 1440;
      minGap = Math.max(minGap, 100);
    } else if (spanDays <= 2) {
      var hours = spanDays * 24;
      var n = [1, 2, 3, 6, 12].filter(function (h) { return hours / h <= 12; })[0] || 12;
      step = { hours: n };
      stepDays = n / 24;
      minGap = Math.max(minGap, 100);
    } else if (spanDays <= 14) { step = { days: 1 }; stepDays = 1; }
    else if (spanDays <= 70) { step = { days: 7 }; stepDays = 7; }
    else { step = { months: 1 }; stepDays = 30.4; }
    var d = new Date(ta * 1000);
    var t;
    if (step.minutes) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes() - d.getUTCMinutes() % step.minutes);
    } else if (step.hours) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() - d.getUTCHours() % step.hours);
    } else if (step.days === 1) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    } else if (step.days === 7) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - (d.getUTCDay() + 6) % 7);
    } else {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
    var ticks = [];
    for (var guard = 0; t <= tb * 1000 && guard < 2000; guard++) {
      if (t >= ta * 1000) ticks.push(t);
      var c = new Date(t);
      if (step.minutes) t += step.minutes * 60000;
      else if (step.hours) t += step.hours * 3600000;
      else if (step.days) t += step.days * 86400000;
      else t = Date.UTC(c.getUTCFullYear(), c.getUTCMonth() + 1, 1);
    }
    var perTick = spanDays > 0 ? width * stepDays / spanDays : width;
    var every = Math.max(1, Math.ceil(minGap / Math.max(1, perTick)));
    var year = null, day = null;
    return ticks.map(function (ms, i) {
      var label = null;
      if (i % every === 0) {
        var c = new Date(ms);
        var newYear = year !== c.getUTCFullYear();
        var key = c.getUTCFullYear() * 1000 + c.getUTCMonth() * 40 + c.getUTCDate();
        var newDay = day !== key;
        year = c.getUTCFullYear();
        day = key;
        var hm = pad2(c.getUTCHours()) + ":" + pad2(c.getUTCMinutes());
        if (step.minutes || step.hours) label = newDay ? dayWords(c, false) + " " + hm : hm;
        else if (step.days) label = dayWords(c, newYear);
        else label = MONTHS[c.getUTCMonth()] + (newYear ? " " + c.getUTCFullYear() : "");
      }
      return { at: ms / 1000, label: label };
    });
  }

  // One chart's zoom: remembers what it drew, maps it to [ta, tb].
  function zoomable(svg) {
    if (svg.pdZoom) return svg.pdZoom;
    var z = (svg.getAttribute("data-zoom") || "").split(" ").map(Number);
    var plot = (svg.getAttribute("data-plot") || "").split(" ").map(Number);
    if (z.length !== 4 || plot.length !== 4 || !(z[3] > z[2])) return null;
    var x0 = z[0], x1 = z[1], t0 = z[2], t1 = z[3];
    var paths = [], lines = [], dots = [], shifted = [], links = [];
    var moving = svg.querySelector("g.t-zoom");
    if (!moving) return null;
    each("path", function (p) { paths.push([p, p.getAttribute("d")]); }, moving);
    each("polyline", function (p) { lines.push([p, p.getAttribute("points")]); }, moving);
    each("circle", function (c) {
      var marker = c.closest("[data-x]");
      if (marker) shifted.push([c, "cx", +c.getAttribute("cx"), +marker.getAttribute("data-x")]);
      else dots.push([c, +c.getAttribute("cx")]);
    }, moving);
    each("[data-x] text", function (t) {
      shifted.push([t, "x", +t.getAttribute("x"), +t.closest("[data-x]").getAttribute("data-x")]);
    }, moving);
    each("g.pd-overlay a", function (a) {
      var c = a.querySelector("circle");
      if (c) links.push([a, c, +c.getAttribute("cx")]);
    }, svg);
    var ticks = svg.querySelector("g.t-xticks");
    var ticksHtml = ticks ? ticks.innerHTML : "";
    var state = { svg: svg, t0: t0, t1: t1, ta: t0, tb: t1, plot: plot, x0: x0, x1: x1 };
    state.timeAt = function (x) { return state.ta + (x - x0) / (x1 - x0) * (state.tb - state.ta); };
    state.apply = function (ta, tb) {
      ta = Math.max(t0, ta);
      tb = Math.min(t1, tb);
      if (tb - ta < MIN_ZOOM_SECONDS) {
        var mid = (ta + tb) / 2;
        ta = Math.max(t0, mid - MIN_ZOOM_SECONDS / 2);
        tb = Math.min(t1, ta + MIN_ZOOM_SECONDS);
      }
      state.ta = ta;
      state.tb = tb;
      var whole = ta <= t0 && tb >= t1;
      var xa = x0 + (ta - t0) / (t1 - t0) * (x1 - x0);
      var k = (t1 - t0) / (tb - ta);
      var map = whole ? function (x) { return x; } : function (x) { return x0 + (x - xa) * k; };
      paths.forEach(function (p) { p[0].setAttribute("d", whole ? p[1] : mapPath(p[1], map)); });
      lines.forEach(function (l) {
        l[0].setAttribute("points", whole ? l[1] : l[1].trim().split(/\s+/).map(function (xy) {
          var c = xy.split(",");
          return Math.round(map(+c[0]) * 10) / 10 + "," + c[1];
        }).join(" "));
      });
      dots.forEach(function (d) { d[0].setAttribute("cx", Math.round(map(d[1]) * 10) / 10); });
      shifted.forEach(function (s) { s[0].setAttribute(s[1], Math.round((s[2] + map(s[3]) - s[3]) * 10) / 10); });
      links.forEach(function (l) {
        var x = map(l[2]);
        l[1].setAttribute("cx", Math.round(x * 10) / 10);
        // Points zoomed out of the plot are no tab stops.
        l[0].style.display = x < plot[0] - 1 || x > plot[2] + 1 ? "none" : "";
      });
      if (ticks) {
        if (whole) ticks.innerHTML = ticksHtml;
        else {
          while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
          timeTicks(ta, tb, x1 - x0, 70).forEach(function (t) {
            var x = Math.round((x0 + (t.at - ta) / (tb - ta) * (x1 - x0)) * 10) / 10;
            var mark = document.createElementNS(SVGNS, "path");
            mark.setAttribute("class", "t-tick");
            mark.setAttribute("d", "M" + x + " " + plot[3] + "v6");
            ticks.appendChild(mark);
            if (t.label) {
              var text = document.createElementNS(SVGNS, "text");
              text.setAttribute("x", x);
              text.setAttribute("y", plot[3] + 20);
              text.setAttribute("text-anchor", "middle");
              text.textContent = t.label;
              ticks.appendChild(text);
            }
          });
        }
      }
      return !whole;
    };
    svg.pdZoom = state;
    return state;
  }

  function makeTrend(block) {
    var tools = block.previousElementSibling;
    while (tools && !tools.classList.contains("chart-tools")) tools = tools.previousElementSibling;
    var status = tools && tools.querySelector(".zoom-state");
    var trend = { zoomed: false };
    block.pdTrend = trend;
    function shown() {
      var svgs = block.querySelectorAll("svg.trend");
      for (var i = 0; i < svgs.length; i++) if (svgs[i].getClientRects().length) return zoomable(svgs[i]);
      return null;
    }
    function say(z) {
      if (!status) return;
      if (!z || !trend.zoomed) { status.textContent = ""; return; }
      var a = new Date(z.ta * 1000), b = new Date(z.tb * 1000);
      var short = z.tb - z.ta < 3 * 86400;
      var words = function (d) { return dayWords(d, true) + (short ? " " + pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) : ""); };
      status.textContent = "Showing " + words(a) + " to " + words(b) + " (UTC)";
    }
    function zoomTo(z, ta, tb, remember) {
      trend.zoomed = z.apply(ta, tb);
      if (remember) setQuery(trend.zoomed ? { from: isoMinute(z.ta), to: isoMinute(z.tb) } : { from: null, to: null });
      say(z);
      each("button[data-zoom='out'], button[data-zoom='reset']", function (b) { b.disabled = !trend.zoomed; }, tools || block);
    }
    trend.reset = function () {
      each("svg.trend", function (svg) { if (svg.pdZoom) svg.pdZoom.apply(svg.pdZoom.t0, svg.pdZoom.t1); }, block);
      trend.zoomed = false;
      setQuery({ from: null, to: null });
      say(null);
      each("button[data-zoom='out'], button[data-zoom='reset']", function (b) { b.disabled = true; }, tools || block);
    };
    if (tools) {
      each("button[data-zoom]", function (button) {
        button.addEventListener("click", function () {
          var z = shown();
          if (!z) return;
          var span = z.tb - z.ta, mid = (z.ta + z.tb) / 2;
          switch (button.getAttribute("data-zoom")) {
            case "in": zoomTo(z, mid - span / 4, mid + span / 4, true); break;
            case "out": zoomTo(z, mid - span, mid + span, true); break;
            case "earlier": zoomTo(z, Math.max(z.t0, z.ta - span / 2), Math.max(z.t0, z.ta - span / 2) + span, true); break;
            case "later": zoomTo(z, Math.min(z.t1, z.tb + span / 2) - span, Math.min(z.t1, z.tb + span / 2), true); break;
            default: trend.reset();
          }
        });
      });
      // Hidden series: a class on the block per series, kept in the URL.
      var boxes = tools.querySelectorAll("input[data-series]");
      var hidden = function () {
        return Array.prototype.filter.call(boxes, function (b) { return !b.checked; })
          .map(function (b) { return b.getAttribute("data-series"); });
      };
      Array.prototype.forEach.call(boxes, function (box) {
        box.addEventListener("change", function () {
          block.classList.toggle("hide-" + box.getAttribute("data-series"), !box.checked);
          setQuery({ hide: hidden().join(",") });
        });
      });
      var q = query();
      ((q && q.get("hide")) || "").split(",").forEach(function (key) {
        Array.prototype.forEach.call(boxes, function (box) {
          if (key && box.getAttribute("data-series") === key) {
            box.checked = false;
            block.classList.add("hide-" + key);
          }
        });
      });
    }
    // Drag across the plot to zoom into that stretch of time.
    each("svg.trend", function (svg) {
      var z = zoomable(svg);
      if (!z) return;
      svg.classList.add("zoomable");
      var start = null, brush = null, dragged = false;
      var toSvg = function (e) {
        var m = svg.getScreenCTM();
        if (!m) return null;
        var p = svg.createSVGPoint();
        p.x = e.clientX;
        p.y = e.clientY;
        return p.matrixTransform(m.inverse());
      };
      svg.addEventListener("pointerdown", function (e) {
        if (e.button !== 0) return;
        var p = toSvg(e);
        if (!p || p.x < z.plot[0] || p.x > z.plot[2] || p.y < z.plot[1] || p.y > z.plot[3]) return;
        start = p.x;
        dragged = false;
      });
      svg.addEventListener("pointermove", function (e) {
        if (start === null) return;
        var p = toSvg(e);
        if (!p) return;
        var x = Math.max(z.plot[0], Math.min(z.plot[2], p.x));
        if (!dragged && Math.abs(x - start) < 6) return;
        dragged = true;
        if (!brush) {
          brush = document.createElementNS(SVGNS, "rect");
          brush.setAttribute("class", "t-brush");
          brush.setAttribute("y", z.plot[1]);
          brush.setAttribute("height", z.plot[3] - z.plot[1]);
          svg.appendChild(brush);
          if (svg.setPointerCapture) try { svg.setPointerCapture(e.pointerId); } catch (err) { /* not captured */ }
        }
        brush.setAttribute("x", Math.min(start, x));
        brush.setAttribute("width", Math.abs(x - start));
      });
      var end = function (e) {
        if (start === null) return;
        var p = toSvg(e);
        if (dragged && p) {
          var x = Math.max(z.plot[0], Math.min(z.plot[2], p.x));
          var a = z.timeAt(Math.min(start, x)), b = z.timeAt(Math.max(start, x));
          zoomTo(z, a, b, true);
        }
        if (brush) brush.parentNode.removeChild(brush);
        brush = null;
        start = null;
      };
      svg.addEventListener("pointerup", end);
      svg.addEventListener("pointercancel", function () {
        if (brush) brush.parentNode.removeChild(brush);
        brush = null;
        start = null;
        dragged = false;
      });
      // A drag that ended on a point is no click on it.
      svg.addEventListener("click", function (e) {
        if (dragged) {
          e.preventDefault();
          e.stopPropagation();
          dragged = false;
        }
      }, true);
    });
    // A zoom kept in the URL: `?from=2026-09-01T00:00Z&to=2026-10-15T00:00Z`.
    var q = query();
    var from = q && Date.parse(q.get("from") || ""), to = q && Date.parse(q.get("to") || "");
    var z = shown();
    if (z && from && to && to > from) zoomTo(z, from / 1000, to / 1000, false);
    else each("button[data-zoom='out'], button[data-zoom='reset']", function (b) { b.disabled = true; }, tools || block);
  }

  // ---- Heatmap cells as keyboard stops ----------------------------------
  // One cell is in the tab order (the latest week of the first row); the
  // arrow keys, Home and End move between cells, and the focused cell
  // shows its tooltip (focusin, below).
  function makeHeatmapKeys(table) {
    var rows = Array.prototype.map.call(table.tBodies[0] ? table.tBodies[0].rows : [], function (r) {
      return Array.prototype.slice.call(r.querySelectorAll("td"));
    }).filter(function (cells) { return cells.length; });
    if (!rows.length) return;
    rows.forEach(function (cells) { cells.forEach(function (td) { td.setAttribute("tabindex", "-1"); }); });
    var current = rows[0][rows[0].length - 1];
    current.setAttribute("tabindex", "0");
    table.addEventListener("keydown", function (e) {
      var td = e.target.closest && e.target.closest("td[tabindex]");
      if (!td) return;
      var r = -1, c = -1;
      rows.forEach(function (cells, i) { var j = cells.indexOf(td); if (j >= 0) { r = i; c = j; } });
      if (r < 0) return;
      var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
      var next = null;
      if (moves[e.key]) {
        var nr = Math.max(0, Math.min(rows.length - 1, r + moves[e.key][0]));
        next = rows[nr][Math.max(0, Math.min(rows[nr].length - 1, c + moves[e.key][1]))];
      } else if (e.key === "Home") next = rows[r][0];
      else if (e.key === "End") next = rows[r][rows[r].length - 1];
      if (!next) return;
      e.preventDefault();
      current.setAttribute("tabindex", "-1");
      next.setAttribute("tabindex", "0");
      current = next;
      next.focus();
    });
  }

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
  each("[data-trend]", makeTrend);
  each("table.heatmap", makeHeatmapKeys);
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
  // A scroll moves what the tooltip points at: a focused element (which
  // the browser scrolls into view as it takes focus) keeps its tooltip,
  // moved along; one under a mouse that scrolled away loses it.
  window.addEventListener("scroll", function () {
    if (tipFor && tipFor === document.activeElement) showTip(tipFor);
    else hideTip();
  }, { passive: true });
})();

// Checks a built perfdash site over file:// in Debian's headless Chromium
// (driven by playwright-core; the browser is the system one, never a
// downloaded build) and fails on anything a reader would trip over.
//
// Every page is read from disk for the link check: broken relative links
// or #anchors, links that leave the site, pages nobody links to, duplicate
// ids, pages without a title. The browser then opens ONE PAGE OF EVERY
// KIND (overview, endpoint, run, runs index, weekly, a week's own review,
// history, releases, compare, capacity, flame, services, and any new
// folder or name; plus the pages of a failed run when the site has one):
// console errors, page errors, failed loads; at 1280×720 (a projector) no
// table wider than its box, chart text of 12 px or more, labels of a chart
// that never overlap; at 390 px and 1280 px no page that scrolls
// sideways; axe-core in the light and the dark scheme; charts that follow
// the dark scheme; the keyboard's tab order; and, with JavaScript off,
// charts and tables that still show. It exercises the scripts: sorting and
// filtering (kept in the URL across a reload), tooltips, policy switching,
// the trend chart's zoom (kept in the URL across a reload) and hidden
// series, and the heatmap's keyboard stops. Screenshots of every kind at
// 1280 and 390 px, light and dark, go to SCREENSHOT_DIR for a person to
// look at.
//
// usage: node check.mjs SITE_DIR [SCREENSHOT_DIR] [--expect=WHAT,…]
//   WHAT: improvements (the weekly page lists one), same-day (runs of one
//   day are named with their time of day), failed (a failed run's pages
//   exist and are checked), previous-week (the weekly page links the
//   previous week's review)
// Prints one line per problem and exits 1 if there is any.

import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const args = process.argv.slice(2);
const expect = new Set(
  args
    .filter((a) => a.startsWith("--expect="))
    .flatMap((a) => a.slice("--expect=".length).split(","))
    .filter(Boolean),
);
const positional = args.filter((a) => !a.startsWith("--"));
const siteDir = path.resolve(positional[0] ?? "site");
const shotDir = positional[1] ? path.resolve(positional[1]) : null;
const executablePath = process.env.PERFDASH_CHROMIUM || "/usr/bin/chromium";

const problems = [];
const problem = (page, what) => problems.push(`${page}: ${what}`);
const started = Date.now();
const timings = [];
const lap = (what) => timings.push(`${what} ${((Date.now() - started) / 1000).toFixed(1)} s`);
const measured = []; // lines of measurements, printed for the record

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else out.push(full);
  }
  return out;
}
const rel = (file) => path.relative(siteDir, file).split(path.sep).join("/");
const url = (p, query = "") => pathToFileURL(path.join(siteDir, p)).href + query;
const html = (p) => fs.readFileSync(path.join(siteDir, p), "utf8");

const pages = walk(siteDir)
  .filter((f) => f.endsWith(".html"))
  .map(rel)
  .sort();
if (!pages.includes("index.html")) {
  console.error(`${siteDir}: no index.html, is this a built site?`);
  process.exit(2);
}

// ---- Every page, read from disk: links, anchors, ids, titles. ----------
const decode = (s) =>
  s
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(+n))
    .replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
const ids = new Map(); // page -> Set of ids
const links = []; // { from, href, text, resource, external }
for (const p of pages) {
  const text = html(p);
  const found = [];
  for (const m of text.matchAll(/\s(?:id|name)="([^"]*)"/g)) found.push(decode(m[1]));
  const own = [...text.matchAll(/\sid="([^"]*)"/g)].map((m) => decode(m[1]));
  const dup = own.filter((id, i) => own.indexOf(id) !== i);
  for (const d of new Set(dup)) problem(p, `duplicate id "${d}"`);
  ids.set(p, new Set(found));
  const title = /<title>([^<]*)<\/title>/.exec(text);
  if (!title || !title[1].trim()) problem(p, "page has no <title>");
  for (const m of text.matchAll(/<(a|area|link|script|img|use)\b([^>]*)>/g)) {
    const tag = m[1];
    const attrs = m[2];
    const attr = (name) => {
      const a = new RegExp(`\\s${name}="([^"]*)"`).exec(attrs);
      return a ? decode(a[1]) : null;
    };
    const href = attr("href") ?? attr("src");
    if (href === null) continue;
    const resource = tag !== "a" && tag !== "area";
    const rels = (attr("rel") || "").split(/\s+/);
    links.push({ from: p, href, text: resource ? `<${tag}>` : "", resource, external: rels.includes("external") });
  }
}
const linked = new Set(["index.html"]);
for (const { from, href, text, resource, external } of links) {
  const where = `${from}: link "${text}" -> ${href}`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) {
    // Links the user configured (commit_url, compare_url, triage issues,
    // annotation links) lead to their code host and say so with
    // rel="external"; they are followed by a reader, never loaded by the
    // page. Only http(s) may be external.
    if (external && /^https?:\/\//i.test(href)) continue;
    problems.push(`${where}: not a relative link (the site must work offline)`);
    continue;
  }
  const [target, fragment] = href.split("#", 2);
  const targetFile = target === "" ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), decodeURI(target.split("?")[0])));
  if (targetFile.startsWith("..")) {
    problems.push(`${where}: leaves the site folder`);
    continue;
  }
  const full = path.join(siteDir, targetFile);
  if (!fs.existsSync(full) || !fs.statSync(full).isFile()) {
    problems.push(`${where}: ${targetFile} does not exist`);
    continue;
  }
  if (!resource) linked.add(targetFile);
  if (fragment !== undefined && fragment !== "") {
    const known = ids.get(targetFile);
    if (!known) problems.push(`${where}: #${fragment} points into a file that is not a page`);
    else if (!known.has(decodeURIComponent(fragment))) problems.push(`${where}: ${targetFile} has no id "${fragment}"`);
  }
}
for (const p of pages) if (!linked.has(p)) problems.push(`${p}: no page links to it`);

// ---- Which pages the browser opens: one of every kind. ----------------
const kinds = onePagePerType();
const kindPages = Object.entries(kinds);
if (expect.has("failed") && !kinds["run (failed)"]) problem("site", "no run page shows a failed run, but the archive has one");
console.log(`page kinds: ${kindPages.map(([k, p]) => `${k} = ${p}`).join("; ")}`);

const browser = await chromium.launch({
  executablePath,
  headless: true,
  // Playwright hides scrollbars in headless mode; a desktop window has
  // them, and they take width (a caption sized by `100vw` was cut by one).
  ignoreDefaultArgs: ["--hide-scrollbars"],
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    // No --user-data-dir: playwright refuses it with launch() and gives
    // every launch a fresh temporary profile of its own, removed on close.
  ],
});

// Console errors, page errors, failed loads and requests that leave the
// site, on whatever a context opens.
function watch(page, where) {
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "assert") problem(where(), `console ${msg.type()}: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problem(where(), `page error: ${err.message}`));
  page.on("requestfailed", (req) => {
    const why = req.failure()?.errorText ?? "?";
    // Leaving a page aborts what it still loads (the favicon, often);
    // that is not a broken resource. Missing files say ERR_FILE_NOT_FOUND.
    if (why !== "net::ERR_ABORTED") problem(where(), `failed to load ${req.url()}: ${why}`);
  });
  page.on("request", (req) => {
    const u = req.url();
    if (!u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("about:")) problem(where(), `request leaves the site: ${u}`);
  });
}

async function open(page, p, query = "") {
  await page.goto(url(p, query), { waitUntil: "load" });
  // A flame graph is an <object>: its file is loaded by the page's load
  // event, but drawn a moment later (its document is another origin over
  // file://, so the page cannot ask whether it is done).
  if ((await page.locator("object").count()) > 0) await page.waitForTimeout(600);
}

// ---- Pass 1: a projector, 1280×720, light. -----------------------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  let current = "";
  watch(page, () => current);
  for (const [kind, p] of kindPages) {
    current = `${p} [${kind}]`;
    await open(page, p);
    const r = await page.evaluate(() => {
      const sheets = Array.from(document.querySelectorAll('link[rel="stylesheet"]'))
        .filter((l) => !l.sheet)
        .map((l) => l.getAttribute("href"));
      // Every folded section open: its tables count too.
      document.querySelectorAll("details").forEach((d) => (d.open = true));
      const tables = [];
      for (const t of document.querySelectorAll("table")) {
        if (!t.getClientRects().length) continue; // a range view not shown
        const box = t.closest(".scroll") ?? t.parentElement;
        const over = t.getBoundingClientRect().width - box.clientWidth;
        const name = (t.caption?.textContent ?? t.id ?? t.className).trim().slice(0, 50);
        tables.push({ name, width: Math.round(t.getBoundingClientRect().width), box: box.clientWidth, over: Math.round(over) });
      }
      // Chart text: its size on screen (the font size times the SVG's
      // scale), for every visible text of every inline SVG.
      const small = [];
      let smallest = Infinity;
      for (const t of document.querySelectorAll("svg text")) {
        if (!t.getClientRects().length || !t.textContent.trim()) continue;
        const m = t.getScreenCTM();
        const px = parseFloat(getComputedStyle(t).fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
        smallest = Math.min(smallest, px);
        if (px < 11.95) small.push(`"${t.textContent.trim().slice(0, 30)}" ${px.toFixed(1)} px`);
      }
      // Labels of a chart that overlap: two visible texts of one SVG whose
      // boxes intersect (a label drawn over itself, or over another).
      const overlaps = [];
      for (const svg of document.querySelectorAll("svg")) {
        if (svg.parentElement?.closest("svg") || !svg.getClientRects().length) continue;
        const texts = Array.from(svg.querySelectorAll("text"))
          .filter((t) => t.getClientRects().length && t.textContent.trim() && getComputedStyle(t).display !== "none")
          .map((t) => ({ t: t.textContent.trim(), b: t.getBoundingClientRect() }))
          .filter((x) => x.b.width > 0);
        for (let i = 0; i < texts.length; i++) {
          for (let j = i + 1; j < texts.length; j++) {
            const a = texts[i].b, b = texts[j].b;
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1.5 && h > 3) overlaps.push(`"${texts[i].t.slice(0, 30)}" and "${texts[j].t.slice(0, 30)}"`);
          }
        }
      }
      const diff = document.querySelector("h2#diff");
      return {
        sheets,
        tables,
        small: small.slice(0, 5),
        smallCount: small.length,
        smallest,
        overlaps: overlaps.slice(0, 5),
        overlapCount: overlaps.length,
        diffTop: diff ? Math.round(diff.getBoundingClientRect().top + window.scrollY) : null,
        overflow: document.documentElement.scrollWidth - window.innerWidth,
      };
    });
    for (const s of r.sheets) problem(current, `stylesheet ${s} did not load`);
    // A presenter reads every table without scrolling sideways.
    for (const t of r.tables) if (t.over > 1) problem(current, `at 1280×720 the table "${t.name}" is ${t.width}px wide in a ${t.box}px box`);
    const widest = r.tables.reduce((a, t) => (t.width - t.box > (a ? a.width - a.box : -Infinity) ? t : a), null);
    if (widest) measured.push(`${kind}: widest table ${widest.width}px in ${widest.box}px ("${widest.name}")`);
    for (const s of r.small) problem(current, `at 1280px chart text is under 12 px: ${s}`);
    if (r.smallCount > 5) problem(current, `and ${r.smallCount - 5} more chart texts under 12 px`);
    if (Number.isFinite(r.smallest)) measured.push(`${kind}: smallest chart text ${r.smallest.toFixed(1)} px`);
    for (const o of r.overlaps) problem(current, `chart labels overlap: ${o}`);
    if (r.overlapCount > 5) problem(current, `and ${r.overlapCount - 5} more overlapping labels`);
    if (r.overflow > 1) problem(current, `page is ${r.overflow}px wider than a 1280px window`);
    // The differential flame graph within the first two screens.
    if (kind === "flame" && r.diffTop !== null) {
      measured.push(`flame: the differential graph starts at ${r.diffTop}px`);
      if (r.diffTop > 2 * 720) problem(current, `the differential flame graph starts at ${r.diffTop}px, below the first two screens (1440px)`);
    }
  }
  await exerciseScripts(page, (w) => (current = w)).catch((e) => problem(current, `the scripts check stopped: ${e.message.split("\n")[0]}`));
  await context.close();
}

lap("projector pass");
// ---- A phone and a projector: nothing scrolls sideways but table boxes. -
// At 390 px (a phone) and 1280 px every page fits its window: what is too
// wide scrolls inside its own `.scroll` box (first column sticky). On the
// overview every endpoint's name, ratio and verdict are in view at 390 px
// without scrolling anything, and the first endpoint starts on the first
// screen (390×844); a trend chart wider than the phone opens at its right
// end, the latest run.
for (const [width, height] of [[390, 844], [1280, 800]]) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  let current = "";
  watch(page, () => current);
  for (const [kind, p] of kindPages) {
    current = `${p} [${kind}]`;
    await open(page, p);
    const r = await page.evaluate(() => {
      const root = document.documentElement;
      const overflow = root.scrollWidth - root.clientWidth;
      // What sticks out, outside any scroll box: the culprits to name.
      const out = [];
      if (overflow > 0) {
        for (const el of document.body.querySelectorAll("*")) {
          if (el.closest(".scroll, .chart-scroll") || el.closest("details:not([open])")) continue;
          const box = el.getBoundingClientRect();
          if (box.width > 0 && box.right > root.clientWidth + 1) {
            out.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""} (right edge ${Math.round(box.right)}px)`);
          }
        }
      }
      // Captions belong to their table box but must not scroll with it:
      // a caption cut at the box's edge is unreadable.
      const cut = [];
      for (const cap of document.querySelectorAll(".scroll > table > caption")) {
        const box = cap.getBoundingClientRect();
        const scroller = cap.closest(".scroll").getBoundingClientRect();
        if (box.width > 0 && box.right > scroller.right + 1) cut.push(cap.textContent.trim().slice(0, 50));
      }
      const hidden = [];
      const overview = location.pathname.endsWith("/index.html") && !location.pathname.includes("/runs/");
      const table = overview ? document.querySelector("table#endpoints") : null;
      if (table) {
        const head = Array.from(table.tHead.rows[0].cells, (c) => c.textContent.trim());
        const col = (word) => head.findIndex((h) => h.startsWith(word));
        const want = [0, col("Ratio"), col("Verdict")];
        for (const row of table.tBodies[0].rows) {
          for (const i of want) {
            const cell = row.cells[i];
            const box = cell?.getBoundingClientRect();
            if (!box || box.width === 0 || box.left < 0 || box.right > root.clientWidth + 1) {
              hidden.push(`${row.cells[0].textContent.trim().slice(0, 40)}: ${head[i] ?? "column " + i}`);
            }
          }
        }
      }
      const first = overview ? document.querySelector("table#endpoints tbody tr, details.service") : null;
      // A chart in a box that scrolls: where it opens.
      const charts = [];
      for (const box of document.querySelectorAll(".chart-scroll")) {
        if (!box.getClientRects().length || box.scrollWidth <= box.clientWidth + 1) continue;
        // Right to left: 0 is the right end, negative to the left.
        const fromRight = getComputedStyle(box).direction === "rtl" ? -box.scrollLeft : box.scrollWidth - box.clientWidth - box.scrollLeft;
        charts.push(Math.round(fromRight));
      }
      return {
        overflow,
        out: out.slice(0, 3),
        cut,
        hidden: hidden.slice(0, 6),
        hiddenCount: hidden.length,
        firstRow: first ? Math.round(first.getBoundingClientRect().top) : null,
        charts,
      };
    });
    if (r.overflow > 0) problem(current, `at ${width}px the page scrolls sideways by ${r.overflow}px: ${r.out.join(", ")}`);
    for (const c of r.cut) problem(current, `at ${width}px the caption "${c}…" is cut by its table box`);
    if (width === 390 && r.hiddenCount) {
      problem(current, `at 390px ${r.hiddenCount} of the overview's names, ratios and verdicts need scrolling: ${r.hidden.join("; ")}`);
    }
    if (width === 390 && r.firstRow !== null) {
      measured.push(`overview at 390×844: the first endpoint row starts at ${r.firstRow}px`);
      if (r.firstRow >= height) problem(current, `at 390×844 the first endpoint row starts at ${r.firstRow}px, below the first screen`);
    }
    if (width === 390) {
      for (const fromRight of r.charts) {
        if (fromRight > 2) problem(current, `at 390px a chart opens ${fromRight}px away from its latest run (its right end)`);
      }
    }
  }
  await context.close();
}

lap("phone and width pass");
// ---- Pass 2: JavaScript off: charts and tables still show. -------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
  const page = await context.newPage();
  for (const [kind, p] of kindPages) {
    await open(page, p);
    const r = await page.evaluate(() => {
      const hidden = [];
      let charts = 0;
      let tables = 0;
      const shown = (el) => {
        const box = el.getBoundingClientRect();
        return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
      };
      for (const el of document.querySelectorAll("svg, table")) {
        if (el.closest("details:not([open])")) continue; // the reader opens it
        // One time range of a chart at a time: the others wait for a click.
        const view = el.closest(".range-view");
        if (view && !view.classList.contains("range-default")) continue;
        if (el.parentElement && el.parentElement.closest("svg")) continue; // nested svg
        if (el.tagName.toLowerCase() === "table") tables++;
        else charts++;
        if (!shown(el)) hidden.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.getAttribute("class") || ""}`);
      }
      const untitled = Array.from(document.querySelectorAll("svg")).filter(
        (s) => !(s.parentElement && s.parentElement.closest("svg")) && !s.querySelector(":scope > title") && s.getAttribute("aria-hidden") !== "true",
      ).length;
      // Controls that need JavaScript stay hidden without it.
      const deadControls = Array.from(document.querySelectorAll("button, input, select")).filter(shown).length;
      return { hidden, charts, tables, untitled, deadControls };
    });
    const where = `${p} [${kind}, no JavaScript]`;
    for (const h of r.hidden) problem(where, `${h} is not shown`);
    if (r.untitled) problem(where, `${r.untitled} svg(s) without a <title> for screen readers`);
    if (r.deadControls) problem(where, `${r.deadControls} buttons or fields show, which do nothing without JavaScript`);
    if ((kind === "overview" || kind === "endpoint") && (r.charts === 0 || r.tables === 0)) {
      problem(where, `the ${kind} page shows ${r.charts} charts and ${r.tables} tables`);
    }
    if (kind.startsWith("run") && kind !== "runs index" && r.tables === 0) problem(where, "the run page shows no table");
  }
  await screenshots(context, "nojs", { only: ["overview", "endpoint"] });
  await context.close();
}

lap("no-JavaScript pass");
// ---- The weekly page: first screen, improvements, times, other weeks. --
// On a projector at 1280×720, and at 150 % zoom (853×480 CSS px), every
// open problem's line is on the first screen, without scrolling.
if (pages.includes("weekly.html")) {
  for (const [width, height] of [[1280, 720], [853, 480]]) {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await open(page, "weekly.html");
    const bottoms = await page.locator("#decide li.problem").evaluateAll((els) =>
      els.map((e) => [e.querySelector(".p-endpoint")?.textContent ?? "?", e.getBoundingClientRect().bottom]));
    for (const [name, bottom] of bottoms) {
      if (bottom > height) problem(`weekly.html at ${width}×${height}`, `the open problem of ${name} ends at ${Math.round(bottom)} px, below the first screen`);
    }
    if (shotDir) {
      fs.mkdirSync(shotDir, { recursive: true });
      await page.screenshot({ path: path.join(shotDir, `weekly-first-screen-${width}x${height}.png`) });
    }
    await context.close();
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await open(page, "weekly.html");
  const w = await page.evaluate(() => {
    const items = Array.from(document.querySelectorAll("#improvements li.improvement"), (li) => ({
      endpoint: li.querySelector(".p-endpoint")?.textContent.trim(),
      ms: li.querySelector(".p-ms")?.textContent.trim(),
      trend: !!li.querySelector("svg.mini-trend"),
    }));
    const problems = Array.from(document.querySelectorAll("#decide li.problem"), (li) => ({
      endpoint: li.querySelector(".p-endpoint")?.textContent.trim(),
      ms: li.querySelector(".p-ms")?.textContent.trim() ?? "",
      trend: !!li.querySelector("svg.mini-trend"),
      text: li.textContent.replace(/\s+/g, " "),
    }));
    const prev = document.querySelector("nav.week-pager a[rel=prev]");
    const text = (document.querySelector("#decide")?.textContent ?? "") + (document.querySelector("#improvements")?.textContent ?? "") + (document.querySelector("#new")?.nextElementSibling?.nextElementSibling?.textContent ?? "");
    return {
      section: !!document.querySelector("section#improvements"),
      items,
      problems,
      prev: prev ? prev.getAttribute("href") : null,
      times: (text.match(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/g) || []).length,
      past: document.querySelectorAll("#past ~ .scroll table tbody tr, table.past-weeks tbody tr").length,
    };
  });
  if (!w.section) problem("weekly.html", "no section lists the week's improvements");
  if (expect.has("improvements") && w.items.length === 0) problem("weekly.html", "the week has an improvement, but the page lists none");
  for (const i of w.items) {
    if (!/→/.test(i.ms ?? "") || !/ms/.test(i.ms ?? "")) problem("weekly.html", `the improvement of ${i.endpoint} shows no before → after in ms ("${i.ms}")`);
    if (!i.trend) problem("weekly.html", `the improvement of ${i.endpoint} has no trend`);
  }
  for (const p of w.problems) {
    if (!/→/.test(p.ms)) problem("weekly.html", `the open problem of ${p.endpoint} shows no before → after ("${p.ms}")`);
    if (!p.trend) problem("weekly.html", `the open problem of ${p.endpoint} has no trend of its last runs`);
  }
  if (expect.has("same-day") && w.times === 0) problem("weekly.html", "runs of one day are not told apart by their time of day");
  measured.push(`weekly: ${w.problems.length} open problems, ${w.items.length} improvements, ${w.times} times of day, ${w.past} weeks listed, previous week ${w.prev ?? "none"}`);
  if (w.past === 0) problem("weekly.html", "no list of every week's review");
  if (expect.has("previous-week")) {
    if (!w.prev) problem("weekly.html", "no link to the previous week's review");
    else if (!fs.existsSync(path.join(siteDir, w.prev))) problem("weekly.html", `the previous week's review ${w.prev} does not exist`);
  }
  await context.close();
}

lap("weekly");
// ---- Accessibility: axe-core on one page of every kind, both themes. ---
// axe.min.js is injected into the page (no network); every violation is
// a problem naming its rule, the element, the page and the colour scheme.
// No rule is disabled: a page that trips one is fixed instead.
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const axeCounts = new Map(); // "rule (scheme)" -> count, for the summary line
// Light and dark at 1280 px; light again at 390 px, where more boxes
// scroll and the narrow layout applies.
for (const [scheme, width] of [["light", 1280], ["dark", 1280], ["light", 390]]) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
  const page = await context.newPage();
  for (const [type, p] of kindPages) {
    await open(page, p);
    await page.addScriptTag({ content: axeSource });
    const violations = await page.evaluate(async () => {
      // Rules tagged "experimental" are off by default; everything else runs.
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v) => ({
        id: v.id,
        help: v.help,
        targets: v.nodes.map((n) => ({ target: n.target.join(" "), why: (n.failureSummary || "").split("\n").slice(1, 2).join("").trim() })),
      }));
    });
    for (const v of violations) {
      const where = width === 1280 ? scheme : `${scheme}, ${width}px`;
      const key = `${v.id} (${where})`;
      axeCounts.set(key, (axeCounts.get(key) ?? 0) + v.targets.length);
      for (const t of v.targets.slice(0, 5)) problem(`${p} [${type}, ${where}]`, `axe ${v.id}: ${t.target}: ${t.why || v.help}`);
      if (v.targets.length > 5) problem(`${p} [${type}, ${where}]`, `axe ${v.id}: and ${v.targets.length - 5} more elements`);
    }
    if (scheme === "dark" && width === 1280) await darkCharts(page, `${p} [${type}, dark]`);
  }
  await context.close();
}
console.log(
  `accessibility (axe-core ${JSON.parse(fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/package.json"), "utf8")).version}): ` +
    `${kindPages.length} page kinds, light and dark; ` +
    (axeCounts.size ? `violations by rule: ${[...axeCounts].map(([k, n]) => `${k}: ${n}`).join(", ")}` : "no violations"),
);

lap("axe");
// ---- Keyboard: reading order, and a way past the charts. ---------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  for (const [type, p] of kindPages) {
    await keyboardWalk(page, p, type);
  }
  await context.close();
}

lap("keyboard");
// ---- Screenshots: every kind at 1280 and 390 px, light and dark. -------
if (shotDir) {
  for (const [width, height, scheme] of [[1280, 720, "light"], [1280, 720, "dark"], [390, 844, "light"], [390, 844, "dark"]]) {
    const context = await browser.newContext({ viewport: { width, height }, colorScheme: scheme });
    await screenshots(context, `${width}-${scheme}`, { screens: width === 390 ? 3 : 4 });
    await context.close();
  }
  // Print stylesheet: one look at an endpoint page.
  const context = await browser.newContext({ viewport: { width: 900, height: 1200 } });
  const page = await context.newPage();
  if (kinds.endpoint) {
    await open(page, kinds.endpoint);
    await page.emulateMedia({ media: "print" });
    await page.screenshot({ path: path.join(shotDir, "endpoint-print.png"), fullPage: true });
  }
  await context.close();
}

lap("screenshots");
await browser.close();

for (const m of measured) console.log(`measured: ${m}`);
console.log(`time: ${timings.join(", ")}`);
console.log(`browser check: ${pages.length} pages read, ${links.length} links checked, ${kindPages.length} page kinds opened, ${problems.length} problems`);
for (const p of problems) console.log(`problem: ${p}`);
process.exit(problems.length ? 1 : 0);

// In the dark scheme a chart is no light panel: the large rectangles of
// its SVGs (a plotters background) are dark, and a flame graph's own
// background, opened alone, follows the scheme too.
async function darkCharts(page, where) {
  const light = await page.evaluate(() => {
    const lum = (c) => {
      const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)/.exec(c);
      if (!m) return 0;
      return (0.2126 * m[1] + 0.7152 * m[2] + 0.0722 * m[3]) / 255;
    };
    const out = [];
    for (const svg of document.querySelectorAll("svg.chart")) {
      const box = svg.getBoundingClientRect();
      if (!box.width) continue;
      if (lum(getComputedStyle(svg).backgroundColor) > 0.5 && getComputedStyle(svg).backgroundColor !== "rgba(0, 0, 0, 0)") out.push(`${svg.id || svg.getAttribute("class")} has a light background`);
      for (const r of svg.querySelectorAll("rect")) {
        const b = r.getBoundingClientRect();
        if (b.width < box.width * 0.8 || b.height < box.height * 0.5) continue;
        const fill = getComputedStyle(r).fill;
        if (lum(fill) > 0.5) out.push(`${svg.querySelector("title")?.textContent.slice(0, 40) ?? "a chart"}: a ${fill} panel`);
      }
    }
    return out;
  });
  for (const l of light) problem(where, `in the dark scheme ${l}`);
  // A flame graph's box, as drawn: its corners are the graph's own
  // background, or the page's where the graph does not reach. A browser
  // paints an embedded SVG whose colour scheme differs from the page's on
  // an opaque light canvas, and a box taller than its graph shows that
  // canvas as a white band (~100 px under each graph until issue 34).
  for (const o of await page.locator("object.flame").all()) {
    await o.scrollIntoViewIfNeeded();
    await page.waitForTimeout(400); // drawn a moment after it is in view
    const png = (await o.screenshot()).toString("base64");
    const corners = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const patch = (x, y) => {
        const d = g.getImageData(x, y, 8, 8).data;
        let sum = 0;
        for (let i = 0; i < d.length; i += 4) sum += (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2]) / 255;
        return sum / (d.length / 4);
      };
      const w = img.width, h = img.height;
      return { top: Math.max(patch(3, 3), patch(w - 11, 3)), bottom: Math.max(patch(3, h - 11), patch(w - 11, h - 11)), h };
    }, png);
    const data = await o.getAttribute("data");
    measured.push(`flame (dark): ${data} box ${corners.h}px, corner luminance top ${corners.top.toFixed(2)}, bottom ${corners.bottom.toFixed(2)}`);
    if (corners.top > 0.5 || corners.bottom > 0.5) problem(where, `in the dark scheme the box of the flame graph ${data} is light at its ${corners.top > 0.5 ? "top" : "bottom"} (luminance ${Math.max(corners.top, corners.bottom).toFixed(2)})`);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  const svgs = await page.evaluate(() => Array.from(document.querySelectorAll("object.flame"), (o) => o.getAttribute("data")));
  for (const s of svgs.slice(0, 1)) {
    const base = new URL(page.url());
    const target = new URL(s, base).href;
    const back = page.url();
    await page.goto(target, { waitUntil: "load" });
    const bg = await page.evaluate(() => {
      const stop = document.querySelector("#background stop");
      return stop ? getComputedStyle(stop).stopColor : null;
    });
    if (bg && /rgb\((2[0-9]{2}|1[6-9][0-9]), (2[0-9]{2}|1[6-9][0-9])/.test(bg)) problem(where, `in the dark scheme the flame graph ${s} keeps a light background (${bg})`);
    await page.goto(back, { waitUntil: "load" });
  }
}

// Tabs through a page from its start: every element Tab reaches comes
// after the one before in the document (reading order; no positive
// tabindex), is visible when focused, and every focusable element is
// reached. A page whose charts hold tab stops (chart points are links)
// offers a "skip the chart" link before them, reached within a few Tabs,
// and after it the next Tabs land past the charts, in a table.
async function keyboardWalk(page, p, type) {
  const where = `${p} [${type}, keyboard]`;
  await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
  const plan = await page.evaluate(() => {
    const all = document.querySelectorAll("*");
    all.forEach((el, i) => (el.__order = i));
    const focusable = Array.from(
      document.querySelectorAll("a[href], button, input, select, textarea, summary, object, [tabindex]"),
    ).filter((el) => {
      if (el.tabIndex < 0 || el.disabled) return false;
      if (el.closest("details:not([open])") && el.tagName !== "SUMMARY") return false;
      if (el.tagName === "SUMMARY" && el.parentElement.closest("details:not([open])")) return false;
      const style = getComputedStyle(el);
      return el.getClientRects().length > 0 && style.visibility !== "hidden";
    });
    const positive = Array.from(document.querySelectorAll("[tabindex]")).filter((el) => el.tabIndex > 0).length;
    // Charts with tab stops of their own.
    const charts = Array.from(document.querySelectorAll("svg")).filter(
      (svg) => svg.getClientRects().length > 0 && svg.querySelector("a[href], [tabindex]:not([tabindex='-1'])"),
    );
    const firstChart = charts[0]?.__order ?? -1;
    const lastChart = charts.length ? charts[charts.length - 1].__order : -1;
    const chartStops = focusable.filter((el) => el.closest("svg")).length;
    const skip = document.querySelector("a.skip-chart");
    return {
      count: focusable.length,
      positive,
      firstChart,
      lastChart,
      chartStops,
      skipOrder: skip ? skip.__order : -1,
    };
  });
  if (plan.positive) problem(where, `${plan.positive} elements with a positive tabindex break the reading order`);
  const LIMIT = 400;
  const state = () =>
    page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return null;
      const box = a.getBoundingClientRect();
      return {
        order: a.__order ?? -1,
        what: `${a.tagName.toLowerCase()}${a.className && typeof a.className === "string" ? "." + a.className.split(" ")[0] : ""} "${(a.textContent || a.getAttribute("aria-label") || "").trim().slice(0, 30)}"`,
        visible: box.width > 0 && box.height > 0,
        inSvg: !!a.closest("svg"),
        inTable: !!a.closest("table"),
        skipChart: a.matches("a.skip-chart"),
      };
    });
  let previous = -1;
  let reached = 0;
  let skipAt = -1;
  for (let i = 0; i < Math.min(plan.count, LIMIT); i++) {
    await page.keyboard.press("Tab");
    const s = await state();
    if (!s) break; // past the last element
    if (s.order <= previous) {
      problem(where, `Tab goes back from element ${previous} to ${s.what}: not in reading order`);
      break;
    }
    if (!s.visible) problem(where, `Tab reaches ${s.what}, which cannot be seen`);
    if (s.skipChart && skipAt < 0) skipAt = i + 1;
    previous = s.order;
    reached++;
  }
  if (reached < Math.min(plan.count, LIMIT)) {
    problem(where, `Tab reaches ${reached} of the ${plan.count} focusable elements`);
  }
  if (plan.chartStops === 0) return;
  // The charts hold tab stops: the skip link comes before them, early.
  if (plan.skipOrder < 0 || plan.skipOrder > plan.firstChart) {
    problem(where, `the charts hold ${plan.chartStops} tab stops and no "skip the chart" link comes before them`);
    return;
  }
  if (skipAt < 0 || skipAt > 20) problem(where, `the "skip the chart" link is ${skipAt < 0 ? "never reached" : `Tab number ${skipAt}`}, not within 20`);
  await page.focus("a.skip-chart");
  await page.keyboard.press("Enter");
  for (let i = 1; i <= 8; i++) {
    await page.keyboard.press("Tab");
    const s = await state();
    if (!s) break;
    if (s.inSvg || s.order < plan.lastChart) {
      problem(where, `after "skip the chart", Tab ${i} is still at the charts (${s.what})`);
      return;
    }
    if (s.inTable) return;
  }
  problem(where, `after "skip the chart", 8 Tabs do not reach a table`);
}

// What kind of page a path is: the overview, the runs index, or the
// folder (endpoints/, runs/, flame/, capacity/, compare/, weekly/, …) or
// name (weekly, history, releases, …) it belongs to. A folder named like
// a page (weekly/ beside weekly.html) is a kind of its own. A new kind of
// page is picked up without a change here.
function pageType(p) {
  if (p === "index.html") return "overview";
  if (p === "runs/index.html") return "runs index";
  const slash = p.indexOf("/");
  if (slash > 0) {
    const folder = p.slice(0, slash);
    return pages.includes(`${folder}.html`) ? `${folder} (one)` : folder;
  }
  return p.replace(/\.html$/, "");
}

// One page of every kind: the showcase page where there is one (the most
// to look at), else the first of its kind; and, when the site has a
// failed run, its run page and an endpoint page that shows it.
function onePagePerType() {
  const picks = {};
  const seen = new Set();
  for (const [kind, p] of Object.entries(showcase())) {
    if (!p) continue;
    picks[kind] = p;
    seen.add(pageType(p));
  }
  for (const p of pages) {
    const kind = pageType(p);
    if (!seen.has(kind) && !(kind in picks)) picks[kind] = p;
  }
  return picks;
}

// The pages a person looks at, by what they are.
function showcase() {
  const pick = (pred) => pages.find(pred);
  const count = (p, word) => html(p).split(word).length - 1;
  const runPage = (p) => p.startsWith("runs/") && !p.endsWith("index.html");
  return {
    overview: "index.html",
    // The endpoint with the most regressions: the most to look at.
    endpoint: pages
      .filter((p) => p.startsWith("endpoints/") && !p.endsWith("index.html") && p.split("/").length === 2)
      .map((p) => [p, count(p, 'data-verdict="regression"')])
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0],
    run: pick((p) => runPage(p) && html(p).includes("v-regression")) ?? pick(runPage),
    runs: pick((p) => p === "runs/index.html"),
    weekly: pick((p) => p === "weekly.html"),
    // The week before the reviewed one: the review a reader reopens.
    "weekly (one)": pages.filter((p) => p.startsWith("weekly/")).at(-2) ?? pick((p) => p.startsWith("weekly/")),
    history: pick((p) => p === "history.html"),
    // A flame page with a differential graph, and a capacity page with a
    // break in its steps: the most colours to read.
    flame: pages.filter((p) => p.startsWith("flame/") && html(p).includes(".diff.svg")).at(-1) ?? pick((p) => p.startsWith("flame/")),
    capacity: pick((p) => p.startsWith("capacity/") && html(p).includes("step-break")) ?? pick((p) => p.startsWith("capacity/")),
    // A compare page with a regression: the order by severity shows.
    compare: pick((p) => p.startsWith("compare/") && html(p).includes('data-verdict="regression"')) ?? pick((p) => p.startsWith("compare/")),
    // A failed run's pages: its run page and an endpoint page showing it.
    "run (failed)": pick((p) => runPage(p) && /class="verdict v-failed"/.test(html(p))),
    "endpoint (failed)": pick((p) => p.startsWith("endpoints/") && p.split("/").length === 2 && html(p).includes('data-verdict="failed"')),
  };
}

function fileName(kind) {
  return kind.replace(/[()]/g, "").trim().replace(/\s+/g, "-");
}

// A screenshot of every kind: the first `screens` screens of the page
// (a long run page is many metres of table); `<kind>-<suffix>.png`.
async function screenshots(context, suffix, { only, screens = 4 } = {}) {
  if (!shotDir) return;
  fs.mkdirSync(shotDir, { recursive: true });
  const page = await context.newPage();
  const { width, height } = page.viewportSize();
  for (const [kind, p] of kindPages) {
    if (only && !only.includes(kind)) continue;
    await open(page, p);
    const full = await page.evaluate(() => document.documentElement.scrollHeight);
    // The window as tall as the picture: an embedded flame graph below
    // the window is not drawn in a full-page screenshot (a blank box).
    const tall = Math.min(full, screens * height);
    await page.setViewportSize({ width, height: tall });
    if ((await page.locator("object").count()) > 0) await page.waitForTimeout(400);
    await page.screenshot({ path: path.join(shotDir, `${fileName(kind)}-${suffix}.png`) });
    await page.setViewportSize({ width, height });
    if (kind === "overview" && width >= 1280) {
      const heat = page.locator("table.heatmap").first();
      if ((await heat.count()) > 0) await heat.screenshot({ path: path.join(shotDir, `heatmap-${suffix}.png`) });
    }
  }
  await page.close();
}

// The scripts do what they promise: sorting, filtering (both kept in the
// URL across a reload), tooltips, policy switching, the trend chart's
// zoom (kept in the URL) and series, the heatmap's keyboard stops, all
// reachable from the keyboard.
async function exerciseScripts(page, at) {
  const where = "index.html (scripts)";
  at(where);
  await open(page, "index.html");
  const table = page.locator("table#endpoints");
  if ((await table.count()) === 0) return problem(where, "no table#endpoints on the overview");
  // What the first column sorts by: its data-sort key, else its text.
  const names = () =>
    table
      .locator("tbody tr:not([hidden]) th[scope=row]")
      .evaluateAll((ths) => ths.map((th) => th.getAttribute("data-sort") ?? th.textContent.trim()));
  const before = await names();
  // Sort by the first column from the keyboard: Tab until a header has focus.
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => !!document.activeElement?.closest("table#endpoints thead th"));
  }
  if (!reached) problem(where, "the sortable table headers cannot be reached with Tab");
  await table.locator("thead th button").first().focus();
  await page.keyboard.press("Enter");
  const asc = await names();
  const sorted = await page.evaluate((xs) => [...xs].sort((a, b) => a.localeCompare(b)), before);
  if (asc.join("|") !== sorted.join("|")) problem(where, `sorting by endpoint gave ${asc.join(", ")}`);
  await page.keyboard.press("Enter");
  const desc = await names();
  if (desc.join("|") !== [...sorted].reverse().join("|")) problem(where, "sorting twice does not reverse the order");
  // The sort is in the URL: a reload (or the link, shared) keeps it.
  if (!/[?&]sort=endpoint\.desc/.test(page.url())) problem(where, `sorting does not show in the URL (${page.url()})`);
  await page.reload({ waitUntil: "load" });
  if ((await names()).join("|") !== desc.join("|")) problem(where, "after a reload the table is not sorted as the URL says");
  // Filter.
  const filter = page.locator("input[data-filter]").first();
  if ((await filter.count()) === 0) problem(where, "no filter box");
  else {
    const first = before[0];
    await filter.fill(first.toUpperCase());
    const left = await names();
    if (!left.includes(first) || left.length > before.length) {
      problem(where, `filtering by "${first}" left ${left.join(", ")}`);
    }
    if (!page.url().includes("filter=")) problem(where, `the filter does not show in the URL (${page.url()})`);
    await page.reload({ waitUntil: "load" });
    if ((await names()).join("|") !== left.join("|")) problem(where, "after a reload the filter of the URL is not applied");
    if ((await filter.inputValue()) !== first.toUpperCase()) problem(where, "after a reload the filter box does not say the URL's filter");
    await filter.fill("no endpoint is called this");
    if ((await names()).length !== 0) problem(where, "a filter that matches nothing leaves rows");
    const empty = page.locator("[data-filter-empty]:not([hidden])");
    if ((await empty.count()) === 0) problem(where, "a filter that matches nothing does not say so");
    await filter.fill("");
    if ((await names()).length !== before.length) problem(where, "clearing the filter does not bring every row back");
    if (page.url().includes("filter=")) problem(where, "a cleared filter stays in the URL");
  }
  // Tooltip on a heatmap cell, by mouse and by keyboard: the cells are
  // one Tab stop, the arrow keys move between them.
  const cell = page.locator("table.heatmap td[data-tip]").last();
  if ((await cell.count()) > 0) {
    // Scroll first: app.js hides the tooltip on scroll, and hover()
    // scrolls the cell into view just before it moves the mouse.
    await cell.scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await cell.hover();
    const tipShown = page.locator(".pd-tooltip:not([hidden])");
    await tipShown.waitFor({ timeout: 3000 }).catch(() => {});
    const text = (await tipShown.count()) ? ((await tipShown.first().textContent()) ?? "") : "";
    if (!/Worst|No run/.test(text)) problem(where, `hovering a heatmap cell shows "${text}"`);
    await page.mouse.move(0, 0);
    const stops = await page.locator("table.heatmap td[tabindex='0']").count();
    if (stops !== 1) problem(where, `the heatmap has ${stops} cells in the tab order, not one`);
    else {
      await page.locator("table.heatmap td[tabindex='0']").focus();
      const first = await page.evaluate(() => document.activeElement?.getAttribute("data-tip") ?? "");
      // Left to the week before, or, with one week, down to the next row.
      const weeks = await page.locator("table.heatmap tbody tr").first().locator("td").count();
      await page.keyboard.press(weeks > 1 ? "ArrowLeft" : "ArrowDown");
      const moved = await page.evaluate(() => ({
        tip: document.activeElement?.getAttribute("data-tip") ?? "",
        cell: document.activeElement?.tagName,
        stops: document.querySelectorAll("table.heatmap td[tabindex='0']").length,
        shown: document.querySelectorAll(".pd-tooltip:not([hidden])").length,
      }));
      if (moved.cell !== "TD" || moved.tip === first) problem(where, "the arrow keys do not move between heatmap cells");
      if (moved.stops !== 1) problem(where, "after an arrow key the heatmap has more than one cell in the tab order");
      if (moved.shown !== 1) problem(where, "a heatmap cell focused from the keyboard shows no tooltip");
    }
  } else if ((await page.locator("table.heatmap").count()) > 0) {
    problem(where, "the heatmap cells have no tooltips");
  }
  // Tooltip on a chart point of an endpoint page; zoom and series.
  const endpoint = kinds.endpoint;
  if (endpoint) {
    const where = `${endpoint} (scripts)`;
    at(where);
    await open(page, endpoint);
    // The point of the range shown (the other ranges are hidden).
    const hit = page.locator("svg.chart .pd-hit:visible").last();
    if ((await hit.count()) === 0) problem(where, "the trend chart has no points to hover");
    else {
      await hit.scrollIntoViewIfNeeded();
      await page.waitForTimeout(300);
      await hit.hover();
      const tip = page.locator(".pd-tooltip:not([hidden])");
      if ((await tip.count()) !== 1) problem(where, "hovering a chart point shows no tooltip");
      else {
        const text = await tip.textContent();
        for (const word of ["rounds", "median", "baseline", "ratio"]) {
          if (!text.toLowerCase().includes(word)) problem(where, `the tooltip does not say ${word}: ${text}`);
        }
        if (shotDir) {
          const box = await hit.boundingBox();
          fs.mkdirSync(shotDir, { recursive: true });
          await page.screenshot({
            path: path.join(shotDir, "tooltip.png"),
            clip: { x: Math.max(0, box.x - 300), y: Math.max(0, box.y - 200), width: 600, height: 280 },
          });
        }
      }
      // The same from the keyboard: focus the link around the point.
      await page.mouse.move(0, 0);
      await hit.locator("xpath=..").focus();
      if ((await page.locator(".pd-tooltip:not([hidden])").count()) !== 1) problem(where, "focusing a chart point shows no tooltip");
    }
    await zoomAndSeries(page, endpoint, where).catch((e) => problem(where, `the zoom check stopped: ${e.message.split("\n")[0]}`));
  }
  // The compare page lists the most severe first.
  if (kinds.compare) {
    const where = `${kinds.compare} (order)`;
    await open(page, kinds.compare);
    const order = await page.locator("table tbody tr[data-verdict]").first().locator("xpath=../tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-verdict")));
    const rank = { failed: 0, regression: 1, inconclusive: 2, removed: 3, added: 4, improvement: 5, same: 6 };
    for (let i = 1; i < order.length; i++) {
      if ((rank[order[i]] ?? 9) < (rank[order[i - 1]] ?? 9)) {
        problem(where, `a ${order[i]} row comes after a ${order[i - 1]} row: not the most severe first (${order.join(", ")})`);
        break;
      }
    }
  }
  // Policy switching, wherever a page offers it.
  for (const p of pages) {
    if (!html(p).includes("data-policy-switch")) continue;
    const where = `${p} (policy switch)`;
    at(where);
    await open(page, p);
    const select = page.locator("select[data-policy-switch]").first();
    if (!(await select.isVisible())) problem(where, "the policy switch is not visible with JavaScript on");
    const values = await select.locator("option").evaluateAll((os) => os.map((o) => o.value));
    for (const v of values) {
      await select.selectOption(v);
      const state = await page.evaluate((v) => {
        const all = Array.from(document.querySelectorAll("[data-policy]"));
        const wrong = all.filter((e) => (e.getAttribute("data-policy") === v) === e.hidden);
        return { all: all.length, wrong: wrong.length, shown: all.filter((e) => !e.hidden).length };
      }, v);
      if (state.all === 0) problem(where, "a policy switch but no [data-policy] element");
      if (state.shown === 0) problem(where, `choosing policy ${v} shows nothing`);
      if (state.wrong) problem(where, `choosing policy ${v} leaves ${state.wrong} elements in the wrong state`);
    }
    break; // one page shows the mechanism works; the rest use the same code
  }
}

// The trend chart zooms by a drag across it: the URL gets the range, the
// time axis is drawn again for it, and a reload shows the same range; a
// hidden series stays hidden across a reload; "Whole range" undoes it.
async function zoomAndSeries(page, endpoint, where) {
  const svg = page.locator("[data-trend] figure:visible svg.trend").first();
  if ((await svg.count()) === 0) return problem(where, "no trend chart to zoom");
  const ticks = () => svg.locator("g.t-xticks text").allTextContents();
  const whole = await ticks();
  await svg.scrollIntoViewIfNeeded();
  const box = await svg.boundingBox();
  await page.mouse.move(box.x + box.width * 0.35, box.y + box.height * 0.6);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.6, { steps: 6 });
  await page.mouse.up();
  const zoomed = await ticks();
  const q = new URL(page.url()).searchParams;
  if (!q.get("from") || !q.get("to")) problem(where, `a drag across the chart puts no range in the URL (${page.url()})`);
  if (zoomed.join("|") === whole.join("|")) problem(where, "a drag across the chart does not change its time axis");
  const status = await page.locator(".zoom-state").textContent();
  if (!/Showing/.test(status ?? "")) problem(where, `the zoom says nothing of the range shown ("${status}")`);
  await page.locator("input[data-series='rounds']").uncheck({ timeout: 3000 });
  const hiddenNow = await svg.locator(".t-round").evaluateAll((els) => els.every((e) => getComputedStyle(e).display === "none"));
  if (!hiddenNow) problem(where, "unticking “round p99” leaves the rounds drawn");
  await page.reload({ waitUntil: "load" });
  const again = await page.locator("[data-trend] figure:visible svg.trend").first().locator("g.t-xticks text").allTextContents();
  measured.push(`zoom: ticks ${whole.length} → ${zoomed.length} after a drag, ${again.length} after a reload (${zoomed.slice(0, 3).join(", ")})`);
  if (again.join("|") !== zoomed.join("|")) problem(where, `after a reload the chart is not zoomed as the URL says (${again.join(", ")} against ${zoomed.join(", ")})`);
  const stillHidden = await page.locator("input[data-series='rounds']").isChecked();
  if (stillHidden) problem(where, "after a reload the hidden series is shown again");
  if (shotDir) {
    fs.mkdirSync(shotDir, { recursive: true });
    await page.locator("[data-trend] figure:visible").first().screenshot({ path: path.join(shotDir, "endpoint-zoomed.png") });
  }
  await page.locator("button[data-zoom='reset']").click({ timeout: 3000 });
  const back = await page.locator("[data-trend] figure:visible svg.trend").first().locator("g.t-xticks text").allTextContents();
  if (back.join("|") !== whole.join("|")) problem(where, "“Whole range” does not bring the whole time axis back");
  if (new URL(page.url()).searchParams.get("from")) problem(where, "“Whole range” leaves the range in the URL");
  // The buttons do it from the keyboard too.
  await page.locator("button[data-zoom='in']").focus({ timeout: 3000 });
  await page.keyboard.press("Enter");
  if (!new URL(page.url()).searchParams.get("from")) problem(where, "“Zoom in” from the keyboard puts no range in the URL");
  await page.locator("button[data-zoom='reset']").click({ timeout: 3000 });
}

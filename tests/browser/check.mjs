// Opens every page of a built perfdash site over file:// in Debian's
// headless Chromium (driven by playwright-core; the browser is the system
// one, never a downloaded build) and fails on anything a reader would
// trip over: console errors, page errors, failed resource loads, broken
// relative links or #anchors, pages nobody links to, links that leave the
// site, and, with JavaScript disabled, charts or tables that do not show.
//
// usage: node check.mjs SITE_DIR [SCREENSHOT_DIR]
// Prints one line per problem and exits 1 if there is any.

import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const siteDir = path.resolve(process.argv[2] ?? "site");
const shotDir = process.argv[3] ? path.resolve(process.argv[3]) : null;
const executablePath = process.env.PERFDASH_CHROMIUM || "/usr/bin/chromium";

const problems = [];
const problem = (page, what) => problems.push(`${page}: ${what}`);

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

const pages = walk(siteDir)
  .filter((f) => f.endsWith(".html"))
  .map(rel)
  .sort();
if (!pages.includes("index.html")) {
  console.error(`${siteDir}: no index.html, is this a built site?`);
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
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

// What every page holds, for the link check after all pages were seen.
const ids = new Map(); // page -> Set of ids
const links = []; // { from, href, text }

// ---- Pass 1: JavaScript on. -------------------------------------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  let current = "";
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "assert") problem(current, `console ${msg.type()}: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problem(current, `page error: ${err.message}`));
  page.on("requestfailed", (req) => {
    const why = req.failure()?.errorText ?? "?";
    // Leaving a page aborts what it still loads (the favicon, often);
    // that is not a broken resource. Missing files say ERR_FILE_NOT_FOUND.
    if (why !== "net::ERR_ABORTED") problem(current, `failed to load ${req.url()}: ${why}`);
  });
  page.on("request", (req) => {
    const url = req.url();
    if (!url.startsWith("file:") && !url.startsWith("data:") && !url.startsWith("about:")) {
      problem(current, `request leaves the site: ${url}`);
    }
  });
  for (const p of pages) {
    current = p;
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
    const seen = await page.evaluate(() => {
      const ids = Array.from(document.querySelectorAll("[id]"), (e) => e.id);
      const names = Array.from(document.querySelectorAll("a[name]"), (e) => e.getAttribute("name"));
      const links = Array.from(document.querySelectorAll("a[href], area[href]"), (a) => ({
        href: a.getAttribute("href"),
        text: (a.textContent || "").trim().slice(0, 40),
        external: (a.getAttribute("rel") || "").split(/\s+/).includes("external"),
      })).concat(
        // Resources are links too: a missing favicon fails quietly.
        Array.from(document.querySelectorAll("link[href], script[src], img[src], use[href]"), (e) => ({
          href: e.getAttribute("href") ?? e.getAttribute("src"),
          text: `<${e.tagName.toLowerCase()}>`,
          resource: true,
        })),
      );
      const sheets = Array.from(document.querySelectorAll('link[rel="stylesheet"]'))
        .filter((l) => !l.sheet)
        .map((l) => l.getAttribute("href"));
      const duplicateIds = ids.filter((id, i) => ids.indexOf(id) !== i);
      const overflow = document.documentElement.scrollWidth - window.innerWidth;
      return { ids: ids.concat(names), links, sheets, duplicateIds, title: document.title, overflow };
    });
    ids.set(p, new Set(seen.ids));
    for (const l of seen.links) links.push({ from: p, ...l });
    for (const s of seen.sheets) problem(p, `stylesheet ${s} did not load`);
    for (const d of new Set(seen.duplicateIds)) problem(p, `duplicate id "${d}"`);
    if (!seen.title.trim()) problem(p, "page has no <title>");
    // Wide tables scroll in their own box; the page itself must fit a
    // 1280-pixel window (a projector), or the overview gets cut off.
    if (seen.overflow > 1) problem(p, `page is ${seen.overflow}px wider than a 1280px window`);
  }
  await exerciseScripts(page);
  await screenshots(context, "", { javaScript: true });
  await context.close();
  const dark = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "dark" });
  await screenshots(dark, "-dark", { only: ["overview", "endpoint", "heatmap"] });
  await dark.close();
  // The pages of the review meeting and the investigation on a projector
  // (1280×720, light and dark) and on a phone (390 px).
  for (const [suffix, options] of [
    ["-1280-light", { viewport: { width: 1280, height: 720 } }],
    ["-1280-dark", { viewport: { width: 1280, height: 720 }, colorScheme: "dark" }],
    ["-390", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 }],
  ]) {
    const context = await browser.newContext(options);
    await screenshots(context, suffix, { only: ["weekly", "endpoint", "flame", "capacity"] });
    await context.close();
  }
}

// ---- Links and anchors, from what pass 1 saw. --------------------------
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

// ---- Pass 2: JavaScript off: charts and tables still show. -------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
  const page = await context.newPage();
  for (const p of pages) {
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
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
      return { hidden, charts, tables, untitled };
    });
    for (const h of r.hidden) problem(p, `without JavaScript, ${h} is not shown`);
    if (r.untitled) problem(p, `${r.untitled} svg(s) without a <title> for screen readers`);
    const kind = p === "index.html" ? "overview" : p.startsWith("endpoints/") ? "endpoint" : p.startsWith("runs/") && p !== "runs/index.html" ? "run" : "";
    if ((kind === "overview" || kind === "endpoint") && (r.charts === 0 || r.tables === 0)) {
      problem(p, `without JavaScript the ${kind} page shows ${r.charts} charts and ${r.tables} tables`);
    }
    if (kind === "run" && r.tables === 0) problem(p, "without JavaScript the run page shows no table");
  }
  await screenshots(context, "-nojs", { only: ["overview", "endpoint"] });
  await context.close();
}

// ---- The weekly page's first screen (issue 17). ---------------------------
// On a projector at 1280×720, and at 150 % zoom (853×480 CSS px), every
// open problem's line is on the first screen, without scrolling.
if (pages.includes("weekly.html")) {
  for (const [width, height] of [[1280, 720], [853, 480]]) {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await page.goto(pathToFileURL(path.join(siteDir, "weekly.html")).href, { waitUntil: "load" });
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
}

// ---- A phone and a projector: nothing scrolls sideways but table boxes. -
// At 390 px (a phone) and 1280 px every page fits its window: what is too
// wide scrolls inside its own `.scroll` box (first column sticky). On the
// overview every endpoint's name, ratio and verdict are in view at 390 px
// without scrolling anything.
for (const width of [390, 1280]) {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  for (const p of width === 1280 ? Object.values(onePagePerType()) : pages) {
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
    const r = await page.evaluate(() => {
      const root = document.documentElement;
      const overflow = root.scrollWidth - root.clientWidth;
      // What sticks out, outside any scroll box: the culprits to name.
      const out = [];
      if (overflow > 0) {
        for (const el of document.body.querySelectorAll("*")) {
          if (el.closest(".scroll") || el.closest("details:not([open])")) continue;
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
      const table = location.pathname.endsWith("/index.html") && !location.pathname.includes("/runs/") ? document.querySelector("table#endpoints") : null;
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
      return { overflow, out: out.slice(0, 3), cut, hidden: hidden.slice(0, 6), hiddenCount: hidden.length };
    });
    if (r.overflow > 0) problem(p, `at ${width}px the page scrolls sideways by ${r.overflow}px: ${r.out.join(", ")}`);
    for (const c of r.cut) problem(p, `at ${width}px the caption "${c}…" is cut by its table box`);
    if (width === 390 && r.hiddenCount) {
      problem(p, `at 390px ${r.hiddenCount} of the overview's names, ratios and verdicts need scrolling: ${r.hidden.join("; ")}`);
    }
  }
  await context.close();
}

// ---- Accessibility: axe-core on one page of every type, both themes. ---
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
  for (const [type, p] of Object.entries(onePagePerType())) {
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
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
  }
  await context.close();
}
console.log(
  `accessibility (axe-core ${JSON.parse(fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/package.json"), "utf8")).version}): ` +
    `${Object.keys(onePagePerType()).length} page types, light and dark; ` +
    (axeCounts.size ? `violations by rule: ${[...axeCounts].map(([k, n]) => `${k}: ${n}`).join(", ")}` : "no violations"),
);

// ---- Keyboard: reading order, and a way past the charts. ---------------
{
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  for (const [type, p] of Object.entries(onePagePerType())) {
    await keyboardWalk(page, p, type);
  }
  await context.close();
}

// ---- Print stylesheet: one look at an endpoint page. -------------------
if (shotDir) {
  const context = await browser.newContext({ viewport: { width: 900, height: 1200 } });
  const page = await context.newPage();
  const endpoint = pages.find((p) => p.startsWith("endpoints/"));
  if (endpoint) {
    await page.goto(pathToFileURL(path.join(siteDir, endpoint)).href);
    await page.emulateMedia({ media: "print" });
    await page.screenshot({ path: path.join(shotDir, "endpoint-print.png"), fullPage: true });
  }
  await context.close();
}

await browser.close();

console.log(`browser check: ${pages.length} pages, ${links.length} links checked, ${problems.length} problems`);
for (const p of problems) console.log(`problem: ${p}`);
process.exit(problems.length ? 1 : 0);

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
// folder (endpoints/, runs/, flame/, capacity/, compare/, …) or name
// (weekly, history, releases, …) it belongs to. A new kind of page is
// picked up without a change here.
function pageType(p) {
  if (p === "index.html") return "overview";
  if (p === "runs/index.html") return "runs index";
  const slash = p.indexOf("/");
  if (slash > 0) return p.slice(0, slash);
  return p.replace(/\.html$/, "");
}

// One page of every type: the showcase page where there is one (the most
// to look at), else the first of its type.
function onePagePerType() {
  const picks = {};
  const named = showcase();
  for (const p of Object.values(named)) if (p && !(pageType(p) in picks)) picks[pageType(p)] = p;
  for (const p of pages) if (!(pageType(p) in picks)) picks[pageType(p)] = p;
  return picks;
}

// The pages a person looks at, by what they are.
function showcase() {
  const html = (p) => fs.readFileSync(path.join(siteDir, p), "utf8");
  const pick = (pred) => pages.find(pred);
  return {
    overview: "index.html",
    heatmap: "index.html",
    // The endpoint with the most regressions: the most to look at.
    endpoint: pages
      .filter((p) => p.startsWith("endpoints/") && !p.endsWith("index.html"))
      .map((p) => [p, fs.readFileSync(path.join(siteDir, p), "utf8").split('data-verdict="regression"').length])
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0],
    run: pick((p) => p.startsWith("runs/") && !p.endsWith("index.html") && fs.readFileSync(path.join(siteDir, p), "utf8").includes("v-regression")) ??
      pick((p) => p.startsWith("runs/") && !p.endsWith("index.html")),
    runs: pick((p) => p === "runs/index.html"),
    weekly: pick((p) => /week/i.test(p)),
    history: pick((p) => p === "history.html"),
    // A flame page with a differential graph, and a capacity page with a
    // break in its steps: the most colours to read.
    flame: pages.filter((p) => p.startsWith("flame/") && html(p).includes(".diff.svg")).at(-1) ?? pick((p) => /flame/i.test(p)),
    capacity: pick((p) => p.startsWith("capacity/") && html(p).includes("step-break")) ?? pick((p) => p.startsWith("capacity/")),
  };
}

async function screenshots(context, suffix, { only } = {}) {
  if (!shotDir) return;
  fs.mkdirSync(shotDir, { recursive: true });
  const page = await context.newPage();
  for (const [name, p] of Object.entries(showcase())) {
    if (!p || (only && !only.includes(name))) continue;
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
    // A flame graph is an <object>: its file is loaded by the page's load
    // event, but drawn a moment later (its document is another origin
    // over file://, so the page cannot ask whether it is done).
    if ((await page.locator("object").count()) > 0) await page.waitForTimeout(1000);
    const file = path.join(shotDir, `${name}${suffix}.png`);
    if (name === "heatmap") {
      const heat = page.locator("table.heatmap").first();
      if ((await heat.count()) === 0) continue;
      await heat.screenshot({ path: file });
    } else {
      await page.screenshot({ path: file, fullPage: name !== "run" && name !== "runs" });
    }
  }
  await page.close();
}

// The scripts do what they promise: sorting, filtering, tooltips, policy
// switching, all reachable from the keyboard.
async function exerciseScripts(page) {
  const at = "index.html (scripts)";
  await page.goto(pathToFileURL(path.join(siteDir, "index.html")).href, { waitUntil: "load" });
  const table = page.locator("table#endpoints");
  if ((await table.count()) === 0) return problem(at, "no table#endpoints on the overview");
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
  if (!reached) problem(at, "the sortable table headers cannot be reached with Tab");
  await table.locator("thead th button").first().focus();
  await page.keyboard.press("Enter");
  const asc = await names();
  const sorted = await page.evaluate((xs) => [...xs].sort((a, b) => a.localeCompare(b)), before);
  if (asc.join("|") !== sorted.join("|")) problem(at, `sorting by endpoint gave ${asc.join(", ")}`);
  await page.keyboard.press("Enter");
  const desc = await names();
  if (desc.join("|") !== [...sorted].reverse().join("|")) problem(at, "sorting twice does not reverse the order");
  // Filter.
  const filter = page.locator("input[data-filter]").first();
  if ((await filter.count()) === 0) problem(at, "no filter box");
  else {
    const first = before[0];
    await filter.fill(first.toUpperCase());
    const left = await names();
    if (!left.includes(first) || left.length > before.length) {
      problem(at, `filtering by "${first}" left ${left.join(", ")}`);
    }
    await filter.fill("no endpoint is called this");
    if ((await names()).length !== 0) problem(at, "a filter that matches nothing leaves rows");
    const empty = page.locator("[data-filter-empty]:not([hidden])");
    if ((await empty.count()) === 0) problem(at, "a filter that matches nothing does not say so");
    await filter.fill("");
    if ((await names()).length !== before.length) problem(at, "clearing the filter does not bring every row back");
  }
  // Tooltip on a heatmap cell.
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
    if (!/Worst|No run/.test(text)) problem(at, `hovering a heatmap cell shows "${text}"`);
  } else if ((await page.locator("table.heatmap").count()) > 0) {
    problem(at, "the heatmap cells have no tooltips");
  }
  // Tooltip on a chart point of an endpoint page.
  const endpoint = pages.find((p) => p.startsWith("endpoints/"));
  if (endpoint) {
    const where = `${endpoint} (scripts)`;
    await page.goto(pathToFileURL(path.join(siteDir, endpoint)).href, { waitUntil: "load" });
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
  }
  // Policy switching, wherever a page offers it.
  for (const p of pages) {
    const html = fs.readFileSync(path.join(siteDir, p), "utf8");
    if (!html.includes("data-policy-switch")) continue;
    const where = `${p} (policy switch)`;
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
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

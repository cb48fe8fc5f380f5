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

// The pages a person looks at, by what they are.
function showcase() {
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
    flame: pick((p) => /flame/i.test(p) && !p.endsWith("index.html")) ?? pick((p) => /flame/i.test(p)),
  };
}

async function screenshots(context, suffix, { only } = {}) {
  if (!shotDir) return;
  fs.mkdirSync(shotDir, { recursive: true });
  const page = await context.newPage();
  for (const [name, p] of Object.entries(showcase())) {
    if (!p || (only && !only.includes(name))) continue;
    await page.goto(pathToFileURL(path.join(siteDir, p)).href, { waitUntil: "load" });
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

// SPDX-License-Identifier: Apache-2.0
/*
 * omniprof serve's page in a real browser (Debian's chromium, or firefox
 * with --browser=firefox) through puppeteer-core: the page loads without a
 * console error, the flame graph shows the workload's leaf, click-to-zoom
 * and search work, a brushed time range changes the totals, and the diff of
 * two ranges marks the function that only ran in the second one.
 * Screenshots go to SHOTS_DIR for a person to look at.
 *
 * usage: node browser.js URL TOKEN LEAF_A A_FROM A_TO LEAF_B B_FROM B_TO SHOTS_DIR [--browser=firefox]
 * (node finds puppeteer-core through NODE_PATH, set by tests/e2e/test_serve.c).
 * Exit 0 when every check passed; each failure is one "FAIL:" line.
 */
"use strict";
const puppeteer = require("puppeteer-core");
const fs = require("fs");
const path = require("path");

const [url, token, leafA, aFrom, aTo, leafB, bFrom, bTo, shots] = process.argv.slice(2);
const firefox = process.argv.includes("--browser=firefox");
let failures = 0;

function check(ok, what) {
  console.log((ok ? "ok: " : "FAIL: ") + what);
  if (!ok) failures++;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(shots, (firefox ? "firefox-" : "") + name + ".png"), fullPage: true });
}

/* Drags across the timeline from time t0 to t1 (unix seconds). */
async function brush(page, t0, t1) {
  const box = await page.evaluate((t0, t1) => {
    const c = document.getElementById("timeline").getBoundingClientRect();
    /* Inside the canvas: a phase may start before the first stored second. */
    const x = (t) => c.left + Math.min(c.width - 1, Math.max(1, (t - tl.from) / (tl.to - tl.from) * c.width));
    return { x0: x(t0), x1: x(t1), y: c.top + c.height / 2 };
  }, t0, t1);
  await page.mouse.move(box.x0, box.y);
  await page.mouse.down();
  await page.mouse.move((box.x0 + box.x1) / 2, box.y, { steps: 3 });
  await page.mouse.move(box.x1, box.y, { steps: 3 });
  await page.mouse.up();
}

async function total(page, before) {
  await page.waitForFunction((b) => {
    const t = document.getElementById("total").dataset.total;
    return t !== undefined && t !== b;
  }, { timeout: 10000 }, before);
  return page.$eval("#total", (e) => e.dataset.total);
}

async function main() {
  fs.mkdirSync(shots, { recursive: true });
  const browser = await puppeteer.launch(firefox
    ? { browser: "firefox", executablePath: "/usr/bin/firefox-esr", headless: true }
    : { executablePath: "/usr/bin/chromium", headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("requestfailed", (r) => errors.push("request failed: " + r.url()));
    await page.setViewport({ width: 1400, height: 1000 });
    await page.goto(url + "#token=" + encodeURIComponent(token), { waitUntil: "load" });
    await page.select("#range", "all");
    await page.waitForSelector("body[data-ready='1']", { timeout: 15000 });
    await page.waitForFunction(() => document.querySelectorAll("#flame .fr").length > 1, { timeout: 15000 });
    await shot(page, "1-loaded");

    const names = await page.$$eval("#flame .fr", (ds) => ds.map((d) => d.textContent));
    check(names.includes(leafA), "the flame graph shows " + leafA);
    const whole = await page.$eval("#total", (e) => e.dataset.total);
    check(Number(whole) > 0, "the whole range has samples (" + whole + ")");

    /* Click-to-zoom: "main" of the first workload fills the width. */
    const zoomed = await page.evaluate(() => {
      const d = [...document.querySelectorAll("#flame .fr")].find((x) => x.textContent === "main");
      if (!d) return null;
      d.click();
      const top = [...document.querySelectorAll("#flame .fr")].find((x) => x.style.top === "0px");
      return { name: top && top.textContent, width: top && top.getBoundingClientRect().width,
               box: document.getElementById("flame").clientWidth,
               details: document.getElementById("details").textContent };
    });
    check(zoomed && zoomed.name === "main" && Math.abs(zoomed.width - zoomed.box) < 3,
          "clicking main zooms to it (" + JSON.stringify(zoomed && { name: zoomed.name, width: zoomed.width }) + ")");
    check(zoomed && /frame type native/.test(zoomed.details) && /mapping /.test(zoomed.details),
          "the click shows the frame's details");
    await shot(page, "2-zoomed");
    await page.click("#unzoom");

    /* Search: the leaf matches, with its share. */
    await page.type("#search", leafA);
    const match = await page.$eval("#match", (e) => e.textContent);
    const share = parseFloat((match.match(/([\d.]+)%/) || [])[1]);
    const marked = await page.$$eval("#flame .fr.match", (ds) => ds.map((d) => d.textContent));
    check(share > 0 && share <= 100 && marked.includes(leafA), "search marks " + leafA + " (" + match + ")");
    await shot(page, "3-search");
    await page.$eval("#search", (e) => { e.value = ""; e.dispatchEvent(new Event("input")); });

    /* A brushed range (the first workload's) changes the totals. */
    await brush(page, Number(aFrom), Number(aTo));
    const inA = await total(page, whole);
    check(Number(inA) > 0 && Number(inA) < Number(whole), "brushing A: " + inA + " of " + whole + " samples");
    await shot(page, "4-brushed");

    /* Diff: A = the first range, B = the second; B's leaf only ran in B. */
    await page.click("nav button[data-view=diff]");
    await page.click("#set-a");
    await brush(page, Number(bFrom), Number(bTo));
    await page.click("#set-b");
    await page.click("#run-diff");
    await page.waitForFunction(() => document.querySelectorAll("#dtable tbody tr").length > 0, { timeout: 10000 });
    const onlyB = await page.$$eval("#dtable td.only-b", (ds) => ds.map((d) => d.textContent));
    check(onlyB.includes(leafB), "the diff marks " + leafB + " as only in B");
    /* libc's frames ran in both ranges. */
    check(onlyB.length && !onlyB.includes("__libc_start_call_main"),
          "__libc_start_call_main (in both ranges) is not marked as only in B");
    await shot(page, "5-diff");

    /* Diff of two filter sets over one range: A = comm of the first workload, B = the second's. */
    await page.click("#clear-brush");
    await page.click("input[name=dmode][value=filters]");
    await page.select("#f-comm", "fp_chain");
    await page.type("#b-comm", "deep_recursion");
    await page.$eval("#dtable tbody", (b) => { b.textContent = ""; });
    await page.click("#run-diff");
    await page.waitForFunction(() => document.querySelectorAll("#dtable tbody tr").length > 0, { timeout: 10000 });
    const onlyBf = await page.$$eval("#dtable td.only-b", (ds) => ds.map((d) => d.textContent));
    const totals = await page.$eval("#diff-totals", (e) => e.textContent);
    check(onlyBf.includes(leafB) && !onlyBf.includes("chain_01"),
          "the filter-set diff marks " + leafB + " as only in B (" + totals + ")");
    await shot(page, "5b-diff-filters");
    await page.select("#f-comm", "");

    await page.click("nav button[data-view=top]");
    await page.waitForFunction(() => document.querySelectorAll("#top tbody tr").length > 0, { timeout: 10000 });
    await shot(page, "6-top");
    await page.click("nav button[data-view=exes]");
    await page.waitForFunction(() => document.querySelectorAll("#exes tbody tr").length > 0, { timeout: 10000 });
    await shot(page, "7-executables");

    check(errors.length === 0, "no console error" + (errors.length ? ": " + errors.join(" | ") : ""));
  } finally {
    await browser.close();
  }
}

main().then(() => process.exit(failures ? 1 : 0), (e) => {
  console.log("FAIL: " + (e && e.stack || e));
  process.exit(1);
});

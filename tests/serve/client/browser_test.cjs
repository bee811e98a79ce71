// serve's chat page in a real browser: Debian's Chromium, headless, driven by puppeteer-core.
// Loads GET /, sends a message with the button and one with Enter, waits for each streamed
// reply to end, stops a reply with Stop, and, on a server with --api-key, sees the 401 shown
// and then answered once the key is typed. Screenshots the page and the reply alone, and
// checks the reply's picture is not blank (a tiny PNG decoder below, on node's zlib).
//   node browser_test.cjs --serve build/native/bin/serve --model models/stories260K.gguf
//        [--screenshot FILE.png] [--chromium /usr/bin/chromium] [--url URL (a running server)]
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");
const h = require("./serve_process.cjs");

const args = h.parseArgs();
const chromium = args.chromium || "/usr/bin/chromium";
const shot = path.resolve(args.screenshot || path.join(os.tmpdir(), "serve_browser_test.png"));
const shotReply = shot.replace(/(\.png)?$/i, ".reply.png");
const assert = h.assert;
const TIMEOUT = 60000;

// PNG (8-bit gray, gray+alpha, RGB or RGBA, not interlaced) to {width, height, channels, pixels}.
function decodePng(buf) {
  assert(buf.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])), "not a PNG");
  let width, height, depth, type, interlace;
  const idat = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at), kind = buf.toString("latin1", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (kind === "IHDR") {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; type = data[9]; interlace = data[12];
    } else if (kind === "IDAT") idat.push(data);
    else if (kind === "IEND") break;
    at += 12 + len;
  }
  const channels = { 0: 1, 4: 2, 2: 3, 6: 4 }[type];
  assert(depth === 8 && channels && interlace === 0, `PNG type ${type}, depth ${depth}, interlace ${interlace}: not read here`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride, prev = out - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels] : 0;      // left
      const b = y > 0 ? pixels[prev + x] : 0;                         // up
      const c = y > 0 && x >= channels ? pixels[prev + x - channels] : 0;  // up-left
      let p = line[x];
      if (filter === 1) p += a;
      else if (filter === 2) p += b;
      else if (filter === 3) p += (a + b) >> 1;
      else if (filter === 4) {
        const e = a + b - c, pa = Math.abs(e - a), pb = Math.abs(e - b), pc = Math.abs(e - c);
        p += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else assert(filter === 0, `PNG filter ${filter}`);
      pixels[out + x] = p & 255;
    }
  }
  return { width, height, channels, pixels };
}

// How much of a picture is not its most common color: {colors, inked (fraction of pixels)}.
function ink(png) {
  const counts = new Map();
  const { pixels, channels } = png;
  for (let i = 0; i < pixels.length; i += channels) {
    const key = pixels.readUIntBE(i, Math.min(channels, 3));
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const total = pixels.length / channels, most = Math.max(...counts.values());
  return { colors: counts.size, inked: (total - most) / total };
}

// Runs action() (a send), then waits until a new error shows or the new assistant message leaves
// "streaming"; returns {state, text, error, turns} (turns: the messages on the page).
async function reply(page, action) {
  const before = await page.evaluate(() => document.querySelectorAll("#messages .message").length);
  await action();
  const settled = (before) => {
    const fresh = [...document.querySelectorAll("#messages .message")].slice(before);
    const error = fresh.find((e) => e.classList.contains("error"));
    const bot = fresh.filter((e) => e.classList.contains("assistant")).pop();
    if (!error && !(bot && bot.dataset.state !== "streaming")) return null;
    return { state: bot ? bot.dataset.state : null, text: bot ? bot.textContent : "", error: error ? error.textContent : null,
             turns: document.querySelectorAll("#messages .message").length };
  };
  const handle = await page.waitForFunction(settled, { timeout: TIMEOUT, polling: 50 }, before);
  return handle.jsonValue();
}

async function openPage(browser, url, pageErrors) {
  const page = await browser.newPage();
  page.on("request", (r) => { if (!r.url().startsWith(url + "/")) pageErrors.push(`a request off the server: ${r.url()}`); });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") pageErrors.push(`console: ${m.text()}`); });
  await page.setViewport({ width: 900, height: 700 });
  const r = await page.goto(url + "/", { waitUntil: "load", timeout: TIMEOUT });
  assert(r && r.status() === 200, `GET / status ${r && r.status()}`);
  await page.waitForSelector("#input", { timeout: TIMEOUT });
  return page;
}

async function main() {
  if (!fs.existsSync(chromium)) h.skip(`no Chromium at ${chromium} (Debian package chromium)`);
  const puppeteer = h.requireCached("puppeteer-core");
  let server = null, keyed = null, url = args.url;
  if (!url) {
    const { serve, model } = h.serveAndModel(args);
    // --max-tokens: a reply of the test model otherwise runs to the full context, and the
    // next turn no longer fits.
    server = await h.startServe({ serve, model, extra: ["--max-tokens", "200"] });
    keyed = await h.startServe({ serve, model, extra: ["--max-tokens", "200", "--api-key", "sesame"] });
    url = server.url;
  }
  const browser = await puppeteer.launch({
    executablePath: chromium, headless: true, timeout: TIMEOUT,
    args: ["--no-sandbox", "--headless=new", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  process.on("exit", () => { try { browser.process().kill("SIGKILL"); } catch (e) { /* gone */ } });
  const pageErrors = [];
  let page;

  const checks = [
    ["the page loads, offline-clean", async () => {
      page = await openPage(browser, url, pageErrors);
      const ids = await page.evaluate(() => ["messages", "input", "send", "stop", "api-key"].filter((id) => !document.getElementById(id)));
      assert(ids.length === 0, `missing #${ids.join(", #")}`);
      const external = await page.evaluate(() => [...document.querySelectorAll("[src],link[href]")]
        .map((e) => e.src || e.href).filter((u) => !u.startsWith("data:")));
      assert(external.length === 0, `external resources: ${external}`);
      return `title ${JSON.stringify(await page.title())}`;
    }],
    ["Send button -> a streamed reply", async () => {
      await page.type("#input", "Tell me a story about a cat.");
      // Count the reply's visible lengths while it streams: more than one means it streamed.
      await page.evaluate(() => {
        window.replyLengths = [];
        new MutationObserver(() => {
          const all = document.querySelectorAll("#messages .message.assistant");
          const n = all.length ? all[all.length - 1].textContent.length : 0;
          if (n && n !== window.replyLengths[window.replyLengths.length - 1]) window.replyLengths.push(n);
        }).observe(document.getElementById("messages"), { childList: true, characterData: true, subtree: true });
      });
      const r = await reply(page, () => page.click("#send"));
      const lengths = await page.evaluate(() => window.replyLengths);
      assert(!r.error, `error shown: ${r.error}`);
      assert(r.state === "done", `state ${r.state}`);
      assert(r.text.trim().length > 0, "the reply is empty");
      const user = await page.$eval("#messages .message.user", (e) => e.textContent);
      assert(user === "Tell me a story about a cat.", `user message ${JSON.stringify(user)}`);
      assert(await page.$eval("#input", (e) => e.value) === "", "the input was not cleared");
      assert(lengths.length >= 2, `the reply appeared in ${lengths.length} step(s), not streamed: ${lengths}`);
      return `${lengths.length} steps: ${JSON.stringify(r.text.slice(0, 50))}`;
    }],
    ["screenshot shows the reply", async () => {
      await page.screenshot({ path: shot });
      const el = (await page.$$("#messages .message.assistant"))[0];
      await el.screenshot({ path: shotReply });
      const whole = ink(decodePng(fs.readFileSync(shot)));
      const reply = decodePng(fs.readFileSync(shotReply)), r = ink(reply);
      assert(reply.width > 20 && reply.height > 10, `the reply is ${reply.width}x${reply.height} pixels`);
      assert(r.colors >= 3 && r.inked > 0.01, `the reply's picture is blank: ${r.colors} colors, ${(100 * r.inked).toFixed(2)}% inked`);
      // The same element with its text made transparent (same size, same box): the pixels
      // that change are the text's.
      const bare = shotReply + ".bare.png";
      await page.evaluate((e) => { e.style.color = "transparent"; }, el);
      await el.screenshot({ path: bare });
      await page.evaluate((e) => { e.style.color = ""; }, el);
      const without = decodePng(fs.readFileSync(bare));
      fs.rmSync(bare);
      assert(without.width === reply.width && without.height === reply.height, "the element changed size");
      let changed = 0;
      for (let i = 0; i < reply.pixels.length; i += reply.channels) {
        if (reply.pixels.compare(without.pixels, i, i + reply.channels, i, i + reply.channels) !== 0) changed++;
      }
      const text = changed / (reply.width * reply.height);
      assert(text > 0.01, `only ${(100 * text).toFixed(2)}% of the reply's pixels are its text`);
      return `${shot} (${whole.colors} colors), ${shotReply} (${reply.width}x${reply.height}, text on ${(100 * text).toFixed(1)}%)`;
    }],
    ["Shift+Enter adds a line, Enter sends (the conversation goes on)", async () => {
      await page.type("#input", "And then?");
      await page.keyboard.down("Shift"); await page.keyboard.press("Enter"); await page.keyboard.up("Shift");
      await page.type("#input", "Tell me.");
      assert(await page.$eval("#input", (e) => e.value) === "And then?\nTell me.", "Shift+Enter did not add a new line");
      const r = await reply(page, () => page.keyboard.press("Enter"));
      assert(!r.error && r.state === "done" && r.text.trim(), `state ${r.state}, error ${r.error}, text ${JSON.stringify(r.text)}`);
      assert(r.turns === 4, `${r.turns} messages on the page, want 4`);
      return JSON.stringify(r.text.slice(0, 50));
    }],
    ["Stop aborts the reply, and the next one works", async () => {
      await page.type("#input", "A long story, please.");
      // Send and Stop in one task: the fetch is aborted whatever the server's speed.
      let busy = false;
      let r = await reply(page, async () => {
        busy = await page.evaluate(() => {
          document.getElementById("send").click();
          const wasBusy = !document.getElementById("stop").disabled;
          document.getElementById("stop").click();
          return wasBusy;
        });
      });
      assert(busy, "Stop was not enabled while sending");
      assert(r.state === "stopped" && !r.error, `state ${r.state}, error ${r.error}`);
      assert(await page.$eval("#send", (e) => !e.disabled), "Send stays disabled after Stop");
      await page.type("#input", "Another story.");
      r = await reply(page, () => page.click("#send"));
      assert(!r.error && r.state === "done" && r.text.trim(), `after Stop: state ${r.state}, error ${r.error}`);
      return JSON.stringify(r.text.slice(0, 50));
    }],
  ];
  if (keyed) {
    checks.push(["--api-key: 401 shown, then the key typed is used", async () => {
      const p = await openPage(browser, keyed.url, pageErrors);
      await p.evaluate(() => localStorage.removeItem("engine.apiKey"));
      await p.type("#input", "Hello?");
      let r = await reply(p, () => p.click("#send"));
      assert(r.error && /401/.test(r.error), `want a 401 error shown, got error ${JSON.stringify(r.error)}, state ${r.state}`);
      assert(await p.$eval("#input", (e) => e.value) === "Hello?", "the failed message was not put back in the input");
      await p.type("#api-key", "sesame");
      // The key field's change event (which stores the key) fires on leaving it for the button.
      r = await reply(p, () => p.click("#send"));
      assert(!r.error && r.state === "done" && r.text.trim(), `with the key: state ${r.state}, error ${r.error}, text ${JSON.stringify(r.text)}`);
      const stored = await p.evaluate(() => localStorage.getItem("engine.apiKey"));
      assert(stored === "sesame", `localStorage has ${stored}`);
      await p.close();
      return "401 then a reply";
    }]);
  }
  // A 401 in the keyed check is expected in the console; other page errors are not.
  checks.push(["no script errors on the page", async () => {
    const real = pageErrors.filter((e) => !/401/.test(e));
    assert(real.length === 0, real.join("; "));
  }]);

  let failures = await h.runChecks(checks);
  await browser.close();
  for (const s of [server, keyed]) {
    if (!s) continue;
    const { code, signal } = await s.stop();
    if (code !== 0) { failures++; console.log(`FAIL serve: SIGTERM ended it with code ${code}, signal ${signal}`); }
  }
  console.log(`screenshot: ${shot}`);
  if (failures) {
    if (server) console.log(`--- serve's stderr (last lines) ---\n${server.stderr().split("\n").slice(-20).join("\n")}`);
    h.fail(`browser_test: ${failures} check(s) failed`);
  }
  console.log("browser_test: all checks passed");
}

main().catch((e) => h.fail(e && e.stack ? e.stack : e));

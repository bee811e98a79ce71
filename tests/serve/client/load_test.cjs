// serve under load: N small chat completions, C at a time, half streamed; each must be a
// complete valid answer or a clean 503 (all sessions busy, queue full) with an error object.
// Optionally, interleaved with them, K clients that vanish mid-stream (--vanish K), K
// malformed bodies that must get 400 (--garbage K), and K slow clients (--slow K): one
// sending its request a few bytes at a time over ~2 s, one not reading its stream for
// 2 s; each of those must still get its whole answer. None may disturb the others.
//   node load_test.cjs --serve build/native/bin/serve --model models/stories260K.gguf
//        [--requests 200] [--concurrency 8] [--max-tokens 8] [--vanish 0] [--garbage 0] [--slow 0]
//        [--parallel 2] [--queue 4] [--deadline 60] [--keepalive 1] [--url URL (a running server instead)]
// Prints "load: N requests, C concurrent: ok X, 503 Y, p50 A ms, p99 B ms, T requests/s,
// U completion tokens/s"; exits non-zero on any bad answer or past the deadline.
"use strict";
const http = require("node:http");
const net = require("node:net");
const h = require("./serve_process.cjs");

const args = h.parseArgs();
const N = Number(args.requests || 200);
const C = Number(args.concurrency || 8);
const MAX = Number(args["max-tokens"] || 8);
const VANISH = Number(args.vanish || 0);
const GARBAGE = Number(args.garbage || 0);
const SLOW = Number(args.slow || 0);
const DEADLINE_S = Number(args.deadline || 60);
const serveArgs = ["--parallel", String(args.parallel || 2), "--queue", String(args.queue || 4)];

// Keep-alive, as the openai client and browsers do (--keepalive 0: a connection per request).
const agent = new http.Agent({ keepAlive: args.keepalive !== "0", maxSockets: C + 1 });
let base;  // "http://127.0.0.1:PORT"

// POST a body; resolves {status, contentType, body, ms} or rejects on a socket error.
// onSent(req) once the body is written and onData(req, text so far) may destroy the
// request (a vanishing client).
function post(path, body, { onSent, onData } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(base + path, {
      method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => { text += d; if (onData) onData(req, text); });
      res.on("end", () => resolve({ status: res.statusCode, contentType: res.headers["content-type"] || "", body: text,
                                    ms: performance.now() - t0 }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body, () => { if (onSent) onSent(req); });
  });
}

function chatBody(i, stream) {
  const b = { messages: [{ role: "user", content: `Story ${i}: a cat and a dog.` }], max_tokens: MAX, stream };
  if (stream) b.stream_options = { include_usage: true };
  return JSON.stringify(b);
}

// Why an answer is not a valid one ("" when it is); sets r.tokens.
function verdict(r, stream) {
  let j;
  if (r.status === 503) {
    try { j = JSON.parse(r.body); } catch (e) { return `503 body not JSON: ${r.body.slice(0, 200)}`; }
    return j.error && typeof j.error.message === "string" ? "" : `503 without error.message: ${r.body.slice(0, 200)}`;
  }
  if (r.status !== 200) return `status ${r.status}: ${r.body.slice(0, 200)}`;
  if (!stream) {
    try { j = JSON.parse(r.body); } catch (e) { return `body not JSON (${e.message}): ${r.body.slice(0, 200)}`; }
    const c = j.choices && j.choices[0];
    if (!c || !c.message || typeof c.message.content !== "string") return `no choices[0].message.content: ${r.body.slice(0, 200)}`;
    if (!j.usage || !Number.isInteger(j.usage.completion_tokens)) return `no usage: ${r.body.slice(0, 200)}`;
    if (j.usage.completion_tokens > MAX) return `${j.usage.completion_tokens} tokens > max_tokens ${MAX}`;
    if (c.finish_reason !== "stop" && c.finish_reason !== "length") return `finish_reason ${c.finish_reason}`;
    r.tokens = j.usage.completion_tokens;
    return "";
  }
  if (!r.contentType.startsWith("text/event-stream")) return `Content-Type ${r.contentType}`;
  if (!r.body.endsWith("data: [DONE]\n\n")) return `stream does not end with [DONE]: ...${JSON.stringify(r.body.slice(-120))}`;
  const events = r.body.slice(0, -2).split("\n\n");
  let finishes = 0, usage = null;
  for (const ev of events.slice(0, -1)) {
    if (!ev.startsWith("data: ")) return `event not "data: ": ${JSON.stringify(ev.slice(0, 120))}`;
    try { j = JSON.parse(ev.slice(6)); } catch (e) { return `chunk not JSON: ${JSON.stringify(ev.slice(0, 120))}`; }
    if (j.object !== "chat.completion.chunk") return `chunk object ${j.object}`;
    if (j.usage) usage = j.usage;
    for (const c of j.choices) if (c.finish_reason) finishes++;
  }
  if (finishes !== 1) return `${finishes} finish_reason chunks`;
  if (!usage || !Number.isInteger(usage.completion_tokens)) return "no usage chunk (include_usage)";
  r.tokens = usage.completion_tokens;
  return "";
}

// A client on a slow link: the request in 12 pieces 170 ms apart (~2 s), on a connection of its
// own; the answer is read whole (Connection: close) and split into status and body.
function slowSend(body) {
  const u = new URL(base);
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
               `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  const bytes = Buffer.from(head + body);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const sock = net.connect(Number(u.port), u.hostname);
    const chunks = [];
    sock.on("data", (d) => chunks.push(d));
    sock.on("error", reject);
    sock.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const at = text.indexOf("\r\n\r\n");
      const status = Number(text.slice(9, 12));
      const headers = text.slice(0, at).toLowerCase();
      let payload = text.slice(at + 4);
      if (headers.includes("transfer-encoding: chunked")) {  // de-chunk
        let out = "", rest = payload;
        for (;;) {
          const nl = rest.indexOf("\r\n");
          const n = parseInt(rest.slice(0, nl), 16);
          if (!n) break;
          out += rest.slice(nl + 2, nl + 2 + n);
          rest = rest.slice(nl + 2 + n + 2);
        }
        payload = out;
      }
      const type = (/content-type: *([^\r\n]*)/.exec(headers) || [])[1] || "";
      resolve({ status, contentType: type, body: payload, ms: performance.now() - t0 });
    });
    const pieces = 12, size = Math.ceil(bytes.length / pieces);
    let i = 0;
    const tick = () => {
      sock.write(bytes.subarray(i * size, (i + 1) * size));
      if (++i < pieces) setTimeout(tick, 170);
    };
    sock.on("connect", tick);
  });
}

// A client that stops reading its stream for 2 s after the first bytes, then reads the rest.
function slowRead(body) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(base + "/v1/chat/completions", {
      method: "POST", agent: false, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
    }, (res) => {
      let text = "", paused = false;
      res.setEncoding("utf8");
      res.on("data", (d) => {
        text += d;
        if (!paused) { paused = true; res.pause(); setTimeout(() => res.resume(), 2000); }
      });
      res.on("end", () => resolve({ status: res.statusCode, contentType: res.headers["content-type"] || "", body: text,
                                    ms: performance.now() - t0 }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const garbageBodies = ['{"messages": [', "not json", "", "[]", '{"messages":"hello"}', '{"messages":[{"role":"user"}]}',
                       '{"messages":[{"role":"user","content":"x"}],"max_tokens":-1}', "{\"messages\":[\u0000]}"];

async function main() {
  let server = null;
  if (args.url) {
    base = String(args.url).replace(/\/$/, "");
  } else {
    const { serve, model } = h.serveAndModel(args);
    server = await h.startServe({ serve, model, extra: serveArgs });
    base = server.url;
  }
  const jobs = [];
  let next = 0, done = 0, ok = 0, busy = 0, tokens = 0;
  const deadline = setTimeout(() => {
    h.fail(`load: past the --deadline of ${DEADLINE_S} s with ${done}/${jobs.length} requests answered` +
           (server ? `; serve's stderr:\n${server.stderr().split("\n").slice(-20).join("\n")}` : ""));
  }, DEADLINE_S * 1000);

  // The jobs: N real requests with the vanishing and garbage ones spread evenly among them.
  for (let i = 0; i < N; i++) jobs.push({ kind: "chat", i, stream: i % 2 === 1 });
  const spread = (count, kind) => {
    for (let k = 0; k < count; k++) jobs.splice(Math.floor(((k + 0.5) * jobs.length) / count), 0, { kind, k });
  };
  spread(VANISH, "vanish");
  spread(GARBAGE, "garbage");
  spread(SLOW, "slow");

  const latencies = [], bad = [];
  const run = {
    async chat(job) {
      let r;
      try { r = await post("/v1/chat/completions", chatBody(job.i, job.stream)); }
      catch (e) { bad.push(`request ${job.i} (${job.stream ? "stream" : "plain"}): ${e.code || e.message}`); return; }
      const why = verdict(r, job.stream);
      if (why) { bad.push(`request ${job.i} (${job.stream ? "stream" : "plain"}): ${why}`); return; }
      if (r.status === 503) { busy++; await new Promise((res) => setTimeout(res, 25)); return; }  // a client backs off
      ok++;
      tokens += r.tokens;
      latencies.push(r.ms);
    },
    async vanish(job) {
      // Even ones leave after the first streamed event, odd ones right after sending (queued or prefilling).
      const body = JSON.stringify({ messages: [{ role: "user", content: `Vanish ${job.k}` }], max_tokens: 64, stream: true });
      let left = false;
      const leave = (req) => { if (!left) { left = true; req.destroy(); } };
      const p = post("/v1/chat/completions", body, {
        onSent: (req) => { if (job.k % 2 === 1) setTimeout(() => leave(req), 5); },
        onData: (req, text) => { if (job.k % 2 === 0 && text.includes("\n\n")) leave(req); },
      });
      try {
        const r = await p;
        if (!left && r.status !== 200 && r.status !== 503) bad.push(`vanishing client ${job.k}: status ${r.status}`);
      } catch (e) { /* the socket we destroyed */ }
    },
    async slow(job) {
      const body = chatBody(1000 + job.k, job.k % 2 === 1);
      let r;
      try { r = job.k % 2 === 0 ? await slowSend(body) : await slowRead(body); }
      catch (e) { bad.push(`slow client ${job.k}: ${e.code || e.message}`); return; }
      const why = verdict(r, job.k % 2 === 1);
      if (why) bad.push(`slow client ${job.k} (${job.k % 2 === 0 ? "sending" : "reading"}): ${why}`);
    },
    async garbage(job) {
      const body = garbageBodies[job.k % garbageBodies.length];
      let r;
      try { r = await post("/v1/chat/completions", body); }
      catch (e) { bad.push(`garbage ${JSON.stringify(body)}: ${e.code || e.message}`); return; }
      let j = null;
      try { j = JSON.parse(r.body); } catch (e) { /* checked below */ }
      if (r.status !== 400 || !j || !j.error || typeof j.error.message !== "string") {
        bad.push(`garbage ${JSON.stringify(body)}: status ${r.status}, want 400 with error.message: ${r.body.slice(0, 200)}`);
      }
    },
  };

  const t0 = performance.now();
  async function worker() {
    while (next < jobs.length) {
      const job = jobs[next++];
      await run[job.kind](job);
      done++;
    }
  }
  await Promise.all(Array.from({ length: Math.min(C, jobs.length) }, worker));
  const seconds = (performance.now() - t0) / 1000;

  // Afterwards, with nothing else running, a request must be served (vanished clients freed
  // their sessions); a 503 is allowed for a moment while the server notices them.
  let after = null;
  for (let tries = 0; tries < 50; tries++) {
    try { after = await post("/v1/chat/completions", chatBody(-1, false)); } catch (e) { after = { status: e.code, body: "" }; }
    if (after.status !== 503) break;
    await new Promise((res) => setTimeout(res, 200));
  }
  if (after.status !== 200 || verdict(after, false)) bad.push(`the request after the load: status ${after.status}: ${after.body.slice(0, 200)}`);
  clearTimeout(deadline);
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : NaN);
  console.log(`load: ${N} requests, ${C} concurrent: ok ${ok}, 503 ${busy}, p50 ${pct(0.5).toFixed(0)} ms, ` +
              `p99 ${pct(0.99).toFixed(0)} ms, ${(ok / seconds).toFixed(1)} requests/s, ${(tokens / seconds).toFixed(0)} completion tokens/s` +
              (VANISH || GARBAGE || SLOW ? ` (with ${VANISH} vanishing, ${GARBAGE} garbage, ${SLOW} slow)` : ""));
  if (ok === 0) bad.push("no request was answered (all 503)");
  if (server) {
    const { code, signal } = await server.stop();
    if (code !== 0) bad.push(`SIGTERM ended serve with code ${code}, signal ${signal}, not 0`);
  }
  if (bad.length) {
    for (const b of bad.slice(0, 10)) console.log(`FAIL ${b}`);
    if (bad.length > 10) console.log(`... and ${bad.length - 10} more`);
    if (server) console.log(`--- serve's stderr (last lines) ---\n${server.stderr().split("\n").slice(-20).join("\n")}`);
    h.fail(`load: ${bad.length} bad answer(s)`);
  }
}

main().catch((e) => h.fail(e && e.stack ? e.stack : e));

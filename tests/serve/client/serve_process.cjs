// Shared by serve's client tests: command-line options, the npm modules kept outside the
// repository (scripts/setup.sh installs them into ${XDG_CACHE_HOME:-~/.cache}/engine-node),
// a serve process on a free port that is always killed when the test exits, and a tiny
// check runner. Exit code 77 means "skipped" (ctest's SKIP_RETURN_CODE).
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const SKIP = 77;

function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(SKIP);
}

function fail(why) {
  console.error(`FAIL: ${why}`);
  process.exit(1);
}

// "--name value" pairs into {name: value}; repeated names keep the last; "--flag" followed by
// another option (or nothing) is true. Numbers stay strings: callers convert what they use.
function parseArgs(argv = process.argv.slice(2)) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) fail(`unexpected argument '${a}'`);
    const name = a.slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) out[name] = argv[++i];
    else out[name] = true;
  }
  return out;
}

// --serve and --model, checked: a missing binary is a failure (the build made it), a missing
// model a skip (test data may live outside the repository).
function serveAndModel(args) {
  if (!args.serve || args.serve === true) fail("--serve PATH_TO_SERVE_BINARY is required");
  if (!args.model || args.model === true) fail("--model PATH.gguf is required");
  if (!fs.existsSync(args.serve)) fail(`no serve binary at ${args.serve}`);
  if (!fs.existsSync(args.model)) skip(`no model at ${args.model}`);
  return { serve: args.serve, model: args.model };
}

function nodeCacheDir() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(cache, "engine-node");
}

// require() of a package from the cache, never from a node_modules inside the repository.
function requireCached(name) {
  const modules = path.join(nodeCacheDir(), "node_modules");
  let resolved;
  try {
    resolved = require.resolve(name, { paths: [modules] });
  } catch (e) {
    skip(`npm package '${name}' is not installed in ${modules} (run scripts/setup.sh)`);
  }
  if (!resolved.startsWith(modules + path.sep)) {
    skip(`npm package '${name}' resolved outside ${modules}: ${resolved}`);
  }
  return require(resolved);
}

const running = new Set();  // serve processes not yet reaped
function killAll() {
  for (const p of running) {
    try { p.kill("SIGKILL"); } catch (e) { /* already gone */ }
  }
}
process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => { killAll(); process.exit(128 + os.constants.signals[sig]); });
}

// Starts `serve -m MODEL --port 0 EXTRA...`, waits for its one stdout line
// "serve: listening on http://HOST:PORT" and returns {url, port, proc, stderr(), stop()}.
// stop() sends SIGTERM and resolves {code, signal} once it exits (SIGKILL after 10 s).
// Its stderr is kept (the last 64 KiB) for failure messages; SERVE_VERBOSE=1 echoes it.
function startServe({ serve, model, extra = [], timeoutMs = 60000 }) {
  const argv = ["-m", model, "--port", "0", ...extra];
  const proc = spawn(serve, argv, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(proc);
  let errText = "";
  const stderr = () => errText;
  proc.stderr.on("data", (d) => {
    if (process.env.SERVE_VERBOSE) process.stderr.write(d);
    errText = (errText + d.toString()).slice(-65536);
  });
  const exited = new Promise((resolve) => {
    proc.on("exit", (code, signal) => { running.delete(proc); resolve({ code, signal }); });
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10000);
    const r = await exited;
    clearTimeout(timer);
    return r;
  };
  const cmd = [serve, ...argv].join(" ");
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${cmd}: no "listening" line within ${timeoutMs} ms; stderr:\n${errText}`));
    }, timeoutMs);
    proc.on("error", (e) => { clearTimeout(timer); reject(new Error(`${cmd}: ${e.message}`)); });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: exited (code ${code}, signal ${signal}) before listening; ` +
                       `stdout: ${JSON.stringify(out)}; stderr:\n${errText}`));
    });
    proc.stdout.on("data", (d) => {
      out += d.toString();
      const m = /^serve: listening on (http:\/\/[^\s:]+:(\d+))\s*$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout.removeAllListeners("data");
      proc.stdout.resume();  // keep draining whatever else it prints
      resolve({ url: m[1], port: Number(m[2]), proc, stderr, stop });
    });
  });
}

// Runs named async checks in order, printing "ok   NAME (detail)" or "FAIL NAME: why";
// returns the number of failures. A check returns an optional detail string.
async function runChecks(checks) {
  let failures = 0;
  for (const [name, fn] of checks) {
    const t0 = Date.now();
    try {
      const detail = await fn();
      const ms = Date.now() - t0;
      console.log(`ok   ${name}${detail ? ` (${detail})` : ""} [${ms} ms]`);
    } catch (e) {
      failures++;
      // A failed assert() says what it wanted; anything else was unexpected: show where.
      const why = e instanceof CheckError ? e.message : e && e.stack ? e.stack : String(e);
      console.log(`FAIL ${name}: ${why}`);
    }
  }
  return failures;
}

class CheckError extends Error {}

function assert(cond, what) {
  if (!cond) throw new CheckError(what);
}

module.exports = {
  SKIP, skip, fail, parseArgs, serveAndModel, nodeCacheDir, requireCached, startServe,
  runChecks, assert,
};

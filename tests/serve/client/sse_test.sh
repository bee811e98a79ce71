#!/usr/bin/env bash
# serve on the wire, with curl: the raw SSE framing of a streamed reply (every line "data: ",
# events apart by a blank line, each a JSON chunk, the last "data: [DONE]", Content-Type
# text/event-stream), the plain endpoints, and the error answers (400, 401, 404, 413) with
# OpenAI's error object. One serve with --api-key, a small --max-body, --max-prompt-tokens and
# --max-tokens.
#   tests/serve/client/sse_test.sh --serve build/native/bin/serve --model models/stories260K.gguf
# Exit 77 (skip) without curl or a JSON reader (python3 or node), or without the model.
set -uo pipefail

serve="" model=""
while [ $# -gt 0 ]; do
  case "$1" in
    --serve) serve="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    *) echo "sse_test: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$serve" ] && [ -n "$model" ] || { echo "usage: $0 --serve PATH --model PATH.gguf" >&2; exit 2; }
[ -x "$serve" ] || { echo "FAIL: no serve binary at $serve" >&2; exit 1; }
[ -f "$model" ] || { echo "SKIP: no model at $model"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
if command -v python3 >/dev/null; then json=(python3 -c); pyjson=1
elif command -v node >/dev/null; then json=(node -e); pyjson=0
else echo "SKIP: neither python3 nor node to read JSON"; exit 77; fi

key=sesame
work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$serve" -m "$model" --port 0 --api-key "$key" --max-body 4096 --max-prompt-tokens 200 --max-tokens 100 \
  >"$work/out" 2>"$work/err" &
pid=$!
url=""
for _ in $(seq 600); do  # 60 s
  url=$(sed -n 's|^serve: listening on \(http://[^ ]*\)$|\1|p' "$work/out")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "FAIL: serve did not print its listening line; stdout:"; cat "$work/out"; echo "stderr:"; tail -20 "$work/err"
  exit 1
fi

failures=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; failures=$((failures + 1)); }

# request NAME METHOD PATH [curl args...]: sets $status, the body in $work/body, headers in $work/headers.
request() {
  local method=$1 path=$2; shift 2
  status=$(curl -sS -N -o "$work/body" -D "$work/headers" -w '%{http_code}' -X "$method" "$@" "$url$path" 2>"$work/curl_err")
  [ -s "$work/curl_err" ] && cat "$work/curl_err" >&2
}
auth=(-H "Authorization: Bearer $key")
post_json=(-H "Content-Type: application/json" "${auth[@]}")
header() { grep -i "^$1:" "$work/headers" | tail -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//'; }

# error_check NAME WANT_STATUS [PARAM_WORD]: the body is {"error":{"message":non-empty string,...}}
# and, when PARAM_WORD is given, the message or param names it.
error_check() {
  local name=$1 want=$2 word=${3:-}
  if [ "$status" != "$want" ]; then bad "$name: status $status, want $want; body: $(head -c 300 "$work/body")"; return; fi
  local verdict
  if [ "$pyjson" = 1 ]; then
    verdict=$("${json[@]}" '
import json, sys
try: e = json.load(open(sys.argv[1]))["error"]
except Exception as x: print("not an error object: %r" % x); sys.exit()
m = e.get("message")
if not isinstance(m, str) or not m: print("error.message %r" % m)
elif sys.argv[2] and sys.argv[2] not in m and e.get("param") != sys.argv[2]: print("names no %r: %r" % (sys.argv[2], e))
else: print("ok " + m)' "$work/body" "$word")
  else
    verdict=$("${json[@]}" '
const fs = require("fs"); let e;
try { e = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).error; } catch (x) { console.log("not JSON: " + x); process.exit(); }
const w = process.argv[2] || "";
if (!e || typeof e.message !== "string" || !e.message) console.log("error.message " + JSON.stringify(e));
else if (w && !e.message.includes(w) && e.param !== w) console.log("names no " + w + ": " + JSON.stringify(e));
else console.log("ok " + e.message);' "$work/body" "$word")
  fi
  case "$verdict" in
    ok*) ok "$name -> $status (${verdict#ok })" ;;
    *) bad "$name: $verdict; body: $(head -c 300 "$work/body")" ;;
  esac
  case "$(header content-type)" in
    application/json*) ;;
    *) bad "$name: Content-Type '$(header content-type)', want application/json" ;;
  esac
}

# sse_check NAME OBJECT: $work/body is a well-framed event stream of OBJECT chunks ending in [DONE].
sse_check() {
  local name=$1 object=$2 verdict
  if [ "$status" != 200 ]; then bad "$name: status $status; body: $(head -c 300 "$work/body")"; return; fi
  case "$(header content-type)" in
    text/event-stream*) ;;
    *) bad "$name: Content-Type '$(header content-type)', want text/event-stream" ;;
  esac
  if [ "$pyjson" = 1 ]; then
    verdict=$("${json[@]}" '
import json, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8")
def fail(why): print(why); sys.exit()
if not raw.endswith("\n\n"): fail("the stream does not end with a blank line: %r" % raw[-80:])
events = raw[:-2].split("\n\n")
finishes, text = 0, ""
for i, ev in enumerate(events):
    lines = ev.split("\n")
    if len(lines) != 1 or not lines[0].startswith("data: "): fail("event %d is not one \"data: \" line: %r" % (i, ev[:120]))
    data = lines[0][6:]
    if i == len(events) - 1:
        if data != "[DONE]": fail("the last event is %r, not [DONE]" % data[:120])
        break
    try: c = json.loads(data)
    except Exception as x: fail("event %d is not JSON (%s): %r" % (i, x, data[:120]))
    if c.get("object") != sys.argv[2]: fail("event %d: object %r" % (i, c.get("object")))
    for ch in c.get("choices", []):
        if ch.get("finish_reason"): finishes += 1
        text += (ch.get("delta") or {}).get("content") or ch.get("text") or ""
if finishes != 1: fail("%d chunks with a finish_reason, want 1" % finishes)
print("ok %d events, %d characters" % (len(events), len(text)))' "$work/body" "$object")
  else
    verdict=$("${json[@]}" '
const raw = require("fs").readFileSync(process.argv[1], "utf8");
const fail = (w) => { console.log(w); process.exit(); };
if (!raw.endsWith("\n\n")) fail("the stream does not end with a blank line");
const events = raw.slice(0, -2).split("\n\n"); let finishes = 0;
events.forEach((ev, i) => {
  if (ev.includes("\n") || !ev.startsWith("data: ")) fail(`event ${i} is not one "data: " line: ${ev.slice(0, 120)}`);
  const data = ev.slice(6);
  if (i === events.length - 1) { if (data !== "[DONE]") fail(`the last event is ${data.slice(0, 120)}`); return; }
  let c; try { c = JSON.parse(data); } catch (x) { fail(`event ${i} is not JSON: ${data.slice(0, 120)}`); }
  if (c.object !== process.argv[2]) fail(`event ${i}: object ${c.object}`);
  for (const ch of c.choices || []) if (ch.finish_reason) finishes++;
});
if (finishes !== 1) fail(`${finishes} chunks with a finish_reason, want 1`);
console.log(`ok ${events.length} events`);' "$work/body" "$object")
  fi
  case "$verdict" in
    ok*) ok "$name (${verdict#ok })" ;;
    *) bad "$name: $verdict" ;;
  esac
}

chat='{"messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":16,"temperature":0'

request POST /v1/chat/completions "${post_json[@]}" -d "$chat"',"stream":true,"stream_options":{"include_usage":true}}'
sse_check "chat stream framing" chat.completion.chunk
request POST /v1/completions "${post_json[@]}" -d '{"prompt":"Once upon a time","max_tokens":8,"stream":true}'
sse_check "completions stream framing" text_completion

request GET /health "${auth[@]}"
if [ "$status" = 200 ] && grep -q '"status": *"ok"' "$work/body"; then ok "GET /health -> 200 ($(head -c 120 "$work/body"))"
else bad "GET /health: status $status, body $(head -c 200 "$work/body")"; fi
request GET /
if [ "$status" = 200 ] && grep -q 'id="messages"' "$work/body" && [[ "$(header content-type)" == text/html* ]]; then ok "GET / -> the chat page"
else bad "GET /: status $status, Content-Type '$(header content-type)', $(wc -c <"$work/body") bytes"; fi
request GET /metrics "${auth[@]}"
if [ "$status" = 200 ] && grep -Eq '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEinfNa]+$' "$work/body"; then
  ok "GET /metrics -> $(grep -vc '^#' "$work/body") samples"
else bad "GET /metrics: status $status, no Prometheus sample line; body: $(head -c 200 "$work/body")"; fi

request POST /v1/chat/completions "${post_json[@]}" -d '{"messages": [{"role":'
error_check "malformed JSON" 400
request POST /v1/chat/completions "${post_json[@]}" -d '{"messages":"hello","max_tokens":4}'
error_check "messages a string" 400 messages
request POST /v1/chat/completions "${post_json[@]}" -d "$chat"',"max_tokens":"many"}'
error_check "max_tokens a string" 400 max_tokens
big=$(head -c 6000 /dev/zero | tr '\0' a)
request POST /v1/chat/completions "${post_json[@]}" -d "{\"messages\":[{\"role\":\"user\",\"content\":\"$big\"}]}"
error_check "body over --max-body 4096" 413
words=$(for i in $(seq 300); do printf 'word '; done)
request POST /v1/chat/completions "${post_json[@]}" -d "{\"messages\":[{\"role\":\"user\",\"content\":\"$words\"}]}"
error_check "a prompt over --max-prompt-tokens 200" 400 messages
grep -q context_length_exceeded "$work/body" || bad "a prompt over --max-prompt-tokens: no code context_length_exceeded"
request POST /v1/completions "${post_json[@]}" -d "{\"prompt\":\"$words\"}"
error_check "a completions prompt over --max-prompt-tokens 200" 400 prompt
request POST /v1/chat/completions "${post_json[@]}" -d "$chat"',"max_tokens":101}'
error_check "max_tokens over --max-tokens 100" 400 max_tokens
request GET /v1/nowhere "${auth[@]}"
error_check "unknown path" 404
request POST /v1/chat/completions -H "Content-Type: application/json" -d "$chat}"
error_check "no key with --api-key" 401
request POST /v1/chat/completions -H "Content-Type: application/json" -H "Authorization: Bearer wrong" -d "$chat}"
error_check "a wrong key" 401
request POST /v1/chat/completions "${post_json[@]}" -d "$chat}"
if [ "$status" = 200 ]; then ok "after the errors, a request still answers 200"
else bad "after the errors: status $status, body $(head -c 200 "$work/body")"; fi

kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then bad "serve still running 10 s after SIGTERM"
else
  wait "$pid"; rc=$?
  if [ "$rc" = 0 ]; then ok "SIGTERM -> exit 0"; else bad "SIGTERM -> exit $rc"; fi
fi
pid=""

if [ "$failures" != 0 ]; then
  echo "--- serve's stderr (last lines) ---"; tail -20 "$work/err"
  echo "sse_test: $failures check(s) failed"
  exit 1
fi
echo "sse_test: all checks passed"

// serve against the official OpenAI client (the `openai` npm package): every request shape
// an app sends, read back with the client's own types. Checks shapes and consistency, not
// wording (the test model writes gibberish stories).
//   node openai_client_test.cjs --serve build/native/bin/serve --model models/stories260K.gguf
// Optional: --max-tokens N (default 24): the length of the free-text replies.
"use strict";
const h = require("./serve_process.cjs");

const args = h.parseArgs();
const { serve, model } = h.serveAndModel(args);
const OpenAI = h.requireCached("openai");
const MAX = Number(args["max-tokens"] || 24);
const assert = h.assert;

const schema = {  // a small object with a required string, integer and enum
  type: "object",
  properties: {
    name: { type: "string", maxLength: 16 },
    age: { type: "integer" },
    color: { enum: ["red", "green", "blue"] },
  },
  required: ["name", "age", "color"],
  additionalProperties: false,
};
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 20 }, days: { type: "integer" } },
      required: ["city", "days"],
    },
  },
};
const timeTool = {
  type: "function",
  function: {
    name: "get_time",
    description: "The time in a time zone",
    parameters: {
      type: "object",
      properties: { zone: { type: "string", maxLength: 20 } },
      required: ["zone"],
    },
  },
};
const ask = [{ role: "user", content: "Tell me a story about a cat." }];

function checkUsage(u, maxTokens, what) {
  assert(u && Number.isInteger(u.prompt_tokens) && u.prompt_tokens > 0, `${what}: usage.prompt_tokens ${u && u.prompt_tokens}`);
  assert(Number.isInteger(u.completion_tokens) && u.completion_tokens >= 0, `${what}: usage.completion_tokens ${u.completion_tokens}`);
  assert(u.total_tokens === u.prompt_tokens + u.completion_tokens,
         `${what}: usage.total_tokens ${u.total_tokens} != ${u.prompt_tokens} + ${u.completion_tokens}`);
  if (maxTokens) assert(u.completion_tokens <= maxTokens, `${what}: ${u.completion_tokens} completion tokens > max_tokens ${maxTokens}`);
}

function checkAgainstSchema(v) {
  assert(v && typeof v === "object" && !Array.isArray(v), `not an object: ${JSON.stringify(v)}`);
  const keys = Object.keys(v).sort().join(",");
  assert(keys === "age,color,name", `keys ${keys}, want age,color,name`);
  assert(typeof v.name === "string" && v.name.length <= 16, `name ${JSON.stringify(v.name)}`);
  assert(Number.isInteger(v.age), `age ${JSON.stringify(v.age)} is not an integer`);
  assert(["red", "green", "blue"].includes(v.color), `color ${JSON.stringify(v.color)}`);
}

function parseJson(text, what) {
  try { return JSON.parse(text); } catch (e) { throw new Error(`${what}: not JSON (${e.message}): ${JSON.stringify(text)}`); }
}

function checkToolCall(choice, tool, what) {
  assert(choice.finish_reason === "tool_calls", `${what}: finish_reason ${choice.finish_reason}, want tool_calls`);
  const calls = choice.message.tool_calls;
  assert(Array.isArray(calls) && calls.length >= 1, `${what}: no message.tool_calls: ${JSON.stringify(choice.message)}`);
  const c = calls[0];
  assert(c.type === "function" && typeof c.id === "string" && c.id.length > 0, `${what}: call ${JSON.stringify(c)}`);
  assert(c.function.name === tool.function.name, `${what}: called ${c.function.name}, want ${tool.function.name}`);
  const a = parseJson(c.function.arguments, `${what}: arguments`);
  assert(a && typeof a === "object" && !Array.isArray(a), `${what}: arguments not an object: ${c.function.arguments}`);
  for (const k of tool.function.parameters.required) assert(k in a, `${what}: arguments lack '${k}': ${c.function.arguments}`);
  return `${c.function.name}(${c.function.arguments})`;
}

// Collects a streamed chat reply: {text, chunks, finish, usage, toolCalls, ids}.
async function collectChat(stream) {
  const r = { text: "", chunks: 0, finish: null, usage: null, toolCalls: [], ids: new Set(), afterFinish: 0 };
  for await (const chunk of stream) {
    r.chunks++;
    assert(chunk.object === "chat.completion.chunk", `chunk object ${chunk.object}`);
    r.ids.add(chunk.id);
    if (chunk.usage) r.usage = chunk.usage;
    if (!chunk.choices.length) continue;
    assert(chunk.choices.length === 1 && chunk.choices[0].index === 0, `chunk choices ${JSON.stringify(chunk.choices)}`);
    const c = chunk.choices[0];
    if (r.finish) r.afterFinish++;
    if (c.delta && typeof c.delta.content === "string") r.text += c.delta.content;
    if (c.delta && c.delta.tool_calls) r.toolCalls.push(...c.delta.tool_calls);
    if (c.finish_reason) r.finish = c.finish_reason;
  }
  return r;
}

async function main() {
  const server = await h.startServe({ serve, model });
  const client = new OpenAI({ baseURL: server.url + "/v1", apiKey: "unused", maxRetries: 0, timeout: 120000 });
  const chat = (body, options) =>
    client.chat.completions.create({ messages: ask, max_tokens: MAX, temperature: 0, ...body }, options);
  let greedy = null;  // the greedy reply to `ask`, which the stream and stop checks compare against
  let greedyCompletion = null;  // the same for /v1/completions
  let modelId = null;

  const checks = [
    ["models.list", async () => {
      const ids = [];
      for await (const m of client.models.list()) { ids.push(m.id); assert(m.object === "model", `object ${m.object}`); }
      assert(ids.length >= 1 && typeof ids[0] === "string" && ids[0].length > 0, `ids ${JSON.stringify(ids)}`);
      modelId = ids[0];
      return ids.join(", ");
    }],
    ["chat, not streamed", async () => {
      const r = await chat({ model: modelId });
      assert(r.object === "chat.completion", `object ${r.object}`);
      assert(typeof r.id === "string" && r.id.length > 0 && Number.isInteger(r.created), `id ${r.id}, created ${r.created}`);
      assert(r.choices.length === 1, `${r.choices.length} choices`);
      const c = r.choices[0];
      assert(c.message.role === "assistant", `role ${c.message.role}`);
      assert(typeof c.message.content === "string" && c.message.content.length > 0, `content ${JSON.stringify(c.message.content)}`);
      assert(c.finish_reason === "stop" || c.finish_reason === "length", `finish_reason ${c.finish_reason}`);
      checkUsage(r.usage, MAX, "usage");
      assert(r.usage.completion_tokens > 0, "no completion tokens");
      if (c.finish_reason === "length") assert(r.usage.completion_tokens === MAX, `finish length at ${r.usage.completion_tokens} tokens, max_tokens ${MAX}`);
      greedy = c.message.content;
      return `${r.usage.prompt_tokens}+${r.usage.completion_tokens} tokens, ${c.finish_reason}: ${JSON.stringify(greedy.slice(0, 40))}`;
    }],
    ["chat, streamed with include_usage", async () => {
      const s = await collectChat(await chat({ stream: true, stream_options: { include_usage: true } }));
      assert(s.ids.size === 1, `chunk ids ${[...s.ids]}`);
      assert(s.finish === "stop" || s.finish === "length", `last finish_reason ${s.finish}`);
      assert(s.afterFinish === 0, `${s.afterFinish} choice chunks after the finish_reason`);
      assert(s.usage, "no usage chunk");
      checkUsage(s.usage, MAX, "usage chunk");
      assert(s.text === greedy, `streamed text ${JSON.stringify(s.text)} != the non-streamed greedy reply ${JSON.stringify(greedy)}`);
      return `${s.chunks} chunks, ${s.usage.completion_tokens} tokens, ${s.finish}`;
    }],
    ["chat, streamed without usage", async () => {
      const s = await collectChat(await chat({ stream: true }));
      assert(s.usage === null, `usage sent without stream_options.include_usage: ${JSON.stringify(s.usage)}`);
      assert(s.text === greedy, `streamed text ${JSON.stringify(s.text)} != ${JSON.stringify(greedy)}`);
      return `${s.chunks} chunks`;
    }],
    ["text content parts", async () => {
      const r = await chat({ messages: [{ role: "system", content: [{ type: "text", text: "You tell stories." }] },
                                        { role: "user", content: [{ type: "text", text: "A story" }, { type: "text", text: "about a dog." }] }] });
      assert(typeof r.choices[0].message.content === "string", "no content");
      return `${r.usage.prompt_tokens} prompt tokens`;
    }],
    ["response_format json_schema", async () => {
      const r = await chat({ max_tokens: 200, response_format: { type: "json_schema", json_schema: { name: "person", strict: true, schema } } });
      const c = r.choices[0];
      assert(c.finish_reason === "stop", `finish_reason ${c.finish_reason} (${r.usage.completion_tokens} tokens): ${JSON.stringify(c.message.content)}`);
      checkAgainstSchema(parseJson(c.message.content, "content"));
      return c.message.content;
    }],
    ["response_format json_schema, streamed", async () => {
      const s = await collectChat(await chat({ max_tokens: 200, seed: 7, temperature: 0.8, stream: true,
                                               response_format: { type: "json_schema", json_schema: { name: "person", schema } } }));
      assert(s.finish === "stop", `finish_reason ${s.finish}: ${JSON.stringify(s.text)}`);
      checkAgainstSchema(parseJson(s.text, "streamed content"));
      return s.text;
    }],
    ["response_format json_object", async () => {
      const r = await chat({ max_tokens: 200, response_format: { type: "json_object" } });
      const c = r.choices[0];
      assert(c.finish_reason === "stop", `finish_reason ${c.finish_reason}: ${JSON.stringify(c.message.content)}`);
      const v = parseJson(c.message.content, "content");
      assert(v && typeof v === "object" && !Array.isArray(v), `not an object: ${c.message.content}`);
      return c.message.content.slice(0, 60);
    }],
    ["tools, tool_choice required", async () => {
      const r = await chat({ max_tokens: 200, tools: [weather], tool_choice: "required" });
      return checkToolCall(r.choices[0], weather, "required");
    }],
    ["tools, tool_choice names a function", async () => {
      const r = await chat({ max_tokens: 200, tools: [weather, timeTool], tool_choice: { type: "function", function: { name: "get_time" } } });
      return checkToolCall(r.choices[0], timeTool, "named");
    }],
    ["tools, streamed", async () => {
      const s = await collectChat(await chat({ max_tokens: 200, stream: true, tools: [weather, timeTool],
                                               tool_choice: { type: "function", function: { name: "get_weather" } } }));
      assert(s.finish === "tool_calls", `finish_reason ${s.finish}`);
      assert(s.toolCalls.length === 1, `${s.toolCalls.length} delta.tool_calls entries, want 1 (one chunk at the end): ${JSON.stringify(s.toolCalls)}`);
      const c = s.toolCalls[0];
      assert(c.index === 0 && typeof c.id === "string" && c.id && c.type === "function", `delta ${JSON.stringify(c)}`);
      assert(c.function.name === "get_weather", `name ${c.function.name}`);
      const a = parseJson(c.function.arguments, "arguments");
      assert(a && "city" in a && "days" in a, `arguments ${c.function.arguments}`);
      return `${c.function.name}(${c.function.arguments})`;
    }],
    ["tool result turn", async () => {
      const messages = [...ask,
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo","days":1}' } }] },
        { role: "tool", tool_call_id: "call_1", content: '{"sky":"clear"}' }];
      const r = await chat({ messages, tools: [weather], tool_choice: "none" });
      assert(typeof r.choices[0].message.content === "string", `content ${JSON.stringify(r.choices[0].message.content)}`);
      assert(!r.choices[0].message.tool_calls || r.choices[0].message.tool_calls.length === 0, "tool_calls with tool_choice none");
      return `${r.usage.prompt_tokens} prompt tokens`;
    }],
    ["logprobs, top_logprobs 2", async () => {
      const r = await chat({ logprobs: true, top_logprobs: 2 });
      const c = r.choices[0];
      const content = c.logprobs && c.logprobs.content;
      assert(Array.isArray(content) && content.length > 0, `logprobs ${JSON.stringify(c.logprobs)}`);
      assert(content.length === r.usage.completion_tokens || c.finish_reason === "stop",
             `${content.length} logprob entries for ${r.usage.completion_tokens} tokens`);
      for (const [i, e] of content.entries()) {
        assert(typeof e.token === "string", `[${i}].token ${JSON.stringify(e.token)}`);
        assert(typeof e.logprob === "number" && e.logprob <= 0, `[${i}].logprob ${e.logprob}`);
        assert(Array.isArray(e.top_logprobs) && e.top_logprobs.length === 2, `[${i}].top_logprobs ${JSON.stringify(e.top_logprobs)}`);
        for (const t of e.top_logprobs) assert(typeof t.token === "string" && t.logprob <= 0, `[${i}] top ${JSON.stringify(t)}`);
        assert(e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob, `[${i}] top_logprobs not in order`);
        // Greedy: the chosen token is the most likely one.
        assert(Math.abs(e.logprob - e.top_logprobs[0].logprob) < 1e-4, `[${i}] greedy token ${JSON.stringify(e.token)} ${e.logprob} is not the top ${JSON.stringify(e.top_logprobs[0])}`);
      }
      const joined = content.map((e) => e.token).join("");
      assert(c.message.content.startsWith(joined) || joined.startsWith(c.message.content),
             `tokens ${JSON.stringify(joined)} do not spell the content ${JSON.stringify(c.message.content)}`);
      return `${content.length} entries, first ${JSON.stringify(content[0].token)} ${content[0].logprob.toFixed(3)}`;
    }],
    ["stop string", async () => {
      // Stop at a piece from the middle of the greedy reply: the reply must end right before it.
      const at = Math.floor(greedy.length / 2);
      const stop = greedy.slice(at, at + 3);
      assert(stop.length === 3, `greedy reply too short for a stop string: ${JSON.stringify(greedy)}`);
      const want = greedy.slice(0, greedy.indexOf(stop));
      const r = await chat({ stop: [stop, "\u0001never"] });
      assert(r.choices[0].finish_reason === "stop", `finish_reason ${r.choices[0].finish_reason}`);
      assert(r.choices[0].message.content === want, `content ${JSON.stringify(r.choices[0].message.content)}, want ${JSON.stringify(want)} (stop ${JSON.stringify(stop)})`);
      const s = await collectChat(await chat({ stop, stream: true }));
      assert(s.finish === "stop" && s.text === want, `streamed ${JSON.stringify(s.text)} (${s.finish}), want ${JSON.stringify(want)}`);
      return `stop ${JSON.stringify(stop)} -> ${JSON.stringify(want)}`;
    }],
    ["seed reproducibility", async () => {
      const body = { temperature: 1, seed: 1234, max_tokens: 32 };
      const a = (await chat(body)).choices[0].message.content;
      const b = (await chat(body)).choices[0].message.content;
      assert(a === b, `seed 1234 twice: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
      const others = [];
      for (const seed of [1, 2, 3]) others.push((await chat({ ...body, seed })).choices[0].message.content);
      assert(others.some((o) => o !== a), `temperature 1 gives the same text for seeds 1234, 1, 2, 3: is it sampling? ${JSON.stringify(a)}`);
      return JSON.stringify(a.slice(0, 40));
    }],
    ["completions, not streamed", async () => {
      const r = await client.completions.create({ model: modelId, prompt: "Once upon a time", temperature: 0 });
      assert(r.object === "text_completion", `object ${r.object}`);
      const c = r.choices[0];
      assert(typeof c.text === "string" && c.text.length > 0, `text ${JSON.stringify(c.text)}`);
      assert(c.finish_reason === "stop" || c.finish_reason === "length", `finish_reason ${c.finish_reason}`);
      checkUsage(r.usage, 16, "usage (default max_tokens 16)");
      greedyCompletion = c.text;
      return `${r.usage.completion_tokens} tokens: ${JSON.stringify(c.text.slice(0, 40))}`;
    }],
    ["completions, streamed", async () => {
      const stream = await client.completions.create({ model: modelId, prompt: "Once upon a time", temperature: 0, stream: true,
                                                       stream_options: { include_usage: true } });
      let text = "", finish = null, chunks = 0, usage = null;
      for await (const chunk of stream) {
        chunks++;
        assert(chunk.object === "text_completion", `chunk object ${chunk.object}`);
        if (chunk.usage) usage = chunk.usage;
        if (!chunk.choices.length) continue;
        text += chunk.choices[0].text;
        if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
      }
      assert(finish === "stop" || finish === "length", `finish_reason ${finish}`);
      assert(text === greedyCompletion, `streamed ${JSON.stringify(text)} != ${JSON.stringify(greedyCompletion)}`);
      if (usage) checkUsage(usage, 16, "usage chunk");
      return `${chunks} chunks${usage ? "" : ", no usage chunk"}`;
    }],
    ["completions, stop and max_tokens", async () => {
      const r = await client.completions.create({ prompt: "Once upon a time", temperature: 0, max_tokens: 4 });
      assert(r.usage.completion_tokens <= 4 && r.choices[0].text.length > 0, `4 tokens: ${JSON.stringify(r)}`);
      const stop = greedyCompletion.slice(3, 6);
      const s = await client.completions.create({ prompt: "Once upon a time", temperature: 0, stop });
      const want = greedyCompletion.slice(0, greedyCompletion.indexOf(stop));
      assert(s.choices[0].text === want && s.choices[0].finish_reason === "stop",
             `stop ${JSON.stringify(stop)}: ${JSON.stringify(s.choices[0].text)} (${s.choices[0].finish_reason}), want ${JSON.stringify(want)}`);
      return `stop ${JSON.stringify(stop)}`;
    }],
    ["bad request -> BadRequestError", async () => {
      try {
        await chat({ temperature: 5 });
      } catch (e) {
        assert(e instanceof OpenAI.BadRequestError && e.status === 400, `got ${e.constructor.name} ${e.status}: ${e.message}`);
        assert(e.error && typeof e.error.message === "string" && e.param === "temperature", `error ${JSON.stringify(e.error)}`);
        return e.message;
      }
      throw new Error("temperature 5 was accepted");
    }],
    ["aborted stream leaves the server serving", async () => {
      const controller = new AbortController();
      const stream = await chat({ stream: true, max_tokens: 200 }, { signal: controller.signal });
      let n = 0;
      try { for await (const chunk of stream) { if (++n === 2) controller.abort(); } } catch (e) { /* aborted */ }
      const r = await chat({ max_tokens: 4 });
      assert(r.choices[0].message.content !== undefined, "no reply after an aborted stream");
      return `aborted after ${n} chunks`;
    }],
    // A client that leaves stops its generation: a reply of up to 1900 tokens (about a second on
    // stories260K) abandoned at once, streamed and not, must be counted as a disconnect in
    // /metrics with far fewer tokens generated than asked.
    ["a client that leaves stops its generation", async () => {
      const metric = async (name) => {
        const text = await (await fetch(server.url + "/metrics")).text();
        const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
        assert(m, `no ${name} in /metrics`);
        return Number(m[1]);
      };
      const report = [];
      for (const stream of [true, false]) {
        const left0 = await metric("serve_client_disconnects_total");
        const tokens0 = await metric("serve_completion_tokens_total");
        const controller = new AbortController();
        const started = chat({ stream, max_tokens: 1900, temperature: 1, seed: 5 }, { signal: controller.signal });
        setTimeout(() => controller.abort(), 30);
        try {
          const s = await started;
          if (stream) for await (const chunk of s) { /* until the abort */ }
        } catch (e) { /* aborted */ }
        let left = left0;
        for (let i = 0; i < 50 && left === left0; i++) {
          await new Promise((res) => setTimeout(res, 50));
          left = await metric("serve_client_disconnects_total");
        }
        assert(left === left0 + 1, `${stream ? "stream" : "plain"}: disconnects ${left0} -> ${left}, want +1`);
        const made = (await metric("serve_completion_tokens_total")) - tokens0;
        assert(made < 1000, `${stream ? "stream" : "plain"}: ${made} tokens generated after the client left`);
        report.push(`${stream ? "stream" : "plain"} stopped after ${made} tokens`);
      }
      return report.join(", ");
    }],
  ];
  let failures = await h.runChecks(checks);

  // --api-key: a second server that wants a key.
  const keyed = await h.startServe({ serve, model, extra: ["--api-key", "sesame"] });
  failures += await h.runChecks([
    ["--api-key: the right key", async () => {
      const c = new OpenAI({ baseURL: keyed.url + "/v1", apiKey: "sesame", maxRetries: 0 });
      const r = await c.chat.completions.create({ messages: ask, max_tokens: 2 });
      assert(r.choices.length === 1, "no choice");
    }],
    ["--api-key: a wrong key -> AuthenticationError", async () => {
      const c = new OpenAI({ baseURL: keyed.url + "/v1", apiKey: "open-up", maxRetries: 0 });
      for (const call of [() => c.models.list(), () => c.chat.completions.create({ messages: ask, max_tokens: 2 })]) {
        try {
          await call();
          throw new Error("a wrong key was accepted");
        } catch (e) {
          assert(e instanceof OpenAI.AuthenticationError && e.status === 401, `got ${e.constructor.name} ${e.status}: ${e.message}`);
        }
      }
      return "401";
    }],
  ]);

  for (const [name, s] of [["serve", server], ["serve --api-key", keyed]]) {
    const { code, signal } = await s.stop();
    if (code !== 0) {
      failures++;
      console.log(`FAIL ${name}: SIGTERM ended it with code ${code}, signal ${signal}, not 0`);
    }
  }
  if (failures) {
    console.log(`--- serve's stderr (last lines) ---\n${server.stderr().split("\n").slice(-30).join("\n")}`);
    h.fail(`openai_client_test: ${failures} check(s) failed`);
  }
  console.log("openai_client_test: all checks passed");
}

main().catch((e) => h.fail(e && e.stack ? e.stack : e));

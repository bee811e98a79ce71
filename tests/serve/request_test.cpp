// serve's reading of OpenAI requests (tools/serve/request.h) and its response
// objects (response.h): every field of a full request lands where it belongs,
// and each kind of bad body is a 400 naming the field at fault.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/serve/http_error.h"
#include "tools/serve/request.h"
#include "tools/serve/response.h"

namespace {

using serve::HttpError;

TEST(ChatRequest, EveryFieldIsRead) {
  const serve::ChatRequest r = serve::parse_chat_request(R"({
    "model": "whatever", "temperature": 0.5, "top_p": 0.9, "seed": 42, "max_completion_tokens": 64,
    "stop": ["END", "\n\n"], "logprobs": true, "top_logprobs": 3, "stream": true,
    "stream_options": {"include_usage": true}, "user": "ignored",
    "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Weather in"}, {"type": "text", "text": "Paris?"}]},
      {"role": "assistant", "content": null,
       "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"city\":\"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "get", "content": "sunny"}],
    "tools": [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}},
              {"type": "function", "function": {"name": "other"}}],
    "tool_choice": {"type": "function", "function": {"name": "get"}}
  })");
  const serve::GenerationRequest& g = r.generation;
  EXPECT_FLOAT_EQ(*g.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.top_p, 0.9f);
  EXPECT_EQ(*g.seed, 42u);
  EXPECT_EQ(*g.max_tokens, 64u);
  EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_TRUE(g.logprobs);
  EXPECT_EQ(g.top_logprobs, 3u);
  EXPECT_TRUE(g.stream);
  EXPECT_TRUE(g.include_usage);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");  // developer is OpenAI's newer name for it
  EXPECT_EQ(r.messages[1].content, "Weather in\nParis?");
  ASSERT_EQ(r.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[2].tool_calls[0].id, "c1");
  EXPECT_EQ(r.messages[2].tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r.messages[3].tool_call_id, "c1");
  EXPECT_EQ(r.messages[3].name, "get");
  EXPECT_EQ(r.tool_choice, serve::ToolChoice::named);
  EXPECT_EQ(r.tool_name, "get");
  // The grammar's tools are the named one alone; the template sees both.
  EXPECT_EQ(nlohmann::json::parse(r.grammar_tools).size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(r.tools).size(), 2u);
}

TEST(ChatRequest, DefaultsAndFormats) {
  serve::ChatRequest r = serve::parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_FALSE(r.generation.temperature);
  EXPECT_FALSE(r.generation.max_tokens);
  EXPECT_FALSE(r.generation.stream);
  EXPECT_EQ(r.tool_choice, serve::ToolChoice::none);  // no tools
  EXPECT_EQ(r.response_format, serve::ResponseFormat::text);

  r = serve::parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object",
      "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}}}})");
  EXPECT_EQ(r.response_format, serve::ResponseFormat::json_schema);
  EXPECT_EQ(r.schema, R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}})");  // order kept

  r = serve::parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "none",
      "tools": [{"type": "function", "function": {"name": "f"}}]})");
  EXPECT_TRUE(r.tools.empty());  // "none": the model is not shown them
  r = serve::parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required",
      "tools": [{"type": "function", "function": {"name": "f"}}]})");
  EXPECT_EQ(r.grammar_tools, r.tools);
}

struct Bad {
  const char* body;
  const char* param;    // "" for none
  const char* message;  // a part of it
};

TEST(ChatRequest, BadBodiesNameTheField) {
  const std::vector<Bad> cases = {
      {"", "", "not JSON"},
      {"{\"messages\": [", "", "not JSON"},
      {"[1, 2]", "", "must be a JSON object"},
      {"{}", "messages", "messages is missing"},
      {R"({"messages": "hi"})", "messages", "non-empty array"},
      {R"({"messages": []})", "messages", "non-empty array"},
      {R"({"messages": [5]})", "messages[0]", "an object"},
      {R"({"messages": [{"role": "king", "content": "x"}]})", "messages[0].role", "one of system"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content", "missing"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content", "a string or an array"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content[0]",
       "only text parts"},
      {R"({"messages": [{"role": "user", "content": "x", "tool_calls": []}]})", "", "only an assistant"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}]})",
       "messages[0].tool_calls[0].function.arguments", "JSON object"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature", "a number"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": 3})", "temperature", "from 0 to 2"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_p": 0})", "top_p", "above 0"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens", "an integer"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5})", "max_tokens", "an integer"},
      {R"({"messages": [{"role": "user", "content": "x"}], "seed": "7"})", "seed", "an integer"},
      {R"({"messages": [{"role": "user", "content": "x"}], "n": 2})", "n", "n must be 1"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": [1]})", "stop[0]", "a string"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": ""})", "stop", "non-empty"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream", "true or false"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", "top_logprobs", "needs logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})", "top_logprobs",
       "from 0 to 20"},
      {R"({"messages": [{"role": "user", "content": "x"}], "frequency_penalty": 0.5})", "frequency_penalty",
       "not supported"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": {}})", "tools", "an array"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", "tools[0].function",
       "missing"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"name": "f", "parameters": 1}}]})",
       "tools[0].function.parameters", "JSON Schema"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})", "tool_choice", "no tools"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "sometimes",
          "tools": [{"function": {"name": "f"}}]})", "tool_choice", "\"none\""},
      {R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": {"function": {"name": "g"}},
          "tools": [{"function": {"name": "f"}}]})", "tool_choice", "not in tools"},
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}})",
       "response_format.type", "json_schema"},
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema"}})",
       "response_format.json_schema", "missing"},
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"},
          "tool_choice": "required", "tools": [{"function": {"name": "f"}}]})", "response_format", "cannot both"},
  };
  for (const Bad& c : cases) {
    try {
      (void)serve::parse_chat_request(c.body);
      ADD_FAILURE() << "accepted: " << c.body;
    } catch (const HttpError& e) {
      EXPECT_EQ(e.status, 400) << c.body;
      EXPECT_EQ(e.param, c.param) << c.body << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.body << ": " << e.what();
    }
  }
}

TEST(ChatRequest, DeepNestingAndBadUtf8AreRefusedNotRecursedInto) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THROW((void)serve::parse_chat_request(deep), HttpError);
  EXPECT_THROW((void)serve::parse_chat_request("{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\"}]}"),
               HttpError);
}

TEST(CompletionRequest, PromptAndLogprobs) {
  serve::CompletionRequest r = serve::parse_completion_request(R"({"prompt": ["Once"], "logprobs": 2})");
  EXPECT_EQ(r.prompt, "Once");
  EXPECT_EQ(*r.generation.max_tokens, 16u);  // OpenAI's default for completions
  EXPECT_TRUE(r.generation.logprobs);
  EXPECT_EQ(r.generation.top_logprobs, 2u);
  EXPECT_THROW((void)serve::parse_completion_request(R"({"prompt": ["a", "b"]})"), HttpError);
  EXPECT_THROW((void)serve::parse_completion_request(R"({"prompt": "a", "echo": true})"), HttpError);
  EXPECT_THROW((void)serve::parse_completion_request(R"({"prompt": "a", "logprobs": 6})"), HttpError);
  EXPECT_THROW((void)serve::parse_completion_request(R"({})"), HttpError);
}

TEST(Response, ShapesAreOpenAIs) {
  const serve::ResponseMeta meta{"chatcmpl-1", 1700000000, "m"};
  const std::vector<serve::TokenLogprob> tokens = {{"Hi", -0.5f, {{"Hi", -0.5f}, {"Yo", -1.5f}}},
                                                   {"\xe2\x82", -0.1f, {}}};  // half a character
  const serve::Json lp = serve::chat_logprobs_json(tokens);
  const serve::Json done = serve::chat_completion(meta, std::string("Hi"), {{"", "f", "{}"}}, lp,
                                                  serve::finish_reason(ENGINE_CHAT_END_OF_GENERATION, true),
                                                  serve::Usage{10, 2, 8});
  const nlohmann::json j = nlohmann::json::parse(serve::dump(done));  // ill-formed UTF-8 replaced, so it parses
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(j["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "f");
  EXPECT_EQ(j["choices"][0]["message"]["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"][0]["top_logprobs"][1]["token"], "Yo");
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"][1]["bytes"], nlohmann::json::array({0xe2, 0x82}));
  EXPECT_EQ(j["usage"]["total_tokens"], 12);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 8);

  const std::string event = serve::sse_event(serve::chat_chunk(meta, {{"content", "a"}}, nullptr, nullptr));
  EXPECT_EQ(event.rfind("data: {", 0), 0u);
  EXPECT_EQ(event.substr(event.size() - 2), "\n\n");
  EXPECT_EQ(event.find('\n'), event.size() - 2);  // one line: a newline in text is escaped

  const serve::Json c = serve::completion_logprobs_json(tokens, 5);
  EXPECT_EQ(c["text_offset"], serve::Json::array({5, 7}));
  EXPECT_EQ(serve::finish_reason(ENGINE_CHAT_MAX_TOKENS, false), std::string("length"));
  EXPECT_EQ(serve::finish_reason(ENGINE_CHAT_CONTEXT_FULL, false), std::string("length"));
  EXPECT_EQ(serve::finish_reason(ENGINE_CHAT_STOP_STRING, false), std::string("stop"));

  const nlohmann::json e = nlohmann::json::parse(serve::error_body(HttpError(400, "bad", "messages")));
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["param"], "messages");
  EXPECT_EQ(nlohmann::json::parse(serve::error_body(503, "busy"))["error"]["type"], "server_overloaded");
}

}  // namespace

// JSON Schema to GBNF (gbnf.h), so that a generation under the grammar is a
// JSON document the schema validates.
//
// Supported: `type` (string, number, integer, boolean, null, object, array,
// or a list of them), `properties` with `required` (the others optional),
// `additionalProperties` (absent or false: none; true or a schema: any
// further keys after the declared ones), `items`, `prefixItems`, `minItems`,
// `maxItems`, `minLength`, `maxLength`, `enum`, `const`, `anyOf` / `oneOf`,
// `allOf` of one schema, and `$ref` to `#`, `#/$defs/...` or
// `#/definitions/...` (recursion allowed). Annotations (`title`,
// `description`, `default`, `examples`, `$schema`, `$id`, `$comment`) are
// ignored. Any other keyword (`pattern`, `format`, `minimum`, ...) is an
// error naming it and where it is, rather than a grammar that would let an
// invalid document through.
//
// The documents the grammar takes: properties in the schema's order,
// whitespace as llama.cpp's grammars allow it (none, a space, or a newline
// and up to 20 spaces or tabs between tokens), integers of at most 16
// digits.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/support/error.h"

namespace engine::grammar {

// A schema that is not JSON or uses what the converter does not support;
// the message names the keyword and its JSON pointer (C API:
// ENGINE_ERR_INVALID_ARGUMENT).
class SchemaError : public Error {
 public:
  using Error::Error;
};

// The GBNF of documents `schema` (JSON text) validates; its start rule is
// `root` (not one of the rules it makes for JSON's primitives: "value",
// "object", "string", "ws", ...).
std::string json_schema_to_gbnf(std::string_view schema, std::string_view root = "root");

// The arguments of XML-style tool calls (chat/tool_calls.h: Qwen3-Coder's
// <parameter=key>, GLM's <arg_key>): for each tool, rule `root` takes its
// arguments, an object schema's properties in order (the required ones
// always, the others maybe), each written key_before KEY key_after VALUE
// value_after; a value of plain {"type": "string"} is text without '<', any
// other is JSON its schema validates. Further properties
// (additionalProperties) cannot be written so and are an error. The tools
// share the grammar's primitive rules.
struct XmlArgumentSyntax {
  std::string key_before, key_after, value_after;
};
struct XmlArguments {
  std::string root;
  std::string schema;  // the tool's "parameters"
};
std::string xml_arguments_to_gbnf(std::span<const XmlArguments> tools, const XmlArgumentSyntax& syntax);

}  // namespace engine::grammar

// JSON Schema to GBNF: a walk of the schema that gives each value an
// expression of the grammar (every value's expression takes the whitespace
// after it, as llama.cpp's grammars do), with a rule per object, array,
// reference and primitive, made on first use.
#include "engine/grammar/json_schema.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "engine/chat_template/json.h"
#include "engine/chat_template/value.h"
#include "engine/grammar/gbnf.h"

namespace engine::grammar {
namespace {

using chat_template::Value;

// The primitives, each with the rules it uses.
const std::map<std::string, std::pair<std::string, std::vector<std::string>>, std::less<>>& primitives() {
  static const std::map<std::string, std::pair<std::string, std::vector<std::string>>, std::less<>> p = {
      {"ws", {R"(| " " | "\n" [ \t]{0,20})", {}}},
      {"char", {R"([^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))", {}}},
      {"string", {R"("\"" char* "\"" ws)", {"char", "ws"}}},
      {"integral", {R"("0" | [1-9] [0-9]{0,15})", {}}},
      {"number", {R"("-"? integral ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,16})? ws)", {"integral", "ws"}}},
      {"integer", {R"("-"? integral ws)", {"integral", "ws"}}},
      {"boolean", {R"(("true" | "false") ws)", {"ws"}}},
      {"null", {R"("null" ws)", {"ws"}}},
      {"value", {"object | array | string | number | boolean | null",
                 {"object", "array", "string", "number", "boolean", "null"}}},
      {"object", {R"("{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws)", {"string", "ws", "value"}}},
      {"array", {R"("[" ws ( value ("," ws value)* )? "]" ws)", {"ws", "value"}}},
  };
  return p;
}

const std::set<std::string, std::less<>>& annotations() {
  static const std::set<std::string, std::less<>> a = {"title", "description", "default", "examples", "$schema",
                                                       "$id", "$comment", "$defs", "definitions", "readOnly",
                                                       "writeOnly", "deprecated"};
  return a;
}
const std::set<std::string, std::less<>>& supported() {
  static const std::set<std::string, std::less<>> s = {
      "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems", "maxItems",
      "minLength", "maxLength", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"};
  return s;
}

// A JSON pointer's token, escaped (~ and /).
std::string pointer_token(std::string_view s) {
  std::string out;
  for (const char c : s) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// The rules made so far, shared by the documents of one grammar.
struct Rules {
  std::vector<std::pair<std::string, std::string>> made;  // in the order made
  std::set<std::string, std::less<>> names{"xml-text"}, used;  // xml-text: XML-style arguments' text
  std::string text() const {
    std::string out;
    for (const auto& [name, body] : made) out += name + " ::= " + body + "\n";
    return out;
  }
};

class Converter {
 public:
  Converter(Rules& rules, Value doc, std::string root)
      : doc_(std::move(doc)), root_(std::move(root)), rules_(rules.made), names_(rules.names), used_(rules.used) {
    if (!names_.insert(root_).second) throw SchemaError("json schema: the rule name '" + root_ + "' is taken");
  }

  void run() {
    const std::string start = visit(doc_, root_, "");
    if (start != root_) rules_.emplace_back(root_, start);  // the start rule
  }

  // The document's object as XML-style tool-call arguments (xml_arguments_to_gbnf).
  void run_xml(const XmlArgumentSyntax& syntax) {
    if (!doc_.is_dict()) fail("the arguments' schema must be an object", "");
    const Value* type = doc_.dict().find("type");
    if (type != nullptr && !(type->is_string() && type->as_string() == "object")) {
      fail("the arguments' schema must be of type object", "/type");
    }
    if (const Value* a = doc_.dict().find("additionalProperties"); a != nullptr && !(a->is_bool() && !a->as_bool())) {
      fail("further properties cannot be written as XML arguments", "/additionalProperties");
    }
    xml_ = &syntax;
    rules_.emplace_back(root_, object(doc_.dict(), root_ + "-x", ""));
  }

 private:
  [[noreturn]] static void fail(const std::string& what, const std::string& path) {
    throw SchemaError("json schema: " + what + " at '" + (path.empty() ? "/" : path) + "'");
  }

  std::string use(const std::string& primitive) {
    if (used_.insert(primitive).second) {
      const auto& [body, deps] = primitives().at(primitive);
      names_.insert(primitive);
      rules_.emplace_back(primitive, body);
      for (const std::string& d : deps) use(d);
    }
    return primitive;
  }

  // A rule name of its own, from a hint (a property's name, a definition's).
  std::string fresh(const std::string& hint) {
    std::string base;
    for (const char c : hint) {
      base += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ? c : '-';
    }
    if (base.empty()) base = "r";
    std::string name = base;
    for (int n = 2; names_.count(name) != 0 || primitives().count(name) != 0; ++n) name = base + "-" + std::to_string(n);
    names_.insert(name);
    return name;
  }
  std::string rule(const std::string& hint, const std::string& body) {
    const std::string name = fresh(hint);
    rules_.emplace_back(name, body);
    return name;
  }

  static int64_t count(const Value& v, const char* key, const std::string& path) {
    if (!v.is_int() || v.as_int() < 0) fail(std::string("'") + key + "' must be a non-negative integer", path);
    return v.as_int();
  }

  // A value the schema validates, as an expression; `name` names the rules it
  // makes.
  std::string visit(const Value& schema, const std::string& name, const std::string& path) {
    if (schema.is_bool()) {
      if (!schema.as_bool()) fail("the schema 'false' takes no value", path);
      return use("value");
    }
    if (!schema.is_dict()) fail("a schema must be an object or a boolean", path);
    const chat_template::ValueDict& d = schema.dict();
    for (const auto& [k, v] : d.entries) {
      const std::string key = k.is_string() ? k.as_string() : "";
      if (annotations().count(key) == 0 && supported().count(key) == 0) {
        fail("the keyword '" + key + "' is not supported", path);
      }
    }
    if (const Value* ref = d.find("$ref")) return reference(*ref, path + "/$ref");
    if (const Value* c = d.find("const")) return gbnf_literal(chat_template::to_json(*c)) + " " + use("ws");
    if (const Value* e = d.find("enum")) {
      if (!e->is_list() || e->list().empty()) fail("'enum' must be a non-empty array", path);
      std::string alts;
      for (const Value& v : e->list()) alts += (alts.empty() ? "" : " | ") + gbnf_literal(chat_template::to_json(v));
      return "(" + alts + ") " + use("ws");
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (const Value* any = d.find(key)) {
        if (!any->is_list() || any->list().empty()) fail(std::string("'") + key + "' must be a non-empty array", path);
        std::string alts;
        for (size_t i = 0; i < any->list().size(); ++i) {
          alts += (i ? " | " : "") + visit(any->list()[i], name + "-" + std::to_string(i),
                                           path + "/" + key + "/" + std::to_string(i));
        }
        return "(" + alts + ")";
      }
    }
    if (const Value* all = d.find("allOf")) {
      if (!all->is_list() || all->list().size() != 1) fail("'allOf' is supported with one schema only", path);
      return visit(all->list()[0], name, path + "/allOf/0");
    }
    const Value* type = d.find("type");
    if (type != nullptr && type->is_list()) {
      std::string alts;
      for (size_t i = 0; i < type->list().size(); ++i) {
        const Value& t = type->list()[i];
        if (!t.is_string()) fail("'type' must name types", path + "/type");
        alts += (i ? " | " : "") + typed(d, t.as_string(), name, path);
      }
      if (alts.empty()) fail("'type' is an empty list", path + "/type");
      return "(" + alts + ")";
    }
    if (type != nullptr && !type->is_string()) fail("'type' must be a string or a list of strings", path + "/type");
    if (type != nullptr) return typed(d, type->as_string(), name, path);
    if (d.find("properties") || d.find("additionalProperties")) return typed(d, "object", name, path);
    if (d.find("items") || d.find("prefixItems")) return typed(d, "array", name, path);
    return use("value");
  }

  std::string typed(const chat_template::ValueDict& d, const std::string& type, const std::string& name,
                    const std::string& path) {
    if (type == "object") return object(d, name, path);
    if (type == "array") return array(d, name, path);
    if (type == "string") {
      const Value* lo = d.find("minLength");
      const Value* hi = d.find("maxLength");
      if (lo == nullptr && hi == nullptr) return use("string");
      const int64_t min = lo ? count(*lo, "minLength", path) : 0;
      const std::string max = hi ? std::to_string(count(*hi, "maxLength", path)) : "";
      if (hi && count(*hi, "maxLength", path) < min) fail("'maxLength' is below 'minLength'", path);
      use("char");
      return rule(name, "\"\\\"\" char{" + std::to_string(min) + "," + max + "} \"\\\"\" " + use("ws"));
    }
    if (type == "number" || type == "integer" || type == "boolean" || type == "null") return use(type);
    fail("unknown type '" + type + "'", path + "/type");
  }

  std::string object(const chat_template::ValueDict& d, const std::string& name, const std::string& path) {
    const XmlArgumentSyntax* xml = std::exchange(xml_, nullptr);  // the top level only: nested objects are JSON
    std::vector<std::pair<std::string, const Value*>> props;
    if (const Value* p = d.find("properties")) {
      if (!p->is_dict()) fail("'properties' must be an object", path);
      for (const auto& [k, v] : p->dict().entries) props.emplace_back(k.as_string(), &v);
    }
    std::set<std::string, std::less<>> required;
    if (const Value* r = d.find("required")) {
      if (!r->is_list()) fail("'required' must be an array", path);
      for (const Value& k : r->list()) {
        if (!k.is_string()) fail("'required' must list strings", path + "/required");
        required.insert(k.as_string());
      }
    }
    for (const std::string& k : required) {
      bool declared = false;
      for (const auto& p : props) declared = declared || p.first == k;
      if (!declared) fail("the required property '" + k + "' is not in 'properties'", path + "/required");
    }
    std::string extra;  // one further key and value, when allowed
    if (const Value* a = d.find("additionalProperties"); a != nullptr && !(a->is_bool() && !a->as_bool())) {
      extra = use("string") + " \":\" " + use("ws") + " " + visit(*a, name + "-additional", path + "/additionalProperties");
    }
    if (props.empty() && extra.empty()) return xml ? "\"\"" : "\"{\" " + use("ws") + " \"}\" " + use("ws");
    // The members from property i on: a required one must come, an optional
    // one may; `first` says whether none came yet (no comma before it).
    std::vector<std::string> kv(props.size());
    for (size_t i = 0; i < props.size(); ++i) {
      const std::string value_path = path + "/properties/" + pointer_token(props[i].first);
      if (xml != nullptr) {  // the top level of XML-style arguments: key and value in tags
        const XmlArgumentSyntax& x = *xml;
        std::string value = text_value(*props[i].second, value_path);
        if (value.empty()) value = visit(*props[i].second, name + "-" + props[i].first, value_path);
        kv[i] = gbnf_literal(x.key_before + props[i].first + x.key_after) + " " + value + " " + gbnf_literal(x.value_after);
        continue;
      }
      const std::string value = visit(*props[i].second, name + "-" + props[i].first, value_path);
      kv[i] = gbnf_literal(chat_template::to_json(Value(props[i].first))) + " " + use("ws") + " \":\" " + use("ws") + " " +
              value;
    }
    const std::string comma = xml ? "" : "\",\" " + use("ws") + " ";
    std::map<std::pair<size_t, bool>, std::string> memo;
    auto rest = [&](auto& self, size_t i, bool first) -> std::string {
      if (i == props.size()) {
        if (extra.empty()) return "";
        return first ? "(" + extra + " (" + comma + extra + ")*)?" : "(" + comma + extra + ")*";
      }
      if (const auto it = memo.find({i, first}); it != memo.end()) return it->second;
      const std::string take = (first ? "" : comma) + kv[i] + " " + self(self, i + 1, false);
      std::string body = take;
      if (required.count(props[i].first) == 0) {
        const std::string skip = self(self, i + 1, first);
        body = "(" + take + ") | (" + skip + ")";
      }
      const std::string r = rule(name + "-from-" + std::to_string(i) + (first ? "" : "-more"), body);
      memo[{i, first}] = r;
      return r;
    };
    const std::string members = rest(rest, 0, true);
    if (xml) return members;  // XML-style arguments: the members alone
    return rule(name, "\"{\" " + use("ws") + " " + members + " \"}\" " + use("ws"));
  }

  // In XML-style arguments a string is written as itself: the expression of
  // a property's value when its schema takes strings only (type string with
  // lengths, or an enum / const of strings), "" when it takes others (JSON
  // then). Text holds no '<', which every closing tag starts with.
  std::string text_value(const Value& schema, const std::string& path) {
    if (!schema.is_dict()) return "";
    const chat_template::ValueDict& d = schema.dict();
    auto strings_only = [](const Value& v) {
      if (!v.is_list() || v.list().empty()) return false;
      for (const Value& e : v.list()) {
        if (!e.is_string()) return false;
      }
      return true;
    };
    if (const Value* e = d.find("enum"); e != nullptr && strings_only(*e)) {
      std::string alts;
      for (const Value& v : e->list()) alts += (alts.empty() ? "" : " | ") + gbnf_literal(v.as_string());
      return "(" + alts + ")";
    }
    if (const Value* c = d.find("const"); c != nullptr && c->is_string()) return gbnf_literal(c->as_string());
    const Value* type = d.find("type");
    if (type == nullptr || !type->is_string() || type->as_string() != "string") return "";
    for (const auto& [k, v] : d.entries) {
      const std::string key = k.is_string() ? k.as_string() : "";
      if (key != "type" && key != "minLength" && key != "maxLength" && annotations().count(key) == 0) return "";
    }
    const Value* lo = d.find("minLength");
    const Value* hi = d.find("maxLength");
    if (lo == nullptr && hi == nullptr) {
      if (used_.insert("xml-text").second) rules_.emplace_back("xml-text", "[^<]*");
      return "xml-text";
    }
    const int64_t min = lo ? count(*lo, "minLength", path) : 0;
    if (hi && count(*hi, "maxLength", path) < min) fail("'maxLength' is below 'minLength'", path);
    return "[^<]{" + std::to_string(min) + "," + (hi ? std::to_string(count(*hi, "maxLength", path)) : "") + "}";
  }

  std::string array(const chat_template::ValueDict& d, const std::string& name, const std::string& path) {
    const std::string comma = "\",\" " + use("ws") + " ";
    if (const Value* prefix = d.find("prefixItems")) {
      if (!prefix->is_list()) fail("'prefixItems' must be an array", path);
      std::string body = "\"[\" " + use("ws");
      for (size_t i = 0; i < prefix->list().size(); ++i) {
        body += " " + std::string(i ? comma : "") +
                visit(prefix->list()[i], name + "-" + std::to_string(i), path + "/prefixItems/" + std::to_string(i));
      }
      return rule(name, body + " \"]\" " + use("ws"));
    }
    const Value* items = d.find("items");
    const std::string item = items ? visit(*items, name + "-item", path + "/items") : use("value");
    const int64_t min = d.find("minItems") ? count(*d.find("minItems"), "minItems", path) : 0;
    const int64_t max = d.find("maxItems") ? count(*d.find("maxItems"), "maxItems", path) : -1;
    if (max >= 0 && max < min) fail("'maxItems' is below 'minItems'", path);
    std::string list;
    if (max == 0) {
      list = "";
    } else {
      const std::string more = "(" + comma + item + ")";
      const std::string bound = "{" + std::to_string(min > 0 ? min - 1 : 0) + "," +
                                (max > 0 ? std::to_string(max - 1) : std::string()) + "}";
      list = item + " " + more + bound;
      if (min == 0) list = "(" + list + ")?";
    }
    return rule(name, "\"[\" " + use("ws") + " " + list + " \"]\" " + use("ws"));
  }

  std::string reference(const Value& ref, const std::string& path) {
    if (!ref.is_string()) fail("'$ref' must be a string", path);
    const std::string& r = ref.as_string();
    if (const auto it = refs_.find(r); it != refs_.end()) return it->second;
    if (r.empty() || r[0] != '#') fail("'$ref' " + r + " is not in this document (only '#...' references are)", path);
    // Walk the pointer.
    const Value* at = &doc_;
    std::string hint = root_;
    size_t pos = 1;
    while (pos < r.size()) {
      if (r[pos] != '/') fail("'$ref' " + r + " is not a JSON pointer", path);
      const size_t end = std::min(r.find('/', pos + 1), r.size());
      std::string token;
      for (size_t i = pos + 1; i < end; ++i) {
        if (r[i] == '~' && i + 1 < end) {
          token += r[i + 1] == '1' ? '/' : '~';
          ++i;
        } else {
          token += r[i];
        }
      }
      const Value* next = at->is_dict() ? at->dict().find(token) : nullptr;
      if (next == nullptr) fail("'$ref' " + r + " points at nothing", path);
      at = next;
      hint = token;
      pos = end;
    }
    if (at == &doc_) return refs_[r] = root_;
    const std::string name = fresh(hint);
    refs_[r] = name;  // before the visit: a schema may refer to itself
    const std::string body = visit(*at, name, r.substr(1));
    rules_.emplace_back(name, body);
    return name;
  }

  Value doc_;
  std::string root_;
  std::vector<std::pair<std::string, std::string>>& rules_;
  std::set<std::string, std::less<>>& names_;
  std::set<std::string, std::less<>>& used_;
  std::map<std::string, std::string, std::less<>> refs_;
  const XmlArgumentSyntax* xml_ = nullptr;  // set while the top object's members are written
};

Value parse_schema(std::string_view schema) {
  try {
    return chat_template::parse_json(schema);
  } catch (const std::exception& e) {
    throw SchemaError(std::string("json schema: ") + e.what());  // "JSON: ... at byte N"
  }
}

}  // namespace

std::string json_schema_to_gbnf(std::string_view schema, std::string_view root) {
  if (primitives().count(root) != 0) throw SchemaError("json schema: '" + std::string(root) + "' names a rule of its own");
  Rules rules;
  Converter(rules, parse_schema(schema), std::string(root)).run();
  return rules.text();
}

std::string xml_arguments_to_gbnf(std::span<const XmlArguments> tools, const XmlArgumentSyntax& syntax) {
  Rules rules;
  for (const XmlArguments& t : tools) {
    if (primitives().count(t.root) != 0) throw SchemaError("json schema: '" + t.root + "' names a rule of its own");
    Converter(rules, parse_schema(t.schema), t.root).run_xml(syntax);
  }
  return rules.text();
}

}  // namespace engine::grammar

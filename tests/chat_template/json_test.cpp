// The JSON reader of conversation files and the writer behind `tojson`.
#include <gtest/gtest.h>

#include "engine/chat_template/json.h"

namespace {

namespace ct = engine::chat_template;

TEST(ChatTemplateJson, ReadsWhatConversationsHold) {
  const ct::Value v = ct::parse_json(R"( {"a": [1, -2.5e1, true, false, null], "s": "\u00e9\ud83d\ude42\n\"", "o": {}} )");
  ASSERT_TRUE(v.is_dict());
  EXPECT_EQ(ct::repr(v), "{'a': [1, -25.0, True, False, None], 's': 'é🙂\\n\"', 'o': {}}");
  // Keys keep their order, as json.load gives them.
  EXPECT_EQ(ct::to_json(ct::parse_json(R"({"z": 1, "a": 2})")), R"({"z": 1, "a": 2})");
}

TEST(ChatTemplateJson, MalformedInputNamesTheOffset) {
  for (const char* bad : {"{", "[1,]", "{\"a\" 1}", "\"\\x\"", "01x", "[1] 2", "\"a\nb\""}) {
    try {
      ct::parse_json(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ct::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ct::parse_json(std::string(100000, '[')), ct::ValueError);  // nesting bound, not a stack overflow
}

TEST(ChatTemplateJson, WritesAsJsonDumps) {
  EXPECT_EQ(ct::to_json(ct::parse_json(R"(["\u0001\t", 1.0, 1e100, "é"])")), R"(["\u0001\t", 1.0, 1e+100, "é"])");
  EXPECT_THROW(ct::to_json(ct::Value()), ct::ValueError);
}

TEST(ChatTemplateJson, FloatsPrintAsPythonsRepr) {
  EXPECT_EQ(ct::float_repr(0.1), "0.1");
  EXPECT_EQ(ct::float_repr(100.0), "100.0");
  EXPECT_EQ(ct::float_repr(1e16), "1e+16");
  EXPECT_EQ(ct::float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(ct::float_repr(0.0001), "0.0001");
  EXPECT_EQ(ct::float_repr(0.00001), "1e-05");
  EXPECT_EQ(ct::float_repr(-2.5), "-2.5");
}

}  // namespace

// engine::chat::TextStream: pieces of tokens in, text out, with characters
// split across tokens held until they complete and stop strings matched across
// tokens without ever being emitted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/chat/text_stream.h"
#include "engine/support/error.h"

namespace {

using engine::chat::TextStream;

// Pushes every piece and records what each push returned.
std::vector<std::string> feed(TextStream& s, const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  for (const std::string& p : pieces) out.push_back(s.push(p));
  return out;
}

TEST(TextStream, PassesTextThroughWithoutStops) {
  TextStream s;
  EXPECT_EQ(feed(s, {"Hel", "lo", " world"}), (std::vector<std::string>{"Hel", "lo", " world"}));
  EXPECT_EQ(s.finish(), "");
  EXPECT_FALSE(s.stopped());
}

TEST(TextStream, HoldsACharacterSplitAcrossTokens) {
  TextStream s;
  // "é" is C3 A9; "日" is E6 97 A5; "🙂" is F0 9F 99 82, one byte per token.
  EXPECT_EQ(feed(s, {"caf\xC3", "\xA9!"}), (std::vector<std::string>{"caf", "\xC3\xA9!"}));
  EXPECT_EQ(feed(s, {"\xE6", "\x97", "\xA5"}), (std::vector<std::string>{"", "", "\xE6\x97\xA5"}));
  EXPECT_EQ(feed(s, {"\xF0", "\x9F", "\x99", "\x82x"}), (std::vector<std::string>{"", "", "", "\xF0\x9F\x99\x82x"}));
}

TEST(TextStream, IllFormedBytesBecomeReplacementCharacters) {
  TextStream s;
  EXPECT_EQ(s.push("a\xFF"), "a\xEF\xBF\xBD");
  EXPECT_EQ(s.push("\xC3"), "");
  EXPECT_EQ(s.push("b"), "\xEF\xBF\xBD" "b");  // the lead byte never got its continuation
  EXPECT_EQ(s.push("\xE6\x97"), "");
  EXPECT_EQ(s.finish(), "\xEF\xBF\xBD");  // the reply ended inside a character
}

TEST(TextStream, StopStringAcrossTokensIsNotEmitted) {
  TextStream s({"<|end|>"});
  EXPECT_EQ(feed(s, {"Yes", ".<|", "en", "d|>", "more"}), (std::vector<std::string>{"Yes", ".", "", "", ""}));
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.matched_stop(), "<|end|>");
  EXPECT_EQ(s.finish(), "");
}

TEST(TextStream, StopStringEndingInsideATokenDropsTheRest) {
  TextStream s({"\n\nUser:"});
  EXPECT_EQ(s.push("Fine.\n"), "Fine.");
  EXPECT_EQ(s.push("\nUser: hi"), "");
  EXPECT_TRUE(s.stopped());
}

TEST(TextStream, HeldPrefixIsReleasedWhenItFailsToMatch) {
  TextStream s({"</answer>"});
  EXPECT_EQ(s.push("a </an"), "a ");
  EXPECT_EQ(s.push("swer"), "");     // "</answer" still may be the stop
  EXPECT_EQ(s.push("s>"), "</answers>");  // it was not
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.push("<"), "");
  EXPECT_EQ(s.finish(), "<");  // the end releases a prefix that never completed
}

TEST(TextStream, FailedPrefixKeepsALaterPossibleStart) {
  TextStream s({"abab"});
  EXPECT_EQ(s.push("aba"), "");     // "aba" may begin "abab"
  EXPECT_EQ(s.push("a"), "aba");    // "abaa": only the last "a" may still begin it
  EXPECT_EQ(s.push("bab"), "");     // "abab" complete
  EXPECT_TRUE(s.stopped());
}

TEST(TextStream, EarliestOfSeveralStopsWins) {
  TextStream s({"STOP", "\n"});
  EXPECT_EQ(s.push("one\ntwo STOP"), "one");
  EXPECT_EQ(s.matched_stop(), "\n");
}

TEST(TextStream, MultiByteStopSplitInsideItsCharacters) {
  TextStream s({"。終"});  // E3 80 82 E7 B5 82
  EXPECT_EQ(s.push("はい\xE3\x80"), "はい");
  EXPECT_EQ(s.push("\x82\xE7"), "");
  EXPECT_EQ(s.push("\xB5\x82"), "");
  EXPECT_TRUE(s.stopped());
}

TEST(TextStream, RefusesAStopThatIsNotText) {
  EXPECT_THROW(TextStream({"ok", "\xFF"}), engine::Error);
  EXPECT_NO_THROW(TextStream({"", "ok"}));  // an empty stop is ignored, not matched everywhere
  TextStream s({""});
  EXPECT_EQ(s.push("text"), "text");
}

}  // namespace

// llama.cpp's ids (reference/*.expected, from its llama-tokenize) for the texts
// of reference/inputs.txt on the family-shaped vocabularies of family_vocabs.h
// (Gemma 2/3 and 4, Phi-3.5, Phi-4-mini, SmolLM3, Granite 3) and on the
// ../shared vocabularies: with the model's BOS default and special tokens
// parsed, and plain; and the end-of-generation set llama.cpp builds from the
// metadata and token texts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "tests/support/shared_data.h"
#include "tests/tokenizer/family_vocabs.h"
#include "tests/tokenizer/test_util.h"

namespace {

using tokenizer_test::ids_string;
using tokenizer_test::read_file;
using tokenizer_test::tokenizer_of;

const std::filesystem::path kReferenceDir = std::filesystem::path(ENGINE_SOURCE_DIR) / "tests/tokenizer/reference";

// The tokenizer of family vocabulary `name`, written to a file and read back.
engine::Tokenizer family_tokenizer(const std::string& name) {
  const std::filesystem::path dir = engine_test::temp_dir("family_vocab");
  const std::string path = (dir / (name + ".gguf")).string();
  tokenizer_test::write_family_vocab(name, path);
  engine::Tokenizer tok = engine::Tokenizer::from_gguf(gguf::File::open(path));
  std::filesystem::remove_all(dir);
  return tok;
}

struct Case {
  size_t input;
  bool special;
  std::vector<int32_t> ids;
};
struct Expected {
  std::vector<int32_t> eog;
  std::vector<Case> cases;
};

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::istringstream in(s);
  for (int64_t id; in >> id;) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

// The "vocab <name>" section of an .expected file.
Expected read_expected(const std::string& file, const std::string& vocab) {
  std::istringstream lines(read_file(kReferenceDir / file));
  Expected e;
  bool in_section = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("vocab ", 0) == 0) {
      in_section = line.substr(6) == vocab;
    } else if (in_section && line.rfind("eog", 0) == 0) {
      e.eog = parse_ids(line.substr(3));
    } else if (in_section && line.rfind("case ", 0) == 0) {
      const size_t colon = line.find(':');
      std::istringstream head(line.substr(5, colon - 5));
      Case c;
      std::string mode;
      head >> c.input >> mode;
      c.special = mode == "special";
      c.ids = parse_ids(line.substr(colon + 1));
      e.cases.push_back(std::move(c));
    }
  }
  return e;
}

void expect_llamacpp_ids(const engine::Tokenizer& tok, const std::string& file, const std::string& vocab) {
  const std::vector<std::string> inputs = tokenizer_test::split_inputs(read_file(kReferenceDir / "inputs.txt"));
  const Expected e = read_expected(file, vocab);
  ASSERT_EQ(e.cases.size(), 2 * inputs.size()) << vocab << ": " << file << " does not match inputs.txt";
  size_t matched = 0;
  for (const Case& c : e.cases) {
    const std::vector<int32_t> ids =
        c.special ? tok.encode(inputs[c.input], tok.add_bos(), true) : tok.encode(inputs[c.input], false, false);
    EXPECT_EQ(ids_string(ids), ids_string(c.ids))
        << vocab << " input " << c.input << (c.special ? " (special)" : " (plain)") << ": '" << inputs[c.input] << "'";
    matched += ids == c.ids;
  }
  std::printf("[          ] %s: %zu/%zu cases match llama.cpp\n", vocab.c_str(), matched, e.cases.size());

  std::vector<int32_t> eog;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.is_end_of_generation(id)) eog.push_back(id);
  }
  EXPECT_EQ(ids_string(eog), ids_string(e.eog)) << vocab << ": end-of-generation tokens";
}

class FamilyVocab : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyVocab, MatchesLlamaCpp) {
  const engine::Tokenizer tok = family_tokenizer(GetParam());
  expect_llamacpp_ids(tok, "family_vocabs.expected", GetParam());
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyVocab, ::testing::ValuesIn(tokenizer_test::family_vocab_names()),
                         test_name);

class SharedVocab : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedVocab, MatchesLlamaCpp) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-" + GetParam() + ".gguf");
  expect_llamacpp_ids(tokenizer_of(path), "shared_vocabs.expected", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shared, SharedVocab,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "falcon", "starcoder", "deepseek-llm"),
                         test_name);

}  // namespace

namespace {

// The new encoders on input an app cannot vet: long runs, random bytes
// (ill-formed UTF-8 included). Every id is valid and the pieces give the text
// back (SentencePiece spells a space "▁", so a "▁" in the input may come back
// a space, or as its bytes when byte fallback spelled it).
TEST(FamilyVocabHostileText, EveryByteComesBack) {
  std::mt19937 rng(5);
  std::string random(std::getenv("ENGINE_QEMU_CPU") != nullptr ? 16 << 10 : 64 << 10, '\0');
  for (char& c : random) c = static_cast<char>(rng() & 0xFF);
  const std::vector<std::string> inputs = {random, std::string(20000, 'A'), std::string(20000, ' '),
                                           std::string(20000, '\n'), "x\xC3" "\n\xFF\xE2\x96\x81y"};
  for (const char* name : {"gemma4", "phi4-mini", "gemma3"}) {
    const engine::Tokenizer tok = family_tokenizer(name);
    for (const std::string& in : inputs) {
      const std::vector<int32_t> ids = tok.encode(in, false, false);
      std::string pieces;
      for (int32_t id : ids) {
        ASSERT_TRUE(id >= 0 && id < tok.n_vocab()) << name << ": " << id;
        pieces += tok.token_piece(id);
      }
      const auto spaced = [](std::string t) {
        for (size_t p = 0; (p = t.find("\xE2\x96\x81", p)) != std::string::npos;) t.replace(p, 3, " ");
        return t;
      };
      const std::string expected = std::string_view(name) == "phi4-mini" ? in : spaced(in);
      if (std::string_view(name) != "phi4-mini") pieces = spaced(pieces);
      EXPECT_EQ(pieces == expected, true) << name << ": " << in.size() << " bytes do not come back";
    }
  }
}

}  // namespace

namespace {

// Each family's chat tokens are one token each when special tokens are parsed;
// unparsed, a control token's text is ordinary text (user-defined ones, such as
// Phi-3.5's, stay whole either way).
TEST(FamilyVocabChatTokens, OneTokenWhenParsed) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> chat = {
      {"gemma3", {"<start_of_turn>", "<end_of_turn>"}}, {"gemma4", {"<|turn>", "<turn|>"}},
      {"phi3.5", {"<|user|>", "<|end|>"}},              {"phi4-mini", {"<|user|>", "<|end|>"}},
      {"smollm3", {"<|im_start|>", "<|im_end|>"}},      {"granite", {"<|start_of_role|>", "<|end_of_role|>"}}};
  for (const auto& [family, texts] : chat) {
    const engine::Tokenizer tok = family_tokenizer(family);
    for (const std::string& text : texts) {
      int32_t id = -1;
      for (int32_t i = 0; i < tok.n_vocab() && id < 0; ++i) id = tok.token_text(i) == text ? i : -1;
      ASSERT_GE(id, 0) << family << " has no " << text;
      EXPECT_EQ(tok.encode(text, false, true), std::vector<int32_t>{id}) << family << ": " << text;
      EXPECT_EQ(tok.encode(text, false, false).size() == 1, !tok.is_control(id)) << family << ": " << text;
    }
  }
}

}  // namespace

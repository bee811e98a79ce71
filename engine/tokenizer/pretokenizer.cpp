// The pre-tokenizer patterns, as matchers over code points. Facts about which
// regexes each `tokenizer.ggml.pre` value uses come from llama.cpp's
// llama-vocab.cpp; the gpt2 and llama3 patterns follow its hand-written
// matchers (unicode.cpp), the others its std::regex fallback, whose semantics
// (leftmost match, ordered alternatives, greedy with backtracking; \s and the
// \p{..} classes over the whole code point range) the matchers reproduce.
#include "engine/tokenizer/pretokenizer.h"

#include "engine/tokenizer/unicode.h"

namespace engine::tokenizer_detail {
namespace {

using unicode::classify;

constexpr PreTokenizerName kNames[] = {
    {"default", PreTokenizer::default_bpe, false, false},
    {"gpt-2", PreTokenizer::gpt2, false, false},
    {"mpt", PreTokenizer::gpt2, false, false},
    // GPT-NeoX's tokenizer.json uses the GPT-2 ByteLevel regex (MPT and OLMo share it).
    {"gpt-neox", PreTokenizer::gpt2, false, false},
    {"olmo", PreTokenizer::gpt2, false, false},
    {"phi-2", PreTokenizer::gpt2, false, false},
    {"jais", PreTokenizer::gpt2, false, false},
    {"jina-es", PreTokenizer::gpt2, false, false},
    {"jina-de", PreTokenizer::gpt2, false, false},
    {"jina-v1-en", PreTokenizer::gpt2, false, false},
    {"jina-v2-es", PreTokenizer::gpt2, false, false},
    {"jina-v2-de", PreTokenizer::gpt2, false, false},
    {"jina-v2-code", PreTokenizer::gpt2, false, false},
    {"roberta-bpe", PreTokenizer::gpt2, false, false},
    {"gigachat", PreTokenizer::gpt2, false, false},
    {"a.x-4.0", PreTokenizer::gpt2, false, false},
    {"mellum", PreTokenizer::gpt2, false, false},
    {"modern-bert", PreTokenizer::gpt2, false, false},
    {"granite-docling", PreTokenizer::gpt2, false, false},
    {"exaone4", PreTokenizer::gpt2, false, false},
    {"llama3", PreTokenizer::llama3, true, true},
    {"llama-v3", PreTokenizer::llama3, true, true},
    {"llama-bpe", PreTokenizer::llama3, true, true},
    {"falcon3", PreTokenizer::llama3, true, true},
    {"falcon-h1", PreTokenizer::llama3, true, true},
    {"pixtral", PreTokenizer::llama3, true, true},
    {"midm-2.0", PreTokenizer::llama3, true, true},
    {"lfm2", PreTokenizer::llama3, true, true},
    {"jina-v5-nano", PreTokenizer::llama3, true, true},
    {"dbrx", PreTokenizer::llama3, false, false},
    {"smaug-bpe", PreTokenizer::llama3, false, false},
    {"qwen2", PreTokenizer::qwen2, false, false},
    {"deepseek-r1-qwen", PreTokenizer::qwen2, false, false},
    {"stablelm2", PreTokenizer::qwen2, false, false},
    {"megrez", PreTokenizer::qwen2, false, false},
    {"hunyuan", PreTokenizer::qwen2, false, false},
    {"kormo", PreTokenizer::qwen2, false, false},
    {"f2llmv2", PreTokenizer::qwen2, false, false},
    {"deepseek-llm", PreTokenizer::deepseek_llm, false, false},
    {"deepseek-coder", PreTokenizer::deepseek_coder, false, false},
    {"falcon", PreTokenizer::falcon, false, false},
    {"starcoder", PreTokenizer::starcoder, false, false},
    {"refact", PreTokenizer::starcoder, false, false},
    {"command-r", PreTokenizer::starcoder, false, false},
    {"smollm", PreTokenizer::starcoder, false, false},
    {"codeshell", PreTokenizer::starcoder, false, false},
    {"exaone", PreTokenizer::starcoder, false, false},
    {"minerva-7b", PreTokenizer::starcoder, false, false},
    {"mellum2", PreTokenizer::starcoder, false, false},
    // Phi-4-mini's o200k vocabulary is "gpt-4o".
    {"gpt-4o", PreTokenizer::gpt4o, false, false},
    {"llama4", PreTokenizer::gpt4o, false, false},
    {"kanana2", PreTokenizer::gpt4o, false, false},
    {"talkie", PreTokenizer::gpt4o, false, false},
    {"minimax-m2", PreTokenizer::gpt4o, false, false},
    // What a "gemma4" tokenizer model implies (see load_vocab); also accepted
    // as the pre-tokenizer of a "gpt2" model, as the reference does.
    {"gemma4", PreTokenizer::gemma4, false, false},
};

// ---- classes -------------------------------------------------------------

bool is_ws(uint32_t cp) { return classify(cp).whitespace; }
bool is_letter(uint32_t cp) { return classify(cp).is_letter(); }
bool is_number(uint32_t cp) { return classify(cp).is_number(); }
bool is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }
// [^\s\p{L}\p{N}]
bool is_other(uint32_t cp) {
  const auto c = classify(cp);
  return !(c.whitespace || c.is_letter() || c.is_number());
}
bool is_ascii_digit(uint32_t cp) { return cp >= '0' && cp <= '9'; }
uint32_t ascii_lower(uint32_t cp) { return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp; }

// [\p{P}\$\+<=>\^~\|] (default) and the same with '`' (falcon).
bool is_punct_or_math(uint32_t cp, bool with_backtick) {
  switch (cp) {
    case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|':
      return true;
    case '`':
      return with_backtick;
    default:
      return classify(cp).is_punctuation();
  }
}

struct Range {
  uint32_t first;
  uint32_t last;
};

template <size_t N>
bool in_ranges(const Range (&ranges)[N], uint32_t cp) {
  for (const Range& r : ranges) {
    if (cp < r.first) return false;  // sorted
    if (cp <= r.last) return true;
  }
  return false;
}

// The cased-letter class spelled out in DeepSeek LLM's pre-tokenizer regex
// ("[A-Za-zµÀ-ÖØ-öø-ƺ...𞤀-𞥃]"): a subset of \p{LC}, not all of it.
constexpr Range kDeepseekLetters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
    {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// DeepSeek LLM's "[!-/:-~！-／：-～‘-‟　-。]". U+3000 is listed, but the reference
// rewrites every non-ASCII space to U+000B before matching, so it never matches.
constexpr Range kDeepseekPunct[] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3001, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// DeepSeek's "[一-龥ࠀ-一가-퟿]", again without the spaces the reference rewrites.
bool is_deepseek_cjk(uint32_t cp) {
  const bool in = (cp >= 0x0800 && cp <= 0x9FA5) || (cp >= 0xAC00 && cp <= 0xD7FF);
  return in && !is_ws(cp);
}

// ---- matchers ------------------------------------------------------------
//
// A matcher looks at c[pos..end) (pos < end; the piece ends at `end` as if the
// text ended there) and returns the end of the match starting at pos, or pos
// when the pattern does not match there.

using Matcher = size_t (*)(const uint32_t* c, size_t pos, size_t end);

template <class Pred>
size_t run(const uint32_t* c, size_t pos, size_t end, Pred pred) {
  while (pos < end && pred(c[pos])) ++pos;
  return pos;
}

// 's|'t|'re|'ve|'m|'ll|'d, letters compared after `fold`.
template <class Fold>
size_t match_contraction(const uint32_t* c, size_t pos, size_t end, Fold fold) {
  if (c[pos] != '\'' || pos + 1 >= end) return pos;
  const uint32_t a = fold(c[pos + 1]);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
  if (pos + 2 < end) {
    const uint32_t b = fold(c[pos + 2]);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
  }
  return pos;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Matches everywhere (a lone unmatched code point becomes its own piece).
size_t match_gpt2(const uint32_t* c, size_t pos, size_t end) {
  if (size_t m = match_contraction(c, pos, end, [](uint32_t cp) { return cp; }); m != pos) return m;
  const size_t q = pos + (c[pos] == ' ' ? 1 : 0);
  if (q < end) {
    if (is_letter(c[q])) return run(c, q, end, is_letter);
    if (is_number(c[q])) return run(c, q, end, is_number);
    if (is_other(c[q])) return run(c, q, end, is_other);
  }
  const size_t ws_end = run(c, pos, end, is_ws);
  if (ws_end - pos > 1 && ws_end < end) return ws_end - 1;  // \s+(?!\S): leave one space for the next word
  if (ws_end > pos) return ws_end;
  return pos + 1;
}

// \p{N}{1,max} at a number.
size_t match_numbers(const uint32_t* c, size_t pos, size_t end, size_t max) {
  size_t q = pos + 1;
  while (q < end && q - pos < max && is_number(c[q])) ++q;
  return q;
}

// The last alternatives of the Llama 3 family of regexes:
// \s*[\r\n]+|\s+(?!\S)|\s+ (and one code point when none matches).
size_t match_whitespace_tail(const uint32_t* c, size_t pos, size_t end) {
  // \s*[\r\n]+ : up to the last newline of the whitespace run
  size_t ws_end = pos;
  size_t last_newline_end = pos;
  while (ws_end < end && is_ws(c[ws_end])) {
    if (is_newline(c[ws_end])) last_newline_end = ws_end + 1;
    ++ws_end;
  }
  if (last_newline_end > pos) return last_newline_end;
  if (ws_end - pos > 1 && ws_end < end) return ws_end - 1;  // \s+(?!\S)
  if (ws_end > pos) return ws_end;                          // \s+
  return pos + 1;  // a lone space before end-of-piece is caught above; nothing else is left
}

// Llama 3 (max_digits 3) and Qwen2 (max_digits 1):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// The case-insensitive contractions are ASCII-only, as the reference's rewrite
// ('[sS]...) makes them.
template <size_t kMaxDigits>
size_t match_llama3_like(const uint32_t* c, size_t pos, size_t end) {
  if (size_t m = match_contraction(c, pos, end, ascii_lower); m != pos) return m;
  const uint32_t cp = c[pos];
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!is_newline(cp) && !is_number(cp)) {
    if (is_letter(cp) || (pos + 1 < end && is_letter(c[pos + 1]))) return run(c, pos + 1, end, is_letter);
  }
  if (is_number(cp)) return match_numbers(c, pos, end, kMaxDigits);  // \p{N}{1,max}
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t q = pos + (cp == ' ' ? 1 : 0);
  if (q < end && is_other(c[q])) return run(c, run(c, q, end, is_other), end, is_newline);
  return match_whitespace_tail(c, pos, end);
}

// o200k (gpt-4o), as the reference runs it: its std::regex rewrite of
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?
//   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?
//   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// spells the cased classes ((?=\p{L})[^a-z]) and ((?=\p{L})[^A-Z]) over text
// where every non-ASCII letter is one placeholder: "upper" is any letter but
// a-z, "lower" any letter but A-Z (so a non-ASCII letter is both), and marks
// are not letters. Those are the classes here, to give the reference's ids.
bool is_gpt4o_upper(uint32_t cp) { return is_letter(cp) && !(cp >= 'a' && cp <= 'z'); }
bool is_gpt4o_lower(uint32_t cp) { return is_letter(cp) && !(cp >= 'A' && cp <= 'Z'); }

size_t match_gpt4o(const uint32_t* c, size_t pos, size_t end) {
  const uint32_t cp = c[pos];
  // The optional leading character: taking it is tried first, and without it
  // the word would start at a non-letter and fail, so it is taken when it can be.
  const size_t s = pos + (!is_newline(cp) && !is_letter(cp) && !is_number(cp) ? 1 : 0);
  if (s < end && is_letter(c[s])) {
    const auto contraction = [&](size_t q) {
      return q < end ? match_contraction(c, q, end, ascii_lower) : q;
    };
    // upper* lower+: the greedy upper* gives back characters until a lower
    // one follows (the last non-ASCII letter of the upper run, if any).
    const size_t upper_end = run(c, s, end, is_gpt4o_upper);
    size_t k = upper_end;
    if (!(k < end && is_gpt4o_lower(c[k]))) {
      while (k > s && !is_gpt4o_lower(c[k - 1])) --k;
      k = k > s ? k - 1 : end;  // end: no lower letter to start lower+ at
    }
    if (k != end) return contraction(run(c, k, end, is_gpt4o_lower));
    // upper+ lower*: here the upper run is all A-Z and no lower letter follows.
    return contraction(upper_end);
  }
  if (is_number(cp)) return match_numbers(c, pos, end, 3);  // \p{N}{1,3}
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*
  const size_t q = pos + (cp == ' ' ? 1 : 0);
  if (q < end && is_other(c[q])) {
    return run(c, run(c, q, end, is_other), end, [](uint32_t x) { return is_newline(x) || x == '/'; });
  }
  return match_whitespace_tail(c, pos, end);
}

// [\r\n]
size_t match_newline(const uint32_t* c, size_t pos, size_t) { return pos + (is_newline(c[pos]) ? 1 : 0); }

// [^\n]+|[\n]+ (only \n: a \r stays with the text around it).
size_t match_newline_runs(const uint32_t* c, size_t pos, size_t end) {
  const bool newline = c[pos] == '\n';
  return run(c, pos, end, [newline](uint32_t x) { return (x == '\n') == newline; });
}

// \s?X+ for a class X that contains no whitespace.
template <bool (*kIsX)(uint32_t)>
size_t match_opt_space_run(const uint32_t* c, size_t pos, size_t end) {
  if (kIsX(c[pos])) return run(c, pos, end, kIsX);
  if (is_ws(c[pos]) && pos + 1 < end && kIsX(c[pos + 1])) return run(c, pos + 1, end, kIsX);
  return pos;
}

// X+ and X (one code point).
template <bool (*kIsX)(uint32_t)>
size_t match_run(const uint32_t* c, size_t pos, size_t end) {
  return run(c, pos, end, kIsX);
}
template <bool (*kIsX)(uint32_t)>
size_t match_one(const uint32_t* c, size_t pos, size_t) {
  return pos + (kIsX(c[pos]) ? 1 : 0);
}

// [0-9][0-9][0-9]
size_t match_three_digits(const uint32_t* c, size_t pos, size_t end) {
  if (pos + 3 <= end && is_ascii_digit(c[pos]) && is_ascii_digit(c[pos + 1]) && is_ascii_digit(c[pos + 2])) {
    return pos + 3;
  }
  return pos;
}

bool is_deepseek_letter(uint32_t cp) { return in_ranges(kDeepseekLetters, cp); }
bool is_deepseek_punct(uint32_t cp) { return in_ranges(kDeepseekPunct, cp); }
bool is_punctuation(uint32_t cp) { return classify(cp).is_punctuation(); }
bool is_default_punct(uint32_t cp) { return is_punct_or_math(cp, false); }
bool is_falcon_punct(uint32_t cp) { return is_punct_or_math(cp, true); }

// ---- splitting -----------------------------------------------------------

// One pattern over one piece, like a regex iterator: the matches, and the
// unmatched runs between them, in order.
void split_piece(Matcher match, const uint32_t* c, UnitSpan piece, std::vector<UnitSpan>& out) {
  size_t gap_begin = piece.begin;
  size_t pos = piece.begin;
  while (pos < piece.end) {
    const size_t m = match(c, pos, piece.end);
    if (m == pos) {
      ++pos;
      continue;
    }
    if (gap_begin < pos) out.push_back({gap_begin, pos});
    out.push_back({pos, m});
    pos = gap_begin = m;
  }
  if (gap_begin < piece.end) out.push_back({gap_begin, piece.end});
}

// \s+$ : the whitespace that ends the piece (searched directly: trying every
// start would be quadratic in long runs of spaces).
void split_trailing_space(const uint32_t* c, UnitSpan piece, std::vector<UnitSpan>& out) {
  size_t t = piece.end;
  while (t > piece.begin && is_ws(c[t - 1])) --t;
  if (t > piece.begin) out.push_back({piece.begin, t});
  if (t < piece.end) out.push_back({t, piece.end});
}

struct Step {
  Matcher match;  // nullptr: the \s+$ step
};

std::span<const Step> steps_of(PreTokenizer pre) {
  static constexpr Step kDefault[] = {{match_run<is_default_punct>}, {match_gpt2},
                                      {match_run<is_number>}, {match_three_digits}};
  static constexpr Step kGpt2[] = {{match_gpt2}};
  static constexpr Step kLlama3[] = {{match_llama3_like<3>}};
  static constexpr Step kQwen2[] = {{match_llama3_like<1>}};
  static constexpr Step kDeepseekLlm[] = {
      {match_newline},
      {match_opt_space_run<is_deepseek_letter>},
      {match_opt_space_run<is_deepseek_punct>},
      {nullptr},
      {match_run<is_deepseek_cjk>},
      {match_run<is_number>},
  };
  static constexpr Step kDeepseekCoder[] = {
      {match_newline},
      {match_opt_space_run<is_letter>},
      {match_opt_space_run<is_punctuation>},
      {match_run<is_deepseek_cjk>},
      {match_one<is_number>},
  };
  static constexpr Step kFalcon[] = {{match_run<is_falcon_punct>}, {match_gpt2}, {match_three_digits}};
  static constexpr Step kStarcoder[] = {{match_one<is_number>}, {match_gpt2}};
  static constexpr Step kGpt4o[] = {{match_gpt4o}};
  static constexpr Step kGemma4[] = {{match_newline_runs}};
  switch (pre) {
    case PreTokenizer::default_bpe: return kDefault;
    case PreTokenizer::gpt2: return kGpt2;
    case PreTokenizer::llama3: return kLlama3;
    case PreTokenizer::qwen2: return kQwen2;
    case PreTokenizer::deepseek_llm: return kDeepseekLlm;
    case PreTokenizer::deepseek_coder: return kDeepseekCoder;
    case PreTokenizer::falcon: return kFalcon;
    case PreTokenizer::starcoder: return kStarcoder;
    case PreTokenizer::gpt4o: return kGpt4o;
    case PreTokenizer::gemma4: return kGemma4;
  }
  return kDefault;
}

}  // namespace

std::span<const PreTokenizerName> pre_tokenizer_names() { return kNames; }

std::string_view pre_tokenizer_family_name(PreTokenizer pre) {
  switch (pre) {
    case PreTokenizer::default_bpe: return "default";
    case PreTokenizer::gpt2: return "gpt-2";
    case PreTokenizer::llama3: return "llama3";
    case PreTokenizer::qwen2: return "qwen2";
    case PreTokenizer::deepseek_llm: return "deepseek-llm";
    case PreTokenizer::deepseek_coder: return "deepseek-coder";
    case PreTokenizer::falcon: return "falcon";
    case PreTokenizer::starcoder: return "starcoder";
    case PreTokenizer::gpt4o: return "gpt-4o";
    case PreTokenizer::gemma4: return "gemma4";
  }
  return "?";
}

DecodedText decode_for_split(std::string_view text) {
  DecodedText d;
  d.cps.reserve(text.size());
  d.offsets.reserve(text.size() + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    const unicode::Utf8Step step = unicode::decode_utf8(text, pos);
    d.offsets.push_back(pos);
    if (step.kind == unicode::Utf8Step::complete) {
      d.cps.push_back(step.cp);
      pos += step.length;
    } else {
      d.cps.push_back(unicode::kReplacementChar);  // one unit per ill-formed byte
      pos += 1;
    }
  }
  d.offsets.push_back(text.size());
  return d;
}

std::vector<UnitSpan> pre_tokenize(PreTokenizer pre, const DecodedText& text) {
  std::vector<UnitSpan> pieces;
  if (text.cps.empty()) return pieces;
  pieces.push_back({0, text.cps.size()});
  std::vector<UnitSpan> next;
  for (const Step& step : steps_of(pre)) {
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const UnitSpan& piece : pieces) {
      if (step.match == nullptr) {
        split_trailing_space(text.cps.data(), piece, next);
      } else {
        split_piece(step.match, text.cps.data(), piece, next);
      }
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace engine::tokenizer_detail

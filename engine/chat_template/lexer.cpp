#include "engine/chat_template/lexer.h"

#include <cctype>
#include <charconv>

namespace engine::chat_template {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

class Lexer {
 public:
  Lexer(std::string_view src, const LexOptions& options) : src_(src), options_(options) {}

  std::vector<Token> run() {
    while (i_ < src_.size()) {
      size_t start = find_tag(i_);
      emit_text(i_, start);
      if (start == src_.size()) break;
      i_ = start;
      lex_tag();
    }
    tokens_.push_back({Token::Type::eof, "", pos_at(src_.size())});
    return std::move(tokens_);
  }

 private:
  Pos pos_at(size_t offset) {
    // Positions are mostly asked for in increasing order: advance a cursor
    // (an error may point back at a tag's start: then count again).
    if (offset < line_cursor_) {
      line_cursor_ = 0;
      line_ = Pos{};
    }
    for (; line_cursor_ < offset && line_cursor_ < src_.size(); ++line_cursor_) {
      if (src_[line_cursor_] == '\n') { ++line_.line; line_.column = 1; }
      else if ((static_cast<unsigned char>(src_[line_cursor_]) & 0xc0) != 0x80) ++line_.column;
    }
    return line_;
  }
  [[noreturn]] void error(size_t offset, const std::string& message) { fail(Error::Kind::syntax, pos_at(offset), message); }

  size_t find_tag(size_t from) const {
    for (size_t k = from; k + 1 < src_.size(); ++k)
      if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
    return src_.size();
  }

  // Text between tags, with the pending strip of the tag before it and the
  // strip the tag after it asks for.
  void emit_text(size_t begin, size_t end) {
    bool at_line_start = begin == 0 || src_[begin - 1] == '\n';
    if (strip_next_ == Strip::all) {
      while (begin < end && is_space(src_[begin])) ++begin;
      at_line_start = begin == 0 || src_[begin - 1] == '\n';
    } else if (strip_next_ == Strip::newline && begin < end) {
      if (src_[begin] == '\n') ++begin;
      else if (src_[begin] == '\r' && begin + 1 < end && src_[begin + 1] == '\n') begin += 2;
      at_line_start = true;
    }
    strip_next_ = Strip::none;
    if (end < src_.size()) {
      char kind = src_[end + 1], modifier = end + 2 < src_.size() ? src_[end + 2] : '\0';
      if (modifier == '-') {
        while (end > begin && is_space(src_[end - 1])) --end;
      } else if (kind != '{' && modifier != '+' && options_.lstrip_blocks) {
        size_t k = end;
        while (k > begin && (src_[k - 1] == ' ' || src_[k - 1] == '\t')) --k;
        if ((k > begin && src_[k - 1] == '\n') || (k == begin && at_line_start)) end = k;
      }
    }
    if (end > begin) tokens_.push_back({Token::Type::text, std::string(src_.substr(begin, end - begin)), pos_at(begin)});
  }

  void set_trailing_strip(char modifier, bool block_like) {
    if (modifier == '-') strip_next_ = Strip::all;
    else if (block_like && modifier != '+' && options_.trim_blocks) strip_next_ = Strip::newline;
  }

  void lex_tag() {
    size_t open = i_;
    char kind = src_[i_ + 1];
    i_ += 2;
    if (i_ < src_.size() && (src_[i_] == '-' || src_[i_] == '+')) ++i_;
    if (kind == '#') {
      size_t close = src_.find("#}", i_);
      if (close == std::string_view::npos) error(open, "unterminated comment");
      set_trailing_strip(close > i_ && src_[close - 1] == '-' ? '-' : close > i_ && src_[close - 1] == '+' ? '+' : '\0', true);
      i_ = close + 2;
      return;
    }
    bool block = kind == '%';
    tokens_.push_back({block ? Token::Type::block_begin : Token::Type::var_begin, "", pos_at(open)});
    char closer = block ? '%' : '}';
    int depth = 0;
    for (;;) {
      while (i_ < src_.size() && is_space(src_[i_])) ++i_;
      if (i_ >= src_.size()) error(open, block ? "unterminated '{%' tag" : "unterminated '{{' tag");
      char c = src_[i_];
      if (depth == 0) {
        char modifier = (c == '-' || c == '+') ? c : '\0';
        size_t k = i_ + (modifier ? 1 : 0);
        if (k + 1 < src_.size() && src_[k] == closer && src_[k + 1] == '}') {
          tokens_.push_back({block ? Token::Type::block_end : Token::Type::var_end, "", pos_at(i_)});
          i_ = k + 2;
          set_trailing_strip(modifier, block);
          if (block) skip_raw_block();
          return;
        }
      }
      lex_expression_token(depth);
    }
  }

  // {% raw %}...{% endraw %}: the text between is output as it stands.
  void skip_raw_block() {
    size_t n = tokens_.size();
    if (n < 3 || tokens_[n - 2].type != Token::Type::name || tokens_[n - 2].text != "raw" ||
        tokens_[n - 3].type != Token::Type::block_begin)
      return;
    Pos pos = tokens_[n - 3].pos;
    tokens_.resize(n - 3);
    for (size_t k = i_; (k = src_.find("{%", k)) != std::string_view::npos; ++k) {
      size_t j = k + 2;
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) ++j;
      while (j < src_.size() && is_space(src_[j])) ++j;
      if (src_.substr(j, 6) != "endraw") continue;
      size_t close = src_.find("%}", j);
      if (close == std::string_view::npos) break;
      size_t begin = i_;
      i_ = k;
      emit_text(begin, k);
      i_ = close + 2;
      set_trailing_strip(src_[close - 1] == '-' ? '-' : '\0', true);
      return;
    }
    fail(Error::Kind::syntax, pos, "missing '{% endraw %}'");
  }

  void lex_expression_token(int& depth) {
    size_t start = i_;
    char c = src_[i_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[i_])) || src_[i_] == '_')) ++i_;
      tokens_.push_back({Token::Type::name, std::string(src_.substr(start, i_ - start)), pos_at(start)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string();
    } else {
      static const char* const two[] = {"**", "//", "==", "!=", "<=", ">="};
      std::string op(1, c);
      for (const char* t : two)
        if (src_.substr(i_, 2) == t) op = t;
      if (op.size() == 1 && std::string_view("+-*/%~<>()[]{},.:|=").find(c) == std::string_view::npos)
        error(i_, std::string("unexpected character '") + c + "' in expression");
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      i_ += op.size();
      tokens_.push_back({Token::Type::op, op, pos_at(start)});
    }
  }

  void lex_number() {
    size_t start = i_;
    auto digits = [&] { while (i_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[i_])) || src_[i_] == '_')) ++i_; };
    digits();
    bool floating = false;
    if (i_ + 1 < src_.size() && src_[i_] == '.' && std::isdigit(static_cast<unsigned char>(src_[i_ + 1]))) {
      floating = true;
      ++i_;
      digits();
    }
    if (i_ < src_.size() && (src_[i_] == 'e' || src_[i_] == 'E')) {
      size_t k = i_ + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) { floating = true; i_ = k; digits(); }
    }
    std::string text;
    for (size_t k = start; k < i_; ++k)
      if (src_[k] != '_') text += src_[k];
    tokens_.push_back({floating ? Token::Type::floating : Token::Type::integer, text, pos_at(start)});
  }

  // A string literal with Python's escapes.
  void lex_string() {
    size_t start = i_;
    char quote = src_[i_++];
    std::string out;
    for (;;) {
      if (i_ >= src_.size()) error(start, "unterminated string");
      char c = src_[i_++];
      if (c == quote) break;
      if (c != '\\' || i_ >= src_.size()) { out += c; continue; }
      char e = src_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;
        case '0': out += '\0'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'x': case 'u': case 'U': {
          size_t len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i_ + len > src_.size()) error(i_, "truncated escape");
          unsigned long cp = 0;
          auto r = std::from_chars(src_.data() + i_, src_.data() + i_ + len, cp, 16);
          if (r.ptr != src_.data() + i_ + len || cp > 0x10ffff) error(i_, "malformed escape");
          i_ += len;
          append_utf8(out, cp);
          break;
        }
        default: out += '\\'; out += e;  // Python keeps unknown escapes
      }
    }
    tokens_.push_back({Token::Type::string, out, pos_at(start)});
  }

  static void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) { out += static_cast<char>(cp); return; }
    if (cp < 0x800) { out += static_cast<char>(0xc0 | cp >> 6); }
    else if (cp < 0x10000) { out += static_cast<char>(0xe0 | cp >> 12); out += static_cast<char>(0x80 | (cp >> 6 & 0x3f)); }
    else {
      out += static_cast<char>(0xf0 | (cp >> 18 & 0x07));
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    }
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }

  enum class Strip { none, newline, all };

  std::string_view src_;
  LexOptions options_;
  size_t i_ = 0;
  Strip strip_next_ = Strip::none;
  std::vector<Token> tokens_;
  size_t line_cursor_ = 0;
  Pos line_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace engine::chat_template

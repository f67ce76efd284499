#include "ir/mlir_lexer.hpp"

#include <array>
#include <cstring>

namespace kport::ir {

namespace {

bool id_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool id_char(char c) {
  return id_start(c) || (c >= '0' && c <= '9') || c == '$' || c == '.';
}
bool suffix_char(char c) {
  return id_char(c) || c == '-';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool hex_digit(char c) {
  return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// Matching `>` for each `<` of one line, found with one stack pass so that
/// lexing stays linear even on lines full of unmatched brackets (fuzzing).
class angle_matcher {
public:
  explicit angle_matcher(std::string_view text)
      : text_(text) {}

  /// Offset just past the `>` that closes the `<` at `pos`, or npos;
  /// `line_begin` is where the line holding `pos` starts.
  std::size_t close_of(std::size_t pos, std::size_t line_begin) {
    if (pos < line_begin_ || pos >= line_end_)
      scan_line(pos, line_begin);
    auto m = match_[pos - line_begin_];
    return m < 0 ? std::string_view::npos : static_cast<std::size_t>(m);
  }

private:
  void scan_line(std::size_t pos, std::size_t line_begin) {
    // Most characters of a line are none of these. Skipping them by table,
    // and taking the line's start from the lexer instead of walking back to
    // it, cut this scan (13 % of a 50k-line comparison) to about a third.
    static constexpr auto acts = [] {
      std::array<bool, 256> t{};
      for (char c : std::string_view("\"/-<([{>)]}"))
        t[static_cast<unsigned char>(c)] = true;
      return t;
    }();
    line_begin_ = line_begin;
    const void* nl = std::memchr(text_.data() + pos, '\n', text_.size() - pos);
    line_end_ = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) -
                                              text_.data())
                   : text_.size();
    match_.assign(line_end_ - line_begin_, -1);
    stack_.clear();
    for (std::size_t i = line_begin_; i < line_end_; ++i) {
      char c = text_[i];
      if (!acts[static_cast<unsigned char>(c)])
        continue;
      if (c == '"') {
        for (++i; i < line_end_ && text_[i] != '"'; ++i)
          if (text_[i] == '\\')
            ++i;
        continue;
      }
      if (c == '/' && i + 1 < line_end_ && text_[i + 1] == '/')
        break;
      if (c == '-' && i + 1 < line_end_ && text_[i + 1] == '>') {
        ++i;
        continue;
      }
      if (c == '<' || c == '(' || c == '[' || c == '{') {
        stack_.push_back(i);
      } else if (c == '>') {
        if (!stack_.empty() && text_[stack_.back()] == '<') {
          match_[stack_.back() - line_begin_] = static_cast<long>(i + 1);
          stack_.pop_back();
        }
      } else if (c == ')' || c == ']' || c == '}') {
        char open = c == ')' ? '(' : c == ']' ? '[' : '{';
        while (!stack_.empty() && text_[stack_.back()] == '<')
          stack_.pop_back();
        if (!stack_.empty() && text_[stack_.back()] == open)
          stack_.pop_back();
      }
    }
  }

  std::string_view text_;
  std::size_t line_begin_ = 1, line_end_ = 0;
  std::vector<long> match_;
  // (line_begin_, line_end_) starts empty, so the first `<` scans its line.
  std::vector<std::size_t> stack_;
};

} // namespace

lex_result lex_mlir(std::string_view s, std::uint32_t first_line) {
  lex_result out;
  out.tokens.reserve(s.size() / 5 + 8);
  angle_matcher angles(s);
  std::uint32_t line = first_line;
  bool line_start = true;
  std::size_t i = 0, line_begin = 0;
  auto push = [&](token_kind k, std::size_t b, std::size_t e) {
    out.tokens.push_back(token{k, line_start, line, s.substr(b, e - b)});
    line_start = false;
  };
  // Glues a following <...> (same line, matched) to the token ending at e.
  auto glue = [&](std::size_t e) {
    if (e < s.size() && s[e] == '<') {
      auto close = angles.close_of(e, line_begin);
      if (close != std::string_view::npos)
        return close;
    }
    return e;
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      line_begin = ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n')
        ++i;
      continue;
    }
    std::size_t b = i;
    if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"' && s[i] != '\n') {
        if (s[i] == '\\')
          ++i;
        ++i;
      }
      if (i >= s.size() || s[i] != '"') {
        out.error = "unterminated string";
        out.error_line = line;
        return out;
      }
      ++i;
      push(token_kind::string, b, i);
      continue;
    }
    if (c == '%' || c == '^' || c == '@' || c == '#' || c == '!') {
      ++i;
      if (c == '@' && i < s.size() && s[i] == '"') {
        ++i;
        while (i < s.size() && s[i] != '"' && s[i] != '\n')
          ++i;
        if (i < s.size() && s[i] == '"')
          ++i;
        push(token_kind::at_id, b, i);
        continue;
      }
      bool percent = c == '%' || c == '^';
      while (i < s.size() && (percent ? suffix_char(s[i]) : id_char(s[i])))
        ++i;
      if (i == b + 1) {
        push(token_kind::punct, b, i);
        continue;
      }
      if (c == '%' && i + 1 < s.size() && s[i] == '#' && digit(s[i + 1])) {
        ++i;
        while (i < s.size() && digit(s[i]))
          ++i;
      }
      token_kind k = c == '%'   ? token_kind::percent_id
                     : c == '^' ? token_kind::caret_id
                     : c == '@' ? token_kind::at_id
                     : c == '#' ? token_kind::hash_id
                                : token_kind::bang_id;
      if (k == token_kind::hash_id || k == token_kind::bang_id)
        i = glue(i);
      push(k, b, i);
      continue;
    }
    if (id_start(c)) {
      while (i < s.size() && id_char(s[i]))
        ++i;
      i = glue(i);
      push(token_kind::bare_id, b, i);
      continue;
    }
    if (digit(c) || (c == '-' && i + 1 < s.size() && digit(s[i + 1]))) {
      if (c == '-')
        ++i;
      if (s[i] == '0' && i + 1 < s.size() &&
          (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        i += 2;
        while (i < s.size() && hex_digit(s[i]))
          ++i;
      } else {
        while (i < s.size() && (digit(s[i]) || s[i] == '_'))
          ++i;
        if (i < s.size() && s[i] == '.') {
          ++i;
          while (i < s.size() && digit(s[i]))
            ++i;
        }
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
          std::size_t j = i + 1;
          if (j < s.size() && (s[j] == '+' || s[j] == '-'))
            ++j;
          if (j < s.size() && digit(s[j])) {
            i = j;
            while (i < s.size() && digit(s[i]))
              ++i;
          }
        }
      }
      push(token_kind::number, b, i);
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      i += 2;
      push(token_kind::arrow, b, i);
      continue;
    }
    if (c == '<') {
      auto close = angles.close_of(i, line_begin);
      if (close != std::string_view::npos) {
        i = close;
        push(token_kind::angle, b, i);
        continue;
      }
    }
    ++i;
    push(token_kind::punct, b, i);
  }
  out.tokens.push_back(token{token_kind::eof, true, line, {}});
  return out;
}

} // namespace kport::ir

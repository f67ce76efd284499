#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kport::ir {

/// Kinds of MLIR tokens; `<...>` groups are glued to the id before them.
enum class token_kind : std::uint8_t {
  eof,
  percent_id, ///< %name or %name#3
  caret_id,   ///< ^bb0
  at_id,      ///< @name
  hash_id,    ///< #attr or #dialect.attr<...>
  bang_id,    ///< !type or !dialect.type<...>
  bare_id,    ///< keyword, op name, or type such as tile<2xf32>
  angle,      ///< a bare <...> group: <f32: 1.0>, <{axis = 0 : i32}>
  number,
  string,
  arrow, ///< ->
  punct, ///< one of ( ) [ ] { } , : = * ? + - and others
};

/// One token: a view into the source text, its line, and whether it is the
/// first token of its line (custom syntax ends ops at line ends).
struct token {
  token_kind kind = token_kind::eof;
  bool line_start = false;
  std::uint32_t line = 0;
  std::string_view text;

  bool is(char c) const {
    return kind == token_kind::punct && text.size() == 1 && text[0] == c;
  }
  bool is_word(std::string_view w) const {
    return kind == token_kind::bare_id && text == w;
  }
};

/// Result of lexing: tokens ending in eof, or the first error.
struct lex_result {
  std::vector<token> tokens;
  std::string error;
  std::uint32_t error_line = 0;
};

/// Splits MLIR text into tokens; `//` comments are dropped. `first_line` is
/// the line number of the first character. Linear in the input size.
lex_result lex_mlir(std::string_view text, std::uint32_t first_line);

} // namespace kport::ir

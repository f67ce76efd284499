#include "ir/mlir_parser.hpp"

#include "ir/mlir_lexer.hpp"

#include <cctype>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace kport::ir {

namespace {

/// Deeper nesting than this is refused: it guards the recursive descent
/// against stack exhaustion on hostile input, far above real kernels.
constexpr int max_depth = 200;
/// Expanded aliases longer than this stay as their name (alias bombs).
constexpr std::size_t max_alias_text = 4096;

struct parse_failure : std::runtime_error {
  parse_failure(std::uint32_t l, const std::string& m)
      : std::runtime_error(m)
      , line(l) {}
  std::uint32_t line;
};

bool is_continuation_word(std::string_view w) {
  return w == "else" || w == "iter_values" || w == "iter_args" ||
         w == "attributes" || w == "to" || w == "step" || w == "do" ||
         w == "loc" || w == "outs" || w == "ins" || w == "into" ||
         w == "shared_outs";
}

bool is_syntax_word(std::string_view w) {
  return w == "in" || w == "to" || w == "step" || w == "iter_values" ||
         w == "iter_args" || w == "else" || w == "do" || w == "attributes" ||
         w == "ins" || w == "outs";
}

/// Canonical spelling of a type or attribute text: no whitespace, one space
/// after commas and around arrows, the cuda_tile prefix that its short forms
/// omit removed. Written into `out` (cleared first), a buffer the caller
/// reuses.
void canon_text(std::string_view in, std::string& out) {
  out.clear();
  bool in_string = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '"')
      in_string = !in_string;
    if (in_string) {
      out += c;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      continue;
    if (c == '!' && in.substr(i, 11) == "!cuda_tile.") {
      i += 10;
      continue;
    }
    if (c == ',') {
      out += ", ";
      continue;
    }
    if (c == '-' && i + 1 < in.size() && in[i + 1] == '>') {
      out += " -> ";
      ++i;
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
}

/// Buffers one op is gathered in before it is stored. Kept per nesting level
/// and reused, so an op costs no allocation for its texts and value lists
/// once its level has seen one that long; an op's regions are parsed one
/// level down in the middle of the op, hence one set per level.
struct op_buffers {
  std::string syntax, types, arg_types, joined;
  std::vector<char> parens; // 'd' defines block args, 'u' uses values
  std::vector<value_id> uses, defs;
  std::vector<value_id> pending; // block arguments named before a region
  std::vector<std::string_view> pending_types;
};

/// SSA name -> value id by open addressing over views into the token text.
/// A module has tens of thousands of values; a hash node per value was the
/// parser's largest allocation count.
class value_names {
public:
  explicit value_names(std::size_t expected) { rehash(expected); }

  /// The id of `name`; `fresh` (and `true`) when the name is new.
  std::pair<value_id, bool> find_or_add(std::string_view name, value_id fresh) {
    if ((size_ + 1) * 2 > slots_.size())
      rehash(slots_.size());
    const auto h = std::hash<std::string_view>()(name);
    for (auto i = h & mask();; i = (i + 1) & mask()) {
      slot& s = slots_[i];
      if (!s.used) {
        s = {name, h, fresh, true};
        ++size_;
        return {fresh, true};
      }
      if (s.hash == h && s.name == name)
        return {s.id, false};
    }
  }

  /// The id of `name`, or nullptr.
  const value_id* find(std::string_view name) const {
    const auto h = std::hash<std::string_view>()(name);
    for (auto i = h & mask();; i = (i + 1) & mask()) {
      const slot& s = slots_[i];
      if (!s.used)
        return nullptr;
      if (s.hash == h && s.name == name)
        return &s.id;
    }
  }

private:
  struct slot {
    std::string_view name;
    std::size_t hash = 0;
    value_id id = 0;
    bool used = false;
  };

  std::size_t mask() const { return slots_.size() - 1; }

  void rehash(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < expected * 2)
      cap <<= 1;
    std::vector<slot> old = std::move(slots_);
    slots_.assign(cap, slot{});
    for (const auto& s : old)
      if (s.used)
        for (auto i = s.hash & mask();; i = (i + 1) & mask())
          if (!slots_[i].used) {
            slots_[i] = s;
            break;
          }
  }

  std::vector<slot> slots_;
  std::size_t size_ = 0;
};

class mlir_parser {
public:
  mlir_parser(const std::vector<token>& toks, std::string_view file,
              std::unordered_map<std::string, std::string>& aliases,
              std::vector<std::string>& notes, tree_storage& storage)
      : t_(toks)
      , file_(file)
      , aliases_(aliases)
      , notes_(notes)
      , storage_(storage)
      , values_(toks.size() / 16 + 8) {}

  std::vector<op_node> parse_top() {
    std::vector<op_node> ops;
    while (peek().kind != token_kind::eof) {
      if (peek().is('}'))
        fail(peek().line, "unexpected `}` at top level: check that braces "
                          "balance");
      parse_op_into(ops);
    }
    return ops;
  }

private:
  // --- token access -------------------------------------------------------
  const token& peek(std::size_t k = 0) const {
    auto j = i_ + k;
    return j < t_.size() ? t_[j] : t_.back();
  }
  const token& next() {
    const token& tk = t_[i_];
    if (i_ + 1 < t_.size())
      ++i_;
    return tk;
  }
  [[noreturn]] void fail(std::uint32_t line, const std::string& msg) {
    throw parse_failure(line, msg);
  }
  void expect(char c, const std::string& what) {
    if (!peek().is(c))
      fail(peek().line, std::string("expected `") + c + "` " + what +
                            ", found `" + std::string(peek().text) + "`");
    next();
  }

  // --- values -------------------------------------------------------------
  // Keys are views into the token text (the source, alive while parsing);
  // the `%x#1` names of multi-result ops are kept in `result_names_`.
  value_id value(std::string_view name) {
    if (name.size() > 2 && name.substr(name.size() - 2) == "#0")
      name.remove_suffix(2);
    auto [id, fresh] = values_.find_or_add(name, next_value_);
    if (fresh)
      ++next_value_;
    return id;
  }
  void define(std::string_view name, std::size_t count,
              std::vector<value_id>& defs) {
    defs.push_back(value(name));
    for (std::size_t k = 1; k < count && k < 4096; ++k) {
      std::string key = std::string(name) + "#" + std::to_string(k);
      if (auto* id = values_.find(key)) {
        defs.push_back(*id);
        continue;
      }
      result_names_.push_back(std::move(key));
      defs.push_back(value(result_names_.back()));
    }
  }

  std::string_view keep(std::string_view text) { return storage_.text(text); }

  /// The canonical text of a type or attribute, aliases expanded; a view
  /// into a buffer that the next call overwrites.
  std::string_view expand(std::string_view text) {
    if (aliases_.empty() ||
        text.find_first_of("#!") == std::string_view::npos) {
      canon_text(text, canon_buf_);
      return canon_buf_;
    }
    std::string& out = alias_buf_;
    out.clear();
    for (std::size_t i = 0; i < text.size();) {
      char c = text[i];
      if ((c == '#' || c == '!') && i + 1 < text.size()) {
        std::size_t j = i + 1;
        while (j < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[j])) ||
                text[j] == '_' || text[j] == '.' || text[j] == '$'))
          ++j;
        auto it = aliases_.find(std::string(text.substr(i, j - i)));
        if (it != aliases_.end() && (j >= text.size() || text[j] != '<')) {
          out += it->second;
          i = j;
          continue;
        }
        out.append(text.substr(i, j - i));
        i = j;
        continue;
      }
      out += c;
      ++i;
    }
    canon_text(out, canon_buf_);
    return canon_buf_;
  }

  // --- structure ----------------------------------------------------------
  void skip_balanced() {
    // Current token opens ( [ or {; consumes through its closer.
    int depth = 0;
    std::uint32_t line = peek().line;
    do {
      const token& tk = peek();
      if (tk.kind == token_kind::eof)
        fail(line, "unbalanced bracket opened here");
      if (tk.is('(') || tk.is('[') || tk.is('{'))
        ++depth;
      else if (tk.is(')') || tk.is(']') || tk.is('}'))
        --depth;
      next();
    } while (depth > 0);
  }

  void skip_loc() {
    next(); // loc
    if (peek().is('('))
      skip_balanced();
  }

  std::string_view resolve_name(std::string_view raw) {
    if (raw == "module")
      return "builtin.module";
    if (raw.find('.') == std::string_view::npos && !dialects_.empty() &&
        !dialects_.back().empty()) {
      name_buf_.assign(dialects_.back());
      name_buf_ += '.';
      name_buf_.append(raw);
      return keep(name_buf_);
    }
    return keep(raw);
  }

  static std::string_view dialect_of(std::string_view name) {
    auto dot = name.find('.');
    if (dot == std::string_view::npos)
      return {};
    auto d = name.substr(0, dot);
    return d == "builtin" ? std::string_view() : d;
  }

  op_buffers& buffers_at(int depth) {
    while (buffers_.size() <= static_cast<std::size_t>(depth))
      buffers_.emplace_back();
    return buffers_[static_cast<std::size_t>(depth)];
  }

  void parse_region(op_node& owner, std::span<const value_id> pending_args,
                    std::span<const std::string_view> pending_types) {
    if (++depth_ > max_depth)
      fail(peek().line, "regions nested deeper than " +
                            std::to_string(max_depth) + " levels");
    expect('{', "to open a region");
    region reg;
    block cur;
    cur.args = storage_.ids(pending_args);
    cur.arg_types.assign(pending_types.begin(), pending_types.end());
    bool any = false;
    dialects_.push_back(dialect_of(owner.name));
    for (;;) {
      const token& tk = peek();
      if (tk.kind == token_kind::eof)
        fail(tk.line, "region of `" + std::string(owner.name) + "` (line " +
                          std::to_string(owner.line) +
                          ") is not closed: "
                          "missing `}`");
      if (tk.is('}')) {
        next();
        break;
      }
      if (tk.kind == token_kind::caret_id) {
        if (any || !cur.ops.empty())
          reg.blocks.push_back(std::move(cur));
        cur = block{};
        parse_block_header(cur);
        any = true;
        continue;
      }
      parse_op_into(cur.ops);
      any = true;
    }
    dialects_.pop_back();
    reg.blocks.push_back(std::move(cur));
    owner.regions.push_back(std::move(reg));
    --depth_;
  }

  void parse_block_header(block& blk) {
    next(); // ^bb
    std::vector<value_id> args;
    if (peek().is('(')) {
      next();
      while (!peek().is(')')) {
        const token& tk = peek();
        if (tk.kind == token_kind::eof)
          fail(tk.line, "block arguments are not closed: missing `)`");
        if (tk.kind == token_kind::percent_id) {
          args.push_back(value(tk.text));
          next();
          if (peek().is(':')) {
            next();
            blk.arg_types.push_back(read_type_until_comma());
          }
          continue;
        }
        if (tk.is_word("loc")) {
          skip_loc();
          continue;
        }
        next();
      }
      next();
    }
    blk.args = storage_.ids(args);
    if (peek().is(':'))
      next();
  }

  /// Reads a type up to `,` `)` `{` or `loc` at the current level.
  std::string_view read_type_until_comma() {
    std::string& text = type_buf_;
    text.clear();
    int depth = 0;
    for (;;) {
      const token& tk = peek();
      if (tk.kind == token_kind::eof)
        break;
      if (depth == 0 && (tk.is(',') || tk.is(')') || tk.is('{') ||
                         tk.is_word("loc") || tk.is('}')))
        break;
      if (tk.is('(') || tk.is('['))
        ++depth;
      if (tk.is(')') || tk.is(']'))
        --depth;
      if (!text.empty())
        text += ' ';
      text.append(tk.text);
      next();
    }
    return keep(expand(text));
  }

  /// Parses `{k = v, unit, ...}` into attrs.
  void parse_attr_dict(std::vector<attribute>& attrs) {
    std::uint32_t line = peek().line;
    expect('{', "to open an attribute dictionary");
    while (!peek().is('}')) {
      const token& key = peek();
      if (key.kind == token_kind::eof)
        fail(line, "attribute dictionary is not closed: missing `}`");
      if (key.is(',')) {
        next();
        continue;
      }
      std::string name(key.text);
      if (key.kind == token_kind::string && name.size() >= 2)
        name = name.substr(1, name.size() - 2);
      next();
      std::string& value = dict_buf_;
      value.clear();
      if (peek().is('=')) {
        next();
        int depth = 0;
        for (;;) {
          const token& tk = peek();
          if (tk.kind == token_kind::eof)
            fail(line, "attribute dictionary is not closed: missing `}`");
          if (depth == 0 && (tk.is(',') || tk.is('}')))
            break;
          if (tk.is('(') || tk.is('[') || tk.is('{'))
            ++depth;
          if (tk.is(')') || tk.is(']') || tk.is('}'))
            --depth;
          if (!value.empty())
            value += ' ';
          value.append(tk.text);
          next();
        }
      }
      attrs.push_back({std::move(name), std::string(expand(value))});
    }
    next();
  }

  /// Attributes written inside a glued `<{...}>` (generic properties).
  void parse_angle_dict(const token& tk, std::vector<attribute>& attrs) {
    auto inner = tk.text.substr(1, tk.text.size() - 2);
    auto lexed = lex_mlir(inner, tk.line);
    if (!lexed.error.empty())
      return;
    mlir_parser sub(lexed.tokens, file_, aliases_, notes_, storage_);
    if (sub.peek().is('{'))
      sub.parse_attr_dict(attrs);
  }

  void parse_op_into(std::vector<op_node>& ops) {
    op_node op;
    if (parse_op(op))
      ops.push_back(std::move(op));
  }

  void note_opaque(op_node& op, std::uint32_t line, std::string_view what) {
    op.opaque = true;
    if (notes_.size() < 200)
      notes_.push_back(std::string(file_) + ":" + std::to_string(line) +
                       ": could not read the custom syntax of `" +
                       std::string(op.name) + "` (" + std::string(what) +
                       "); compared by name and types only");
  }

  void skip_line(std::uint32_t line) {
    next();
    while (peek().kind != token_kind::eof && peek().line == line &&
           !peek().is('}'))
      next();
  }

  bool parse_op(op_node& op) {
    const token& first = peek();
    op.line = first.line;
    op_buffers& buf = buffers_at(depth_);
    buf.uses.clear();
    buf.defs.clear();
    // Results: %a, %b:2 = (consumed before the op's regions are parsed, so
    // one buffer serves every level)
    auto& results = results_;
    results.clear();
    if (first.kind == token_kind::percent_id) {
      while (peek().kind == token_kind::percent_id) {
        auto name = next().text;
        std::size_t count = 1;
        if (peek().is(':') && peek(1).kind == token_kind::number) {
          next();
          count = std::strtoull(std::string(next().text).c_str(), nullptr, 10);
          if (count == 0)
            count = 1;
        }
        results.emplace_back(name, count);
        if (peek().is(','))
          next();
      }
      if (!peek().is('=')) {
        if (notes_.size() < 200)
          notes_.push_back(std::string(file_) + ":" +
                           std::to_string(first.line) +
                           ": results without `=`; line skipped");
        skip_line(first.line);
        return false;
      }
      next();
    }
    const token& head = peek();
    if (head.kind == token_kind::string) {
      op.name = keep(head.text.substr(1, head.text.size() - 2));
      next();
      for (auto& [n, c] : results)
        define(n, c, buf.defs);
      parse_generic(op, buf);
      op.uses = storage_.ids(buf.uses);
      op.defs = storage_.ids(buf.defs);
      return true;
    }
    if (head.kind != token_kind::bare_id) {
      if (notes_.size() < 200)
        notes_.push_back(std::string(file_) + ":" + std::to_string(head.line) +
                         ": expected an operation, found `" +
                         std::string(head.text) + "`; line skipped");
      skip_line(head.line);
      return false;
    }
    op.name = resolve_name(head.text);
    next();
    for (auto& [n, c] : results)
      define(n, c, buf.defs);
    parse_custom(op, buf);
    op.uses = storage_.ids(buf.uses);
    op.defs = storage_.ids(buf.defs);
    return true;
  }

  void parse_generic(op_node& op, op_buffers& buf) {
    expect('(', "after the generic op name");
    while (!peek().is(')')) {
      const token& tk = peek();
      if (tk.kind == token_kind::eof)
        fail(op.line,
             "operand list of `" + std::string(op.name) + "` is not closed");
      if (tk.kind == token_kind::percent_id)
        buf.uses.push_back(value(tk.text));
      next();
    }
    next();
    if (peek().is('[')) {
      // Successors: ^bb1(%x : i32)
      next();
      int depth = 1;
      while (depth > 0) {
        const token& tk = peek();
        if (tk.kind == token_kind::eof)
          fail(op.line, "successor list of `" + std::string(op.name) +
                            "` is not closed");
        if (tk.is('[') || tk.is('('))
          ++depth;
        if (tk.is(']') || tk.is(')'))
          --depth;
        if (tk.kind == token_kind::percent_id)
          buf.uses.push_back(value(tk.text));
        next();
      }
    }
    if (peek().kind == token_kind::angle)
      parse_angle_dict(next(), op.attrs);
    if (peek().is('(') && peek(1).is('{')) {
      next();
      for (;;) {
        parse_region(op, {}, {});
        if (peek().is(',')) {
          next();
          continue;
        }
        break;
      }
      expect(')', "to close the region list of `" + std::string(op.name) + "`");
    }
    if (peek().is('{'))
      parse_attr_dict(op.attrs);
    if (peek().is(':')) {
      next();
      // A function type: (Ts) -> T or (Ts) -> (Ts); a lone type otherwise.
      std::string& text = type_buf_;
      text.clear();
      auto read_one = [&] {
        if (peek().is('(')) {
          int depth = 0;
          do {
            const token& tk = peek();
            if (tk.kind == token_kind::eof)
              fail(op.line,
                   "type of `" + std::string(op.name) + "` is not closed");
            if (tk.is('(') || tk.is('['))
              ++depth;
            if (tk.is(')') || tk.is(']'))
              --depth;
            text.append(tk.text);
            if (tk.is(','))
              text += ' ';
            next();
          } while (depth > 0);
        } else if (peek().kind != token_kind::eof) {
          text.append(next().text);
        }
      };
      read_one();
      if (peek().kind == token_kind::arrow) {
        next();
        text += " -> ";
        read_one();
      }
      op.types = keep(expand(text));
    }
    if (peek().is_word("loc"))
      skip_loc();
  }

  bool continues(const token& prev, const token& tk) const {
    if (prev.kind == token_kind::arrow)
      return true;
    if (prev.kind == token_kind::punct &&
        (prev.is(',') || prev.is(':') || prev.is('=') || prev.is('(') ||
         prev.is('[')))
      return true;
    if (tk.kind == token_kind::arrow || tk.kind == token_kind::angle)
      return true;
    if (tk.kind == token_kind::punct)
      return tk.is(':') || tk.is(',') || tk.is('=') || tk.is('(') ||
             tk.is(')') || tk.is(']') || tk.is('[') || tk.is('{');
    if (tk.kind == token_kind::bare_id)
      return is_continuation_word(tk.text);
    return false;
  }

  bool looks_like_dict() const {
    // `{` already at peek(); a dictionary holds `key =`, `key,` or `key}`
    // on the same line; anything else opens a region.
    const token& a = peek(1);
    const token& b = peek(2);
    if (a.line_start)
      return false;
    if (a.kind != token_kind::bare_id && a.kind != token_kind::string)
      return false;
    return b.is('=') || b.is(',') || b.is('}');
  }

  void parse_custom(op_node& op, op_buffers& buf) {
    const bool function = is_function_op(op.name);
    std::string& syntax = buf.syntax;
    std::string& types = buf.types;
    std::string& arg_types = buf.arg_types;
    std::vector<char>& parens = buf.parens;
    std::vector<value_id>& uses = buf.uses;
    syntax.clear();
    types.clear();
    arg_types.clear();
    parens.clear();
    std::vector<value_id>& pending = buf.pending;
    std::vector<std::string_view>& pending_types = buf.pending_types;
    pending.clear();
    pending_types.clear();
    bool in_types = false;
    const token* prev = &t_[i_ > 0 ? i_ - 1 : 0];
    auto add = [](std::string& s, std::string_view piece) {
      if (!s.empty())
        s += ' ';
      s.append(piece);
    };
    for (;;) {
      const token& tk = peek();
      if (tk.kind == token_kind::eof)
        break;
      const bool top = parens.empty();
      if (tk.line_start && top && !continues(*prev, tk))
        break;
      if (top && tk.is('}'))
        break;
      if (tk.is('{')) {
        if (!top) {
          std::vector<attribute> arg_attrs;
          parse_attr_dict(arg_attrs);
          for (auto& a : arg_attrs) {
            add(syntax, "{");
            syntax += a.name;
            syntax += '=';
            syntax += a.value;
            syntax += '}';
          }
          prev = &t_[i_ - 1];
          continue;
        }
        if (prev->is_word("attributes") || looks_like_dict()) {
          parse_attr_dict(op.attrs);
          prev = &t_[i_ - 1];
          continue;
        }
        if (function && op.regions.empty()) {
          arg_types = "(";
          for (std::size_t k = 0; k < pending_types.size(); ++k) {
            if (k)
              arg_types += ", ";
            arg_types += pending_types[k];
          }
          arg_types += ')';
        }
        parse_region(op, pending, pending_types);
        pending.clear();
        pending_types.clear();
        in_types = false;
        prev = &t_[i_ - 1];
        continue;
      }
      if (tk.kind == token_kind::percent_id) {
        const token& after = peek(1);
        bool defines = false;
        if (after.is('='))
          defines = true;
        else if (after.is(':') && !parens.empty() && parens.back() == 'd')
          defines = true;
        else if (after.is_word("in"))
          defines = true;
        if (defines) {
          pending.push_back(value(tk.text));
          add(syntax, "%");
          next();
          if (after.is(':')) {
            next();
            auto ty = read_type_until_comma();
            add(syntax, ":");
            syntax += ty;
            pending_types.push_back(ty);
          }
        } else {
          uses.push_back(value(tk.text));
          add(in_types ? types : syntax, "%");
          next();
        }
        prev = &t_[i_ - 1];
        continue;
      }
      if (tk.is_word("loc") && peek(1).is('(')) {
        skip_loc();
        prev = &t_[i_ - 1];
        continue;
      }
      if (tk.is('(') || tk.is('[')) {
        bool uses_list = prev->kind == token_kind::caret_id ||
                         prev->is_word("ins") || prev->is_word("outs") ||
                         (prev->kind == token_kind::at_id && !function);
        if (in_types && top && peek(1).kind == token_kind::percent_id)
          in_types = false;
        parens.push_back(tk.is('[') || uses_list ? 'u' : 'd');
      } else if (tk.is(')') || tk.is(']')) {
        if (parens.empty()) {
          note_opaque(op, tk.line, "unbalanced `" + std::string(tk.text) + "`");
          skip_line(tk.line);
          break;
        }
        parens.pop_back();
      } else if (top && tk.is(':')) {
        in_types = true;
        if (!types.empty())
          types += " : ";
        next();
        prev = &t_[i_ - 1];
        continue;
      } else if (top && tk.kind == token_kind::arrow) {
        in_types = true;
      } else if (top && tk.kind == token_kind::bare_id &&
                 is_continuation_word(tk.text)) {
        in_types = false;
      }
      if (in_types) {
        add(types, tk.text);
      } else {
        // A function's own name is matched through the function mapping,
        // so its syntax keeps a bare `@`.
        bool own_name =
            function && tk.kind == token_kind::at_id && op.symbol.empty();
        add(syntax, own_name ? std::string_view("@") : tk.text);
        if (top)
          extract_attr(op, tk);
      }
      prev = &tk;
      next();
    }
    op.syntax = keep(syntax);
    std::string& joined = buf.joined;
    joined = arg_types;
    if (!arg_types.empty() && !types.empty())
      joined += " -> ";
    joined += expand(types);
    op.types = keep(joined);
    if (!pending.empty() && op.regions.empty()) {
      // Values named in the syntax but with no region to receive them (e.g.
      // `for` without body): keep them defined so uses resolve.
      buf.defs.insert(buf.defs.end(), pending.begin(), pending.end());
    }
  }

  void extract_attr(op_node& op, const token& tk) {
    switch (tk.kind) {
    case token_kind::at_id:
      if (op.symbol.empty()) {
        auto symbol = tk.text.substr(1);
        if (symbol.size() >= 2 && symbol.front() == '"')
          symbol = symbol.substr(1, symbol.size() - 2);
        op.symbol = keep(symbol);
      } else
        op.attrs.push_back({"callee", std::string(tk.text.substr(1))});
      return;
    case token_kind::bare_id: {
      if (is_syntax_word(tk.text))
        return;
      auto lt = tk.text.find('<');
      if (lt != std::string_view::npos) {
        op.attrs.push_back({std::string(tk.text.substr(0, lt)),
                            std::string(expand(tk.text.substr(
                                lt + 1, tk.text.size() - lt - 2)))});
        return;
      }
      if (peek(1).is('=')) {
        const token& v = peek(2);
        if (v.kind == token_kind::percent_id)
          return;
        std::string& value = dict_buf_;
        value.assign(v.text);
        if (v.is('[') || v.is('(')) {
          value.clear();
          int depth = 0;
          for (std::size_t k = 2;; ++k) {
            const token& x = peek(k);
            if (x.kind == token_kind::eof || k > 4096)
              break;
            if (x.is('[') || x.is('('))
              ++depth;
            if (x.is(']') || x.is(')'))
              --depth;
            value.append(x.kind == token_kind::percent_id ? "%" : x.text);
            if (depth == 0)
              break;
          }
        }
        op.attrs.push_back({std::string(tk.text), std::string(expand(value))});
        return;
      }
      op.attrs.push_back({std::string(tk.text), ""});
      return;
    }
    default:
      return;
    }
  }

  const std::vector<token>& t_;
  std::size_t i_ = 0;
  std::string_view file_;
  std::unordered_map<std::string, std::string>& aliases_;
  std::vector<std::string>& notes_;
  tree_storage& storage_;
  value_names values_;
  std::deque<std::string> result_names_; // stable: values_ views them
  value_id next_value_ = 0;
  std::vector<std::string_view> dialects_;
  int depth_ = 0;
  // Reused buffers: none is in use across a nested parse unless per level.
  std::deque<op_buffers> buffers_; // one per region level
  std::vector<std::pair<std::string_view, std::size_t>> results_;
  std::string name_buf_, type_buf_, dict_buf_, canon_buf_, alias_buf_;
};

/// Splits `// -----` separated parts; returns (first line, text) pairs.
std::vector<std::pair<std::uint32_t, std::string_view>>
split_modules(std::string_view text) {
  std::vector<std::pair<std::uint32_t, std::string_view>> parts;
  std::size_t begin = 0, pos = 0;
  std::uint32_t line = 1, part_line = 1;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    auto l = text.substr(pos, end - pos);
    auto b = l.find_first_not_of(" \t");
    if (b != std::string_view::npos && l.substr(b).rfind("// -----", 0) == 0 &&
        l.find_first_not_of("-/ \t\r", b) == std::string_view::npos) {
      parts.emplace_back(part_line, text.substr(begin, pos - begin));
      begin = end + 1 <= text.size() ? end + 1 : text.size();
      part_line = line + 1;
    }
    ++line;
    pos = end + 1;
  }
  parts.emplace_back(part_line, text.substr(std::min(begin, text.size())));
  return parts;
}

/// Collects `#name = ...` / `!name = ...` alias lines and removes their
/// tokens; `#loc` aliases are dropped.
std::vector<token>
take_aliases(std::vector<token>&& toks,
             std::unordered_map<std::string, std::string>& aliases) {
  bool any = false;
  for (const auto& tk : toks)
    if (tk.line_start &&
        (tk.kind == token_kind::hash_id || tk.kind == token_kind::bang_id)) {
      any = true;
      break;
    }
  if (!any)
    return std::move(toks);
  std::vector<token> out;
  out.reserve(toks.size());
  for (std::size_t i = 0; i < toks.size();) {
    const token& tk = toks[i];
    if (tk.line_start &&
        (tk.kind == token_kind::hash_id || tk.kind == token_kind::bang_id) &&
        i + 1 < toks.size() && toks[i + 1].is('=')) {
      std::string value;
      std::size_t j = i + 2;
      while (j < toks.size() && toks[j].kind != token_kind::eof &&
             !toks[j].line_start) {
        if (!value.empty())
          value += ' ';
        value.append(toks[j].text);
        ++j;
      }
      bool loc = value.rfind("loc", 0) == 0;
      if (!loc && value.size() <= max_alias_text)
        aliases[std::string(tk.text)] = value;
      i = j;
      continue;
    }
    out.push_back(tk);
    ++i;
  }
  // Expand aliases that name other aliases (layouts name their parents);
  // a few rounds cover real files, and the length cap stops alias bombs.
  for (int round = 0; round < 3; ++round) {
    bool changed = false;
    for (auto& [name, value] : aliases) {
      if (value.find_first_of("#!") == std::string::npos)
        continue;
      std::string next;
      for (std::size_t k = 0; k < value.size();) {
        if ((value[k] == '#' || value[k] == '!') && k + 1 < value.size()) {
          std::size_t e = k + 1;
          while (e < value.size() &&
                 (std::isalnum(static_cast<unsigned char>(value[e])) ||
                  value[e] == '_' || value[e] == '.'))
            ++e;
          auto it = aliases.find(value.substr(k, e - k));
          if (it != aliases.end() && it->first != name &&
              (e >= value.size() || value[e] != '<') &&
              next.size() + it->second.size() <= max_alias_text) {
            next += it->second;
            changed = true;
          } else {
            next.append(value, k, e - k);
          }
          k = e;
          continue;
        }
        next += value[k++];
      }
      value = std::move(next);
    }
    if (!changed)
      break;
  }
  return out;
}

} // namespace

ir_file parse_mlir(std::string_view text, std::string_view name) {
  ir_file file;
  file.name = std::string(name);
  file.format = ir_format::mlir;
  auto storage = std::make_shared<tree_storage>();
  file.storage = storage;
  for (auto [line, part] : split_modules(text)) {
    ir_module mod;
    mod.first_line = line;
    auto lexed = lex_mlir(part, line);
    if (!lexed.error.empty()) {
      mod.error = lexed.error;
      mod.error_line = lexed.error_line;
      file.modules.push_back(std::move(mod));
      continue;
    }
    std::unordered_map<std::string, std::string> aliases;
    auto toks = take_aliases(std::move(lexed.tokens), aliases);
    mlir_parser p(toks, name, aliases, mod.notes, *storage);
    try {
      mod.ops = p.parse_top();
    } catch (const parse_failure& e) {
      mod.ops.clear();
      mod.error = e.what();
      mod.error_line = e.line;
    }
    file.modules.push_back(std::move(mod));
  }
  return file;
}

} // namespace kport::ir

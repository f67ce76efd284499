#include "ir/ptx_parser.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kport::ir {

namespace {

constexpr int max_scope_depth = 200;

struct ptok {
  enum kind_t : std::uint8_t { eof, word, string, punct } kind = eof;
  bool line_start = false;
  std::uint32_t line = 0;
  std::string_view text;
  bool is(char c) const {
    return kind == punct && text.size() == 1 && text[0] == c;
  }
};

struct ptx_failure : std::runtime_error {
  ptx_failure(std::uint32_t l, const std::string& m)
      : std::runtime_error(m)
      , line(l) {}
  std::uint32_t line;
};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%' || c == '.';
}

std::vector<ptok> lex_ptx(std::string_view s) {
  std::vector<ptok> out;
  out.reserve(s.size() / 4 + 8);
  std::uint32_t line = 1;
  bool line_start = true;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      ++i;
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
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') {
          ++line;
          line_start = true;
        }
        ++i;
      }
      i = i + 2 <= s.size() ? i + 2 : s.size();
      continue;
    }
    std::size_t b = i;
    ptok t;
    t.line = line;
    t.line_start = line_start;
    line_start = false;
    if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"' && s[i] != '\n') {
        if (s[i] == '\\')
          ++i;
        ++i;
      }
      if (i < s.size() && s[i] == '"')
        ++i;
      t.kind = ptok::string;
    } else if (word_char(c)) {
      // `::` belongs to opcodes (shared::cluster); a single `:` ends a label.
      while (i < s.size() &&
             (word_char(s[i]) ||
              (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':' &&
               i + 2 < s.size() && word_char(s[i + 2])))) {
        if (s[i] == ':')
          ++i;
        ++i;
      }
      t.kind = ptok::word;
    } else {
      ++i;
      t.kind = ptok::punct;
    }
    t.text = s.substr(b, std::min(i, s.size()) - b);
    out.push_back(t);
  }
  ptok e;
  e.line = line;
  e.line_start = true;
  out.push_back(e);
  return out;
}

bool special_register(std::string_view r) {
  static const std::unordered_set<std::string_view> names = {
      "%tid",
      "%ntid",
      "%ctaid",
      "%nctaid",
      "%laneid",
      "%warpid",
      "%nwarpid",
      "%smid",
      "%nsmid",
      "%gridid",
      "%clock",
      "%clock64",
      "%globaltimer",
      "%globaltimer_lo",
      "%globaltimer_hi",
      "%lanemask_eq",
      "%lanemask_le",
      "%lanemask_lt",
      "%lanemask_ge",
      "%lanemask_gt",
      "%dynamic_smem_size",
      "%total_smem_size",
      "%clusterid",
      "%nclusterid",
      "%cluster_ctaid",
      "%cluster_nctaid",
      "%cluster_ctarank",
      "%cluster_nctarank",
      "%is_explicit_cluster",
      "%aggr_smem_size"};
  auto dot = r.find('.');
  return names.count(r.substr(0, dot)) > 0;
}

/// Instructions whose first operand is not written.
bool no_dest(std::string_view op) {
  auto dot = op.find('.');
  auto base = op.substr(0, dot);
  return base == "st" || base == "red" || base == "bar" || base == "barrier" ||
         base == "bra" || base == "ret" || base == "exit" ||
         base == "prefetch" || base == "prefetchu" || base == "cp" ||
         base == "membar" || base == "fence" || base == "trap" ||
         base == "stmatrix" || base == "griddepcontrol" ||
         base == "setmaxnreg" || base == "pmevent" || base == "nanosleep" ||
         base == "brkpt" || base == "stackrestore" || base == "tcgen05" ||
         base == "cp.async" || op.rfind("mbarrier.init", 0) == 0 ||
         op.rfind("mbarrier.arrive", 0) == 0 ||
         op.rfind("mbarrier.expect_tx", 0) == 0 ||
         op.rfind("wgmma.fence", 0) == 0 || op.rfind("wgmma.commit", 0) == 0 ||
         op.rfind("wgmma.wait", 0) == 0;
}

bool ends_block(std::string_view op) {
  return op.rfind("bra", 0) == 0 || op.rfind("ret", 0) == 0 ||
         op.rfind("exit", 0) == 0 || op.rfind("brx", 0) == 0;
}

class ptx_reader {
public:
  ptx_reader(const std::vector<ptok>& t, std::string_view file,
             std::vector<std::string>& notes, tree_storage& storage)
      : t_(t)
      , file_(file)
      , notes_(notes)
      , storage_(storage) {}

  std::vector<op_node> read() {
    std::vector<op_node> fns;
    while (peek().kind != ptok::eof) {
      const ptok& tk = peek();
      if (tk.is(';')) {
        next();
        continue;
      }
      if (tk.kind == ptok::word &&
          (tk.text == ".version" || tk.text == ".target" ||
           tk.text == ".address_size" || tk.text == ".file" ||
           tk.text == ".loc")) {
        skip_line();
        continue;
      }
      if (tk.kind == ptok::word && tk.text == ".section") {
        skip_to_semicolon_or_block();
        continue;
      }
      if (tk.kind == ptok::word &&
          (tk.text == ".visible" || tk.text == ".extern" ||
           tk.text == ".weak" || tk.text == ".entry" || tk.text == ".func")) {
        std::size_t j = i_;
        bool extern_decl = false;
        while (t_[j].kind == ptok::word &&
               (t_[j].text == ".visible" || t_[j].text == ".extern" ||
                t_[j].text == ".weak")) {
          if (t_[j].text == ".extern")
            extern_decl = true;
          ++j;
        }
        if (t_[j].kind == ptok::word &&
            (t_[j].text == ".entry" || t_[j].text == ".func")) {
          i_ = j;
          op_node fn;
          if (read_function(fn) && !extern_decl)
            fns.push_back(std::move(fn));
          continue;
        }
      }
      if (tk.kind == ptok::word && !tk.text.empty() && tk.text[0] == '.') {
        // Module-level variables (.global, .shared, .const) and pragmas.
        skip_to_semicolon_or_block();
        continue;
      }
      if (notes_.size() < 200)
        notes_.push_back(std::string(file_) + ":" + std::to_string(tk.line) +
                         ": unexpected `" + std::string(tk.text) +
                         "` at module level; skipped");
      skip_to_semicolon_or_block();
    }
    return fns;
  }

private:
  const ptok& peek(std::size_t k = 0) const {
    auto j = i_ + k;
    return j < t_.size() ? t_[j] : t_.back();
  }
  const ptok& next() {
    const ptok& tk = t_[i_];
    if (i_ + 1 < t_.size())
      ++i_;
    return tk;
  }
  [[noreturn]] void fail(std::uint32_t line, const std::string& m) {
    throw ptx_failure(line, m);
  }
  void skip_line() {
    auto line = next().line;
    while (peek().kind != ptok::eof && peek().line == line)
      next();
  }
  void skip_to_semicolon_or_block() {
    int depth = 0;
    std::uint32_t line = peek().line;
    for (;;) {
      const ptok& tk = peek();
      if (tk.kind == ptok::eof) {
        if (depth > 0)
          fail(line, "`{` opened here is not closed");
        return;
      }
      next();
      if (tk.is('{'))
        ++depth;
      else if (tk.is('}')) {
        if (--depth <= 0)
          return;
      } else if (tk.is(';') && depth == 0)
        return;
    }
  }

  std::string_view keep(std::string_view text) { return storage_.text(text); }

  value_id reg(std::string_view name) {
    auto [it, fresh] = regs_.try_emplace(name, next_value_);
    if (fresh)
      ++next_value_;
    return it->second;
  }

  /// Reads `( .param ... name, ... )`; returns the parameter type texts.
  std::vector<std::string> read_params(std::vector<std::string_view>& names) {
    std::vector<std::string> types;
    std::uint32_t line = peek().line;
    next(); // (
    std::string cur;
    std::string_view last_word;
    auto flush = [&] {
      if (!last_word.empty()) {
        names.push_back(last_word);
        types.push_back(cur);
      }
      cur.clear();
      last_word = {};
    };
    int depth = 1;
    while (depth > 0) {
      const ptok& tk = peek();
      if (tk.kind == ptok::eof)
        fail(line, "parameter list is not closed: missing `)`");
      next();
      if (tk.is('(')) {
        ++depth;
        continue;
      }
      if (tk.is(')')) {
        if (--depth == 0)
          break;
        continue;
      }
      if (tk.is(',') && depth == 1) {
        flush();
        continue;
      }
      if (tk.kind == ptok::word && tk.text[0] != '.' &&
          !(tk.text[0] >= '0' && tk.text[0] <= '9')) {
        if (!last_word.empty()) {
          if (!cur.empty())
            cur += ' ';
          cur += last_word;
        }
        last_word = tk.text;
        continue;
      }
      if (!cur.empty())
        cur += ' ';
      cur.append(tk.text);
    }
    flush();
    return types;
  }

  bool read_function(op_node& fn) {
    const ptok& kw = next();
    fn.name = kw.text == ".entry" ? "ptx.entry" : "ptx.func";
    fn.line = kw.line;
    regs_.clear();
    labels_.clear();
    params_.clear();
    vars_.clear();
    std::vector<std::string_view> ret_names, param_names;
    std::vector<std::string> ret_types;
    if (peek().is('('))
      ret_types = read_params(ret_names);
    if (peek().kind != ptok::word)
      fail(peek().line,
           "expected a function name after `" + std::string(kw.text) + "`");
    fn.symbol = keep(next().text);
    std::vector<std::string> param_types;
    if (peek().is('('))
      param_types = read_params(param_names);
    for (std::size_t k = 0; k < param_names.size(); ++k)
      params_[param_names[k]] = "param" + std::to_string(k);
    for (std::size_t k = 0; k < ret_names.size(); ++k)
      params_[ret_names[k]] = "retval" + std::to_string(k);
    std::string types = "(";
    for (std::size_t k = 0; k < param_types.size(); ++k)
      types += (k ? ", " : "") + param_types[k];
    types += ")";
    if (!ret_types.empty()) {
      types += " -> (";
      for (std::size_t k = 0; k < ret_types.size(); ++k)
        types += (k ? ", " : "") + ret_types[k];
      types += ")";
    }
    fn.types = keep(types);
    // Performance directives up to the body.
    while (!peek().is('{') && !peek().is(';')) {
      const ptok& tk = peek();
      if (tk.kind == ptok::eof)
        fail(fn.line, "function `" + std::string(fn.symbol) + "` has no body");
      if (tk.kind == ptok::word && tk.text[0] == '.') {
        std::string key(tk.text.substr(1));
        next();
        std::string value;
        while (peek().kind == ptok::word && peek().text[0] != '.') {
          value += std::string(next().text);
          if (peek().is(',')) {
            value += ',';
            next();
          }
        }
        fn.attrs.push_back({key, value});
        continue;
      }
      next();
    }
    if (peek().is(';')) {
      next();
      return false; // a prototype
    }
    region body;
    body.blocks.emplace_back();
    std::unordered_map<std::string, std::size_t> reg_counts;
    read_body(fn, body, reg_counts, 0);
    for (auto& [type, count] : reg_counts)
      fn.attrs.push_back({"reg" + type, std::to_string(count)});
    fn.regions.push_back(std::move(body));
    return true;
  }

  void new_block(region& body) {
    if (!body.blocks.back().ops.empty())
      body.blocks.emplace_back();
  }

  void read_body(op_node& fn, region& body,
                 std::unordered_map<std::string, std::size_t>& reg_counts,
                 int depth) {
    if (depth > max_scope_depth)
      fail(peek().line, "scopes nested deeper than " +
                            std::to_string(max_scope_depth) + " levels");
    std::uint32_t open_line = peek().line;
    next(); // {
    for (;;) {
      const ptok& tk = peek();
      if (tk.kind == ptok::eof)
        fail(open_line, "body of `" + std::string(fn.symbol) +
                            "` is not closed: missing `}`");
      if (tk.is('}')) {
        next();
        return;
      }
      if (tk.is('{')) {
        read_body(fn, body, reg_counts, depth + 1);
        continue;
      }
      if (tk.is(';')) {
        next();
        continue;
      }
      if (tk.kind == ptok::word && peek(1).is(':') && tk.text[0] != '.') {
        labels_.insert(tk.text);
        new_block(body);
        next();
        next();
        continue;
      }
      if (tk.kind == ptok::word && tk.text[0] == '.') {
        read_directive(body, reg_counts);
        continue;
      }
      read_instruction(body);
    }
  }

  void
  read_directive(region& body,
                 std::unordered_map<std::string, std::size_t>& reg_counts) {
    const ptok& d = peek();
    if (d.text == ".loc" || d.text == ".file") {
      skip_line();
      return;
    }
    if (d.text == ".reg") {
      next();
      std::string type;
      while (peek().kind == ptok::word && peek().text[0] == '.') {
        if (peek().text != ".v2" && peek().text != ".v4")
          type = std::string(peek().text);
        next();
      }
      std::size_t count = 0;
      while (!peek().is(';') && peek().kind != ptok::eof) {
        const ptok& tk = next();
        if (tk.is('<') && peek().kind == ptok::word) {
          auto n = std::strtoull(std::string(next().text).c_str(), nullptr, 10);
          // `%r<33>` declares 33 registers; the name was counted as one.
          count += n > 0 ? static_cast<std::size_t>(n) - 1 : 0;
        } else if (tk.kind == ptok::word) {
          ++count;
        }
      }
      next();
      reg_counts[type] += count;
      return;
    }
    if (d.text == ".shared" || d.text == ".local" || d.text == ".global" ||
        d.text == ".const") {
      op_node decl;
      decl.name = keep("decl" + std::string(d.text));
      decl.line = d.line;
      next();
      std::string syntax;
      while (!peek().is(';') && peek().kind != ptok::eof) {
        const ptok& tk = next();
        if (tk.kind == ptok::word && tk.text[0] != '.' &&
            !(tk.text[0] >= '0' && tk.text[0] <= '9') && decl.symbol.empty()) {
          decl.symbol = keep(tk.text);
          vars_.insert(tk.text);
          syntax += " @";
          continue;
        }
        if (tk.kind == ptok::word && tk.text[0] == '.')
          decl.attrs.push_back({std::string(tk.text.substr(1)), ""});
        syntax += (syntax.empty() || tk.is('[') || tk.is(']') ? "" : " ");
        syntax.append(tk.text);
      }
      next();
      decl.syntax = keep(syntax);
      body.blocks.back().ops.push_back(std::move(decl));
      return;
    }
    // Other directives (.pragma, .maxnreg inside bodies, ...).
    while (!peek().is(';') && !peek().is('}') && peek().kind != ptok::eof) {
      if (peek().line_start && peek().line != d.line)
        return;
      next();
    }
    if (peek().is(';'))
      next();
  }

  std::string operand_text(std::string_view w) {
    if (w[0] == '%')
      return special_register(w) ? std::string(w) : std::string("%");
    if (auto it = params_.find(w); it != params_.end())
      return it->second;
    if (vars_.count(w))
      return "@";
    if (w[0] == '$' || labels_.count(w))
      return "$L";
    return std::string(w);
  }

  void read_instruction(region& body) {
    op_node op;
    auto& uses = uses_;
    auto& defs = defs_;
    uses.clear();
    defs.clear();
    const ptok& first = peek();
    op.line = first.line;
    std::string pred;
    if (first.is('@')) {
      next();
      pred = "@";
      if (peek().is('!')) {
        next();
        pred = "@!";
      }
      if (peek().kind == ptok::word) {
        uses.push_back(reg(peek().text));
        next();
      }
      op.attrs.push_back({"pred", pred});
    }
    if (peek().kind != ptok::word) {
      if (notes_.size() < 200)
        notes_.push_back(std::string(file_) + ":" +
                         std::to_string(peek().line) + ": unexpected `" +
                         std::string(peek().text) +
                         "` in a function body; "
                         "skipped to `;`");
      while (!peek().is(';') && !peek().is('}') && peek().kind != ptok::eof)
        next();
      if (peek().is(';'))
        next();
      return;
    }
    op.name = keep(next().text);
    const bool dest = !no_dest(op.name);
    const bool inout = op.name.rfind("wgmma.mma_async", 0) == 0 ||
                       op.name.rfind("atom", 0) == 0;
    std::string syntax = pred.empty() ? "" : pred + "% ";
    int group = 0; // operand index at the top level
    int depth = 0;
    std::string_view target;
    while (!peek().is(';')) {
      const ptok& tk = peek();
      if (tk.kind == ptok::eof || (tk.is('}') && depth == 0))
        break; // a missing `;` ends the instruction at the scope's end
      next();
      if (tk.is('{') || tk.is('[') || tk.is('(')) {
        ++depth;
      } else if (tk.is('}') || tk.is(']') || tk.is(')')) {
        --depth;
      } else if (tk.is(',') && depth == 0) {
        ++group;
      }
      if (tk.kind == ptok::word) {
        auto text = operand_text(tk.text);
        if (text == "%") {
          auto v = reg(tk.text);
          if (group == 0 && dest) {
            defs.push_back(v);
            if (inout)
              uses.push_back(v);
          } else {
            uses.push_back(v);
          }
        }
        if (text == "$L")
          target = tk.text;
        syntax += text;
      } else {
        syntax.append(tk.text);
        if (tk.is(','))
          syntax += ' ';
      }
    }
    if (peek().is(';'))
      next();
    op.syntax = keep(syntax);
    op.uses = storage_.ids(uses);
    op.defs = storage_.ids(defs);
    if (!target.empty() && op.name.rfind("bra", 0) == 0 &&
        labels_.count(target))
      op.attrs.push_back({"backward", ""});
    const bool ends = ends_block(op.name);
    body.blocks.back().ops.push_back(std::move(op));
    if (ends)
      body.blocks.emplace_back();
  }

  const std::vector<ptok>& t_;
  std::size_t i_ = 0;
  std::string_view file_;
  std::vector<std::string>& notes_;
  tree_storage& storage_;
  std::vector<value_id> uses_, defs_; // one instruction's, reused
  // Keys are views into the token text, alive while reading.
  std::unordered_map<std::string_view, value_id> regs_;
  value_id next_value_ = 0;
  std::unordered_set<std::string_view> labels_;
  std::unordered_map<std::string_view, std::string> params_;
  std::unordered_set<std::string_view> vars_;
};

} // namespace

ir_file parse_ptx(std::string_view text, std::string_view name) {
  ir_file file;
  file.name = std::string(name);
  file.format = ir_format::ptx;
  auto storage = std::make_shared<tree_storage>();
  file.storage = storage;
  ir_module mod;
  auto toks = lex_ptx(text);
  ptx_reader r(toks, name, mod.notes, *storage);
  try {
    mod.ops = r.read();
  } catch (const ptx_failure& e) {
    mod.ops.clear();
    mod.error = e.what();
    mod.error_line = e.line;
  }
  // Empty trailing blocks carry nothing to compare.
  for (auto& fn : mod.ops)
    for (auto& reg : fn.regions)
      while (reg.blocks.size() > 1 && reg.blocks.back().ops.empty())
        reg.blocks.pop_back();
  file.modules.push_back(std::move(mod));
  return file;
}

} // namespace kport::ir

#include "ir/diff_report.hpp"

#include "core/json_quote.hpp"

#include <cstdio>
#include <sstream>

namespace kport::ir {

namespace {

const char* mark(edit_kind k) {
  switch (k) {
  case edit_kind::same:
    return "=";
  case edit_kind::insert:
    return "+";
  case edit_kind::remove:
    return "-";
  case edit_kind::change:
    return "~";
  }
  return "?";
}

const char* kind_name(edit_kind k) {
  switch (k) {
  case edit_kind::same:
    return "same";
  case edit_kind::insert:
    return "insert";
  case edit_kind::remove:
    return "remove";
  case edit_kind::change:
    return "change";
  }
  return "same";
}

std::string json_string(std::string_view s) {
  return core::json_quote(s);
}

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += ", ";
    out += json_string(v[i]);
  }
  return out + "]";
}

std::string loc(std::size_t a, std::size_t b) {
  std::string out = "a:" + (a ? std::to_string(a) : std::string("-"));
  out += " b:" + (b ? std::to_string(b) : std::string("-"));
  return out;
}

std::string edit_text(const edit_line& e) {
  if (e.elided)
    return std::string(static_cast<std::size_t>(e.depth) * 2, ' ') + "  ... " +
           std::to_string(e.elided) + " unchanged ops";
  std::string pad(static_cast<std::size_t>(e.depth) * 2, ' ');
  std::string out = pad + mark(e.kind) + " ";
  switch (e.kind) {
  case edit_kind::same:
  case edit_kind::remove:
    out += e.text_a;
    break;
  case edit_kind::insert:
    out += e.text_b;
    break;
  case edit_kind::change:
    out += e.text_a + "\n" + pad + "  -> " + e.text_b;
    for (const auto& d : e.attr_diffs)
      out += "\n" + pad + "     " + d;
    break;
  }
  return out;
}

void append_lines(std::vector<std::string>& out, const std::string& text) {
  std::size_t b = 0;
  while (b <= text.size()) {
    auto e = text.find('\n', b);
    if (e == std::string::npos)
      e = text.size();
    out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
}

} // namespace

const char* to_string(verdict v) noexcept {
  switch (v) {
  case verdict::pass:
    return "PASS";
  case verdict::pass_with_notes:
    return "PASS_WITH_NOTES";
  case verdict::fail:
    return "FAIL";
  }
  return "FAIL";
}

std::string diff_report::to_text() const {
  std::ostringstream o;
  o << "ir-diff " << name_a << " vs " << name_b << " (policy " << policy_name
    << ")\n";
  o << "verdict: " << to_string(overall) << "\n";
  for (const auto& f : failures)
    o << "failure: " << f << "\n";
  for (const auto& n : notes)
    o << "note: " << n << "\n";
  for (const auto& n : info)
    o << "info: " << n << "\n";
  for (const auto& fn : functions) {
    o << "\nfunction " << fn.name_a << " <-> " << fn.name_b << ": "
      << to_string(fn.result) << "\n";
    for (const auto& f : fn.failures)
      o << "  failure: " << f << "\n";
    for (const auto& n : fn.notes)
      o << "  note: " << n << "\n";
    for (const auto& n : fn.info)
      o << "  info: " << n << "\n";
    o << "  op counts by class:\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "    %-36s %-10s %7s %7s\n", "class",
                  "severity", "a", "b");
    o << buf;
    for (const auto& c : fn.counts) {
      if (c.level == severity::info && c.a == c.b)
        continue; // unchanged info rows only add noise to the text form
      std::snprintf(buf, sizeof buf, "    %-36s %-10s %7zu %7zu%s\n",
                    c.name.c_str(), to_string(c.level), c.a, c.b,
                    c.a != c.b ? "  *" : "");
      o << buf;
    }
    if (fn.first.found) {
      o << "  first divergence (" << loc(fn.first.line_a, fn.first.line_b)
        << "): " << kind_name(fn.first.kind) << "\n";
      for (const auto& c : fn.first.context)
        o << "      " << c << "\n";
      if (!fn.first.text_a.empty())
        o << "    a> " << fn.first.text_a << "\n";
      if (!fn.first.text_b.empty())
        o << "    b> " << fn.first.text_b << "\n";
    } else {
      o << "  no divergence: " << fn.aligned << " ops aligned\n";
    }
    if (!fn.edits.empty()) {
      o << "  edit script (" << fn.aligned << " aligned, " << fn.edit_count
        << " edits):\n";
      for (const auto& e : fn.edits)
        o << "  " << edit_text(e) << "\n";
    }
  }
  return o.str();
}

std::string diff_report::to_json() const {
  std::ostringstream o;
  o << "{\n  \"verdict\": " << json_string(to_string(overall))
    << ",\n  \"a\": " << json_string(name_a)
    << ",\n  \"b\": " << json_string(name_b)
    << ",\n  \"policy\": " << json_string(policy_name)
    << ",\n  \"failures\": " << json_list(failures)
    << ",\n  \"notes\": " << json_list(notes)
    << ",\n  \"info\": " << json_list(info) << ",\n  \"functions\": [";
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const auto& fn = functions[i];
    o << (i ? ",\n" : "\n") << "    {\"a\": " << json_string(fn.name_a)
      << ", \"b\": " << json_string(fn.name_b)
      << ", \"verdict\": " << json_string(to_string(fn.result))
      << ",\n     \"failures\": " << json_list(fn.failures)
      << ",\n     \"notes\": " << json_list(fn.notes)
      << ",\n     \"info\": " << json_list(fn.info)
      << ",\n     \"aligned\": " << fn.aligned
      << ", \"edit_count\": " << fn.edit_count << ",\n     \"counts\": [";
    for (std::size_t k = 0; k < fn.counts.size(); ++k) {
      const auto& c = fn.counts[k];
      o << (k ? ", " : "") << "{\"class\": " << json_string(c.name)
        << ", \"severity\": " << json_string(to_string(c.level))
        << ", \"tolerance\": " << c.tolerance << ", \"a\": " << c.a
        << ", \"b\": " << c.b << "}";
    }
    o << "],\n     \"first_divergence\": ";
    if (fn.first.found) {
      o << "{\"kind\": " << json_string(kind_name(fn.first.kind))
        << ", \"a_line\": " << fn.first.line_a
        << ", \"b_line\": " << fn.first.line_b
        << ", \"a\": " << json_string(fn.first.text_a)
        << ", \"b\": " << json_string(fn.first.text_b)
        << ", \"context\": " << json_list(fn.first.context) << "}";
    } else {
      o << "null";
    }
    o << ",\n     \"edits\": [";
    for (std::size_t k = 0; k < fn.edits.size(); ++k) {
      const auto& e = fn.edits[k];
      o << (k ? ",\n       " : "\n       ");
      if (e.elided) {
        o << "{\"kind\": \"elided\", \"depth\": " << e.depth
          << ", \"count\": " << e.elided << "}";
        continue;
      }
      o << "{\"kind\": " << json_string(kind_name(e.kind))
        << ", \"depth\": " << e.depth << ", \"a_line\": " << e.line_a
        << ", \"b_line\": " << e.line_b << ", \"a\": " << json_string(e.text_a)
        << ", \"b\": " << json_string(e.text_b)
        << ", \"attributes\": " << json_list(e.attr_diffs) << "}";
    }
    o << "]}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

std::string diff_report::excerpt() const {
  std::vector<std::string> lines;
  lines.push_back("structure: " + std::string(to_string(overall)) + " (" +
                  name_a + " vs " + name_b + ", policy " + policy_name + ")");
  for (const auto& f : failures)
    lines.push_back("failure: " + f);
  for (const auto& fn : functions) {
    if (fn.result == verdict::pass)
      continue;
    lines.push_back(fn.name_a + " <-> " + fn.name_b + ": " +
                    to_string(fn.result));
    for (const auto& f : fn.failures)
      lines.push_back("  failure: " + f);
    for (const auto& n : fn.notes)
      lines.push_back("  note: " + n);
    if (fn.first.found) {
      lines.push_back("  first divergence (" +
                      loc(fn.first.line_a, fn.first.line_b) + "):");
      for (const auto& c : fn.first.context)
        lines.push_back("      " + c);
      if (!fn.first.text_a.empty())
        lines.push_back("    a> " + fn.first.text_a);
      if (!fn.first.text_b.empty())
        lines.push_back("    b> " + fn.first.text_b);
    }
    for (const auto& e : fn.edits)
      if (e.kind != edit_kind::same && !e.elided)
        append_lines(lines, "  " + edit_text(e));
  }
  for (const auto& n : notes)
    lines.push_back("note: " + n);
  if (lines.size() > max_excerpt_lines && max_excerpt_lines > 0) {
    auto more = lines.size() - (max_excerpt_lines - 1);
    lines.resize(max_excerpt_lines - 1);
    lines.push_back("... " + std::to_string(more) + " more lines");
  }
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

} // namespace kport::ir

#include "messages/schema.hpp"

#include "core/atomic_file.hpp"

#include <flatbuffers/flexbuffers.h>
#include <flatbuffers/idl.h>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>

namespace kport::msg {
struct embedded_schema {
  const char* name;
  const char* text;
};
extern const embedded_schema embedded_schemas[];
extern const std::size_t embedded_schema_count;
} // namespace kport::msg

namespace kport::messages {

namespace {

const msg::embedded_schema* find_schema(std::string_view name) {
  for (std::size_t i = 0; i < msg::embedded_schema_count; ++i)
    if (name == msg::embedded_schemas[i].name)
      return &msg::embedded_schemas[i];
  return nullptr;
}

std::string known_schemas() {
  std::string out;
  for (auto& n : schema_names())
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Parsers that have read one schema, kept for reuse. A schema parse costs
/// far more than a JSON parse, parsers are not thread-safe, and attempts run
/// on short-lived threads: so a shared pool, not a thread_local cache.
class parser_pool {
public:
  /// A parser for `name`, taken from the pool or made.
  result<std::unique_ptr<flatbuffers::Parser>> take(std::string_view name) {
    {
      std::lock_guard guard{mtx_};
      auto& free = free_[std::string{name}];
      if (!free.empty()) {
        auto p = std::move(free.back());
        free.pop_back();
        return p;
      }
    }
    auto* s = find_schema(name);
    if (!s)
      return fail(
          error_code::not_found,
          fmt::format("no schema `{}`; known: {}", name, known_schemas()));
    flatbuffers::IDLOptions opts;
    opts.strict_json = true;
    opts.output_default_scalars_in_json = true;
    opts.indent_step = 2;
    auto p = std::make_unique<flatbuffers::Parser>(opts);
    auto file = std::string{name} + ".fbs";
    if (!p->Parse(s->text, nullptr, file.c_str()))
      return fail(error_code::internal,
                  fmt::format("embedded schema `{}` does not parse: {}", name,
                              p->error_));
    return p;
  }

  void give_back(std::string_view name,
                 std::unique_ptr<flatbuffers::Parser> p) {
    p->error_.clear();
    std::lock_guard guard{mtx_};
    free_[std::string{name}].push_back(std::move(p));
  }

private:
  std::mutex mtx_;
  std::map<std::string, std::vector<std::unique_ptr<flatbuffers::Parser>>>
      free_;
};

parser_pool& pool() {
  static parser_pool instance;
  return instance;
}

/// A parser on loan from the pool for one call.
class parser_lease {
public:
  static result<parser_lease> take(std::string_view name) {
    auto p = pool().take(name);
    if (!p)
      return std::move(p).err();
    return parser_lease{std::string{name}, std::move(*p)};
  }
  parser_lease(parser_lease&&) = default;
  ~parser_lease() {
    if (p_)
      pool().give_back(name_, std::move(p_));
  }
  flatbuffers::Parser& operator*() { return *p_; }
  flatbuffers::Parser* operator->() { return p_.get(); }

private:
  parser_lease(std::string name, std::unique_ptr<flatbuffers::Parser> p)
      : name_(std::move(name))
      , p_(std::move(p)) {}
  std::string name_;
  std::unique_ptr<flatbuffers::Parser> p_;
};

std::string enum_names(const flatbuffers::EnumDef& e) {
  std::string out;
  for (auto* v : e.Vals())
    if (v->name != "UNSET")
      out += (out.empty() ? "" : ", ") + v->name;
  return out;
}

bool is_enum_scalar(const flatbuffers::Type& t) {
  return t.enum_def && !t.enum_def->is_union &&
         flatbuffers::IsScalar(t.base_type);
}

/// Walks the schema-less parse of the JSON beside the schema: catches what
/// flatbuffers::Parser lets through (numbers for enums, absent verdicts).
result<void> check_literals(const flatbuffers::StructDef& table,
                            flexbuffers::Reference value,
                            const std::string& where) {
  if (!value.IsMap())
    return {};
  auto map = value.AsMap();
  for (auto* field : table.fields.vec) {
    auto v = map[field->name.c_str()];
    auto path = where.empty() ? field->name : where + "." + field->name;
    const auto& type = field->value.type;
    if (is_enum_scalar(type)) {
      bool needs_literal = type.enum_def->Lookup("UNSET") != nullptr;
      if (v.IsNull()) {
        if (needs_literal)
          return fail(error_code::schema,
                      fmt::format("field `{}` is missing: write one of {}",
                                  path, enum_names(*type.enum_def)));
        continue;
      }
      if (!v.IsString())
        return fail(error_code::schema,
                    fmt::format("field `{}` must be an enum name (one of {}), "
                                "not a number",
                                path, enum_names(*type.enum_def)));
      if (needs_literal && v.AsString().str() == "UNSET")
        return fail(error_code::schema,
                    fmt::format("field `{}` is UNSET: write one of {}", path,
                                enum_names(*type.enum_def)));
    } else if (type.base_type == flatbuffers::BASE_TYPE_STRUCT &&
               type.struct_def && !v.IsNull()) {
      if (auto r = check_literals(*type.struct_def, v, path); !r)
        return r;
    } else if (type.base_type == flatbuffers::BASE_TYPE_VECTOR &&
               v.IsVector()) {
      auto vec = v.AsVector();
      auto elem = type.VectorType();
      for (std::size_t i = 0; i < vec.size(); ++i) {
        auto item = fmt::format("{}[{}]", path, i);
        if (is_enum_scalar(elem) && !vec[i].IsString())
          return fail(error_code::schema,
                      fmt::format("`{}` must be an enum name (one of {}), "
                                  "not a number",
                                  item, enum_names(*elem.enum_def)));
        if (elem.base_type == flatbuffers::BASE_TYPE_STRUCT && elem.struct_def)
          if (auto r = check_literals(*elem.struct_def, vec[i], item); !r)
            return r;
      }
    }
  }
  return {};
}

} // namespace

std::vector<std::string> schema_names() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < msg::embedded_schema_count; ++i)
    if (std::string_view{msg::embedded_schemas[i].name} != "common")
      out.emplace_back(msg::embedded_schemas[i].name);
  return out;
}

result<std::string_view> schema_text(std::string_view name) {
  if (auto* s = find_schema(name); s && name != "common")
    return std::string_view{s->text};
  return fail(error_code::not_found,
              fmt::format("no schema `{}`; known: {}", name, known_schemas()));
}

result<std::string> artifact_from_json(std::string_view schema,
                                       std::string_view json,
                                       std::string_view source_name) {
  auto p = parser_lease::take(schema);
  if (!p)
    return std::move(p).err();
  auto& parser = **p;
  std::string text{json};
  std::string source{source_name};
  if (!parser.ParseJson(text.c_str(), source.c_str())) {
    auto msg = parser.error_;
    parser.error_.clear();
    return fail(error_code::schema,
                fmt::format("{} (schema `{}`)", msg, schema));
  }
  std::string binary{
      reinterpret_cast<const char*>(parser.builder_.GetBufferPointer()),
      parser.builder_.GetSize()};
  flexbuffers::Builder flex;
  if (!parser.ParseFlexBuffer(text.c_str(), source.c_str(), &flex)) {
    auto msg = parser.error_;
    parser.error_.clear();
    return fail(error_code::schema, msg);
  }
  auto root = flexbuffers::GetRoot(flex.GetBuffer());
  if (auto r = check_literals(*parser.root_struct_def_, root, ""); !r)
    return std::move(r).err().with_context(source);
  return binary;
}

result<std::string> artifact_to_json(std::string_view schema,
                                     std::string_view binary) {
  auto p = parser_lease::take(schema);
  if (!p)
    return std::move(p).err();
  auto& parser = **p;
  if (!parser.file_identifier_.empty() &&
      !flatbuffers::BufferHasIdentifier(binary.data(),
                                        parser.file_identifier_.c_str()))
    return fail(error_code::schema,
                fmt::format("buffer is not a `{}` artifact (identifier {})",
                            schema, parser.file_identifier_));
  std::string out;
  if (!flatbuffers::GenerateText(parser, binary.data(), &out))
    return fail(error_code::schema,
                fmt::format("cannot render `{}` artifact as JSON", schema));
  return out;
}

result<std::vector<std::string>> verdict_literals(std::string_view schema) {
  auto p = parser_lease::take(schema);
  if (!p)
    return std::move(p).err();
  auto* root = (*p)->root_struct_def_;
  auto* field = root ? root->fields.Lookup("verdict") : nullptr;
  if (!field || !is_enum_scalar(field->value.type))
    return fail(error_code::config,
                fmt::format("schema `{}` has no `verdict` enum", schema));
  std::vector<std::string> out;
  for (auto* v : field->value.type.enum_def->Vals())
    if (v->name != "UNSET")
      out.push_back(v->name);
  return out;
}

result<std::string> load_artifact_file(std::string_view schema,
                                       const std::string& path) {
  auto text = core::read_file(path, 16u << 20);
  if (!text)
    return std::move(text).err();
  return artifact_from_json(schema, *text, path);
}

} // namespace kport::messages

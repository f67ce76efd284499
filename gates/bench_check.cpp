#include "gates/bench_check.hpp"

#include "core/atomic_file.hpp"
#include "messages/bench_check_generated.h"
#include "messages/schema.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace {

template<class T>
std::vector<T> values(const flatbuffers::Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>{};
}

tensor_digest digest_of(const msg::TensorDigest& d) {
  tensor_digest out;
  out.shape = values(d.shape());
  out.dtype = d.dtype() ? d.dtype()->str() : "";
  out.numel = d.numel();
  out.sum = d.sum();
  out.abs_sum = d.abs_sum();
  out.nan = d.nan();
  out.inf = d.inf();
  out.sample_index = values(d.sample_index());
  out.sample = values(d.sample());
  out.checksum = d.checksum();
  out.stride = d.stride();
  out.offset = d.offset();
  return out;
}

std::vector<tensor_digest> digests_of(
    const flatbuffers::Vector<flatbuffers::Offset<msg::TensorDigest>>* v) {
  std::vector<tensor_digest> out;
  if (v)
    for (const auto* d : *v)
      out.push_back(digest_of(*d));
  return out;
}

} // namespace

result<bench_checks> read_bench_checks(const std::string& path) {
  bench_checks out;
  out.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return out;
  // A check line per config: a few KiB even for many inputs and iterations.
  auto text = core::read_file(path, 64u << 20);
  if (!text)
    return std::move(text).err();
  out.present = true;
  std::size_t pos = 0;
  for (int line = 1; pos < text->size(); ++line) {
    auto nl = text->find('\n', pos);
    auto end = nl == std::string::npos ? text->size() : nl;
    std::string_view json{text->data() + pos, end - pos};
    pos = end + 1;
    if (json.find_first_not_of(" \t\r") == std::string_view::npos)
      continue;
    auto bin = messages::artifact_from_json("bench_check", json,
                                            fmt::format("{}:{}", path, line));
    if (!bin)
      return std::move(bin).err();
    const auto* c = msg::GetBenchCheck(bin->data());
    config_check cc;
    cc.config = c->config()->str();
    cc.bench = c->bench() ? c->bench()->str() : "";
    cc.seed = c->seed();
    cc.outputs = digests_of(c->outputs());
    if (const auto* inputs = c->inputs())
      for (const auto* i : *inputs)
        cc.inputs.push_back(
            {i->iteration(), digests_of(i->before()), digests_of(i->after())});
    if (const auto* calls = c->calls())
      for (const auto* o : *calls)
        cc.calls.push_back({o->iteration(), digests_of(o->outputs())});
    cc.round_seed = c->round_seed();
    // Tampering seen on any line of a config stays: a later line must not
    // erase it.
    if (auto prev = out.configs.find(cc.config); prev != out.configs.end())
      cc.tampered = std::move(prev->second.tampered);
    if (const auto* tampered = c->tampered())
      for (const auto* t : *tampered)
        cc.tampered.push_back({t->what() ? t->what()->str() : "",
                               t->detail() ? t->detail()->str() : "",
                               t->iteration()});
    cc.line = line;
    out.configs[cc.config] = std::move(cc);
  }
  return out;
}

} // namespace kport::gates

#include "evidence/artifact_store.hpp"

#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
#include "messages/schema.hpp"

namespace kport::evidence {

result<artifact_pair> render_artifact(std::string_view schema,
                                      std::string binary) {
  auto json = messages::artifact_to_json(schema, binary);
  if (!json)
    return std::move(json).err();
  return artifact_pair{std::move(binary), std::move(*json)};
}

result<void> store_artifact(const std::string& base, const artifact_pair& a) {
  if (auto r = core::write_file_atomic(bundle::binary_of(base), a.binary); !r)
    return r;
  return core::write_file_atomic(base + ".json", a.json);
}

result<void> store_artifact(const std::string& base, std::string_view schema,
                            const std::string& binary) {
  auto a = render_artifact(schema, binary);
  if (!a)
    return std::move(a).err();
  return store_artifact(base, *a);
}

} // namespace kport::evidence

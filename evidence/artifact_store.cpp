#include "evidence/artifact_store.hpp"

#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
#include "messages/schema.hpp"

namespace kport::evidence {

result<void> store_artifact(const std::string& base, std::string_view schema,
                            const std::string& binary) {
  auto json = messages::artifact_to_json(schema, binary);
  if (!json)
    return std::move(json).err();
  if (auto r = core::write_file_atomic(bundle::binary_of(base), binary); !r)
    return r;
  return core::write_file_atomic(base + ".json", *json);
}

} // namespace kport::evidence

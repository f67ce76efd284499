#include "runtime/artifact_store.hpp"

#include "runtime/atomic_file.hpp"
#include "runtime/schema.hpp"

namespace kport::runtime {

result<void> store_artifact(const std::string& base, std::string_view schema,
                            const std::string& binary) {
  auto json = artifact_to_json(schema, binary);
  if (!json)
    return std::move(json).err();
  if (auto r = write_file_atomic(base + ".bin", binary); !r)
    return r;
  return write_file_atomic(base + ".json", *json);
}

} // namespace kport::runtime

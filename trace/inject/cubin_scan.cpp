#include "trace/inject/cubin_scan.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

namespace kport::trace::inject {

namespace {

// The ELF64 layout, read field by field (the image may be unaligned).
template<class T>
bool read(const unsigned char* base, std::size_t size, std::size_t at, T& out) {
  if (at > size || size - at < sizeof(T))
    return false;
  std::memcpy(&out, base + at, sizeof(T));
  return true;
}

constexpr std::uint32_t sht_symtab = 2;
constexpr unsigned char stt_func = 2;
constexpr unsigned char sto_cuda_entry = 0x10;
constexpr std::size_t sym_size = 24;

/// The device runtime's launch entry points, by the parts of their names
/// every version so far shares (cudaLaunchDevice, __cudaCDP2LaunchDeviceV2,
/// __cuda_syscall_cnpv2LaunchDeviceV2; cudaGraphLaunch from the device): a
/// function of the runtime's (`cuda` or `__cuda`), never a kernel, so that
/// a kernel of the port whose name happens to hold the words is not one.
bool launches_from_device(std::string_view name, bool entry) {
  if (entry || !(name.starts_with("cuda") || name.starts_with("__cuda")))
    return false;
  return name.find("LaunchDevice") != std::string_view::npos ||
         name.find("GraphLaunch") != std::string_view::npos;
}

} // namespace

cubin_facts scan_cubin(const void* data, std::size_t size) {
  cubin_facts out;
  auto* p = static_cast<const unsigned char*>(data);
  if (!p || size < 64 ||
      std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      p[4] != 2 /* ELFCLASS64 */ || p[5] != 1 /* little endian */)
    return out;
  out.elf = true;
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0;
  if (!read(p, size, 0x28, shoff) || !read(p, size, 0x3A, shentsize) ||
      !read(p, size, 0x3C, shnum) || shentsize < 64)
    return out;
  auto section = [&](std::size_t i, std::uint32_t& type, std::uint64_t& off,
                     std::uint64_t& len, std::uint32_t& link) {
    std::size_t at = shoff + i * shentsize;
    return read(p, size, at + 4, type) && read(p, size, at + 0x18, off) &&
           read(p, size, at + 0x20, len) && read(p, size, at + 0x28, link);
  };
  // Calls f(name, entry) for every symbol of every symbol table.
  auto each_symbol = [&](auto&& f) {
    for (std::size_t i = 0; i < shnum; ++i) {
      std::uint32_t type = 0, link = 0, str_type = 0, str_link = 0;
      std::uint64_t off = 0, len = 0, str_off = 0, str_len = 0;
      if (!section(i, type, off, len, link) || type != sht_symtab)
        continue;
      if (link >= shnum ||
          !section(link, str_type, str_off, str_len, str_link) ||
          str_off > size || size - str_off < str_len || off > size ||
          size - off < len)
        continue;
      auto* strings = reinterpret_cast<const char*>(p + str_off);
      for (std::uint64_t s = 0; s + sym_size <= len; s += sym_size) {
        std::uint32_t name_at = 0;
        unsigned char info = 0, other = 0;
        read(p, size, off + s, name_at);
        read(p, size, off + s + 4, info);
        read(p, size, off + s + 5, other);
        if (name_at >= str_len)
          continue;
        std::string_view name{strings + name_at,
                              ::strnlen(strings + name_at, str_len - name_at)};
        f(name, (info & 0xF) == stt_func && (other & sto_cuda_entry));
      }
    }
  };
  each_symbol([&](std::string_view name, bool entry) {
    out.device_launch |= launches_from_device(name, entry);
  });
  // The kernels' names only for a module that launches from the device:
  // every other module (nearly all) costs no copy of its names at load.
  if (out.device_launch)
    each_symbol([&](std::string_view name, bool entry) {
      if (entry && out.entries.size() < max_entries)
        out.entries.emplace_back(name);
    });
  return out;
}

} // namespace kport::trace::inject

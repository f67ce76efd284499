#include "trace/inject/code_patch.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kport::trace::inject {

std::string patch_entry(void* target, const void* replacement) {
#if defined(__x86_64__)
  // movabs rax, imm64; jmp rax: 12 bytes, any distance. rax is neither an
  // argument nor callee-saved in the SysV ABI, so the replacement sees the
  // caller's arguments untouched.
  unsigned char code[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};
  Dl_info info{};
  void* entry = nullptr;
  bool found = ::dladdr1(target, &info, &entry, RTLD_DL_SYMENT) != 0;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  if (!found || !sym || info.dli_saddr != target)
    return "no symbol starts at the function's address";
  // The jump must not spill into the next function.
  if (sym->st_size < sizeof code)
    return std::string{info.dli_sname ? info.dli_sname : "the function"} +
           " is shorter than the jump";
  auto addr = reinterpret_cast<std::uint64_t>(replacement);
  std::memcpy(code + 2, &addr, sizeof addr);
  auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto at = reinterpret_cast<std::uintptr_t>(target);
  auto first = at & ~(page - 1);
  auto last = (at + sizeof code + page - 1) & ~(page - 1);
  auto* base = reinterpret_cast<void*>(first);
  if (::mprotect(base, last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return std::string{"mprotect: "} + std::strerror(errno);
  std::memcpy(target, code, sizeof code);
  ::mprotect(base, last - first, PROT_READ | PROT_EXEC);
  __builtin___clear_cache(static_cast<char*>(target),
                          static_cast<char*>(target) + sizeof code);
  return {};
#else
  (void)target;
  (void)replacement;
  return "the guard patches x86-64 code only";
#endif
}

} // namespace kport::trace::inject

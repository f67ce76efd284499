// NVTX side of the injection library: NVTX_INJECTION64_PATH makes the
// NVTX3 headers in the process call InitializeInjectionNvtx2, which fills
// NVTX's callback tables with the functions below. Needs no GPU and no CUDA.

#include "trace/inject/lease_client.hpp"
#include "trace/inject/recorder.hpp"

// A tool implements the NVTX API rather than calling it (nvToolsExt.h).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cwchar>
#include <string>

namespace kport::trace::inject {
namespace {

// wchar_t is UTF-32 on Linux; wcstombs would depend on the process locale.
std::string utf8(const wchar_t* text) {
  std::string out;
  if (!text)
    return out;
  for (; *text; ++text) {
    auto c = static_cast<std::uint32_t>(*text);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | ((c >> 18) & 0x07)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::string message_of(const nvtxEventAttributes_t* attr) {
  if (!attr)
    return {};
  switch (attr->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return attr->message.ascii ? attr->message.ascii : "";
  case NVTX_MESSAGE_TYPE_UNICODE:
    return utf8(attr->message.unicode);
  case NVTX_MESSAGE_TYPE_REGISTERED:
    // Only this library hands out string handles (intern_string).
    if (attr->message.registered)
      return *reinterpret_cast<const std::string*>(attr->message.registered);
    return {};
  default:
    return {};
  }
}

const domain_info* domain_of(nvtxDomainHandle_t d) {
  return reinterpret_cast<const domain_info*>(d);
}

// ---- core module (default domain) ----

int NVTX_API range_push_a(const char* message) {
  return push_range(message ? message : "", nullptr);
}
int NVTX_API range_push_w(const wchar_t* message) {
  return push_range(utf8(message), nullptr);
}
int NVTX_API range_push_ex(const nvtxEventAttributes_t* attr) {
  return push_range(message_of(attr), nullptr);
}
int NVTX_API range_pop() {
  return pop_range(nullptr);
}
nvtxRangeId_t NVTX_API range_start_a(const char* message) {
  return start_range(message ? message : "", nullptr);
}
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* message) {
  return start_range(utf8(message), nullptr);
}
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* attr) {
  return start_range(message_of(attr), nullptr);
}
void NVTX_API range_end(nvtxRangeId_t id) {
  end_range(id);
}

// Marks are not recorded; one name is the bench's word that its measured
// part is over (kport_bench.release_lease).
void NVTX_API mark_a(const char* message) {
  lease_at_mark(message ? message : "");
}
void NVTX_API mark_ex(const nvtxEventAttributes_t* attr) {
  lease_at_mark(message_of(attr));
}
void NVTX_API domain_mark_ex(nvtxDomainHandle_t,
                             const nvtxEventAttributes_t* attr) {
  lease_at_mark(message_of(attr));
}

// ---- core2 module (domains, registered strings; NVTX3 C++ uses these) ----

int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d,
                                  const nvtxEventAttributes_t* attr) {
  return push_range(message_of(attr), domain_of(d));
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) {
  return pop_range(domain_of(d));
}
nvtxRangeId_t NVTX_API
domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* attr) {
  return start_range(message_of(attr), domain_of(d));
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) {
  end_range(id);
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      const_cast<domain_info*>(intern_domain(name ? name : "")));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      const_cast<domain_info*>(intern_domain(utf8(name))));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {
  // Domains stay interned: ranges recorded in them still name them.
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t,
                                                     const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(
      const_cast<std::string*>(intern_string(text ? text : "")));
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t,
                                                     const wchar_t* text) {
  return reinterpret_cast<nvtxStringHandle_t>(
      const_cast<std::string*>(intern_string(utf8(text))));
}

template<class Fn>
void assign(NvtxFunctionTable table, unsigned int size, unsigned int cbid,
            Fn fn) {
  if (table && cbid < size && table[cbid])
    *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool fill_tables(NvtxGetExportTableFunc_t get_export_table) {
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(
      get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      !callbacks->GetModuleFunctionTable) {
    debug("NVTX export table has no callbacks");
    return false;
  }
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core,
                                         &core_size) ||
      !core) {
    debug("NVTX core module table unavailable");
    return false;
  }
  assign(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a);
  assign(core, core_size, NVTX_CBID_CORE_RangePushW, &range_push_w);
  assign(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
  assign(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop);
  assign(core, core_size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
  assign(core, core_size, NVTX_CBID_CORE_RangeStartW, &range_start_w);
  assign(core, core_size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
  assign(core, core_size, NVTX_CBID_CORE_RangeEnd, &range_end);
  assign(core, core_size, NVTX_CBID_CORE_MarkA, &mark_a);
  assign(core, core_size, NVTX_CBID_CORE_MarkEx, &mark_ex);

  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2,
                                        &core2_size) &&
      core2) {
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx,
           &domain_range_push_ex);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop,
           &domain_range_pop);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx,
           &domain_range_start_ex);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd,
           &domain_range_end);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA,
           &domain_register_string_a);
    assign(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW,
           &domain_register_string_w);
  } else {
    debug("NVTX core2 module table unavailable: domain ranges not recorded");
  }
  return true;
}

} // namespace
} // namespace kport::trace::inject

/// NVTX's entry point (NVTX_INJECTION64_PATH). Returning 0 makes NVTX turn
/// every call into a no-op and unload the library: that is the path taken
/// when KPORT_TRACE_DIR is unset, so an untraced process pays nothing.
extern "C" __attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  using namespace kport::trace::inject;
  if (!tracing_enabled() || !get_export_table)
    return 0;
  // Tables first: on failure NVTX unloads the library, which must not have
  // started its writer thread by then.
  if (!fill_tables(get_export_table))
    return 0;
  ensure_started();
  set_nvtx_active();
  debug("NVTX injection initialised");
  return 1;
}

#include "kport/error.hpp"

namespace kport {

const char* to_string(error_code code) noexcept {
  switch (code) {
  case error_code::usage:
    return "usage";
  case error_code::config:
    return "config";
  case error_code::schema:
    return "schema";
  case error_code::io:
    return "io";
  case error_code::process:
    return "process";
  case error_code::agent:
    return "agent";
  case error_code::parse:
    return "parse";
  case error_code::busy:
    return "busy";
  case error_code::not_found:
    return "not_found";
  case error_code::cancelled:
    return "cancelled";
  case error_code::internal:
    return "internal";
  }
  return "internal";
}

int exit_status(const error& err) noexcept {
  return err.code == error_code::usage || err.code == error_code::config ? 2
                                                                         : 1;
}

} // namespace kport

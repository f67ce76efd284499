#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kport {

/// What went wrong, in words a user can act on; the code picks the exit status.
enum class error_code {
  usage,     ///< bad command line
  config,    ///< bad config, spec or pipeline table (file:line: key ...)
  schema,    ///< an artifact that does not match its schema
  io,        ///< a file or folder that could not be read or written
  process,   ///< a child process that could not be started or waited on
  agent,     ///< an agent that failed (exit, timeout, bad result)
  parse,     ///< input text (IR, trace, test log) that could not be read
  busy,      ///< admission refused: too many jobs queued
  not_found, ///< a job, stage or device that does not exist
  cancelled, ///< the work was cancelled
  internal,  ///< a bug in kport: please report it
};

/// Returns the lower-case name of a code, as printed in messages and JSON.
const char* to_string(error_code code) noexcept;

/// The one error type of kport: a code and a message that says what to do.
struct error {
  error_code code = error_code::internal;
  std::string message;

  /// Prefixes the message with context, e.g. the file being read.
  error& with_context(const std::string& where) {
    message = where + ": " + message;
    return *this;
  }
};

/// Exit status of the CLI for an error: 2 for usage and config errors, else 1.
int exit_status(const error& err) noexcept;

/// A value or the error that prevented it.
template<class T>
class result {
public:
  result(T value)
      : data_(std::move(value)) {}
  result(error err)
      : data_(std::move(err)) {}

  explicit operator bool() const noexcept { return data_.index() == 0; }
  bool has_value() const noexcept { return data_.index() == 0; }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const error& err() const& { return std::get<1>(data_); }
  error&& err() && { return std::get<1>(std::move(data_)); }

private:
  std::variant<T, error> data_;
};

/// Success or the error that prevented it.
template<>
class result<void> {
public:
  result() = default;
  result(error err)
      : err_(std::move(err))
      , ok_(false) {}

  explicit operator bool() const noexcept { return ok_; }
  bool has_value() const noexcept { return ok_; }
  const error& err() const& { return err_; }
  error&& err() && { return std::move(err_); }

private:
  error err_;
  bool ok_ = true;
};

/// Builds an error; reads well at return sites: `return fail(error_code::io,
/// ...)`.
inline error fail(error_code code, std::string message) {
  return error{code, std::move(message)};
}

} // namespace kport

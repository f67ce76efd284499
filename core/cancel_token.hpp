#pragma once

#include <memory>

namespace kport::core {

/// A one-shot cancellation signal that a blocked process wait can poll on.
///
/// Backed by an eventfd so the process runner wakes at once on cancel instead
/// of polling a flag; shared by the actor that may cancel and the one waiting.
class cancel_token {
public:
  cancel_token();
  ~cancel_token();
  cancel_token(const cancel_token&) = delete;
  cancel_token& operator=(const cancel_token&) = delete;

  /// Signals cancellation; idempotent and safe from any thread.
  void cancel() noexcept;

  /// Whether cancel() was called.
  bool cancelled() const noexcept;

  /// A file descriptor that becomes readable once cancelled.
  int fd() const noexcept { return fd_; }

private:
  int fd_ = -1;
};

using cancel_token_ptr = std::shared_ptr<cancel_token>;

/// Makes a fresh token.
inline cancel_token_ptr make_cancel_token() {
  return std::make_shared<cancel_token>();
}

} // namespace kport::core

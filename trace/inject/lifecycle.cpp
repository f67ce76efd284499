// When the trace is written: at exit (atexit, and the library destructor as
// a fallback) and on SIGTERM/SIGINT, after which the process still dies by
// the signal (or runs the handler it had installed before).

#include "trace/inject/recorder.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace kport::trace::inject {
namespace {

constexpr int handled_signals[] = {SIGTERM, SIGINT};

struct signal_slot {
  int number = 0;
  struct sigaction previous {};
  bool installed = false;
};

signal_slot slots[2];

// The handler hands the write to a thread of its own: writing allocates and
// takes locks, which is not safe on a thread interrupted inside malloc or
// inside one of our record paths. The handler itself only uses write(2) and
// poll(2). Pipes: request (handler -> writer), done (writer -> handler).
int request_pipe[2] = {-1, -1};
int done_pipe[2] = {-1, -1};
pid_t writer_pid = 0;
std::atomic<int> pending_signal{0};

// A write that blocks (CUPTI flush against a lock the interrupted thread
// holds) must not keep a process that was told to die alive for long.
int signal_wait_ms() {
  const char* v = std::getenv("KPORT_INJECT_SIGNAL_WAIT_MS");
  int ms = v ? std::atoi(v) : 0;
  return ms > 0 ? ms : 5000;
}
int wait_ms = 5000;

void signal_time_write(int sig) {
  // A first file without a CUPTI flush, so that a flush that never returns
  // still leaves the ranges and the kernels seen so far.
  write_trace(write_trigger::signal, sig);
  if (flush_cupti(true))
    write_trace(write_trigger::signal, sig);
}

void writer_loop() {
  for (;;) {
    char c = 0;
    ssize_t n = ::read(request_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    signal_time_write(pending_signal.load());
    char ok = 1;
    (void)!::write(done_pipe[1], &ok, 1);
  }
}

void chain(int sig, siginfo_t* info, void* context) {
  signal_slot* slot = nullptr;
  for (auto& s : slots)
    if (s.number == sig)
      slot = &s;
  if (!slot)
    return;
  const auto& prev = slot->previous;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, context);
      return;
    }
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: restore it and re-raise; the signal is blocked while
  // this handler runs, so the process dies by it as soon as we return.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

void on_signal(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  if (writer_pid == ::getpid() && request_pipe[1] >= 0) {
    pending_signal.store(sig);
    char c = 1;
    if (::write(request_pipe[1], &c, 1) == 1) {
      pollfd p{done_pipe[0], POLLIN, 0};
      if (::poll(&p, 1, wait_ms) > 0) {
        char ok;
        (void)!::read(done_pipe[0], &ok, 1);
      }
    }
  } else {
    // No writer thread in this process (a fork child that did not exec):
    // write from here, every lock only tried.
    signal_time_write(sig);
  }
  errno = saved_errno;
  chain(sig, info, context);
}

void install_signal_handlers() {
  int i = 0;
  for (int sig : handled_signals) {
    auto& slot = slots[i++];
    slot.number = sig;
    struct sigaction prev {};
    if (::sigaction(sig, nullptr, &prev) != 0)
      continue;
    // A process that ignores the signal keeps ignoring it.
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN)
      continue;
    struct sigaction act {};
    act.sa_sigaction = &on_signal;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&act.sa_mask);
    for (int s : handled_signals)
      sigaddset(&act.sa_mask, s);
    slot.previous = prev;
    slot.installed = ::sigaction(sig, &act, nullptr) == 0;
  }
}

bool start_writer_thread() {
  if (::pipe2(request_pipe, O_CLOEXEC) != 0)
    return false;
  if (::pipe2(done_pipe, O_CLOEXEC) != 0) {
    ::close(request_pipe[0]);
    ::close(request_pipe[1]);
    request_pipe[0] = request_pipe[1] = -1;
    return false;
  }
  // Created with the signals already blocked: a thread inherits its
  // creator's mask, and a thread that has not yet run its first line would
  // otherwise take a pending SIGTERM itself (seen: 1 run in 20 under load),
  // then wait in the handler for the write it should have done.
  sigset_t set, old;
  sigemptyset(&set);
  for (int s : handled_signals)
    sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  bool started = true;
  try {
    std::thread{writer_loop}.detach();
  } catch (...) {
    started = false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!started)
    return false;
  writer_pid = ::getpid();
  return true;
}

void at_exit() {
  write_at_exit(write_trigger::exit);
}

void after_fork_in_child() {
  reset_after_fork();
}

} // namespace

void ensure_started() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!tracing_enabled())
      return;
    wait_ms = signal_wait_ms();
    ::atexit(&at_exit);
    ::pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    if (!start_writer_thread())
      debug("no writer thread: signal-time writes run in the handler");
    install_signal_handlers();
    debug("tracing to %s", std::getenv("KPORT_TRACE_DIR"));
  });
}

} // namespace kport::trace::inject

// Fallback for processes whose exit path skips atexit handlers registered
// after theirs (the library unloaded with dlclose, say).
__attribute__((destructor)) static void kport_inject_unload() {
  kport::trace::inject::write_at_exit(
      kport::trace::inject::write_trigger::destructor);
}

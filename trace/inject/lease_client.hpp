#pragma once

// The device lease, process side (issue 8, DESIGN.md section 4). The device
// starts several runs at once; each process of a run stops at its hold point
// until the device grants it the lease over the socket named by
// KPORT_LEASE_SOCKET. Hold points (KPORT_LEASE_HOLD): `init`, CUDA's driver
// initialisation (cuInit: nothing of the process has touched the GPU yet);
// `work`, its first call that puts work on the device (context creation,
// allocations and module loads of waiting processes then overlap the
// holder's measurements); `range`, its first measured NVTX range (host). The
// lease ends when the process exits (the kernel closes the socket) or on the
// NVTX mark "kport.lease:release"; work after a release waits for a new grant.

#include <string_view>

namespace kport::trace::inject {

/// Where a process waits for the lease: at device work or at measured ranges.
enum class lease_hold { none, init, work, range };

/// The hold point from KPORT_LEASE_HOLD (`init`, `work`, `range`), none
/// without a socket.
lease_hold lease_mode();

/// Blocks until this process holds the lease; returns at once when it does
/// or when no lease is in use. A process that cannot reach the device's
/// lease exits (it must not run beside the holder).
void lease_acquire();

/// Gives the lease back (the bench's last measured range is over).
void lease_release();

/// The NVTX hooks' entry: a range named `name` is opening.
void lease_at_range(std::string_view name);

/// The NVTX hooks' entry: a mark; "kport.lease:release" releases.
void lease_at_mark(std::string_view name);

} // namespace kport::trace::inject

// CreateGlooTcpDevice: the Gloo TCP device (the transport's listening
// endpoint and its event-loop thread) that GlooCollective and
// GlooHalfAllReduce connect their pairs through.
//
// Why the event loop may run at SCHED_IDLE: Gloo's TCP loop (Debian's
// libgloo 0.0~git20220518, as upstream still is) handles a socket's events
// only if it can try_lock that pair's mutex, which the rank's own thread
// holds while it writes to the socket; epoll is level-triggered, so while
// the lock is held the loop calls epoll_wait again at once (pytorch/gloo
// issue #246). With more threads than cores the spinning loop takes the
// core from the thread that holds the lock. Measured on the 2-core VM
// (collective_bench, 2 ranks, 4 KiB all-reduce): 960 thousand epoll_wait
// calls for 1000 all-reduces, the pair's lock taken in 0.6% of them, and
// 1.1-2.6 ms a call; with the loop at SCHED_IDLE 0.17-0.24 ms.
//
// With `idle_event_loop` the device is created on a short-lived helper
// thread that first sets itself to SCHED_IDLE, so the loop thread, spawned
// from it, inherits the policy: it runs when a core has nothing else to
// run, which includes every moment the rank's threads wait for its reads.
// The calling thread's policy is never changed (an unprivileged thread
// cannot leave SCHED_IDLE). Where SCHED_IDLE is refused (a seccomp policy),
// the device is made all the same, with a warning in the log, and `*idle`
// says so.
//
// Blocking (creating the device binds its socket); thread-safe.
#ifndef RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_
#define RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gloo/transport/device.h"

namespace ringside {

// A TCP device bound to `interface` (when not empty) or else `host`;
// UNAVAILABLE naming `where` when Gloo cannot make it. `idle`, when not
// null, is set to whether the loop thread runs at SCHED_IDLE.
absl::StatusOr<std::shared_ptr<gloo::transport::Device>> CreateGlooTcpDevice(
    const std::string& host, const std::string& interface,
    bool idle_event_loop, absl::string_view where, bool* idle = nullptr);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_

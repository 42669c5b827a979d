// CreateGlooTcpDevice: the Gloo TCP device (the transport's listening
// endpoint and its event-loop thread) that GlooCollective and
// GlooHalfAllReduce connect their pairs through.
//
// The event loop's scheduling (GlooEventLoop, collectives/
// gloo_loop_pacing.h): Gloo's TCP loop spins on a pair whose lock the
// rank's thread holds (pytorch/gloo issue #246), and with more threads than
// cores the spin takes the core from the lock's holder. Measured on the
// 2-core VM (collective_bench, 2 ranks, 4 KiB all-reduce): 960 thousand
// epoll_wait calls for 1000 all-reduces, the pair's lock taken in 0.6% of
// them, and 1.1-2.6 ms a call; with the loop at SCHED_IDLE 0.17-0.24 ms.
// kPaced (the default) keeps the normal policy and brakes the spin;
// kIdle runs the loop at SCHED_IDLE, which also ends the spin's cost but
// starves the loop beside busy processes (ring n = 2 on the MLP: 1.0 s a
// step against 0.03 s, event_loop_bench).
//
// With kIdle the device is created on a short-lived helper thread that
// first sets itself to SCHED_IDLE, so the loop thread, spawned from it,
// inherits the policy; the calling thread's policy is never changed (an
// unprivileged thread cannot leave SCHED_IDLE). Where SCHED_IDLE is refused
// (a seccomp policy), the device is made all the same, with a warning in
// the log, and `*idle` says so.
//
// Blocking (creating the device binds its socket); thread-safe.
#ifndef RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_
#define RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collectives/gloo_loop_pacing.h"
#include "gloo/transport/device.h"

namespace ringside {

// A TCP device bound to `interface` (when not empty) or else `host`;
// UNAVAILABLE naming `where` when Gloo cannot make it. `idle`, when not
// null, is set to whether the loop thread runs at SCHED_IDLE. Sets the
// process's spin brake to `loop == kPaced` (SetGlooLoopPacing).
absl::StatusOr<std::shared_ptr<gloo::transport::Device>> CreateGlooTcpDevice(
    const std::string& host, const std::string& interface,
    GlooEventLoop loop, absl::string_view where, bool* idle = nullptr);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_DEVICE_H_

// Gloo backend of Collective: CPU all-reduce (sum/average), broadcast,
// all-gather and barrier over Gloo's TCP transport, for one group of ranks
// that meet through a Store (Gloo's rendezvous::Context::connectFullMesh
// exchanges the TCP addresses through it).
//
// Creation is collective and blocking: every rank of the group calls
// CreateGlooCollective with the same size, store prefix and algorithm. Each
// rank first announces itself under "<prefix>/joined/<rank>" and waits for
// all others, so a rank that never shows up is reported by number.
//
// The returned Collective follows collective.h: blocking calls, issued by
// one thread in the same order on every rank; each call is bounded by its
// timeout (Gloo's per-operation timeout; an infinite duration means none);
// after any error the group is unusable and later calls fail with
// FAILED_PRECONDITION. Gloo's exceptions never escape: they become
// absl::Status (see gloo_error.h).
//
// Thread-safety: CreateGlooCollective may run concurrently for different
// ranks (tests run one thread per rank); one Collective is not
// thread-safe. A group of size 1 needs no peers and copies nothing.
#ifndef RINGSIDE_COLLECTIVES_GLOO_COLLECTIVE_H_
#define RINGSIDE_COLLECTIVES_GLOO_COLLECTIVE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collective.h"
#include "collectives/gloo_loop_pacing.h"
#include "collectives/store.h"

namespace ringside {

struct GlooCollectiveOptions {
  // Address the TCP transport binds and advertises to peers (IP literal or
  // host name resolving to this host). Default "127.0.0.1": one host only;
  // multi-host jobs set this host's reachable address.
  std::string host = "127.0.0.1";
  // Network interface to bind instead of `host` (e.g. "eth0"); empty means
  // use `host`. Default "".
  std::string interface;
  // All-reduce algorithm. "ring" (Gloo's ring: reduce-scatter then
  // all-gather around the ring, bandwidth-optimal) or "halving_doubling"
  // (Gloo's BCUBE with base 2: recursive halving/doubling when the size is
  // a power of two, mixed-radix groups otherwise; fewer, larger steps).
  // Default "ring".
  std::string algorithm = "ring";
  // Bound on the whole rendezvous: waiting for every rank to join, the
  // address exchange and the TCP connections. Default 30 s.
  absl::Duration connect_timeout = absl::Seconds(30);
  // Store key prefix of this group; groups sharing a store need distinct
  // prefixes, and a prefix is used by one group only once. Default "gloo".
  std::string store_prefix = "gloo";

  // How Gloo's TCP event-loop thread is scheduled
  // (collectives/gloo_loop_pacing.h). Default kPaced: the normal policy,
  // its spin braked.
  GlooEventLoop event_loop = GlooEventLoop::kPaced;

  // OK, or INVALID_ARGUMENT naming the bad field.
  absl::Status Validate() const;
};

// Connects rank `rank` of a `size`-rank group through `store` (not owned;
// used only during this call). Blocks until every rank has connected or
// `options.connect_timeout` passes: then DEADLINE_EXCEEDED naming the ranks
// that did not show up. INVALID_ARGUMENT on bad rank/size/options;
// UNAVAILABLE if the transport cannot bind `options.host`.
absl::StatusOr<std::unique_ptr<Collective>> CreateGlooCollective(
    Store& store, int rank, int size, const GlooCollectiveOptions& options);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_COLLECTIVE_H_

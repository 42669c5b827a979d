// BulkConnection: one of a worker's persistent connections to a parameter
// server's bulk data path (--ps_transport=tcp; common/bulk_wire.h,
// server/bulk_server.h), for pushes or for pulls. Connect performs the
// keyed handshake (this worker proves it holds the job's token and checks
// the server's proof back). PsShardClient routes its push streams and
// pulls through a pair of them. Every read and write has a deadline; a
// broken connection (the server died, a deadline passed, a pull was
// cancelled) is closed and the next use connects again.
// Thread-safety: one stream or pull at a time per connection (the caller's
// lock); Cancel from any thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_PS_BULK_CLIENT_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_PS_BULK_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/bulk_wire.h"
#include "core/key_range.h"

namespace ringside {

struct BulkEndpoint {
  std::string host;
  int port = 0;
  int rank = 0;
  int shard = 0;
  std::string auth_token;
  KeyRange range;                  // the server's shard of the buffer
  int64_t max_chunk_elements = 0;  // its chunks
};

class BulkConnection {
 public:
  BulkConnection(BulkEndpoint endpoint, BulkRole role);
  ~BulkConnection();
  BulkConnection(const BulkConnection&) = delete;
  BulkConnection& operator=(const BulkConnection&) = delete;

  // Connects and handshakes unless connected. PERMISSION_DENIED when the
  // server refuses the handshake or cannot prove it holds the token.
  absl::Status Connect(absl::Time deadline);

  // Push connection: sends one chunk of `step`'s gradient; then EndPush
  // sends kPushEnd and waits for the server's answer (its refusal, with
  // the shard's status code, when it refused a chunk).
  absl::Status PushChunk(int64_t step, const KeyRange& chunk,
                         absl::Span<const float> grads, absl::Time deadline);
  absl::Status EndPush(int64_t step, int64_t chunks, absl::Time deadline);

  // Pull connection: requests `version` and reads `num_chunks` chunks
  // straight into `params` (the whole flat buffer) at their offsets;
  // `on_chunk` runs as each lands. Returns payload bytes.
  absl::StatusOr<int64_t> Pull(
      int64_t version, int num_chunks, absl::Span<float> params,
      absl::Time deadline,
      const std::function<void(int64_t, int64_t)>& on_chunk);

  // Ends a blocked call on this connection (CANCELLED) and closes it.
  void Cancel();

  const std::string& what() const { return what_; }

 private:
  // Reads one frame header. A kError frame is read whole and returned as
  // its header with the server's status in *refusal (the connection stays
  // usable); a failed read or a frame not allowed is the error.
  absl::StatusOr<BulkHeader> ReadHeader(absl::Time deadline,
                                        absl::Status* refusal);
  absl::Status Broken(absl::Status status);  // closes the connection
  // A frame of this connection's shard and rank.
  BulkHeader Frame(BulkKind kind, int64_t step, int64_t count) const;
  int fd();
  void Close();

  const BulkEndpoint endpoint_;
  const BulkRole role_;
  const std::string what_;
  absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_PS_BULK_CLIENT_H_

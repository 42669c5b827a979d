// InMemoryStore: a Store held in this process's memory — a map guarded by
// one mutex, whose Get and Wait sleep on a condition until the keys appear
// or the timeout passes. Used by tests (N ranks as threads over one store)
// and behind rank 0's StoreServer.
//
// Thread-safe: any number of threads may call any method concurrently.
// Close() wakes every blocked caller; later calls fail with UNAVAILABLE.
#ifndef RINGSIDE_COLLECTIVES_IN_MEMORY_STORE_H_
#define RINGSIDE_COLLECTIVES_IN_MEMORY_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/store.h"

namespace ringside {

class InMemoryStore : public Store {
 public:
  InMemoryStore() = default;
  InMemoryStore(const InMemoryStore&) = delete;
  InMemoryStore& operator=(const InMemoryStore&) = delete;

  // Non-blocking. Overwrites; wakes waiters.
  absl::Status Set(absl::string_view key, absl::string_view value) override;
  // Blocks until `key` exists or `timeout` passes (a zero or negative
  // timeout only looks). DEADLINE_EXCEEDED names the key.
  absl::StatusOr<std::string> Get(absl::string_view key,
                                  absl::Duration timeout) override;
  // Blocks until every key exists or `timeout` passes. DEADLINE_EXCEEDED
  // names the keys still missing.
  absl::Status Wait(const std::vector<std::string>& keys,
                    absl::Duration timeout) override;
  // Non-blocking. The value is kept as decimal text; INVALID_ARGUMENT if
  // the key holds something else, OUT_OF_RANGE if the sum overflows int64
  // (the key keeps its value).
  absl::StatusOr<int64_t> Add(absl::string_view key, int64_t delta) override;

  // Blocks until every key exists or `deadline`, like Wait.
  absl::Status WaitUntil(const std::vector<std::string>& keys,
                         absl::Time deadline);
  // Wakes every blocked Get/Wait (they fail with UNAVAILABLE) and makes all
  // later calls fail the same way. Idempotent.
  void Close();
  // Number of keys held (for tests and diagnostics).
  size_t size() const;

 private:
  // What a blocked Get/Wait waits for: every key present, or closed.
  struct Waiting {
    const InMemoryStore* store;
    const std::vector<std::string>* keys;
  };
  static bool Ready(Waiting* w) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  absl::Status MissingError(const std::vector<std::string>& keys,
                            absl::Duration waited) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> data_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_IN_MEMORY_STORE_H_

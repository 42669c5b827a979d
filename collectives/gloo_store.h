// GlooStore: adapts our Store to gloo::rendezvous::Store, so Gloo's
// rendezvous (rendezvous::Context::connectFullMesh) exchanges its addresses
// through the job's store. Every key is put under `prefix` + "/" (the role
// of Gloo's PrefixStore), so several groups can share one store.
//
// Gloo's interface reports failures by throwing: a failed call records its
// absl::Status (first_error()) and throws gloo::IoException carrying the
// same message, so the caller that catches it can recover the real code and
// the missing keys.
//
// Thread-safe if the wrapped Store is (ours all are).
#ifndef RINGSIDE_COLLECTIVES_GLOO_STORE_H_
#define RINGSIDE_COLLECTIVES_GLOO_STORE_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/store.h"
#include "gloo/rendezvous/store.h"

namespace ringside {

class GlooStore : public gloo::rendezvous::Store {
 public:
  // `store` is not owned and must outlive this adapter. `timeout` bounds
  // get() and the timeout-less wait() (Gloo's own default is 30 s).
  GlooStore(ringside::Store* store, std::string prefix, absl::Duration timeout);

  // Gloo's interface. All blocking; throw gloo::IoException on failure.
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  // A zero timeout (gloo::kNoTimeout) means the adapter's `timeout`.
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // The first failure of any call above; OK if none failed.
  absl::Status first_error() const;
  // The key Gloo's `key` is stored under: prefix + "/" + key.
  std::string FullKey(absl::string_view key) const;

 private:
  [[noreturn]] void Fail(const absl::Status& status);

  ringside::Store* store_;
  const std::string prefix_;
  const absl::Duration timeout_;
  mutable absl::Mutex mu_;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_STORE_H_

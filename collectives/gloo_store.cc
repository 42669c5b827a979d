#include "collectives/gloo_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "gloo/common/error.h"

namespace ringside {

GlooStore::GlooStore(ringside::Store* store, std::string prefix,
                     absl::Duration timeout)
    : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

std::string GlooStore::FullKey(absl::string_view key) const {
  return absl::StrCat(prefix_, "/", key);
}

absl::Status GlooStore::first_error() const {
  absl::MutexLock lock(&mu_);
  return first_error_;
}

void GlooStore::Fail(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (first_error_.ok()) first_error_ = status;
  }
  throw gloo::IoException(status.ToString());
}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  absl::Status s =
      store_->Set(FullKey(key), absl::string_view(data.data(), data.size()));
  if (!s.ok()) Fail(s);
}

std::vector<char> GlooStore::get(const std::string& key) {
  absl::StatusOr<std::string> value = store_->Get(FullKey(key), timeout_);
  if (!value.ok()) Fail(value.status());
  return std::vector<char>(value->begin(), value->end());
}

void GlooStore::wait(const std::vector<std::string>& keys) {
  wait(keys, std::chrono::milliseconds::zero());
}

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const std::string& key : keys) full.push_back(FullKey(key));
  const absl::Duration t = timeout == std::chrono::milliseconds::zero()
                               ? timeout_
                               : absl::FromChrono(timeout);
  absl::Status s = store_->Wait(full, t);
  if (!s.ok()) Fail(s);
}

}  // namespace ringside

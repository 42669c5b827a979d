#include "collectives/in_memory_store.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace ringside {
namespace {

absl::Status ClosedError() { return absl::UnavailableError("store: closed"); }

}  // namespace

absl::Status InMemoryStore::Set(absl::string_view key,
                                absl::string_view value) {
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  data_[key] = std::string(value);
  return absl::OkStatus();
}

bool InMemoryStore::Ready(Waiting* w) {
  if (w->store->closed_) return true;  // wake up and report
  for (const std::string& key : *w->keys) {
    if (!w->store->data_.contains(key)) return false;
  }
  return true;
}

absl::Status InMemoryStore::MissingError(const std::vector<std::string>& keys,
                                         absl::Duration waited) const {
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (!data_.contains(key)) missing.push_back(key);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("store: timed out after ", absl::FormatDuration(waited),
                   " waiting for key(s) [", absl::StrJoin(missing, ", "), "]"));
}

absl::Status InMemoryStore::WaitUntil(const std::vector<std::string>& keys,
                                      absl::Time deadline) {
  const absl::Time start = absl::Now();
  Waiting waiting{this, &keys};
  absl::MutexLock lock(&mu_);
  const bool ready =
      mu_.AwaitWithDeadline(absl::Condition(&Ready, &waiting), deadline);
  if (closed_) return ClosedError();
  if (!ready) return MissingError(keys, absl::Now() - start);
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryStore::Get(absl::string_view key,
                                               absl::Duration timeout) {
  const std::vector<std::string> keys = {std::string(key)};
  const absl::Time start = absl::Now();
  Waiting waiting{this, &keys};
  absl::MutexLock lock(&mu_);
  const bool ready =
      mu_.AwaitWithDeadline(absl::Condition(&Ready, &waiting), start + timeout);
  if (closed_) return ClosedError();
  if (!ready) return MissingError(keys, absl::Now() - start);
  return data_.at(keys[0]);
}

absl::Status InMemoryStore::Wait(const std::vector<std::string>& keys,
                                 absl::Duration timeout) {
  return WaitUntil(keys, absl::Now() + timeout);
}

absl::StatusOr<int64_t> InMemoryStore::Add(absl::string_view key,
                                           int64_t delta) {
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  int64_t current = 0;
  auto it = data_.find(key);
  if (it != data_.end() && !absl::SimpleAtoi(it->second, &current)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store: Add on key '", key, "', which holds a non-integer value"));
  }
  if (__builtin_add_overflow(current, delta, &current)) {
    return absl::OutOfRangeError(absl::StrCat(
        "store: Add of ", delta, " on key '", key, "' overflows int64"));
  }
  data_[key] = absl::StrCat(current);
  return current;
}

void InMemoryStore::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

size_t InMemoryStore::size() const {
  absl::MutexLock lock(&mu_);
  return data_.size();
}

}  // namespace ringside

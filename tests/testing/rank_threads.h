// Runs N ranks of a collective test as threads in this process (Gloo's own
// test picture). testonly. Each call is blocking: it joins every thread.
#ifndef RINGSIDE_TESTS_TESTING_RANK_THREADS_H_
#define RINGSIDE_TESTS_TESTING_RANK_THREADS_H_

#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace ringside::testing {

// Runs fn(rank) for each of `ranks` on its own thread; returns the statuses
// in the order of `ranks`.
inline std::vector<absl::Status> RunRanks(
    const std::vector<int>& ranks, const std::function<absl::Status(int)>& fn) {
  std::vector<absl::Status> status(ranks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] { status[i] = fn(ranks[i]); });
  }
  for (std::thread& t : threads) t.join();
  return status;
}

// Ranks 0..size-1.
inline std::vector<absl::Status> RunRanks(
    int size, const std::function<absl::Status(int)>& fn) {
  std::vector<int> ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  return RunRanks(ranks, fn);
}

// Expects every status (index = position) to be OK, naming the ones that
// are not.
inline void ExpectAllOk(const std::vector<absl::Status>& status) {
  for (size_t r = 0; r < status.size(); ++r) {
    EXPECT_TRUE(status[r].ok()) << "rank " << r << ": " << status[r];
  }
}

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_RANK_THREADS_H_

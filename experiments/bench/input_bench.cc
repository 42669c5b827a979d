// input_bench: what a GPU worker's input costs the host a step, read as its
// BatchPrefetcher does it (SyntheticClassification::TrainBatch, then the
// batch copied into the staging buffer as BatchStager copies it into
// page-locked memory; here a plain host buffer, as no GPU is needed), on
// one thread against the threads ParallelCopy gives large copies
// (common/parallel_copy.h), in interleaved rounds. Per case it prints each
// side's median milliseconds a step with the fastest and slowest round, and
// the median ratio (one thread over threads) with its range.
//
//   input_bench [--cases=784@4096,784@1024,4096@512] [--rounds=5]
//               [--steps=30]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/parallel_copy.h"
#include "common/stopwatch.h"
#include "models/synthetic_classification.h"

ABSL_FLAG(std::string, cases, "784@4096,784@1024,4096@512",
          "Comma-separated FEATURES@BATCH: the MLP input width and the batch "
          "(gpu_compute_bench's sizes by default).");
ABSL_FLAG(int, rounds, 5,
          "Interleaved rounds (each runs every case and side).");
ABSL_FLAG(int, steps, 30, "Timed batches per case, side and round.");

namespace ringside {
namespace {

struct Case {
  int64_t features = 0;
  int64_t batch = 0;
};

// Milliseconds a step of reading and staging `steps` batches with `threads`
// OpenMP threads at most.
double MsPerStep(SyntheticClassification& data, const Case& c, int threads,
                 int steps, int64_t* next) {
  omp_set_num_threads(threads);
  Batch batch;
  std::vector<float> staging(c.batch * c.features);
  const int64_t bytes = c.batch * c.features * int64_t{sizeof(float)};
  // One untimed batch and copy: the buffers' first touch.
  if (!data.TrainBatch(*next, c.batch, &batch).ok()) std::abort();
  ParallelCopy(staging.data(), batch.features.data(), bytes);
  const double start = NowSeconds();
  for (int s = 0; s < steps; ++s) {
    *next += c.batch;
    if (!data.TrainBatch(*next, c.batch, &batch).ok()) std::abort();
    ParallelCopy(staging.data(), batch.features.data(), bytes);
  }
  return 1e3 * (NowSeconds() - start) / steps;
}

int Run() {
  std::vector<Case> cases;
  for (absl::string_view text :
       absl::StrSplit(absl::GetFlag(FLAGS_cases), ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(text, '@');
    Case c;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &c.features) ||
        !absl::SimpleAtoi(parts[1], &c.batch) || c.features < 1 ||
        c.batch < 1) {
      std::fprintf(stderr,
                   "input_bench: --cases entry '%s' is not FEATURES@BATCH\n",
                   std::string(text).c_str());
      return 2;
    }
    cases.push_back(c);
  }
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const int steps = absl::GetFlag(FLAGS_steps);
  if (rounds < 1 || steps < 1) {
    std::fprintf(stderr, "input_bench: --rounds and --steps must be >= 1\n");
    return 2;
  }
  const int cores = omp_get_max_threads();
  std::vector<std::unique_ptr<SyntheticClassification>> data;
  for (const Case& c : cases) {
    SyntheticClassificationOptions o;
    o.feature_dim = c.features;
    o.num_classes = 10;
    o.train_examples = std::max<int64_t>(4 * c.batch, 2048);  // as the bench
    o.eval_examples = 256;
    absl::StatusOr<std::unique_ptr<SyntheticClassification>> made =
        SyntheticClassification::Create(o);
    if (!made.ok()) {
      std::fprintf(stderr, "input_bench: %s\n",
                   made.status().ToString().c_str());
      return 1;
    }
    data.push_back(*std::move(made));
  }
  std::vector<std::vector<double>> one(cases.size()), many(cases.size());
  std::vector<int64_t> next(cases.size(), 0);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < cases.size(); ++i) {
      one[i].push_back(MsPerStep(*data[i], cases[i], 1, steps, &next[i]));
      many[i].push_back(MsPerStep(*data[i], cases[i], cores, steps, &next[i]));
    }
  }
  std::printf(
      "input_bench: %d cores for OpenMP, %d interleaved rounds of %d "
      "batches; ms a step, median [min, max]\n\n",
      cores, rounds, steps);
  std::printf(
      "| features @ batch | MiB | one thread | ParallelCopy's threads "
      "| threads | one thread / threads |\n|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const int64_t bytes = c.batch * c.features * int64_t{sizeof(float)};
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(one[i][r] / many[i][r]);
    auto cell = [](const std::vector<double>& v) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "%.2f [%.2f, %.2f]", Median(v),
                    *std::min_element(v.begin(), v.end()),
                    *std::max_element(v.begin(), v.end()));
      return std::string(buf);
    };
    std::printf("| %lld @ %lld | %.1f | %s | %s | %d | %s |\n",
                static_cast<long long>(c.features),
                static_cast<long long>(c.batch), bytes / 1048576.0,
                cell(one[i]).c_str(), cell(many[i]).c_str(),
                std::min(CopyThreads(bytes), cores), cell(ratio).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "input_bench: a GPU worker's per-step input on the host, one thread "
      "against ParallelCopy's threads");
  absl::ParseCommandLine(argc, argv);
  return ringside::Run();
}

// fusion_bench: what tensor fusion buys on a real network's gradient list.
// Every rank holds the gradients of a profile (default ResNet-50: 161
// tensors, 25.6 M parameters), all ready at once, and averages them:
//   ring        one all-reduce per tensor, in backward order (what --strategy
//               =ring does)
//   fusion      the fusion runtime (--strategy=fusion): negotiation with
//               rank 0, fused batches, in place where contiguous, two
//               batches at a time on two collectives
//   fusion_serial the same with one lane: batches one after another
//   fusion_copy the same with every multi-tensor batch copied through the
//               fusion buffer (Horovod's data path)
//   flat        one all-reduce of the whole buffer (the lower bound)
// Ranks are threads over Gloo (TCP loopback). Modes alternate within each
// iteration so drift hits them alike; the medians are compared in the same
// run. Every rank checks the averages it receives.
//
//   bazel run //experiments/bench:fusion_bench
//   bazel run //experiments/bench:fusion_bench -- --ranks=4 --profile=bert-base
//
// Targets: fusion >= 3x faster than ring, and <= 1.1x flat.
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/fusion/fusion_flags.h"
#include "collectives/fusion/fusion_runtime.h"
#include "collectives/gloo_collective.h"
#include "collectives/in_memory_store.h"
#include "common/json_lines.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "models/gradient_profiles.h"

ABSL_FLAG(int, ranks, 2, "Ranks (threads, Gloo over TCP loopback).");
ABSL_FLAG(std::string, profile, "resnet50",
          "Gradient profile: resnet50, vgg16, bert-base, gpt2, mobilenet_v2, gpt2_study, "
          "or a profile file's path (models/profile_file.h).");
ABSL_FLAG(int, iters, 5, "Timed iterations per mode.");
ABSL_FLAG(int, warmup_iters, 1, "Warm-up iterations per mode.");
ABSL_FLAG(int, rounds, 2,
          "Times the whole mode sequence repeats (drift hits all modes).");
// The fusion runtime's flags are the worker's
// (collectives/fusion/fusion_flags.h).
ABSL_FLAG(std::string, allreduce_algorithm, "ring",
          "Gloo algorithm for every mode: ring or halving_doubling.");
ABSL_FLAG(std::string, json_out, "", "Also write one JSON line per mode.");
ABSL_FLAG(int, timeout_s, 300, "Bound on each collective and wait.");

namespace ringside {
namespace {

const char* const kModes[] = {"ring", "fusion", "fusion_serial", "fusion_copy",
                              "flat"};

float Grad(int rank, int64_t i) { return rank + (i % 7) * 0.5f; }

// One rank's collectives: `plain` for ring, flat and the barriers; the
// fusion runtime gets its own for negotiation and its two data lanes.
struct Rank {
  std::unique_ptr<Collective> plain, control, data, data2;
  std::vector<float> grads;
};

void Fill(Rank& rank, int r) {
  for (size_t i = 0; i < rank.grads.size(); ++i) rank.grads[i] = Grad(r, i);
}

absl::Status Check(const Rank& rank, int n) {
  float base = 0;
  for (int r = 0; r < n; ++r) base += r;
  for (size_t i = 0; i < rank.grads.size(); i += 997) {
    const float want = (base + n * (i % 7) * 0.5f) / n;
    if (std::abs(rank.grads[i] - want) > 1e-4f * std::max(1.0f, want)) {
      return absl::InternalError(absl::StrCat("element ", i, " = ",
                                              rank.grads[i], ", want ", want));
    }
  }
  return absl::OkStatus();
}

struct Plan {
  TensorLayout layout;
  int warmup = 1;
  int iters = 5;
  int rounds = 2;
  absl::Duration timeout;
  FusionOptions fusion;
};

// seconds[mode][round * iters + i][rank]
using Times = std::map<std::string, std::vector<std::vector<double>>>;

absl::Status RunRank(int r, int n, const Plan& plan, Rank& rank, Times& times,
                     std::map<std::string, FusionStats>& fusion_stats) {
  const TensorLayout& layout = plan.layout;
  const int tensors = layout.num_tensors();
  for (int round = 0; round < plan.rounds; ++round) {
    for (const std::string mode : kModes) {
      std::unique_ptr<FusionRuntime> runtime;
      if (absl::StartsWith(mode, "fusion")) {
        FusionOptions options = plan.fusion;
        options.in_place_contiguous = mode != "fusion_copy";
        RS_ASSIGN_OR_RETURN(
            runtime, FusionRuntime::Start(
                         rank.control.get(), rank.data.get(), layout,
                         absl::MakeSpan(rank.grads), options, nullptr,
                         mode == "fusion_serial" ? nullptr : rank.data2.get()));
      }
      for (int i = -plan.warmup; i < plan.iters; ++i) {
        Fill(rank, r);
        RS_RETURN_IF_ERROR(rank.plain->Barrier(plan.timeout));
        const double start = NowSeconds();
        if (mode == "ring") {
          for (int t = tensors - 1; t >= 0; --t) {
            RS_RETURN_IF_ERROR(rank.plain->AllReduce(
                layout.View(t, absl::MakeSpan(rank.grads)), ReduceOp::kAverage,
                plan.timeout));
          }
        } else if (mode == "flat") {
          RS_RETURN_IF_ERROR(rank.plain->AllReduce(
              absl::MakeSpan(rank.grads), ReduceOp::kAverage, plan.timeout));
        } else {
          for (int t = tensors - 1; t >= 0; --t) runtime->Enqueue(t);
          RS_RETURN_IF_ERROR(runtime->WaitForReduced(tensors, plan.timeout));
        }
        const double elapsed = NowSeconds() - start;
        RS_RETURN_IF_ERROR(
            Annotate(Check(rank, n), absl::StrCat(mode, " gave wrong sums")));
        if (i >= 0) times[mode][round * plan.iters + i][r] = elapsed;
      }
      if (runtime != nullptr) {
        RS_RETURN_IF_ERROR(runtime->Shutdown());
        if (r == 0 && round == plan.rounds - 1) {
          fusion_stats[mode] = runtime->stats();
        }
      }
    }
  }
  return absl::OkStatus();
}

// Per iteration the slowest rank's time; then the median over iterations.
double MedianOfSlowest(const std::vector<std::vector<double>>& per_iter) {
  std::vector<double> slowest;
  for (const auto& ranks : per_iter) {
    slowest.push_back(*std::max_element(ranks.begin(), ranks.end()));
  }
  std::sort(slowest.begin(), slowest.end());
  return slowest[slowest.size() / 2];
}

absl::Status Run() {
  const int n = absl::GetFlag(FLAGS_ranks);
  if (n < 2) return absl::InvalidArgumentError("--ranks must be >= 2");
  Plan plan;
  plan.timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_s));
  plan.warmup = absl::GetFlag(FLAGS_warmup_iters);
  plan.iters = absl::GetFlag(FLAGS_iters);
  plan.rounds = absl::GetFlag(FLAGS_rounds);
  if (plan.iters < 1 || plan.warmup < 0 || plan.rounds < 1) {
    return absl::InvalidArgumentError(
        "--iters and --rounds must be >= 1, --warmup_iters >= 0");
  }
  RS_ASSIGN_OR_RETURN(plan.fusion, FusionOptionsFromFlags());
  plan.fusion.timeout = plan.timeout;
  RS_RETURN_IF_ERROR(plan.fusion.Validate());
  RS_ASSIGN_OR_RETURN(GradientProfile profile,
                      FindGradientProfile(absl::GetFlag(FLAGS_profile)));
  RS_ASSIGN_OR_RETURN(plan.layout, profile.Layout());
  const std::string algorithm = absl::GetFlag(FLAGS_allreduce_algorithm);
  std::printf(
      "fusion_bench: %s, %d tensors, %.2f M parameters (%.1f MB); %d ranks "
      "(threads, Gloo %s over TCP loopback); %d round(s) x %d timed "
      "iteration(s) per mode after %d warm-up; fusion buffer %lld bytes, "
      "cycle %.2f ms\n",
      profile.name.c_str(), plan.layout.num_tensors(),
      plan.layout.total_elements() / 1e6, plan.layout.total_bytes() / 1e6, n,
      algorithm.c_str(), plan.rounds, plan.iters, plan.warmup,
      static_cast<long long>(plan.fusion.fusion_threshold_bytes),
      absl::ToDoubleMilliseconds(plan.fusion.cycle_time));
  std::fflush(stdout);

  InMemoryStore store;
  std::vector<Rank> ranks(n);
  Times times;
  for (const std::string mode : kModes) {
    times[mode].assign(plan.rounds * plan.iters, std::vector<double>(n, 0.0));
  }
  std::map<std::string, FusionStats> fusion_stats;
  std::vector<absl::Status> status(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      status[r] = [&]() -> absl::Status {
        Rank& rank = ranks[r];
        GlooCollectiveOptions gloo;
        gloo.algorithm = algorithm;
        gloo.connect_timeout = plan.timeout;
        for (auto [prefix, slot] :
             {std::pair{"plain", &rank.plain}, std::pair{"ctl", &rank.control},
              std::pair{"data", &rank.data}, std::pair{"data2", &rank.data2}}) {
          gloo.store_prefix = prefix;
          RS_ASSIGN_OR_RETURN(*slot, CreateGlooCollective(store, r, n, gloo));
        }
        rank.grads.assign(plan.layout.total_elements(), 0.0f);
        return RunRank(r, n, plan, rank, times, fusion_stats);
      }();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    RS_RETURN_IF_ERROR(Annotate(status[r], absl::StrCat("rank ", r)));
  }

  std::map<std::string, double> median;
  for (const std::string mode : kModes) median[mode] = MedianOfSlowest(times[mode]);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr, &std::fclose);
  std::unique_ptr<JsonLinesWriter> json;
  if (const std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    json_file.reset(std::fopen(path.c_str(), "w"));
    if (json_file == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
    }
    json = std::make_unique<JsonLinesWriter>(json_file.get());
  }
  std::printf("\n| mode | sync time per step (ms) | vs flat | ring / mode | "
              "all-reduces per step | fusion-buffer MB copied per step |\n"
              "|---|---|---|---|---|---|\n");
  for (const std::string mode : kModes) {
    const double ms = median[mode] * 1e3;
    std::string batches = "1";
    std::string copied = "0";
    if (mode == "ring") batches = absl::StrCat(plan.layout.num_tensors());
    if (fusion_stats.count(mode)) {
      const FusionStats& s = fusion_stats[mode];
      const int steps = plan.warmup + plan.iters;
      batches = absl::StrFormat("%.1f", double(s.batches) / steps);
      copied = absl::StrFormat("%.1f", s.bytes_copied / 1e6 / steps);
    }
    std::printf("| %s | %.2f | %.2f | %.2f | %s | %s |\n", mode.c_str(), ms,
                median[mode] / median["flat"], median["ring"] / median[mode],
                batches.c_str(), copied.c_str());
    if (json) {
      json->Write({{"profile", profile.name},
                   {"ranks", n},
                   {"mode", mode},
                   {"sync_ms", ms},
                   {"vs_flat", median[mode] / median["flat"]},
                   {"ring_over_mode", median["ring"] / median[mode]}});
    }
  }
  const double speedup = median["ring"] / median["fusion"];
  const double vs_flat = median["fusion"] / median["flat"];
  std::printf("\ntarget: fusion >= 3x faster than per-tensor ring: %s "
              "(%.2fx)\n",
              speedup >= 3.0 ? "MET" : "NOT MET", speedup);
  std::printf("target: fusion within 1.1x of one flat all-reduce: %s "
              "(%.3fx)\n",
              vs_flat <= 1.1 ? "MET" : "NOT MET", vs_flat);
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  absl::ParseCommandLine(argc, argv);
  absl::Status s = ringside::Run();
  if (!s.ok()) {
    std::fprintf(stderr, "fusion_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

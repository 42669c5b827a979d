// predict: the cost model (experiments/cost/cost_model.h) for n = 1, 2, 4, ...
// up to --max_workers, one row per strategy and worker count.
//
//   predict --profile=resnet50 --compute_ms=100 --link_gbit=25
//           --link_latency_us=5 --servers=4 [--json_out=predict.json]
//
// M and T come from the gradient profile (float32: M = 4 · parameters) or
// from --model_bytes / --tensors, which override it; --optimizer and
// --momentum give the optimizer state the memory columns count. stdout: the
// inputs and two markdown tables (speedup by n; step/comm/utilization and
// memory per rank).
// --json_out also writes them as one JSON object on one line. Exit 0 on
// success, 2 on bad flags, 1 when --json_out cannot be written.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/fusion/fusion_flags.h"
#include "common/flag_aliases.h"
#include "common/json_lines.h"
#include "common/status_macros.h"
#include "core/optimizer_config.h"
#include "core/tensor_layout.h"
#include "experiments/cost/cluster_file.h"
#include "experiments/cost/cost_model.h"
#include "experiments/cost/formulas/formula_registry.h"
#include "models/gradient_profiles.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/allreduce/hierarchical_options.h"
#include "worker/strategies/ps/async_ps_options.h"
#include "worker/strategies/ps/ps_options.h"

ABSL_FLAG(std::string, profile, "resnet50",
          "Gradient profile giving M and T (resnet50, vgg16, bert-base, "
          "gpt2, mobilenet_v2, gpt2_study: the GPT-2 study's 106 M model; "
          "or a profile file's path: "
          "models/profile_file.h); empty: give --model_bytes and --tensors.");
ABSL_FLAG(int64_t, model_bytes, 0,
          "M: gradient bytes per step; > 0 overrides the profile's.");
ABSL_FLAG(int64_t, tensors, 0,
          "T: gradient tensors; > 0 overrides the profile's.");
ABSL_FLAG(double, compute_ms, 100,
          "t_c: forward + backward + optimizer time of one step (ms, > 0).");
ABSL_FLAG(double, link_gbit, 25,
          "B: bandwidth of every link (Gbit/s per direction), as launch's "
          "and compare's --link_gbit.");
RINGSIDE_FLAG_ALIAS(bandwidth_gbps, link_gbit);
ABSL_FLAG(double, link_latency_us, 5,
          "alpha: one-way latency of one message (us), as launch's and "
          "compare's --link_latency_us.");
RINGSIDE_FLAG_ALIAS(latency_us, link_latency_us);
ABSL_FLAG(int64_t, servers, 4,
          "K: parameter servers of dps and async_ps (sps has 1), and of "
          "byteps when --servers_per_node and --server_hosts are both 0.");
ABSL_FLAG(int64_t, servers_per_node, 0,
          "byteps's summation servers on each worker host, sharing its link "
          "(a cluster file's servers_per_node); with --server_hosts, K = "
          "servers_per_node x hosts + server_hosts. Both 0: --servers, each "
          "on a host of its own.");
ABSL_FLAG(double, compute_slowdown, 0,
          "sigma: how much slower compute runs while the communication it "
          "hides runs beside it (a cluster file's compute_slowdown, which "
          "defaults to a published measurement there); 0: not priced. "
          "Measure it with experiments/bench/contention_bench.py.");
ABSL_FLAG(double, sync_fixed_ms, 0,
          "f: the framework's fixed cost of synchronizing a step at n > 1 "
          "(a cluster file's sync_fixed_ms); 0: not priced.");
ABSL_FLAG(int64_t, server_hosts, 0,
          "byteps's summation servers on CPU hosts of their own, one each "
          "behind a link of --link_gbit (a cluster file's server_hosts).");
// --ring_bucket_kb, --ring_first_bucket_kb, --staleness and --local_size
// are the worker's flags, defined once with their strategies' options
// (worker/strategies/allreduce/bucket_options.h, ps/async_ps_options.h,
// allreduce/hierarchical_options.h). Here --local_size is the cluster's
// ranks per host; --staleness 0 predicts async_ps at its study setting,
// the one compare runs (the registry's --staleness=2).
RINGSIDE_FLAG_ALIAS(ranks_per_host, local_size);
ABSL_FLAG(double, intra_link_gbit, 0,
          "B_i: hierarchical's intra-host link (Gbit/s; 0: --link_gbit).");
RINGSIDE_FLAG_ALIAS(intra_bandwidth_gbps, intra_link_gbit);
ABSL_FLAG(double, intra_link_latency_us, -1,
          "alpha_i: hierarchical's intra-host latency (us; < 0: "
          "--link_latency_us).");
RINGSIDE_FLAG_ALIAS(intra_latency_us, intra_link_latency_us);
ABSL_FLAG(int64_t, accumulate_steps, 1,
          "k: forward/backward passes per synchronization; the compute per "
          "step is k x --compute_ms, the communication once.");
// F (--fusion_threshold_bytes) and tau (--cycle_time_ms) are the worker's
// fusion flags (collectives/fusion/fusion_flags.h).
ABSL_FLAG(double, overlap, 0,
          "Share of compute that communication can hide behind, in [0, 1]; "
          "used only without a ready schedule (--ready_schedule).");
ABSL_FLAG(std::string, ready_schedule, "proportional",
          "When each gradient becomes ready in backward, which decides how "
          "much communication the strategies that start in backward hide: "
          "proportional (the profile's tensors, last first, after a forward "
          "of a third of t_c, each ready once backward has produced its "
          "bytes: the synthetic model's emulation), or none (--overlap's "
          "share). Needs the profile's tensors: an explicit --model_bytes "
          "or --tensors has none.");
ABSL_FLAG(bool, ps_push_pull_overlap, true,
          "Parameter servers: push and pull share a full-duplex link's "
          "seconds (false: they add up, doubling the PS bandwidth term).");
ABSL_FLAG(std::string, optimizer, "sgd",
          "Optimizer whose state the memory columns count, as the worker's "
          "flag: sgd (with --momentum) or adam.");
ABSL_FLAG(double, momentum, 0.9,
          "SGD momentum, as the worker's flag (0: plain SGD, no state).");
ABSL_FLAG(int64_t, max_workers, 1024,
          "Largest n; the sweep is 1, 2, 4, ... and ends at this value "
          "(with --cluster, at most the cluster's GPUs).");
// Defaults to the formulas registered (experiments/cost/formulas/): flag
// defaults are made when the flags are first read, after static
// initialization has registered them.
ABSL_FLAG(std::vector<std::string>, strategies,
          ringside::CostModelStrategies(),
          "Strategies to predict, in table order.");
ABSL_FLAG(std::string, cluster, "",
          "A cluster file (experiments/cost/cluster_file.h; examples in "
          "experiments/clusters/): predicts for that cluster's nodes, GPUs "
          "per node, links, compute and model instead of the flags above, "
          "printing the study-format table per n and the crossover.");
ABSL_FLAG(std::string, calibration, "",
          "A compare run's compare.json: add the CPU costs it measured on its "
          "machine (cost_model.calibration; experiments/calibration/calibration.h) "
          "to every prediction. Empty: none, the alpha-beta terms only.");
ABSL_FLAG(std::string, json_out, "",
          "Also write the inputs and predictions here as one JSON line "
          "(with --cluster: the cluster, its links' pricing and one row per "
          "strategy and n, with samples_per_s and the link's B and alpha).");

namespace ringside {
namespace {

// The inputs that do not depend on the links or the model, in `in`: the
// workers' fusion flags (F, τ), ring's buckets, the parameter servers'
// chunk, --overlap, --ps_push_pull_overlap, and the
// optimizer state per parameter of `optimizer` with `momentum`.
// INVALID_ARGUMENT on a bad fusion flag or optimizer.
// --calibration's CPU costs into `in.cpu` (none without the flag), and the
// line saying which the predictions use. INVALID_ARGUMENT naming the file
// when it cannot be read or has no usable calibration.
absl::StatusOr<std::string> SetCalibration(CostInputs& in) {
  const std::string path = absl::GetFlag(FLAGS_calibration);
  if (path.empty()) {
    return std::string(
        "Calibration: none -- the alpha-beta terms only (--calibration="
        "compare.json adds the CPU costs a compare run measured on its "
        "machine; they hold for machines like that one).");
  }
  std::ifstream file(path);
  const nlohmann::json doc = nlohmann::json::parse(file, nullptr, false);
  if (!file.is_open() || doc.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--calibration=", path, ": not a readable JSON file"));
  }
  if (!doc.contains("cost_model") || !doc["cost_model"].is_object() ||
      !doc["cost_model"].contains("calibration") ||
      doc["cost_model"]["calibration"].is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--calibration=", path,
        ": no cost_model.calibration (a compare.json from a run with the "
        "cost model and --calibrate)"));
  }
  absl::StatusOr<CpuCosts> cpu =
      CpuCostsFromJson(doc["cost_model"]["calibration"]);
  if (!cpu.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--calibration=", path, ": ", cpu.status().message()));
  }
  in.cpu = *cpu;
  // The cores are the calibrated machine's, which the predicted workers
  // and servers do not share: no core limit (C = 0).
  const int calibrated_cores = in.cpu.cores;
  in.cpu.cores = 0;
  std::string where = "its machine";
  if (doc.contains("hardware") && doc["hardware"].is_object() &&
      doc["hardware"].contains("cpu_model") &&
      doc["hardware"]["cpu_model"].is_string()) {
    where = doc["hardware"]["cpu_model"].get<std::string>();
  }
  return absl::StrCat(
      "Calibration: from ", path, " (measured on ", where,
      "): ", CpuCostsJson(in.cpu).dump(),
      ". Each link is a wire of its own: the per-byte CPU terms and the "
      "collectives' ring steps run while the bytes are on it, and the "
      "slower of the two counts. Its machine's ",
      calibrated_cores,
      " cores do not limit the predicted processes, which run on machines "
      "of their own (cores 0: async_ps's rounds hide behind the compute, "
      "and no cores' bound).");
}

// τ of async_ps's study flags (its formula's, which formula_registry_test
// checks against the registry's): the setting compare runs it at; 0 when
// they set none.
int64_t StudyStaleness() {
  const std::optional<std::string> value =
      FormulaRegistry::StudyFlag("async_ps", "staleness");
  int64_t tau = 0;
  return value.has_value() && absl::SimpleAtoi(*value, &tau) ? tau : 0;
}

absl::Status SetWorkerSettings(const std::string& optimizer, double momentum,
                               CostInputs& in) {
  absl::StatusOr<FusionOptions> fusion = FusionOptionsFromFlags();
  if (!fusion.ok()) return fusion.status();
  in.fusion_threshold_bytes =
      static_cast<double>(fusion->fusion_threshold_bytes);
  in.cycle_s = absl::ToDoubleSeconds(fusion->cycle_time);
  in.overlap = absl::GetFlag(FLAGS_overlap);
  absl::StatusOr<AsyncPsOptions> async_ps = AsyncPsOptionsFromFlags();
  if (!async_ps.ok()) return async_ps.status();
  in.staleness = async_ps->staleness;
  if (in.staleness == 0) in.staleness = StudyStaleness();
  in.ps_push_pull_overlap = absl::GetFlag(FLAGS_ps_push_pull_overlap);
  // The parameter servers' chunks (0: AutoChunkBytes) and transport.
  absl::StatusOr<PsOptions> ps = PsOptionsFromFlags();
  if (!ps.ok()) return ps.status();
  in.ps_chunk_bytes = static_cast<double>(ps->chunk_bytes);
  // ring's gradient buckets (and the buckets of the strategies on them).
  absl::StatusOr<GradientBucketOptions> buckets =
      GradientBucketOptionsFromFlags();
  if (!buckets.ok()) return buckets.status();
  in.bucket_bytes = static_cast<double>(buckets->bucket_bytes);
  in.first_bucket_bytes = static_cast<double>(buckets->first_bucket_bytes);
  // Every formula's own options, from the flags this binary shares with
  // the worker; one left at its default (or not a flag of this binary)
  // takes the study's setting (StrategyFormula::study_flags: what compare
  // runs the strategy at).
  for (const std::string& flag : FormulaRegistry::OptionFlags()) {
    if (const absl::CommandLineFlag* f = absl::FindCommandLineFlag(flag)) {
      in.strategy_options[flag] = f->CurrentValue();
    }
  }
  for (const std::string& name : FormulaRegistry::Names()) {
    for (const std::string& flag : FormulaRegistry::Find(name)->options()) {
      const absl::CommandLineFlag* f = absl::FindCommandLineFlag(flag);
      const std::optional<std::string> study =
          FormulaRegistry::StudyFlag(name, flag);
      if (study && (f == nullptr || f->CurrentValue() == f->DefaultValue())) {
        in.strategy_options[flag] = *study;
      }
    }
  }
  OptimizerConfig config;
  config.type = optimizer;
  config.momentum = static_cast<float>(momentum);
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  in.optimizer_state_per_param = config.StateFloatsPerParameter();
  return absl::OkStatus();
}

// The bytes of `profile`'s gradients in backward's order (its last
// tensor first); empty with --ready_schedule=none. INVALID_ARGUMENT for
// another value.
absl::StatusOr<std::vector<double>> BackwardBytes(
    const GradientProfile& profile) {
  const std::string schedule = absl::GetFlag(FLAGS_ready_schedule);
  if (schedule == "none") return std::vector<double>();
  if (schedule != "proportional") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ready_schedule must be proportional or none, got '", schedule,
        "'"));
  }
  absl::StatusOr<TensorLayout> layout = profile.Layout();
  if (!layout.ok()) return layout.status();
  std::vector<double> bytes;
  for (int i = layout->num_tensors() - 1; i >= 0; --i) {
    bytes.push_back(static_cast<double>(layout->tensor(i).size) * 4);
  }
  return bytes;
}

// The profile's model into `in` (M, T and the tensors' shapes) and its
// tensors' bytes in backward's order into `backward_bytes` (BackwardBytes).
absl::Status SetProfileModel(const GradientProfile& profile, CostInputs& in,
                             std::vector<double>& backward_bytes) {
  in.model_bytes = 4.0 * static_cast<double>(profile.num_parameters());
  in.num_tensors = profile.num_tensors();
  absl::StatusOr<TensorLayout> layout = profile.Layout();
  if (!layout.ok()) return layout.status();
  in.tensor_shapes.clear();
  for (int i = 0; i < layout->num_tensors(); ++i) {
    in.tensor_shapes.push_back(layout->tensor(i).shape);
  }
  absl::StatusOr<std::vector<double>> bytes = BackwardBytes(profile);
  if (!bytes.ok()) return bytes.status();
  backward_bytes = *std::move(bytes);
  return absl::OkStatus();
}

// The proportional schedule of `backward_bytes` over the last of `passes`
// passes of in.compute_s (the earlier ones report nothing); none for empty
// bytes.
void SetReadySchedule(const std::vector<double>& backward_bytes,
                      int64_t passes, CostInputs& in) {
  if (backward_bytes.empty()) return;
  const double pass = in.compute_s / static_cast<double>(passes);
  in.gradient_ready = ProportionalReadySchedule(backward_bytes, pass);
  for (GradientReady& g : in.gradient_ready) {
    g.ready_s += static_cast<double>(passes - 1) * pass;
  }
}

// What the predictions take the overlap with backward from.
std::string OverlapSource(bool schedule, double overlap) {
  return schedule ? "overlap from the proportional ready schedule of the "
                    "profile's tensors (--ready_schedule)"
                  : absl::StrFormat("overlap o = %.2f of compute", overlap);
}

// Builds CostInputs from the flags; INVALID_ARGUMENT on bad input.
absl::StatusOr<CostInputs> ReadFlags(std::string* model_label) {
  CostInputs in;
  std::vector<double> backward_bytes;  // the profile's, for the schedule
  const std::string profile_name = absl::GetFlag(FLAGS_profile);
  *model_label = "explicit";
  if (!profile_name.empty()) {
    absl::StatusOr<GradientProfile> profile = FindGradientProfile(profile_name);
    if (!profile.ok()) return profile.status();
    *model_label = profile->name == profile_name
                       ? profile_name
                       : absl::StrCat(profile->name, " (", profile_name, ")");
    if (absl::Status s = SetProfileModel(*profile, in, backward_bytes);
        !s.ok()) {
      return s;
    }
  }
  if (absl::GetFlag(FLAGS_model_bytes) < 0 ||
      absl::GetFlag(FLAGS_tensors) < 0) {
    return absl::InvalidArgumentError(
        "--model_bytes and --tensors must be >= 0 (0: from --profile)");
  }
  if (absl::GetFlag(FLAGS_model_bytes) > 0) {
    in.model_bytes = static_cast<double>(absl::GetFlag(FLAGS_model_bytes));
    *model_label = "explicit";
    backward_bytes.clear();  // not the profile's tensors
    in.tensor_shapes.clear();
  }
  if (absl::GetFlag(FLAGS_tensors) > 0) {
    in.num_tensors = absl::GetFlag(FLAGS_tensors);
    *model_label = "explicit";
    backward_bytes.clear();
    in.tensor_shapes.clear();
  }
  if (in.model_bytes <= 0) {
    return absl::InvalidArgumentError(
        "no model size: give --profile or --model_bytes (and --tensors)");
  }
  if (absl::GetFlag(FLAGS_accumulate_steps) < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--accumulate_steps must be >= 1, got ",
                     absl::GetFlag(FLAGS_accumulate_steps)));
  }
  // Gradient accumulation: k passes of compute per synchronization.
  in.compute_s = absl::GetFlag(FLAGS_compute_ms) * 1e-3 *
                 static_cast<double>(absl::GetFlag(FLAGS_accumulate_steps));
  in.bandwidth_Bps = absl::GetFlag(FLAGS_link_gbit) * 1e9 / 8;
  in.latency_s = absl::GetFlag(FLAGS_link_latency_us) * 1e-6;
  in.servers = absl::GetFlag(FLAGS_servers);
  in.servers_per_host = absl::GetFlag(FLAGS_servers_per_node);
  in.server_hosts = absl::GetFlag(FLAGS_server_hosts);
  in.compute_slowdown = absl::GetFlag(FLAGS_compute_slowdown);
  in.sync_fixed_s = absl::GetFlag(FLAGS_sync_fixed_ms) * 1e-3;
  RS_ASSIGN_OR_RETURN(const HierarchicalOptions hosts,
                      HierarchicalOptionsFromFlags());
  in.ranks_per_host = hosts.local_size;
  in.intra_bandwidth_Bps = absl::GetFlag(FLAGS_intra_link_gbit) * 1e9 / 8;
  in.intra_latency_s = absl::GetFlag(FLAGS_intra_link_latency_us) < 0
                           ? -1.0
                           : absl::GetFlag(FLAGS_intra_link_latency_us) * 1e-6;
  if (absl::Status s = SetWorkerSettings(absl::GetFlag(FLAGS_optimizer),
                                        absl::GetFlag(FLAGS_momentum), in);
      !s.ok()) {
    return s;
  }
  SetReadySchedule(backward_bytes, absl::GetFlag(FLAGS_accumulate_steps), in);
  if (absl::Status s = ValidateCostInputs(in); !s.ok()) return s;
  return in;
}

absl::Status WriteJson(const nlohmann::json& doc) {
  std::filesystem::path path = absl::GetFlag(FLAGS_json_out);
  // Under `bazel run`, relative to where the command was typed.
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      path.is_relative() && cwd != nullptr) {
    path = std::filesystem::path(cwd) / path;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(
      std::fopen(path.c_str(), "w"), &std::fclose);
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  }
  JsonLinesWriter(file.get()).Write(doc);
  if (std::ferror(file.get())) {
    return absl::UnavailableError(
        absl::StrCat("error writing ", path.string()));
  }
  return absl::OkStatus();
}

// The study-format table of one n on a cluster: per strategy, PrmSrv,
// the utilization of each (identical) worker, Total, throughput, speedup,
// efficiency and the step, fastest first.
std::string ClusterTable(const std::vector<Prediction>& at_n, int64_t n,
                         const ClusterSpec& cluster, int64_t staleness) {
  std::string md = absl::StrFormat(
      "\n### n = %d worker%s (%s)\n\n| Parallel type | PrmSrv | Util/worker "
      "| Total | Throughput (samples/s) | Speedup | Scaling eff. | Step (ms) "
      "| Updates |\n|:--|--:|--:|--:|--:|--:|--:|--:|:--|\n",
      n, n == 1 ? "" : "s",
      n <= cluster.gpus_per_node ? "one node, intra-node link"
                                 : absl::StrCat((n + cluster.gpus_per_node - 1) /
                                                    cluster.gpus_per_node,
                                                " nodes, inter-node link"));
  for (const Prediction& p : at_n) {
    const double throughput =
        static_cast<double>(p.workers * cluster.batch_size) / p.step_s;
    absl::StrAppendFormat(&md,
                          "| %s | %d | %.0f%% | %.2f | %.1f | %.2f | %.2f | "
                          "%.3g | %s |\n",
                          p.strategy, p.servers, 100 * p.utilization,
                          p.utilization * static_cast<double>(p.workers),
                          throughput, p.speedup, p.scaling_efficiency,
                          p.step_s * 1e3, UpdatesLabel(p.strategy, staleness));
  }
  return md;
}

// predict --cluster: per n = 1, 2, 4, ... up to the cluster's GPUs (at
// most 1024 and --max_workers), every strategy on the cluster's links;
// the crossover table (the fastest and the runner-up per n), then the
// study-format tables.
int RunCluster() {
  absl::StatusOr<ClusterSpec> cluster =
      ReadClusterFile(absl::GetFlag(FLAGS_cluster));
  if (!cluster.ok()) {
    std::fprintf(stderr, "bad cluster file: %s\n",
                 std::string(cluster.status().message()).c_str());
    return 2;
  }
  CostInputs base;
  std::vector<double> backward_bytes;  // the profile's, for the schedule
  if (!cluster->profile.empty()) {
    absl::StatusOr<GradientProfile> profile =
        FindGradientProfile(cluster->profile);
    if (!profile.ok()) {
      std::fprintf(stderr, "bad cluster file: %s: field 'profile': %s\n",
                   cluster->path.c_str(),
                   std::string(profile.status().message()).c_str());
      return 2;
    }
    if (absl::Status s = SetProfileModel(*profile, base, backward_bytes);
        !s.ok()) {
      std::fprintf(stderr, "bad flags: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
  } else {
    base.model_bytes = static_cast<double>(cluster->model_bytes);
    base.num_tensors = cluster->tensors;
  }
  if (absl::Status s =
          SetWorkerSettings(cluster->optimizer, cluster->momentum, base);
      !s.ok()) {
    std::fprintf(stderr, "bad cluster file or flags: %s\n",
                 std::string(s.message()).c_str());
    return 2;
  }

  const absl::StatusOr<std::string> calibration = SetCalibration(base);
  if (!calibration.ok()) {
    std::fprintf(stderr, "bad flags: %s\n",
                 std::string(calibration.status().message()).c_str());
    return 2;
  }
  const int64_t max_n = std::min<int64_t>(
      {cluster->gpus(), int64_t{1024}, absl::GetFlag(FLAGS_max_workers)});
  if (max_n < 1) {
    std::fprintf(stderr, "bad flags: --max_workers must be >= 1\n");
    return 2;
  }
  std::vector<int64_t> counts;
  for (int64_t n = 1; n < max_n; n *= 2) counts.push_back(n);
  counts.push_back(max_n);
  absl::PrintF(
      "Cluster %s (predicted, not measured): %d nodes x %d GPUs; intra-node "
      "link: %s; inter-node link: %s; t_c = %.3g ms "
      "per step%s; M = %.1f MB in %d tensors; batch %d per worker; %s; "
      "%s.\n%s\n",
      cluster->path, cluster->nodes, cluster->gpus_per_node,
      cluster->intra_node.description, cluster->inter_node.description,
      cluster->compute_ms,
      cluster->compute_from.empty()
          ? ""
          : absl::StrCat(" (from ", cluster->compute_from, ")"),
      base.model_bytes / 1e6, static_cast<int>(base.num_tensors),
      static_cast<int>(cluster->batch_size),
      OverlapSource(!backward_bytes.empty(), base.overlap),
      cluster->FrameworkTermsDescription(), calibration->c_str());
  std::string crossover =
      "\n## Crossover: the fastest strategy per n\n\nExact strategies (the "
      "same update as one worker on the whole batch) are ranked by "
      "throughput; a lossy or stale one (ring_fp16's fp16 gradients, "
      "async_ps's late ones) is named apart where it is faster, since its "
      "samples can buy less loss: compare's time to a target loss "
      "(--target_loss) judges it.\n\n| n | link | fastest (exact) | "
      "samples/s | runner-up (exact) | samples/s | faster, not exact | "
      "samples/s |\n|--:|:--|:--|--:|:--|--:|:--|--:|\n";
  std::string tables = "\n## Study-format tables\n";
  nlohmann::json json_rows = nlohmann::json::array();
  for (int64_t n : counts) {
    std::vector<Prediction> at_n;
    for (const std::string& s : absl::GetFlag(FLAGS_strategies)) {
      if (s == "baseline" && n > 1) continue;
      CostInputs in = ClusterInputs(*cluster, base, n);
      SetReadySchedule(backward_bytes, 1, in);
      absl::StatusOr<Prediction> p = PredictStep(s, in);
      if (!p.ok()) {
        std::fprintf(stderr, "bad inputs: %s\n",
                     std::string(p.status().message()).c_str());
        return 2;
      }
      at_n.push_back(*p);
      nlohmann::json one = PredictionJson(*p);
      one["samples_per_s"] =
          static_cast<double>(p->workers * cluster->batch_size) / p->step_s;
      one["bandwidth_Bps"] = in.bandwidth_Bps;
      one["link_latency_s"] = in.latency_s;
      json_rows.push_back(one);
    }
    std::sort(at_n.begin(), at_n.end(),
              [](const Prediction& a, const Prediction& b) {
                return a.speedup > b.speedup;
              });
    auto samples = [&](const Prediction& p) {
      return static_cast<double>(p.workers * cluster->batch_size) / p.step_s;
    };
    const int64_t staleness = base.staleness;
    std::vector<const Prediction*> exact;
    const Prediction* inexact = nullptr;  // the fastest lossy or stale one
    for (const Prediction& p : at_n) {
      if (UpdatesOf(p.strategy, staleness) == Updates::kExact) {
        exact.push_back(&p);
      } else if (inexact == nullptr) {
        inexact = &p;
      }
    }
    if (exact.empty()) {
      std::fprintf(stderr,
                   "bad flags: --strategies has no exact strategy to rank\n");
      return 2;
    }
    // Equal predictions (one worker does not communicate) are a tie, not a
    // win.
    const bool tie = exact.size() > 1 &&
                     std::abs(exact[1]->step_s - exact[0]->step_s) <=
                         1e-12 * exact[0]->step_s;
    const bool faster_inexact =
        inexact != nullptr && inexact->step_s < exact[0]->step_s;
    absl::StrAppendFormat(
        &crossover, "| %d | %s | %s | %.1f | %s | %s | %s | %s |\n", n,
        n <= cluster->gpus_per_node ? "intra-node" : "inter-node",
        exact[0]->strategy, samples(*exact[0]),
        exact.size() > 1
            ? absl::StrCat(exact[1]->strategy, tie ? " (tie)" : "")
            : "-",
        exact.size() > 1 ? absl::StrFormat("%.1f", samples(*exact[1])) : "-",
        faster_inexact
            ? absl::StrCat(inexact->strategy, ", ",
                           UpdatesLabel(inexact->strategy, staleness))
            : "-",
        faster_inexact ? absl::StrFormat("%.1f", samples(*inexact)) : "-");
    tables += ClusterTable(at_n, n, *cluster, staleness);
  }
  std::fputs((crossover + tables).c_str(), stdout);
  std::fflush(stdout);
  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    const nlohmann::json doc = {
        {"cluster",
         {{"path", cluster->path},
          {"nodes", cluster->nodes},
          {"gpus_per_node", cluster->gpus_per_node},
          {"compute_s", cluster->compute_ms * 1e-3},
          {"batch_size", cluster->batch_size},
          {"model_bytes", base.model_bytes},
          {"intra_node_link", cluster->intra_node.description},
          {"inter_node_link", cluster->inter_node.description},
          {"framework_terms", cluster->FrameworkTermsDescription()}}},
        {"predictions", json_rows}};
    if (absl::Status s = WriteJson(doc); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  return 0;
}

int Run() {
  if (!absl::GetFlag(FLAGS_cluster).empty()) return RunCluster();
  std::string model_label;
  absl::StatusOr<CostInputs> in = ReadFlags(&model_label);
  if (!in.ok()) {
    std::fprintf(stderr, "bad flags: %s\n",
                 std::string(in.status().message()).c_str());
    return 2;
  }
  const absl::StatusOr<std::string> calibration = SetCalibration(*in);
  if (!calibration.ok()) {
    std::fprintf(stderr, "bad flags: %s\n",
                 std::string(calibration.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<std::vector<Prediction>> predictions = PredictSweep(
      absl::GetFlag(FLAGS_strategies), *in, absl::GetFlag(FLAGS_max_workers));
  if (!predictions.ok()) {
    std::fprintf(stderr, "bad flags: %s\n",
                 std::string(predictions.status().message()).c_str());
    return 2;
  }
  absl::PrintF(
      "Cost model (predicted, not measured): model %s, M = %.1f MB, T = %d "
      "tensors, t_c = %.3g ms, B = %.3g Gbit/s, alpha = %.3g us, K = %d "
      "servers, F = %.1f MB, tau = %.3g ms, %s, PS push/pull "
      "%s, optimizer state s = %g per parameter (%s); t_c holds %d "
      "forward/backward pass(es) per synchronization; hierarchical: %s, "
      "B_i = %.3g Gbit/s, alpha_i = %.3g us; byteps's summation servers: "
      "%s\n\n",
      model_label, in->model_bytes / 1e6, in->num_tensors, in->compute_s * 1e3,
      in->bandwidth_Bps * 8 / 1e9, in->latency_s * 1e6, in->servers,
      in->fusion_threshold_bytes / 1e6, in->cycle_s * 1e3, 
      OverlapSource(!in->gradient_ready.empty(), in->overlap),
      in->ps_push_pull_overlap ? "overlapped (full duplex)" : "serial",
      in->optimizer_state_per_param, absl::GetFlag(FLAGS_optimizer),
      static_cast<int>(absl::GetFlag(FLAGS_accumulate_steps)),
      in->ranks_per_host > 0
          ? absl::StrCat("r = ", in->ranks_per_host, " ranks per host")
          : std::string("every worker on one host"),
      (in->intra_bandwidth_Bps > 0 ? in->intra_bandwidth_Bps
                                   : in->bandwidth_Bps) *
          8 / 1e9,
      (in->intra_latency_s >= 0 ? in->intra_latency_s : in->latency_s) * 1e6,
      in->servers_per_host == 0 && in->server_hosts == 0
          ? absl::StrCat("the K = ", in->servers, " above, each on a host of "
                         "its own")
          : absl::StrCat(in->servers_per_host, " on each worker host + ",
                         in->server_hosts, " on hosts of their own"));
  absl::PrintF("%s\n\n", *calibration);
  std::fputs(PredictionsMarkdown(*predictions).c_str(), stdout);
  std::fflush(stdout);
  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    nlohmann::json doc = PredictionsJson(*in, *predictions);
    doc["model"] = model_label;
    if (absl::Status s = WriteJson(doc); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(absl::StrCat(
      "Cost model of the sync strategies: predicted step time, utilization "
      "and speedup for n = 1, 2, 4, ... workers.\n  Profiles: ",
      ringside::GradientProfileNameList(),
      "\n  predict --profile=resnet50 --compute_ms=100 --link_gbit=25"));
  absl::ParseCommandLine(argc, argv);
  if (absl::Status s = ringside::ApplyFlagAliases(); !s.ok()) {
    std::fprintf(stderr, "predict: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  return ringside::Run();
}

// Cluster files: the cluster a user does not have yet, for
// `predict --cluster=FILE` (experiments/predict_main.cc). One "key = value"
// per line; '#' starts a comment; blank lines are ignored; every key at
// most once:
//
//   nodes = 16                  hosts, >= 1
//   gpus_per_node = 8           workers per host, >= 1
//   intra_node_gbit = 2400      link between the GPUs of a host (Gbit/s)
//   intra_node_latency_us = 3   its per-message latency (µs)
//   inter_node_gbit = 100       each host's network link (Gbit/s)
//   inter_node_latency_us = 5   its latency (µs)
//   compute_ms = 100            t_c: one worker's compute per step, or
//   compute_from = out/compare.json:ring
//                               the compute per step of that strategy's
//                               run with the fewest workers in a compare
//                               run's JSON (relative to the file's folder)
//   profile = resnet50          the model: a gradient profile, or
//   model_bytes = 102228128     M and
//   tensors = 161               T
//   batch_size = 32             per worker, for throughput (default 32)
//   servers = 4                 K of dps and async_ps (default: nodes)
//   servers_per_node = 1        byteps's summation servers on each node
//                               (default 1, BytePS's colocated layout)
//   server_hosts = 0            and on CPU hosts of their own, one each,
//                               behind inter_node_gbit links (default 0)
//   optimizer = sgd             sgd or adam, for the memory columns
//   momentum = 0.9              (default sgd, 0.9)
//   compute_slowdown = 0.12     σ: how much slower the compute runs while
//                               the communication it hides runs beside it
//                               (default: kPublishedComputeSlowdown, with
//                               its source; measure yours with
//                               experiments/bench/contention_bench.py)
//   sync_fixed_ms = 1.5         f: the framework's fixed cost a step of
//                               synchronizing (hooks, bucket copies), at
//                               n > 1 (default 0: not priced; measured by
//                               the same script)
//   intra_node_collectives = nccl/allreduce_8gpu.txt
//   inter_node_collectives = nccl/allreduce_2n.txt, nccl/allreduce_4n.txt
//                               measured collectives of that link, printed
//                               by nccl-tests or collective_bench
//                               (measured_collectives.h; relative to the
//                               file's folder), at the ranks each run had
//   intra_node_link = nvswitch  or: a built-in link table of published
//   inter_node_link = tcp       measurements (builtin_link_tables.h), by
//                               its name or its link type's default,
//                               scaled from its nominal rate to the
//                               *_gbit above
//
// Beyond one node the workers of a host share its inter-node link: their
// parameter-server pushes and pulls cross it together (workers_per_link =
// gpus_per_node; cost_types.h).
//
// How a link is priced (ClusterSpec::LinkPricing): with measured or
// built-in collectives, B and α of every formula at n ranks are the α-β
// line through the all-reduce's interpolated times at ring's two bucket
// sizes (ring_first_bucket_kb and ring_bucket_kb, each at most M;
// FitAllReduceLink; the nominal *_latency_us where the table starts above
// the first bucket); without, the nominal *_gbit and *_latency_us.
//
// The workers of a job of n fill hosts in order: n <= gpus_per_node runs
// on one host, over the intra-node link; beyond, every flat collective and
// every parameter-server transfer crosses the inter-node link (the slowest
// on the path), and hierarchical reduces within hosts of gpus_per_node
// ranks on the intra-node link and across hosts on the inter-node one.
#ifndef RINGSIDE_EXPERIMENTS_COST_CLUSTER_FILE_H_
#define RINGSIDE_EXPERIMENTS_COST_CLUSTER_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/cost/cost_model.h"
#include "experiments/cost/measured_collectives.h"

namespace ringside {

// How one of a cluster's links is priced: measured collectives (given or
// built-in), or none (the nominal rate and latency).
struct LinkPricing {
  std::vector<std::string> files;  // *_collectives, as given
  std::string link;                // *_link, as given
  // Resolved by ReadClusterFile (null: nominal), and what it was: "nominal
  // 100 Gbit/s, 5 us", "measured: a.txt (all_reduce at 16, 32 ranks)",
  // "built-in tcp_25g (tcp; source ...), scaled x4".
  std::shared_ptr<const MeasuredCollectives> measured;
  std::string description;
};

// σ where a cluster file gives none: "Characterizing Compute-Communication
// Overlap in GPU-Accelerated Distributed Deep Learning: Performance and
// Power Implications" (arXiv 2507.03114, 2025): GPT and LLaMA training on
// 4 A100s, H100s, MI250s and MI210s, compute 18.9% slower on average
// (40.0% at most) while communication ran beside it than alone.
inline constexpr double kPublishedComputeSlowdown = 0.189;
inline constexpr char kComputeSlowdownSource[] =
    "published: arXiv 2507.03114, the mean slowdown of compute overlapped "
    "with communication over its GPT/LLaMA runs on 4 A100/H100/MI250/MI210";

struct ClusterSpec {
  std::string path;  // where it was read from
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  double intra_node_gbit = 0;
  double intra_node_latency_us = 0;
  double inter_node_gbit = 0;
  double inter_node_latency_us = 0;
  double compute_ms = 0;     // given, or read from compute_from
  std::string compute_from;  // "PATH:STRATEGY", "" when given
  std::string profile;       // "" when model_bytes and tensors are given
  int64_t model_bytes = 0;
  int64_t tensors = 0;
  int64_t batch_size = 32;
  int64_t servers = 0;  // 0: nodes
  int64_t servers_per_node = 1;
  int64_t server_hosts = 0;
  std::string optimizer = "sgd";
  double momentum = 0.9;
  LinkPricing intra_node;
  LinkPricing inter_node;
  // σ (< 0: not given, the published default) and f.
  double compute_slowdown = -1;
  double sync_fixed_ms = 0;
  // σ as ClusterInputs prices it, and where it came from.
  double ComputeSlowdown() const {
    return compute_slowdown >= 0 ? compute_slowdown
                                 : kPublishedComputeSlowdown;
  }
  // "σ = 18.9% (published: ...); f = 0 ms (not priced: ...)".
  std::string FrameworkTermsDescription() const;

  int64_t gpus() const { return nodes * gpus_per_node; }
};

// Parses a cluster file's text. INVALID_ARGUMENT "PATH:LINE: field 'KEY':
// what is wrong" for an unknown key, a key given twice, a value that does
// not parse or is out of range, a line that is not KEY = VALUE; "PATH:
// ..." for a missing field (the link fields, nodes, gpus_per_node, one of
// compute_ms / compute_from, one of profile / model_bytes + tensors).
absl::StatusOr<ClusterSpec> ParseClusterFile(const std::string& text,
                                             const std::string& path);

// Reads and parses the file at `path`; NOT_FOUND when it cannot be read.
// compute_from and the links' pricing are resolved here
// (ComputeFromCompareJson, ResolveLinkPricing).
absl::StatusOr<ClusterSpec> ReadClusterFile(const std::string& path);

// t_c in ms of `strategy`'s run with the fewest workers in compare's
// JSON (its cost_model.runs[].compute_s). NOT_FOUND naming the strategies
// there when it has none; INVALID_ARGUMENT when the file is not compare's.
absl::StatusOr<double> ComputeFromCompareJson(const std::string& json_path,
                                              const std::string& strategy);

// Reads the measured collectives of both links (files relative to the
// cluster file's folder; a built-in table scaled by the link's *_gbit over
// its nominal rate) and describes each link's pricing. INVALID_ARGUMENT
// "PATH: field 'KEY': ..." for a file that does not parse, an unknown
// built-in name, both keys of one link given, or a table without an
// all-reduce run.
absl::Status ResolveLinkPricing(ClusterSpec& spec);

// The cost model's inputs for a job of n workers on the cluster (see the
// file comment), from `base` (fusion, overlap, optimizer state: as given)
// with the cluster's model, compute and links.
CostInputs ClusterInputs(const ClusterSpec& cluster, const CostInputs& base,
                         int64_t workers);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_CLUSTER_FILE_H_

// SyncStrategy: how N identical workers keep their parameters in step.
//
// Lifecycle, all calls on the worker's training thread:
//   Init(context)            once: learn the layout, connect, agree with
//                            peers; on return context.params hold the
//                            initial parameters every rank agrees on.
//   per step t = 0, 1, ...:
//     OnGradientReady(i)     during backward, once per tensor, in the
//                            model's readiness order (may start comm early;
//                            must not block for long);
//     FinishStep(t)          blocks until the parameters for step t+1 are in
//                            context.params; reports traffic and local
//                            optimizer time.
//   Shutdown()               once, after the last step;
//   Abort()                  instead, once, when training ends early.
// Every blocking call has a deadline (SyncOptions) and fails with a Status
// naming what it waited for.
//
// Devices: SyncContext::device says where params and grads live. A strategy
// that takes CUDA device buffers says so with SupportsDevice(kCuda) (ring,
// fusion, baseline, zero1 to zero3: NCCL and the optimizer on the device);
// the CUDA backend (worker/cuda_backend.h) runs the others (sps, dps,
// async_ps, hierarchical, ring_fp16) through HostStagingStrategy, which
// hands them pinned host copies (worker/strategies/host_staging_strategy.h).
//
// Strategies register themselves in their own .cc (linked with
// alwayslink), with everything else needs to know about them, so adding one
// edits nothing else:
//   RINGSIDE_REGISTER_STRATEGY(SpsStrategy,
//       StrategyInfo("sps", ServerNeed::kOne)
//           .Describe("single parameter server over gRPC")
//           .Display("SPS").StudyOrder(1).ModelledAs("sps")
//           .Options({"chunk_kb", "checkpoint_every", "resume"}));
// A strategy that is not equivalent to the reference to float32 rounding
// (e.g. fp16 compression) declares the relative error it meets instead
// (.Tolerance(1e-2): StrategyInfo::oracle_tolerance).
// docs/ADDING_A_STRATEGY.md walks through adding one.
#ifndef RINGSIDE_WORKER_SYNC_STRATEGY_H_
#define RINGSIDE_WORKER_SYNC_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "collectives/collective.h"
#include "collectives/gloo_loop_pacing.h"
#include "collectives/store.h"
#include "common/grpc_credentials.h"
#include "common/net_address.h"
#include "common/timeline.h"
#include "core/optimizer_config.h"
#include "core/tensor_layout.h"
#include "device/cuda_handles.h"
#include "worker/strategy_option_set.h"

namespace ringside {

class MappedDeviceBuffer;  // device/mapped_device_buffer.h
struct ParamUseHooks;  // models/model.h

// Options shared by the strategies (flags map onto these), and each
// strategy's or family's own options struct in `strategy`.
struct SyncOptions {
  // Parameter servers, in shard order (sps: exactly one; dps: K >= 1).
  std::vector<HostPort> servers;
  // Deadline of each RPC or wait once connected.
  absl::Duration rpc_timeout = absl::Seconds(120);
  // How long to keep trying to reach peers/servers at start-up.
  absl::Duration connect_timeout = absl::Seconds(30);
  // Start communicating a range as soon as its gradients are final (true),
  // or only after backward ends (false). Strategies say whether they use it.
  bool overlap = true;
  // The job's rendezvous store (not owned; outlives the strategy). Set by
  // the worker for strategies registered with needs_store.
  Store* store = nullptr;
  // Address the collective transport (Gloo TCP) binds and advertises; a
  // multi-host job sets this host's reachable address.
  std::string transport_host = "127.0.0.1";
  // All-reduce algorithm of the CPU collective: "ring" or
  // "halving_doubling".
  std::string allreduce_algorithm = "ring";
  // How Gloo's TCP event loop is scheduled (GlooCollectiveOptions::
  // event_loop, collectives/gloo_loop_pacing.h).
  GlooEventLoop gloo_event_loop = GlooEventLoop::kPaced;
  // Where strategies record their communication phases (not owned; may be
  // null: no timeline). See common/timeline.h for the lanes and phases.
  Timeline* timeline = nullptr;
  // Checkpoints of the strategies that apply the optimizer on the workers
  // (rank 0 writes AllReduceCheckpointPath(checkpoint_dir) every
  // checkpoint_every steps; 0: never) and resume from it when `resume`.
  // Parameter-server strategies checkpoint on the servers and resume when
  // the servers did.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  // Whether checkpoint_every asks for a checkpoint after `step` (0-based:
  // every-th, 2·every-th, ... step done).
  bool CheckpointDue(int64_t step) const {
    return checkpoint_every > 0 && (step + 1) % checkpoint_every == 0;
  }
  // The options that belong to one strategy or family, each its own struct
  // beside it (strategy_option_set.h): PsOptions (ps/ps_options.h),
  // AsyncPsOptions, GradientBucketOptions (allreduce/bucket_options.h),
  // HierarchicalOptions, FusionOptions (collectives/fusion/fusion_options.h).
  StrategyOptionSet strategy;
  // Token and TLS of the job's gRPC traffic (parameter servers and the
  // rendezvous store; common/grpc_credentials.h). Default: insecure, no
  // token.
  GrpcSecurity security;

  absl::Status Validate() const;
};

// What a strategy works on; the spans are owned by the worker and outlive
// the strategy.
struct SyncContext {
  int rank = 0;
  int world_size = 1;
  TensorLayout layout;
  absl::Span<float> params;  // read/written by the strategy
  // Final gradients of the current step; a strategy may reduce them in
  // place (all-reduce), so they are writable.
  absl::Span<float> grads;
  OptimizerConfig optimizer;
  SyncOptions options;

  // Where params and grads live. kCpu (default): host memory, and a
  // gradient is final when OnGradientReady runs. kCuda: device memory of
  // CUDA device `cuda_device` -- the spans hold device pointers (never
  // dereference them on the host), and when OnGradientReady(i) runs
  // gradient i is only QUEUED on `compute_stream`: order reads of it after
  // grad_ready_event(i) (cudaEventSynchronize on the host, or
  // cudaStreamWaitEvent on another stream). FinishStep must leave params
  // final for work on `compute_stream` (the next forward).
  Device device = Device::kCpu;
  int cuda_device = -1;                 // kCuda only
  CudaStream compute_stream = nullptr;  // kCuda only; the model's stream
  std::function<CudaEvent(int)> grad_ready_event;  // kCuda only
  // kCuda, when the backend laid params and grads out page by page for a
  // strategy that keeps them sharded (worker/cuda_backend.h): their pages,
  // every one mapped and held once until the strategy drops that hold
  // (device/mapped_device_buffer.h). Null otherwise: the buffers are whole.
  MappedDeviceBuffer* param_pages = nullptr;
  MappedDeviceBuffer* grad_pages = nullptr;
};

// Per-step report of FinishStep.
struct StepStats {
  // Seconds of local optimizer work inside FinishStep (counts as compute in
  // utilization); 0 when the servers apply the optimizer.
  double local_optimizer_s = 0.0;
  // Seconds of the step's ForwardBackward that the model spent blocked in
  // this strategy's parameter-use hooks (ParamUse: zero3 waiting for a
  // gather); taken out of the compute time.
  double hook_wait_s = 0.0;
  // Payload bytes this worker sent and received during the step.
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  // Sharded strategies (zero1-3): the bytes their ring collectives keep the
  // busiest link sending one after another (PipelinedRingCriticalBytes
  // per reduce-scatter and all-gather,
  // worker/strategies/sharded/sharded_optimizer.h: more than bytes_sent when a
  // collective's shards are uneven); 0: not
  // reported. The cost model's zero formulas use it (the final record's
  // ring_critical_bytes).
  int64_t ring_critical_bytes = 0;
};

class SyncStrategy {
 public:
  virtual ~SyncStrategy() = default;
  virtual std::string name() const = 0;
  virtual absl::Status Init(const SyncContext& context) = 0;
  virtual void OnGradientReady(int tensor_index) = 0;
  virtual absl::StatusOr<StepStats> FinishStep(int64_t step) = 0;
  virtual absl::Status Shutdown() { return absl::OkStatus(); }
  // Instead of Shutdown when training ends early (an error before the last
  // step, on any exit path of the training loop): stops everything the
  // strategy runs behind the training thread, so that nothing reads or
  // writes context.params or grads once it returns, without the goodbye
  // Shutdown says to servers or peers (they learn of the failure from
  // their own deadlines and heartbeats, naming what failed). Bounded by
  // rpc_timeout. Default: Shutdown().
  virtual absl::Status Abort() { return Shutdown(); }
  // After Init: the step training continues at — 0, or the step of the
  // checkpoint the job resumed from (context.params then hold it).
  virtual int64_t start_step() const { return 0; }
  // Whether Init accepts a context with this device (see the file comment).
  virtual bool SupportsDevice(Device device) const {
    return device == Device::kCpu;
  }
  // After Init: the setting that tells this run of the strategy apart in a
  // table, e.g. "τ=2" (async_ps) or "2×4" (hierarchical: hosts × ranks per
  // host); "" when there is none. The final record carries it as
  // "variant" and compare appends it to the row's name.
  virtual std::string Variant() const { return ""; }
  // After Init: bytes of optimizer state this worker holds (0 where the
  // parameter servers hold it); the final record's optimizer_state_bytes.
  virtual int64_t OptimizerStateBytes() const { return 0; }
  // After Init: the settings of this strategy that its cost formula reads
  // (e.g. ring's bucket caps, a parameter server's chunk), as final-record
  // fields; the strategy writes its own. An empty object (default): none.
  virtual nlohmann::json RecordFields() const {
    return nlohmann::json::object();
  }
  // Strategies that keep the parameters sharded (zero3): the hooks the
  // model must call as it reads parameters (models/model.h's parameter-use
  // contract), available from construction; the training loop refuses a
  // model or backend that cannot report parameter use, and such a strategy
  // without SupportsDevice for the backend's buffers (host staging would
  // gather into copies the model does not read). nullptr (default):
  // the model reads the whole buffer whenever it likes.
  virtual const ParamUseHooks* ParamUse() const { return nullptr; }
  // After the last step: the most parameter and gradient bytes this worker
  // held at once during the steps, for a strategy that frees parts of the
  // buffers (zero3); -1 (default): the whole buffers. The final record's
  // param_bytes and grad_bytes.
  virtual int64_t PeakParamBytes() const { return -1; }
  virtual int64_t PeakGradBytes() const { return -1; }
  // Mid-run evaluation (TrainerOptions::eval_every), on every rank at the
  // same steps, after FinishStep: PrepareEvaluation makes context.params
  // the whole current parameters (zero3 all-gathers them; the default has
  // nothing to do), EndEvaluation returns to the training layout (zero3
  // frees what is outside its shard again). Neither counts in PeakParamBytes.
  virtual absl::Status PrepareEvaluation() { return absl::OkStatus(); }
  virtual absl::Status EndEvaluation() { return absl::OkStatus(); }
  // Before the trainer pauses its clock after step `step` (a mid-run
  // evaluation, which the measured time leaves out): waits, bounded, until
  // the communication the strategy runs behind the training thread for
  // steps <= `step` is done, so that it is timed as training and not
  // during the pause (async_ps's rounds); parameters stay as they are. The
  // default has none.
  virtual absl::Status Quiesce(int64_t step) { return absl::OkStatus(); }
};

// Which parameter servers a strategy needs from the launcher.
enum class ServerNeed { kNone, kOne, kSharded };
const char* ServerNeedName(ServerNeed need);  // "none" | "one" | "sharded"

// What a strategy is, as registered with it: the one source of truth the
// worker (--list_strategies, option checks) and experiments/ (study order,
// row names, cost model) read. Built with the chained setters:
//   StrategyInfo("sps", ServerNeed::kOne)
//       .Describe("single parameter server over gRPC")
//       .Display("SPS").StudyOrder(1).ModelledAs("sps")
//       .Options({"chunk_kb", "checkpoint_every", "resume"})
struct StrategyInfo {
  StrategyInfo() = default;
  StrategyInfo(std::string strategy_name, ServerNeed need)
      : name(std::move(strategy_name)), servers(need) {}

  std::string name;
  ServerNeed servers = ServerNeed::kNone;
  // Whether Init needs SyncOptions::store (the job's rendezvous store).
  bool needs_store = false;
  std::string description;
  // The row name in the study's tables ("SPS", "Ring FP16").
  std::string display_name;
  // Position in the study's order (baseline 0, then sps, dps, ring, ...);
  // equal orders keep registration-name order.
  int study_order = 100;
  // The cost model's strategy whose formula predicts this one (one of
  // CostModelStrategies(), experiments/cost/cost_model.h; "" when none
  // applies; it also picks the memory formula), and the bytes on the wire
  // per model byte when that formula's strategy moves a different amount
  // (e.g. 0.5 for an fp16 ring predicted by ring's formula).
  std::string modelled_as;
  double wire_bytes_per_model_byte = 1.0;
  // The strategy-specific worker flags this strategy reads (names without
  // "--"). The worker refuses any strategy-specific flag (one that some
  // registered strategy lists) set away from its default for a strategy
  // that does not list it. "checkpoint_every" and "resume" here mean the
  // strategy checkpoints and resumes.
  std::vector<std::string> options;
  // Worker flags a study (compare) passes for this strategy before the
  // user's own (which win), as "--flag=value": the setting that shows the
  // strategy's point where the worker's default would hide it (async_ps:
  // --staleness=2; at 0 it is sps). Each names one of `options`.
  std::vector<std::string> study_flags;
  // The options whose values the strategy's Variant() states (async_ps:
  // "staleness", its "τ=2"), so that a row names each setting once: a
  // study labels the other options it sets in the row name. Each names one
  // of `options`.
  std::vector<std::string> variant_options;
  std::function<std::unique_ptr<SyncStrategy>()> factory;
  // Relative L2 error against the single-worker reference that the
  // strategy meets in the equivalence oracle (tests/worker/
  // registry_oracle_test.cc); 1e-5 = float32 rounding.
  double oracle_tolerance = 1e-5;
  // For a lossy strategy: sets the options under which it must equal the
  // exact strategies (its compression off: PowerSGD at full rank), which
  // the registry's oracle runs it with; empty: its defaults.
  std::function<void(StrategyOptionSet&)> oracle_options;
  // How its updates differ from the exact strategies', for the reports'
  // rankings where no cost formula says it (e.g. "lossy (PowerSGD, low
  // rank)"); empty: as its formula says, else exact.
  std::string updates;
  // The one optimizer (OptimizerConfig::type) under which its
  // oracle_options make it equal the exact strategies; empty: any. "sgd"
  // (plain or with momentum: an update linear in the gradient): local
  // SGD's parameter averaging, not equal with Adam; "adam": 1-bit Adam,
  // which is Adam's own. The oracles run such a strategy with that
  // optimizer only.
  std::string oracle_optimizer;
  // False for a lossy strategy with no setting that equals the exact
  // strategies (sign compression: one bit per element at any setting):
  // the oracles check that its ranks agree and that it trains, and record
  // its gap, instead of oracle_tolerance.
  bool exact_setting = true;
  // Whether a study (compare) runs it when no --strategies names the
  // strategies: false for the variants whose point needs a slow link
  // (compression and local steps on the main job's loopback cost compute
  // and save nothing); --strategies=all or naming it runs it.
  bool default_sweep = true;
  // Whether its servers only sum and keep no state across steps (byteps's
  // summation servers, server/param_shard.h): launchers start them without
  // checkpoint flags, fresh when the job resumes (the workers checkpoint).
  bool summation_servers = false;

  StrategyInfo& Store() {
    needs_store = true;
    return *this;
  }
  StrategyInfo& SummationServers() {
    summation_servers = true;
    return *this;
  }
  StrategyInfo& Describe(std::string text) {
    description = std::move(text);
    return *this;
  }
  StrategyInfo& Display(std::string row_name) {
    display_name = std::move(row_name);
    return *this;
  }
  StrategyInfo& StudyOrder(int order) {
    study_order = order;
    return *this;
  }
  StrategyInfo& ModelledAs(std::string cost_model_strategy,
                           double wire_bytes = 1.0) {
    modelled_as = std::move(cost_model_strategy);
    wire_bytes_per_model_byte = wire_bytes;
    return *this;
  }
  StrategyInfo& Options(std::vector<std::string> flags) {
    options = std::move(flags);
    return *this;
  }
  StrategyInfo& StudyFlags(std::vector<std::string> flags) {
    study_flags = std::move(flags);
    return *this;
  }
  StrategyInfo& VariantStates(std::vector<std::string> flags) {
    variant_options = std::move(flags);
    return *this;
  }
  StrategyInfo& WithFactory(
      std::function<std::unique_ptr<SyncStrategy>()> make) {
    factory = std::move(make);
    return *this;
  }
  StrategyInfo& Tolerance(double relative_l2) {
    oracle_tolerance = relative_l2;
    return *this;
  }
  StrategyInfo& Updates(std::string how) {
    updates = std::move(how);
    return *this;
  }
  StrategyInfo& OracleOptions(std::function<void(StrategyOptionSet&)> set) {
    oracle_options = std::move(set);
    return *this;
  }
  StrategyInfo& OracleOptimizer(std::string type) {
    oracle_optimizer = std::move(type);
    return *this;
  }
  StrategyInfo& NoExactSetting() {
    exact_setting = false;
    return *this;
  }
  StrategyInfo& NotInDefaultSweep() {
    default_sweep = false;
    return *this;
  }
  // Whether `flag` (no "--") is one of this strategy's options.
  bool Reads(const std::string& flag) const;
  // Whether it checkpoints and resumes (lists "checkpoint_every").
  bool Checkpoints() const { return Reads("checkpoint_every"); }
};

// Process-wide registry. Thread-safe.
class StrategyRegistry {
 public:
  // Returns true; dies on a duplicate name (a programmer error).
  static bool Register(StrategyInfo info);
  // INVALID_ARGUMENT naming the known strategies for an unknown name.
  static absl::StatusOr<std::unique_ptr<SyncStrategy>> Create(
      const std::string& name);
  static absl::StatusOr<StrategyInfo> Find(const std::string& name);
  // In the study's order (StrategyInfo::study_order), then by name.
  static std::vector<StrategyInfo> List();
  // "baseline|dps|sps" for flag help.
  static std::string Names();
};

}  // namespace ringside

// Registers `Class` (default-constructible) under `info`, a StrategyInfo
// expression (its factory is set here).
#define RINGSIDE_REGISTER_STRATEGY(Class, info)                          \
  static const bool ringside_registered_##Class =                        \
      ::ringside::StrategyRegistry::Register(                            \
          ::ringside::StrategyInfo(info).WithFactory([] {                \
            return std::unique_ptr<::ringside::SyncStrategy>(new Class); \
          }))

#endif  // RINGSIDE_WORKER_SYNC_STRATEGY_H_

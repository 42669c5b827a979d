// worker: one data-parallel training worker.
//
//   worker --strategy=sps --rank=0 --world_size=4 --servers=host:port
//          --model=mlp --batch_size=32 --steps=40   (one command line)
//
// Rank and world size may instead come from torchrun (RANK, WORLD_SIZE),
// Open MPI (OMPI_COMM_WORLD_RANK/SIZE) or SLURM (SLURM_PROCID/NTASKS).
// stdout: one JSON object per line (step records, then a final record);
// logs on stderr. --timeline=PATH also writes a Chrome-trace timeline of
// compute and communication ("{rank}" in PATH becomes the rank; open it in
// ui.perfetto.dev). --failure_timeout_s (default 30) bounds how long a lost
// peer (a killed worker, server or store) can go unnoticed: the worker then
// exits 1 naming it and the step (worker/worker_liveness.h). Exit 0 on
// success, 2 on bad flags (an unwritable --timeline included), 1 on failure.
// --device=cuda trains the MLP or the character transformer on a GPU
// (build with --config=cuda): --gpus
// maps local ranks to CUDA devices (default: local rank modulo the device
// count); see worker/cuda_backend.h. --auth_token_file and --tls_cert/
// --tls_key/--tls_ca secure every RPC (common/security_flags.h).
#include <glog/logging.h>

#include <Eigen/Core>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collectives/nccl_collective.h"
#include "collectives/rendezvous.h"
#include "common/json_lines.h"
#include "common/launch_env.h"
#include "common/net_address.h"
#include "common/output_path.h"
#include "common/security_flags.h"
#include "common/timeline.h"
#include "core/lr_scaling.h"
#include "device/cuda_device.h"
#include "models/cuda/cuda_mlp.h"
#include "models/cuda/cuda_model.h"
#include "models/model_factory.h"
#include "models/model_flags.h"
#include "models/transformer/charlm.h"
#include "models/transformer/cuda/cuda_charlm.h"
#include "worker/batch_export.h"
#include "worker/cuda_trainer.h"
#include "worker/device_selection.h"
#include "worker/emulation_scale.h"
#include "worker/stragglers.h"
#include "worker/strategy_options.h"
#include "worker/sync_flags.h"
#include "worker/sync_strategy.h"
#include "worker/trainer.h"
#include "worker/training_flags.h"
#include "worker/worker_liveness.h"

ABSL_FLAG(std::string, strategy, "baseline",
          "Synchronization strategy; the registered ones are listed at the "
          "top of --help and by --list_strategies.");
ABSL_FLAG(bool, list_strategies, false,
          "Print one JSON line per registered strategy and exit.");
ABSL_FLAG(bool, count_gpus, false,
          "Print {\"cuda_devices\":N} (the CUDA devices this process sees; "
          "0 with \"why\" in a build without CUDA or on a host without a "
          "GPU) and exit.");
ABSL_FLAG(int, rank, -1, "This worker's rank; -1 reads the launcher env.");
ABSL_FLAG(int, world_size, -1, "Workers in the job; -1 reads launcher env.");
// Device.
ABSL_FLAG(std::string, device, "cpu",
          "Compute device: cpu, or cuda (--model=mlp or charlm on a GPU; "
          "needs a build with --config=cuda).");
ABSL_FLAG(std::string, precision, "fp32",
          "The compute's arithmetic: fp32, or bf16 (mixed precision as "
          "PyTorch's bf16 autocast: bfloat16 matrix-product operands, "
          "float32 accumulation, weights, gradients and optimizer state; "
          "--device=cuda with --model=mlp or charlm).");
ABSL_FLAG(std::string, gpus, "",
          "--device=cuda: CUDA device of each local rank, comma-separated "
          "(e.g. 0,1); empty: local rank modulo the device count. NCCL "
          "strategies (ring, fusion) need a distinct GPU per rank.");
// Model: models/model_flags.h.
// Training.
ABSL_FLAG(int64_t, batch_size, 32, "Examples per worker per step.");
ABSL_FLAG(int64_t, steps, 40, "Training steps.");
ABSL_FLAG(int64_t, warmup_steps, 5, "Leading steps excluded from measures.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the initial parameters.");
ABSL_FLAG(int, eigen_threads, 1,
          "Eigen threads per worker (1: N workers on N cores don't fight).");
// Optimizer.
ABSL_FLAG(std::string, optimizer, "sgd", "sgd (with momentum) or adam.");
ABSL_FLAG(double, lr, 0.05,
          "Learning rate (before --lr_scaling; the base rate of the "
          "reference batch). --lr_scaling, --lr_reference_batch, "
          "--lr_warmup_steps, --accumulate_steps, --slow_ranks and "
          "--compute_jitter: worker/training_flags.h.");
ABSL_FLAG(int64_t, eval_every, 0,
          "Evaluate on the held-out set every N steps (and after the last), "
          "printing {\"event\":\"eval\", step, samples, train_wall_s, "
          "loss}: the loss against time; left out of every time measure. 0: "
          "only the final evaluation.");
ABSL_FLAG(double, momentum, 0.9, "SGD momentum.");
ABSL_FLAG(double, weight_decay, 0.0, "L2 weight decay.");
ABSL_FLAG(double, beta1, 0.9, "Adam beta1.");
ABSL_FLAG(double, beta2, 0.999, "Adam beta2.");
ABSL_FLAG(double, adam_eps, 1e-8, "Adam epsilon.");
// Rendezvous.
ABSL_FLAG(std::string, master_addr, "",
          "Rank 0's rendezvous store host; empty reads MASTER_ADDR "
          "(default 127.0.0.1).");
ABSL_FLAG(int, master_port, -1,
          "Rank 0's rendezvous store port; -1 reads MASTER_PORT (default "
          "29500); rank 0 may use 0 to let the OS pick (it is announced on "
          "stdout as {\"event\":\"rendezvous\",\"master_port\":P}).");
// Synchronization (--servers, --rpc_timeout_s, ...): worker/sync_flags.h;
// each strategy's own (--chunk_kb, --ring_bucket_kb, --staleness, the
// fusion runtime's, ...): its options library (worker/strategy_option_set.h).
// Liveness.
ABSL_FLAG(double, failure_timeout_s, 30,
          "Heartbeats (to the job's store, or to every parameter server) go "
          "out every failure_timeout/6; a peer silent for longer than this "
          "ends the worker with exit 1 and a message naming the lost rank or "
          "server and the step (s; 0: off).");
// Output.
ABSL_FLAG(std::string, save_params, "",
          "Write the final parameters here (raw little-endian float32); "
          "\"{rank}\" is replaced by the rank.");
ABSL_FLAG(std::string, export_batches, "",
          "Write the job's initial parameters, every step's global batch "
          "(--world_size x --batch_size), the eval set and meta.json to this "
          "folder and exit without training (worker/batch_export.h): the "
          "data of the PyTorch DDP peer, experiments/ddp_peer.py.");
ABSL_FLAG(std::string, timeline, "",
          "Write a Chrome-trace timeline (Perfetto) of this worker here; "
          "\"{rank}\" is replaced by the rank. Empty: none.");

namespace ringside {
namespace {

absl::Status SaveParams(const std::string& path,
                        const std::vector<float>& params) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(params.data()),
            static_cast<std::streamsize>(params.size() * 4));
  if (!out) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// Whether `status` may come from a lost peer (a broken connection, a
// deadline, a collective error) rather than from bad input.
bool MayMeanLostPeer(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

struct Setup {
  RankInfo rank;
  ModelOptions model;
  OptimizerConfig optimizer;
  SyncOptions sync;
  TrainerOptions trainer;
  Stragglers stragglers;
  // --lr_scaling's rule, --lr before it and the reference batch, for the
  // final record (optimizer.lr is the scaled rate).
  LrScaling lr_scaling = LrScaling::kNone;
  double lr_base = 0;
  int64_t lr_reference_batch = 0;
  Device device = Device::kCpu;
  std::vector<int> gpus;  // --gpus; empty: by local rank
};

// Reads every flag into the components' options; INVALID_ARGUMENT on bad
// input.
absl::StatusOr<Setup> ReadFlags() {
  Setup s;
  absl::StatusOr<RankInfo> rank =
      ResolveRank(absl::GetFlag(FLAGS_rank), absl::GetFlag(FLAGS_world_size));
  if (!rank.ok()) return rank.status();
  s.rank = *rank;
  absl::StatusOr<ModelOptions> model = ModelOptionsFromFlags();
  if (!model.ok()) return model.status();
  s.model = *std::move(model);
  // An emulated run at scale S: the byte thresholds shrink with the
  // tensors, before the strategies' options read them.
  const absl::StatusOr<StrategyInfo> chosen =
      StrategyRegistry::Find(absl::GetFlag(FLAGS_strategy));
  if (absl::Status e = ScaleByteThresholdFlags(
          s.model.emulation_scale,
          [&chosen](const std::string& flag) {
            return chosen.ok() && chosen->Reads(flag);
          });
      !e.ok()) {
    return e;
  }
  s.optimizer.type = absl::GetFlag(FLAGS_optimizer);
  s.optimizer.lr = absl::GetFlag(FLAGS_lr);
  s.optimizer.momentum = absl::GetFlag(FLAGS_momentum);
  s.optimizer.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  s.optimizer.beta1 = absl::GetFlag(FLAGS_beta1);
  s.optimizer.beta2 = absl::GetFlag(FLAGS_beta2);
  s.optimizer.eps = absl::GetFlag(FLAGS_adam_eps);
  if (absl::Status v = s.optimizer.Validate(); !v.ok()) return v;
  absl::StatusOr<SyncOptions> sync = SyncOptionsFromFlags();
  if (!sync.ok()) return sync.status();
  s.sync = *std::move(sync);
  s.trainer.batch_size = absl::GetFlag(FLAGS_batch_size);
  s.trainer.steps = absl::GetFlag(FLAGS_steps);
  s.trainer.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  s.trainer.init_seed = absl::GetFlag(FLAGS_seed);
  absl::StatusOr<TrainingFlags> training =
      TrainingFlagsFromFlags(s.rank.world_size);
  if (!training.ok()) return training.status();
  s.trainer.accumulate_steps = training->accumulate_steps;
  s.trainer.eval_every = absl::GetFlag(FLAGS_eval_every);
  s.stragglers = training->stragglers;
  s.stragglers.seed = absl::GetFlag(FLAGS_seed);
  if (absl::Status v = s.trainer.Validate(); !v.ok()) return v;
  s.lr_scaling = training->lr_scaling;
  s.lr_base = s.optimizer.lr;
  s.lr_reference_batch = training->lr_reference_batch;
  if (s.lr_reference_batch == 0) s.lr_reference_batch = s.trainer.batch_size;
  absl::StatusOr<float> lr = ScaledLr(
      s.optimizer.lr, s.lr_scaling,
      s.rank.world_size * s.trainer.batch_size * s.trainer.accumulate_steps,
      s.lr_reference_batch);
  if (!lr.ok()) return lr.status();
  s.optimizer.lr = *lr;
  s.optimizer.lr_warmup_steps = training->lr_warmup_steps;
  if (absl::Status v = s.optimizer.Validate(); !v.ok()) return v;
  if (absl::GetFlag(FLAGS_eigen_threads) < 1) {
    return absl::InvalidArgumentError("--eigen_threads must be >= 1");
  }
  absl::StatusOr<Device> device = ParseDevice(absl::GetFlag(FLAGS_device));
  if (!device.ok()) return device.status();
  s.device = *device;
  absl::StatusOr<std::vector<int>> gpus =
      ParseGpuList(absl::GetFlag(FLAGS_gpus));
  if (!gpus.ok()) return gpus.status();
  s.gpus = *gpus;
  if (s.device == Device::kCpu && !s.gpus.empty()) {
    return absl::InvalidArgumentError("--gpus needs --device=cuda");
  }
  absl::StatusOr<Precision> precision =
      ParsePrecision(absl::GetFlag(FLAGS_precision));
  if (!precision.ok()) return precision.status();
  s.model.precision = *precision;
  if (absl::Status p = CheckPrecision(s.model.precision, s.device); !p.ok()) {
    return p;
  }
  if (s.device == Device::kCuda) {
    if (!BuiltWithCuda()) return BuiltWithoutCudaError("--device=cuda");
    if (s.stragglers.any()) {
      return absl::InvalidArgumentError(
          "--slow_ranks and --compute_jitter run on CPU workers only (a "
          "CUDA worker's kernels cannot be stretched yet)");
    }
    if (s.model.name != "mlp" && s.model.name != "charlm") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device=cuda supports --model=mlp and --model=charlm, got "
          "--model=",
          s.model.name));
    }
  }
  return s;
}

// --device=cuda: this rank's GPU (--gpus, else local rank modulo the device
// count) and the model on it: the MLP, or the character transformer with
// the configuration (vocabulary included) of `host`, the CPU CharLm built
// from the same flags. UNAVAILABLE "no GPU here: <CUDA's message>" without a
// usable GPU; INVALID_ARGUMENT when --gpus does not fit.
absl::StatusOr<std::unique_ptr<CudaModel>> MakeCudaModel(const Setup& s,
                                                         const Model& host) {
  absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok()) return count.status();
  const int local_rank = LocalRankFromEnv(s.rank.rank);
  absl::StatusOr<int> device = ChooseCudaDevice(s.gpus, local_rank, *count);
  if (!device.ok()) return device.status();
  absl::StatusOr<std::string> name = CudaDeviceName(*device);
  LOG(INFO) << "rank " << s.rank.rank << " (local rank " << local_rank
            << ") on CUDA device " << *device << " of " << *count << " ("
            << (name.ok() ? *name : name.status().ToString()) << ")";
  if (const auto* charlm = dynamic_cast<const CharLm*>(&host)) {
    absl::StatusOr<std::unique_ptr<CudaCharLm>> made =
        CudaCharLm::Create(charlm->config(), *device, s.model.precision);
    if (!made.ok()) return made.status();
    return std::unique_ptr<CudaModel>(*std::move(made));
  }
  absl::StatusOr<std::unique_ptr<CudaMlp>> made =
      CudaMlp::Create(s.model.mlp_widths, *device, s.model.precision);
  if (!made.ok()) return made.status();
  return std::unique_ptr<CudaModel>(*std::move(made));
}

// --save_params with {rank} replaced; empty when not given.
std::string SaveParamsPath(int rank) {
  std::string save = absl::GetFlag(FLAGS_save_params);
  for (size_t at; (at = save.find("{rank}")) != std::string::npos;) {
    save.replace(at, 6, absl::StrCat(rank));
  }
  return save;
}

int Run() {
  JsonLinesWriter out;
  if (absl::GetFlag(FLAGS_count_gpus)) {
    const absl::StatusOr<int> count = CudaDeviceCount();
    if (count.ok()) {
      out.Write({{"cuda_devices", *count}});
    } else {
      out.Write({{"cuda_devices", 0},
                 {"why", std::string(count.status().message())}});
    }
    return 0;
  }
  if (absl::GetFlag(FLAGS_list_strategies)) {
    const std::vector<StrategyInfo> registered = StrategyRegistry::List();
    for (const StrategyInfo& info : registered) {
      if (absl::Status s =
              CheckStrategyOptions(info, registered, AbslFlagLookup());
          absl::IsInternal(s)) {
        LOG(ERROR) << s.message();
        return 1;
      }
      const std::unique_ptr<SyncStrategy> made = info.factory();
      const bool on_device = made->SupportsDevice(Device::kCuda);
      out.Write({{"name", info.name},
                 {"servers", ServerNeedName(info.servers)},
                 {"store", info.needs_store},
                 {"summation_servers", info.summation_servers},
                 {"description", info.description},
                 {"display_name", info.display_name},
                 {"study_order", info.study_order},
                 {"modelled_as", info.modelled_as},
                 {"wire_bytes_per_model_byte", info.wire_bytes_per_model_byte},
                 {"updates", info.updates},
                 {"default_sweep", info.default_sweep},
                 {"options", info.options},
                 {"study_flags", info.study_flags},
                 {"variant_options", info.variant_options},
                 {"checkpoints", info.Checkpoints()},
                 // Sharded parameters cannot go through host staging.
                 {"cuda_runs", made->ParamUse() == nullptr || on_device},
                 // On device buffers through NCCL: one GPU per rank.
                 {"gpu_per_rank", on_device},
                 {"cuda", on_device ? "device buffers"
                          : made->ParamUse() != nullptr
                              ? "not supported (keeps the parameters "
                                "sharded, needs the device buffers)"
                              : "staged through host memory"},
                 {"oracle_tolerance", info.oracle_tolerance}});
    }
    return 0;
  }
  absl::StatusOr<Setup> setup = ReadFlags();
  if (!setup.ok()) {
    LOG(ERROR) << "bad flags: " << setup.status().message();
    return 2;
  }
  // Output paths fail now, not after the training they would record.
  if (const std::string save = SaveParamsPath(setup->rank.rank);
      !save.empty()) {
    if (absl::Status s = CheckOutputFile(save, "save_params"); !s.ok()) {
      LOG(ERROR) << "bad flags: " << s.message();
      return 2;
    }
  }
  if (setup->sync.checkpoint_every > 0) {
    if (absl::Status s =
            PrepareOutputDir(setup->sync.checkpoint_dir, "checkpoint_dir");
        !s.ok()) {
      LOG(ERROR) << "bad flags: " << s.message();
      return 2;
    }
  }
  // Opened before the strategy exists so that it outlives the strategy's
  // threads; its destructor closes it on every early return.
  std::unique_ptr<Timeline> timeline;
  if (const std::string path = absl::GetFlag(FLAGS_timeline); !path.empty()) {
    absl::StatusOr<std::unique_ptr<Timeline>> opened =
        Timeline::Open(path, setup->rank.rank);
    if (!opened.ok()) {
      LOG(ERROR) << "bad flags: --timeline: " << opened.status().message();
      return 2;
    }
    timeline = *std::move(opened);
    setup->sync.timeline = timeline.get();
  }
  absl::StatusOr<std::unique_ptr<SyncStrategy>> strategy =
      StrategyRegistry::Create(absl::GetFlag(FLAGS_strategy));
  if (!strategy.ok()) {
    LOG(ERROR) << "bad flags: " << strategy.status().message();
    return 2;
  }
  // No strategy-specific flag is silently ignored.
  if (absl::Status s = CheckStrategyOptions(
          *StrategyRegistry::Find(absl::GetFlag(FLAGS_strategy)),
          StrategyRegistry::List(), AbslFlagLookup());
      !s.ok()) {
    LOG(ERROR) << "bad flags: " << s.message();
    return absl::IsInvalidArgument(s) ? 2 : 1;
  }
  absl::StatusOr<ModelBundle> bundle = MakeModel(setup->model);
  if (!bundle.ok()) {
    LOG(ERROR) << "bad flags: " << bundle.status().message();
    return 2;
  }
  if (const std::string dir = absl::GetFlag(FLAGS_export_batches);
      !dir.empty()) {
    BatchExportJob job;
    job.world_size = setup->rank.world_size;
    job.batch_size = setup->trainer.batch_size;
    job.steps = setup->trainer.steps;
    job.warmup_steps = setup->trainer.warmup_steps;
    job.accumulate_steps = setup->trainer.accumulate_steps;
    job.init_seed = setup->trainer.init_seed;
    job.optimizer = setup->optimizer;
    job.model_config = {{"mlp_widths", setup->model.mlp_widths},
                        {"n_layer", setup->model.charlm.n_layer},
                        {"n_head", setup->model.charlm.n_head},
                        {"n_embd", setup->model.charlm.n_embd},
                        {"block_size", setup->model.charlm.block_size}};
    if (absl::Status s =
            ExportBatches(dir, *bundle->model, *bundle->dataset, job);
        !s.ok()) {
      LOG(ERROR) << s;
      return absl::IsInvalidArgument(s) ? 2 : 1;
    }
    out.Write({{"event", "exported"}, {"dir", dir}});
    return 0;
  }
  Eigen::setNbThreads(absl::GetFlag(FLAGS_eigen_threads));
  std::unique_ptr<CudaModel> cuda_model;
  if (setup->device == Device::kCuda) {
    absl::StatusOr<std::unique_ptr<CudaModel>> made =
        MakeCudaModel(*setup, *bundle->model);
    if (!made.ok()) {
      if (absl::IsInvalidArgument(made.status())) {
        LOG(ERROR) << "bad flags: " << made.status().message();
        return 2;
      }
      LOG(ERROR) << "rank " << setup->rank.rank
                 << " --device=cuda: " << made.status();
      return 1;
    }
    cuda_model = *std::move(made);
  }

  // The job's rendezvous store, for strategies that need one.
  std::unique_ptr<JobRendezvous> rendezvous;
  HostPort master;
  absl::StatusOr<StrategyInfo> info =
      StrategyRegistry::Find(absl::GetFlag(FLAGS_strategy));
  if (info.ok() && info->needs_store) {
    absl::StatusOr<RendezvousOptions> options = RendezvousFromEnv(
        absl::GetFlag(FLAGS_master_addr), absl::GetFlag(FLAGS_master_port));
    if (options.ok()) {
      options->connect_timeout = setup->sync.connect_timeout;
      options->security = setup->sync.security;
    }
    absl::StatusOr<std::unique_ptr<JobRendezvous>> joined =
        options.ok()
            ? JobRendezvous::Join(setup->rank.rank, setup->rank.world_size,
                                  *options)
            : absl::StatusOr<std::unique_ptr<JobRendezvous>>(options.status());
    if (!joined.ok()) {
      LOG(ERROR) << "rank " << setup->rank.rank
                 << " rendezvous failed: " << joined.status();
      return absl::IsInvalidArgument(joined.status()) ? 2 : 1;
    }
    rendezvous = *std::move(joined);
    master = {options->master_addr, rendezvous->port()};
    setup->sync.store = &rendezvous->store();
    if (setup->rank.rank == 0) {
      out.Write({{"event", "rendezvous"}, {"master_port", rendezvous->port()}});
    }
  }
  LOG(INFO) << "rank " << setup->rank.rank << "/" << setup->rank.world_size
            << " (" << setup->rank.source << "), strategy "
            << (*strategy)->name() << ", model " << bundle->model->name()
            << " with " << bundle->model->layout().total_elements()
            << " parameters";
  // Heartbeats and failure detection (worker/worker_liveness.h). Destroyed
  // before the rendezvous whose store rank 0 beats through.
  std::unique_ptr<LivenessMonitor> liveness;
  const double failure_timeout_s = absl::GetFlag(FLAGS_failure_timeout_s);
  if (failure_timeout_s > 0 && info.ok()) {
    WorkerLivenessOptions options;
    options.rank = setup->rank.rank;
    options.world_size = setup->rank.world_size;
    options.failure_timeout = absl::Seconds(failure_timeout_s);
    options.use_store = info->needs_store;
    options.local_store = rendezvous != nullptr && setup->rank.rank == 0
                              ? &rendezvous->store()
                              : nullptr;
    options.master = master;
    options.servers = setup->sync.servers;
    options.security = setup->sync.security;
    absl::StatusOr<std::unique_ptr<LivenessMonitor>> started =
        StartWorkerLiveness(options);
    if (!started.ok()) {
      LOG(ERROR) << "rank " << setup->rank.rank
                 << " cannot start heartbeats: " << started.status();
      return absl::IsInvalidArgument(started.status()) ? 2 : 1;
    }
    liveness = *std::move(started);
  }
  const int64_t steps = setup->trainer.steps;
  const RecordFn write = [&out, &liveness,
                          steps](const nlohmann::json& record) {
    out.Write(record);
    if (liveness == nullptr || record.value("event", "") != "step") return;
    const int64_t next = record["step"].get<int64_t>() + 1;
    liveness->SetStep(next);
    if (next >= steps) liveness->Finish();  // peers may go now
  };
  TrainJob train_job;
  train_job.dataset = bundle->dataset.get();
  train_job.strategy = strategy->get();
  train_job.rank = setup->rank;
  train_job.optimizer = setup->optimizer;
  train_job.sync = setup->sync;
  train_job.options = setup->trainer;
  train_job.stragglers = setup->stragglers;
  train_job.on_record = write;
  absl::StatusOr<TrainResult> result = cuda_model != nullptr
                                           ? TrainOnCuda(*cuda_model, train_job)
                                           : Train(*bundle->model, train_job);
  if (!result.ok()) {
    // A failed collective or RPC in mid-run is often the first sign of a
    // lost peer: give the monitor the time to name it (it ends the process
    // itself when the teardown below is stuck). Failures before the first
    // step (connecting) say what they waited for themselves.
    std::optional<std::string> verdict;
    if (liveness != nullptr && liveness->step() > 0 &&
        MayMeanLostPeer(result.status())) {
      verdict = liveness->AwaitVerdict(absl::Seconds(failure_timeout_s) * 1.5);
    }
    if (verdict.has_value()) {
      LOG(ERROR) << "rank " << setup->rank.rank << " failed: " << *verdict
                 << " (first error: " << result.status() << ")";
    } else {
      LOG(ERROR) << "rank " << setup->rank.rank
                 << " failed: " << result.status();
    }
    strategy->reset();  // while the monitor can still end a stuck teardown
    return 1;
  }
  const std::string save = SaveParamsPath(setup->rank.rank);
  if (!save.empty()) {
    if (absl::Status s = SaveParams(save, result->params); !s.ok()) {
      LOG(ERROR) << s;
      return 1;
    }
  }
  if (timeline != nullptr) {
    if (absl::Status s = timeline->Close(); !s.ok()) {
      LOG(ERROR) << s;
      return 1;
    }
  }
  result->final_record["rank_source"] = setup->rank.source;
  result->final_record["lr_scaling"] = LrScalingName(setup->lr_scaling);
  result->final_record["lr_base"] = setup->lr_base;
  result->final_record["lr_reference_batch"] = setup->lr_reference_batch;
  // What the cost model needs to predict this run (compare's report).
  result->final_record["model_bytes"] =
      bundle->model->layout().total_elements() * int64_t{4};
  result->final_record["num_tensors"] = bundle->model->layout().num_tensors();
  result->final_record["strategy_options"] = StrategyOptionValues(
      *StrategyRegistry::Find(absl::GetFlag(FLAGS_strategy)),
      AbslFlagLookup());
  out.Write(result->final_record);
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      absl::StrCat("Data-parallel training worker.\n  Strategies registered: ",
                   ringside::StrategyRegistry::Names(),
                   "\n  Models: ", ringside::ModelNames(),
                   "\n  worker --strategy=S --rank=R --world_size=N "
                   "--servers=host:port[,...]"));
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  // A peer that dies mid-collective must give a write error (and a message
  // naming it), not a silent death by SIGPIPE on Gloo's socket.
  std::signal(SIGPIPE, SIG_IGN);
  return ringside::Run();
}

#include "worker/strategies/allreduce/local_sgd_strategy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/timeline.h"
#include "core/step_floats.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/allreduce/rank_state.h"

namespace ringside {

std::string LocalSgdStrategy::Variant() const {
  std::string variant = absl::StrCat("H=", local_.local_steps);
  if (local_.warmup_steps > 0) {
    absl::StrAppend(&variant, ", ", local_.warmup_steps, " exact first");
  }
  if (outer_) {
    absl::StrAppend(&variant, ", outer lr ", diloco_.outer_lr, " μ ",
                    diloco_.outer_momentum);
  }
  return variant;
}

absl::Status LocalSgdStrategy::Init(const SyncContext& context) {
  context_ = context;
  local_ = context.options.strategy.Get<LocalSgdOptions>();
  diloco_ = context.options.strategy.Get<DiLoCoOptions>();
  RS_RETURN_IF_ERROR(local_.Validate());
  RS_RETURN_IF_ERROR(diloco_.Validate());
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCpuCollective(context_, name_, &own_store_));
  optimizer_context_ = context_;
  optimizer_context_.options.checkpoint_every = 0;
  optimizer_context_.options.resume = false;
  RS_ASSIGN_OR_RETURN(LocalStart start,
                      StartLocal(optimizer_context_, collective_.get()));
  optimizer_ = std::move(start.optimizer);
  global_.assign(context_.params.begin(), context_.params.end());
  if (outer_) velocity_.assign(global_.size(), 0.0f);
  if (context_.options.resume) RS_RETURN_IF_ERROR(ResumeRankState());
  return absl::OkStatus();
}

absl::Status LocalSgdStrategy::MaybeWriteRankState(int64_t step) {
  if (!context_.options.CheckpointDue(step)) return absl::OkStatus();
  ScopedSpan span(context_.options.timeline, "step", "CHECKPOINT",
                  {{"step", step + 1}});
  RS_ASSIGN_OR_RETURN(std::vector<float> state, optimizer_->ExportState());
  state.insert(state.end(), global_.begin(), global_.end());
  state.insert(state.end(), velocity_.begin(), velocity_.end());
  return WriteRankState(context_, step, name_, "checkpoint", std::move(state));
}

absl::Status LocalSgdStrategy::ResumeRankState() {
  const size_t inner = static_cast<size_t>(optimizer_->state_bytes() / 4);
  int64_t step = -1;
  const absl::Status loaded = [&]() -> absl::Status {
    RS_ASSIGN_OR_RETURN(
        Checkpoint c,
        ReadRankState(context_, name_, "each rank's own state"));
    const size_t want = inner + global_.size() + velocity_.size();
    if (c.optimizer_state.size() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.writer, "'s file holds ", c.optimizer_state.size(),
          " floats of state, ", name_, " with this optimizer keeps ", want));
    }
    const absl::Span<const float> state(c.optimizer_state);
    RS_RETURN_IF_ERROR(optimizer_->ImportState(state.subspan(0, inner)));
    std::copy_n(state.begin() + inner, global_.size(), global_.begin());
    std::copy_n(state.begin() + inner + global_.size(), velocity_.size(),
                velocity_.begin());
    std::copy(c.params.begin(), c.params.end(), context_.params.begin());
    step = c.step;
    return absl::OkStatus();
  }();
  // Every rank takes part whatever it found: rank 0's step, then whether
  // every rank holds that step.
  const auto [high, low] = StepAsFloats(std::max<int64_t>(step, 0));
  std::vector<float> header = {high, low};
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(absl::MakeSpan(header), 0,
                             context_.options.rpc_timeout),
      "broadcasting rank 0's resume step"));
  const int64_t rank0_step = StepFromFloats(header[0], header[1]);
  std::vector<float> agree = {loaded.ok() && step == rank0_step ? 1.0f : 0.0f};
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllReduce(absl::MakeSpan(agree), ReduceOp::kSum,
                             context_.options.rpc_timeout),
      "agreeing on the resume step"));
  RS_RETURN_IF_ERROR(loaded);
  if (agree[0] != static_cast<float>(context_.world_size)) {
    return absl::FailedPreconditionError(absl::StrCat(
        name_, ": this rank's checkpoint is of step ", step,
        ", rank 0's of ", rank0_step,
        ", or another rank could not read its own: the ranks' files are "
        "not of one checkpoint"));
  }
  start_step_ = step;
  unaveraged_steps_ =
      step <= local_.warmup_steps
          ? 0
          : (step - local_.warmup_steps) % local_.local_steps;
  return absl::OkStatus();
}

int64_t LocalSgdStrategy::AllReduceBytes() const {
  const int64_t w = context_.world_size;
  return context_.layout.total_bytes() * 2 * (w - 1) / w;
}

absl::Status LocalSgdStrategy::Average(int64_t step) {
  ScopedSpan span(context_.options.timeline, "step", "AVERAGE",
                  {{"step", step}});
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllReduce(context_.params, ReduceOp::kAverage,
                             context_.options.rpc_timeout),
      absl::StrCat(name_, ": averaging the parameters after step ", step)));
  float* params = context_.params.data();
  if (!outer_) {
    std::copy(params, params + global_.size(), global_.begin());
  } else {
    // Δ = θ_global − mean θ_i; v ← μv + Δ; θ_global ← θ_global −
    // lr·(Δ + μv) (PyTorch's SGD with nesterov=True).
    const float lr = static_cast<float>(diloco_.outer_lr);
    const float mu = static_cast<float>(diloco_.outer_momentum);
    for (size_t i = 0; i < global_.size(); ++i) {
      const float delta = global_[i] - params[i];
      velocity_[i] = mu * velocity_[i] + delta;
      global_[i] -= lr * (delta + mu * velocity_[i]);
      params[i] = global_[i];
    }
  }
  unaveraged_steps_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<StepStats> LocalSgdStrategy::FinishStep(int64_t step) {
  const bool warmup = step < local_.warmup_steps;
  if (warmup) {
    ScopedSpan span(context_.options.timeline, "step", "ALLREDUCE",
                    {{"step", step}});
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllReduce(context_.grads, ReduceOp::kAverage,
                               context_.options.rpc_timeout),
        absl::StrCat(name_, ": warm-up gradient all-reduce of step ", step)));
  }
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->Step(step));
  stats.bytes_sent = stats.bytes_received = 0;
  if (warmup) {
    // An exact step: every rank applied the same average to the same
    // parameters, which are the round's model.
    std::copy(context_.params.begin(), context_.params.end(),
              global_.begin());
    stats.bytes_sent = stats.bytes_received = AllReduceBytes();
    RS_RETURN_IF_ERROR(MaybeWriteRankState(step));
    return stats;
  }
  ++unaveraged_steps_;
  if ((step + 1 - local_.warmup_steps) % local_.local_steps == 0) {
    RS_RETURN_IF_ERROR(Average(step));
    stats.bytes_sent = stats.bytes_received = AllReduceBytes();
  }
  RS_RETURN_IF_ERROR(MaybeWriteRankState(step));
  return stats;
}

absl::Status LocalSgdStrategy::Shutdown() {
  // Every rank ran the same steps, so every rank averages here or none.
  if (collective_ != nullptr && unaveraged_steps_ > 0) {
    RS_RETURN_IF_ERROR(Annotate(Average(-1), "the final average"));
  }
  return absl::OkStatus();
}

absl::Status LocalSgdStrategy::PrepareEvaluation() {
  held_.assign(context_.params.begin(), context_.params.end());
  std::copy(global_.begin(), global_.end(), context_.params.begin());
  return absl::OkStatus();
}

absl::Status LocalSgdStrategy::EndEvaluation() {
  std::copy(held_.begin(), held_.end(), context_.params.begin());
  return absl::OkStatus();
}

int64_t LocalSgdStrategy::OptimizerStateBytes() const {
  // The inner optimizer's, and the strategy's own: the last average and
  // diloco's outer momentum.
  const int64_t own =
      static_cast<int64_t>(global_.size() + velocity_.size()) * 4;
  return (optimizer_ == nullptr ? 0 : optimizer_->state_bytes()) + own;
}

nlohmann::json LocalSgdStrategy::RecordFields() const {
  nlohmann::json fields = {{"local_steps", local_.local_steps},
                           {"local_sgd_warmup_steps", local_.warmup_steps}};
  if (outer_) {
    fields["diloco_outer_lr"] = diloco_.outer_lr;
    fields["diloco_outer_momentum"] = diloco_.outer_momentum;
  }
  return fields;
}

namespace {

class LocalSgd final : public LocalSgdStrategy {
 public:
  LocalSgd() : LocalSgdStrategy("local_sgd", /*outer=*/false) {}
};

class DiLoCo final : public LocalSgdStrategy {
 public:
  DiLoCo() : LocalSgdStrategy("diloco", /*outer=*/true) {}
};

// H = 1, no warm-up: an average every step.
void EveryStep(StrategyOptionSet& set) {
  LocalSgdOptions every;
  every.local_steps = 1;
  every.warmup_steps = 0;
  set.Set(every);
}

}  // namespace

RINGSIDE_REGISTER_STRATEGY(
    LocalSgd,
    StrategyInfo("local_sgd", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("local SGD: H local optimizer steps on each worker's own "
                  "gradients, then the parameters averaged with one "
                  "all-reduce (Stich 2019; Lin et al. 2020's post-local SGD "
                  "with --local_sgd_warmup_steps; H = --local_steps, 8 here, "
                  "16 in the paper; Gloo on CPU; not exact)")
        .Display("Local SGD")
        .StudyOrder(13)
        .ModelledAs("local_sgd")
        .Options({"local_steps", "local_sgd_warmup_steps",
                  "allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"})
        .VariantStates({"local_steps", "local_sgd_warmup_steps"})
        .Updates("local (H steps between averages)")
        .Tolerance(1e-5)
        .OracleOptimizer("sgd")
        .OracleOptions(EveryStep));

RINGSIDE_REGISTER_STRATEGY(
    DiLoCo,
    StrategyInfo("diloco", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("DiLoCo: H inner steps of the worker's optimizer, then the "
                  "averaged outer gradient applied by an outer Nesterov SGD "
                  "(Douillard et al. 2023: outer lr 0.7, momentum 0.9, inner "
                  "AdamW, H = 500 over ~88k steps; H = --local_steps, 8 "
                  "here; Gloo on CPU; not exact)")
        .Display("DiLoCo")
        .StudyOrder(14)
        .ModelledAs("diloco")
        .Options({"local_steps", "local_sgd_warmup_steps", "diloco_outer_lr",
                  "diloco_outer_momentum", "allreduce_algorithm",
                  "gloo_event_loop", "checkpoint_every", "resume"})
        .VariantStates({"local_steps", "local_sgd_warmup_steps",
                        "diloco_outer_lr", "diloco_outer_momentum"})
        .Updates("local (H steps between outer steps)")
        .Tolerance(1e-5)
        .OracleOptimizer("sgd")
        .OracleOptions([](StrategyOptionSet& set) {
          EveryStep(set);
          DiLoCoOptions plain;
          plain.outer_lr = 1.0;
          plain.outer_momentum = 0.0;
          set.Set(plain);
        }));

}  // namespace ringside

// LocalSgdStrategy: periodic parameter averaging instead of a gradient
// all-reduce every step, for slow links.
//   "local_sgd": local SGD (Stich, ICLR 2019; Lin et al., "Don't Use Large
//     Mini-Batches, Use Local SGD", ICLR 2020, with its post-local SGD
//     warm-up): every worker steps its own optimizer on its own gradients;
//     after every H-th step (--local_steps) the parameters are averaged
//     with one all-reduce.
//   "diloco": DiLoCo (Douillard et al., 2023): the same inner steps; at
//     each average the outer gradient Δ = θ_global − mean_i θ_i goes to an
//     outer Nesterov-momentum SGD (--diloco_outer_lr, the paper's 0.7;
//     --diloco_outer_momentum, 0.9): v ← μv + Δ, θ_global ← θ_global −
//     lr·(Δ + μv), as PyTorch's SGD(nesterov=True); every worker continues
//     from θ_global. The paper's inner optimizer is AdamW
//     (--optimizer=adam); the worker's optimizer flags choose it.
// The first --local_sgd_warmup_steps steps all-reduce (average) the
// gradients before the optimizer, as ring does (exact), and the rounds of
// H start after them.
//
// Each worker's optimizer state stays its own (momentum, Adam's moments),
// never averaged, as in both papers. The model a round produces is
// θ_global (local_sgd: the last average); mid-run evaluations
// (PrepareEvaluation) evaluate it, not the worker's drifting parameters.
// Shutdown averages once more (an outer step for diloco) when steps ran
// since the last average, so the run ends with one model on every rank;
// that last all-reduce happens after the timed steps.
//
// Equivalence: with H = 1 and plain SGD or SGD with momentum (linear
// updates), local_sgd equals the exact strategies to float32 rounding, and
// so does diloco with outer lr 1 and momentum 0; the registry's oracle
// runs them so (OracleOptions). With Adam they are not equivalent at any H
// (the update is not linear in the gradient).
//
// Traffic: a ring all-reduce's 2(n−1)/n of the parameters on the steps
// that average (and on warm-up steps, of the gradients), 0 on the others.
// Gloo on CPU; a CUDA worker stages it through host memory.
// Checkpoints: every --checkpoint_every steps every rank writes its own
// RankStateCheckpointPath (core/checkpoint.h): its parameters, its
// optimizer's state, θ_global and diloco's v (the ranks' parameters and
// optimizer states differ between averages); --resume reads each rank's
// own, refused unless every rank's is of the same step (so a job resumes
// with the number of workers that wrote them). Timeline: OPTIMIZER and AVERAGE (or ALLREDUCE in the
// warm-up) on lane "step".
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_STRATEGY_H_

#include <memory>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/strategies/allreduce/local_sgd_options.h"
#include "worker/sync_strategy.h"

namespace ringside {

class LocalSgdStrategy : public SyncStrategy {
 public:
  // `outer`: diloco's outer Nesterov SGD; false: local_sgd's plain average.
  LocalSgdStrategy(std::string name, bool outer)
      : name_(std::move(name)), outer_(outer) {}
  std::string name() const override { return name_; }
  std::string Variant() const override;
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  absl::Status PrepareEvaluation() override;
  absl::Status EndEvaluation() override;
  int64_t OptimizerStateBytes() const override;
  nlohmann::json RecordFields() const override;
  int64_t start_step() const override { return start_step_; }

 private:
  // Averages the parameters over the ranks into global_ (diloco: the outer
  // step), and every rank continues from it. Blocking, bounded by
  // rpc_timeout.
  absl::Status Average(int64_t step);
  // Bytes a ring all-reduce of the whole buffer moves each way per rank.
  int64_t AllReduceBytes() const;
  // This rank's checkpoint after `step`, when --checkpoint_every says.
  absl::Status MaybeWriteRankState(int64_t step);
  // --resume: this rank's state from its file; collective (the ranks agree
  // on the step or all fail).
  absl::Status ResumeRankState();

  const std::string name_;
  const bool outer_;
  SyncContext context_;
  // context_ without checkpoints for the local optimizer: the strategy
  // writes and reads each rank's own state (MaybeWriteRankState).
  SyncContext optimizer_context_;
  int64_t start_step_ = 0;
  LocalSgdOptions local_;
  DiLoCoOptions diloco_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<LocalOptimizer> optimizer_;
  std::vector<float> global_;    // θ_global: the last round's model
  std::vector<float> velocity_;  // diloco's outer momentum v
  std::vector<float> held_;      // the worker's parameters during an eval
  int64_t unaveraged_steps_ = 0;  // local steps since the last average
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_STRATEGY_H_

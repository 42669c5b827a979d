#include "tests/testing/oracle_harness.h"

#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "collectives/in_memory_store.h"
#include "common/status_macros.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/ps_options.h"

namespace ringside::testing {

OracleSetup::OracleSetup() {
  model.mlp_widths = {12, 24, 16, 5};
  model.train_examples = 512;
  model.eval_examples = 64;
  optimizer.type = "sgd";
  optimizer.lr = 0.03f;
  optimizer.momentum = 0.9f;
  // Small chunks so that chunks span tensors and tensors span chunks.
  PsOptions ps;
  ps.chunk_bytes = 1024;
  sync.strategy.Set(ps);
  sync.rpc_timeout = absl::Seconds(30);
  sync.connect_timeout = absl::Seconds(10);
}

TrainJob OracleJob(const OracleSetup& setup, Dataset* dataset,
                   SyncStrategy* strategy, RankInfo rank, int64_t batch_size,
                   const SyncOptions& sync) {
  TrainJob job;
  job.dataset = dataset;
  job.strategy = strategy;
  job.rank = rank;
  job.optimizer = setup.optimizer;
  job.sync = sync;
  job.options.batch_size = batch_size;
  job.options.steps = setup.steps;
  job.options.warmup_steps = 0;
  job.options.accumulate_steps = setup.accumulate_steps;
  job.options.eval_every = setup.eval_every;
  return job;
}

absl::StatusOr<TrainResult> RunReference(const OracleSetup& setup,
                                         int num_workers) {
  RS_ASSIGN_OR_RETURN(ModelBundle bundle, MakeModel(setup.model));
  RS_ASSIGN_OR_RETURN(std::unique_ptr<SyncStrategy> baseline,
                      StrategyRegistry::Create("baseline"));
  TrainJob job = OracleJob(
      setup, bundle.dataset.get(), baseline.get(), RankInfo{0, 1},
      setup.batch_size * num_workers * setup.accumulate_steps);
  job.options.accumulate_steps = 1;
  job.options.eval_every = 0;
  return Train(*bundle.model, job);
}

absl::StatusOr<OracleRun> RunWorkers(const OracleSetup& setup,
                                     const std::string& strategy,
                                     int num_workers) {
  std::unique_ptr<LocalPsCluster> ps;
  SyncOptions sync = setup.sync;
  // Strategies with a rendezvous store share one in memory, as N ranks as
  // threads (Gloo's own test picture).
  InMemoryStore store;
  RS_ASSIGN_OR_RETURN(StrategyInfo info, StrategyRegistry::Find(strategy));
  if (info.needs_store) sync.store = &store;
  if (setup.num_servers > 0) {
    RS_ASSIGN_OR_RETURN(ps,
                        LocalPsCluster::Start(setup.num_servers, num_workers,
                                              absl::Seconds(30)));
    sync.servers = ps->addresses();
  }
  OracleRun run;
  run.params.resize(num_workers);
  run.eval_loss.resize(num_workers);
  run.final_records.resize(num_workers);
  std::vector<absl::Status> status(num_workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < num_workers; ++r) {
    threads.emplace_back([&, r] {
      absl::Status s = [&]() -> absl::Status {
        RS_ASSIGN_OR_RETURN(ModelBundle bundle, MakeModel(setup.model));
        RS_ASSIGN_OR_RETURN(std::unique_ptr<SyncStrategy> sync_strategy,
                            StrategyRegistry::Create(strategy));
        RS_ASSIGN_OR_RETURN(
            TrainResult result,
            Train(*bundle.model,
                  OracleJob(setup, bundle.dataset.get(), sync_strategy.get(),
                            RankInfo{r, num_workers}, setup.batch_size, sync)));
        run.params[r] = std::move(result.params);
        run.eval_loss[r] = result.eval_loss;
        run.final_records[r] = std::move(result.final_record);
        return absl::OkStatus();
      }();
      status[r] = s;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < num_workers; ++r) {
    RS_RETURN_IF_ERROR(Annotate(status[r], absl::StrCat("rank ", r)));
  }
  return run;
}

void SetUpForStrategy(const StrategyInfo& info, OracleSetup& setup) {
  switch (info.servers) {
    case ServerNeed::kNone:
      setup.num_servers = 0;
      break;
    case ServerNeed::kOne:
      setup.num_servers = 1;
      break;
    case ServerNeed::kSharded:
      setup.num_servers = 2;
      break;
  }
  UseOracleOptimizer(info, setup);
  if (info.oracle_options) info.oracle_options(setup.sync.strategy);
}

void UseOracleOptimizer(const StrategyInfo& info, OracleSetup& setup) {
  if (info.oracle_optimizer.empty() ||
      info.oracle_optimizer == setup.optimizer.type) {
    return;
  }
  setup.optimizer.type = info.oracle_optimizer;
  if (info.oracle_optimizer == "adam") setup.optimizer.lr = 0.01f;
}

::testing::AssertionResult MatchesReference(const OracleRun& run,
                                            const TrainResult& reference,
                                            double tolerance) {
  for (size_t r = 0; r < run.params.size(); ++r) {
    const double error = RelativeL2(run.params[r], reference.params);
    if (!(error <= tolerance)) {
      return ::testing::AssertionFailure()
             << "rank " << r << ": parameters differ from the reference by "
             << error << " (relative L2) > " << tolerance;
    }
    const double loss_error = std::abs(run.eval_loss[r] - reference.eval_loss);
    if (!(loss_error <= tolerance * std::abs(reference.eval_loss))) {
      return ::testing::AssertionFailure()
             << "rank " << r << ": eval loss " << run.eval_loss[r]
             << " vs reference " << reference.eval_loss;
    }
    if (run.params[r] != run.params[0]) {
      return ::testing::AssertionFailure()
             << "rank " << r << " holds different parameters from rank 0";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult MeetsItsOracle(const StrategyInfo& info,
                                          const OracleSetup& setup,
                                          int num_workers,
                                          const OracleRun& run,
                                          const TrainResult& reference) {
  if (info.exact_setting) {
    return MatchesReference(run, reference, info.oracle_tolerance)
           << " (" << info.name << " declares tolerance "
           << info.oracle_tolerance << ")";
  }
  return RanksAgreeAndItTrains(info.name, setup, num_workers, run);
}

::testing::AssertionResult RanksAgreeAndItTrains(const std::string& strategy,
                                                 const OracleSetup& setup,
                                                 int num_workers,
                                                 const OracleRun& run) {
  OracleSetup one = setup;
  one.steps = 1;
  absl::StatusOr<TrainResult> one_step = RunReference(one, num_workers);
  if (!one_step.ok()) {
    return ::testing::AssertionFailure()
           << "the one-step reference: " << one_step.status();
  }
  for (size_t r = 0; r < run.params.size(); ++r) {
    if (run.params[r] != run.params[0]) {
      return ::testing::AssertionFailure()
             << "rank " << r << " holds different parameters from rank 0";
    }
    if (!(run.eval_loss[r] < one_step->eval_loss)) {
      return ::testing::AssertionFailure()
             << strategy << " rank " << r << ": eval loss "
             << run.eval_loss[r] << " after " << setup.steps
             << " steps is not below the reference's " << one_step->eval_loss
             << " after one: it does not train";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ringside::testing

#include "tests/testing/cuda_oracle_harness.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "collectives/in_memory_store.h"
#include "common/status_macros.h"
#include "models/cuda/cuda_mlp.h"
#include "server/local_ps_cluster.h"
#include "worker/cuda_trainer.h"

namespace ringside::testing {

absl::StatusOr<OracleRun> RunCudaWorkers(const OracleSetup& setup,
                                         const std::string& strategy,
                                         const std::vector<int>& gpus,
                                         std::vector<nlohmann::json>* finals) {
  const int num_workers = static_cast<int>(gpus.size());
  std::unique_ptr<LocalPsCluster> ps;
  SyncOptions sync = setup.sync;
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
  std::vector<nlohmann::json> records(num_workers);
  std::vector<absl::Status> status(num_workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < num_workers; ++r) {
    threads.emplace_back([&, r] {
      status[r] = [&]() -> absl::Status {
        RS_ASSIGN_OR_RETURN(ModelBundle bundle, MakeModel(setup.model));
        RS_ASSIGN_OR_RETURN(std::unique_ptr<CudaMlp> model,
                            CudaMlp::Create(setup.model.mlp_widths, gpus[r],
                                            setup.model.precision));
        RS_ASSIGN_OR_RETURN(std::unique_ptr<SyncStrategy> sync_strategy,
                            StrategyRegistry::Create(strategy));
        RS_ASSIGN_OR_RETURN(
            TrainResult result,
            TrainOnCuda(
                *model,
                OracleJob(setup, bundle.dataset.get(), sync_strategy.get(),
                          RankInfo{r, num_workers}, setup.batch_size, sync)));
        run.params[r] = std::move(result.params);
        run.eval_loss[r] = result.eval_loss;
        records[r] = std::move(result.final_record);
        return absl::OkStatus();
      }();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < num_workers; ++r) {
    RS_RETURN_IF_ERROR(Annotate(status[r], absl::StrCat("rank ", r)));
  }
  if (finals != nullptr) *finals = std::move(records);
  return run;
}

}  // namespace ringside::testing

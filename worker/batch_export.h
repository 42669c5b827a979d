// Batch export: writes what a worker job would train on — the initial
// parameters, every step's global batch, the evaluation set and the job's
// configuration — to a folder, so that a peer outside ringside (the
// PyTorch DDP peer, experiments/ddp_peer.py) trains exactly the same
// problem and its eval loss can be compared with ringside's rows.
//
// Folder contents (raw little-endian arrays; shapes in meta.json):
//   meta.json            format "ringside-batches-1", model, mlp_widths or
//                        the charlm configuration, layout (name, shape,
//                        offset, size per tensor), optimizer (with
//                        lr_warmup_steps), world_size, batch_size,
//                        accumulate_steps, steps, warmup_steps, files
//   params.f32           initial parameters in the layout's order
//   train_features.f32   [steps][world_size * batch_size * k][feature_dim]
//   train_labels.i32     [steps][world_size * batch_size * k]
//   eval_features.f32, eval_labels.i32   the held-out set
//   (language models: train_tokens.i32, eval_tokens.i32 instead)
// Rank r of step t takes rows [r * batch_size, (r + 1) * batch_size) of
// step t's global batch, as in the trainer (models/dataset.h); with k =
// accumulate_steps > 1 passes, pass j takes [(j * world_size + r) *
// batch_size, +batch_size).
#ifndef RINGSIDE_WORKER_BATCH_EXPORT_H_
#define RINGSIDE_WORKER_BATCH_EXPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "core/optimizer_config.h"
#include "models/dataset.h"
#include "models/model.h"

namespace ringside {

struct BatchExportJob {
  int world_size = 1;      // > 0
  int64_t batch_size = 0;  // per worker, > 0
  int64_t steps = 0;       // > 0
  int64_t warmup_steps = 0;
  // Passes per step (gradient accumulation); a step's global batch is
  // world_size x batch_size x accumulate_steps examples, pass j of rank r
  // at [(j * world_size + r) * batch_size, +batch_size) within it.
  int64_t accumulate_steps = 1;
  uint64_t init_seed = 1;
  OptimizerConfig optimizer;
  // Model-specific configuration copied into meta.json as is (e.g.
  // {"mlp_widths": [64, 1024, 1024, 10]}).
  nlohmann::json model_config = nlohmann::json::object();
};

// Creates `dir` if needed and writes the files above. INVALID_ARGUMENT on a
// bad job; UNAVAILABLE naming the file that could not be written.
absl::Status ExportBatches(const std::string& dir, const Model& model,
                           Dataset& dataset, const BatchExportJob& job);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_BATCH_EXPORT_H_

#include "worker/batch_export.h"

#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Appends `values` to an open binary file.
template <typename T>
void Append(std::ofstream& out, const std::vector<T>& values) {
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
}

absl::Status Closed(std::ofstream& out, const fs::path& path) {
  out.close();
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("batch export: cannot write ", path.string()));
  }
  return absl::OkStatus();
}

// Writes one batch field per step (or once, for the eval set) to `name`.
class ArrayFile {
 public:
  ArrayFile(const fs::path& dir, std::string name)
      : name_(std::move(name)), path_(dir / name_),
        out_(path_, std::ios::binary | std::ios::trunc) {}
  template <typename T>
  void Write(const std::vector<T>& values) { Append(out_, values); }
  absl::Status Close() { return Closed(out_, path_); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  fs::path path_;
  std::ofstream out_;
};

// Writes the fields a model reads of `count` batches from `next(i, batch)`
// (tokens, or features and labels) to <set>_<field> files, each of shape
// `leading` + [examples per batch] + [the field's elements per example],
// and describes them in `files` ({"<set>_<field>": {"file", "shape"}}).
absl::Status WriteSet(
    const fs::path& root, const std::string& set, int64_t count,
    std::vector<int64_t> leading,
    const std::function<absl::Status(int64_t, Batch*)>& next, json* files) {
  Batch batch;
  RS_RETURN_IF_ERROR(next(0, &batch));
  const bool tokens = !batch.tokens.empty();
  ArrayFile first(root, set + (tokens ? "_tokens.i32" : "_features.f32"));
  std::optional<ArrayFile> labels;
  if (!tokens) labels.emplace(root, set + "_labels.i32");
  const int64_t per_example =
      static_cast<int64_t>(tokens ? batch.tokens.size()
                                  : batch.features.size()) /
      batch.size;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) RS_RETURN_IF_ERROR(next(i, &batch));
    if (tokens) {
      first.Write(batch.tokens);
    } else {
      first.Write(batch.features);
      labels->Write(batch.labels);
    }
  }
  RS_RETURN_IF_ERROR(first.Close());
  leading.push_back(batch.size);
  std::vector<int64_t> shape = leading;
  shape.push_back(per_example);
  (*files)[set + (tokens ? "_tokens" : "_features")] = {
      {"file", first.name()}, {"shape", shape}};
  if (labels.has_value()) {
    RS_RETURN_IF_ERROR(labels->Close());
    (*files)[set + "_labels"] = {{"file", labels->name()}, {"shape", leading}};
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ExportBatches(const std::string& dir, const Model& model,
                           Dataset& dataset, const BatchExportJob& job) {
  if (job.world_size < 1 || job.batch_size < 1 || job.steps < 1 ||
      job.accumulate_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch export needs world_size, batch_size, steps and "
        "accumulate_steps >= 1, got ",
        job.world_size, ", ", job.batch_size, ", ", job.steps, ", ",
        job.accumulate_steps));
  }
  const fs::path root = dir;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "batch export: cannot create ", dir, ": ", ec.message()));
  }
  const TensorLayout& layout = model.layout();
  std::vector<float> params(layout.total_elements());
  model.InitParams(job.init_seed, absl::MakeSpan(params));
  {
    ArrayFile f(root, "params.f32");
    f.Write(params);
    RS_RETURN_IF_ERROR(f.Close());
  }

  // Steps' global batches, then the eval set; the fields the model reads
  // decide the files.
  const int64_t global =
      job.batch_size * job.world_size * job.accumulate_steps;
  json files = json::object();
  RS_RETURN_IF_ERROR(WriteSet(
      root, "train", job.steps, {job.steps},
      [&](int64_t t, Batch* batch) {
        return dataset.TrainBatch(t * global, global, batch);
      },
      &files));
  RS_RETURN_IF_ERROR(WriteSet(
      root, "eval", 1, {},
      [&](int64_t, Batch* batch) { return dataset.EvalBatch(batch); },
      &files));
  files["params"] = {{"file", "params.f32"},
                     {"shape", {layout.total_elements()}}};

  json tensors = json::array();
  for (int i = 0; i < layout.num_tensors(); ++i) {
    const TensorSpec& s = layout.tensor(i);
    tensors.push_back({{"name", s.name},
                       {"shape", s.shape},
                       {"offset", s.offset},
                       {"size", s.size}});
  }
  const OptimizerConfig& o = job.optimizer;
  json meta = {{"format", "ringside-batches-1"},
               {"model", model.name()},
               {"model_config", job.model_config},
               {"layout", tensors},
               {"optimizer",
                {{"type", o.type},
                 {"lr", o.lr},
                 {"momentum", o.momentum},
                 {"beta1", o.beta1},
                 {"beta2", o.beta2},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay},
                 {"lr_warmup_steps", o.lr_warmup_steps}}},
               {"world_size", job.world_size},
               {"batch_size", job.batch_size},
               {"accumulate_steps", job.accumulate_steps},
               {"steps", job.steps},
               {"warmup_steps", job.warmup_steps},
               {"init_seed", job.init_seed},
               {"files", files}};
  const fs::path meta_path = root / "meta.json";
  std::ofstream out(meta_path, std::ios::trunc);
  out << meta.dump(2) << "\n";
  return Closed(out, meta_path);
}

}  // namespace ringside

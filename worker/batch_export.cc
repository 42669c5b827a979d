#include "worker/batch_export.h"

#include <filesystem>
#include <fstream>
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

}  // namespace

absl::Status ExportBatches(const std::string& dir, const Model& model,
                           Dataset& dataset, const BatchExportJob& job) {
  if (job.world_size < 1 || job.batch_size < 1 || job.steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch export needs world_size, batch_size and steps >= 1, got ",
        job.world_size, ", ", job.batch_size, ", ", job.steps));
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

  // Steps' global batches; the fields the model reads decide the files.
  const int64_t global = job.batch_size * job.world_size;
  Batch batch;
  RS_RETURN_IF_ERROR(dataset.TrainBatch(0, global, &batch));
  const bool tokens = !batch.tokens.empty();
  json files = json::object();
  if (tokens) {
    ArrayFile f(root, "train_tokens.i32");
    for (int64_t t = 0; t < job.steps; ++t) {
      RS_RETURN_IF_ERROR(dataset.TrainBatch(t * global, global, &batch));
      f.Write(batch.tokens);
    }
    RS_RETURN_IF_ERROR(f.Close());
    files["train_tokens"] = {{"file", f.name()},
                             {"shape", {job.steps, global,
                                        static_cast<int64_t>(
                                            batch.tokens.size()) / global}}};
  } else {
    ArrayFile x(root, "train_features.f32"), y(root, "train_labels.i32");
    for (int64_t t = 0; t < job.steps; ++t) {
      RS_RETURN_IF_ERROR(dataset.TrainBatch(t * global, global, &batch));
      x.Write(batch.features);
      y.Write(batch.labels);
    }
    RS_RETURN_IF_ERROR(x.Close());
    RS_RETURN_IF_ERROR(y.Close());
    files["train_features"] = {
        {"file", x.name()},
        {"shape", {job.steps, global,
                   static_cast<int64_t>(batch.features.size()) / global}}};
    files["train_labels"] = {{"file", y.name()}, {"shape", {job.steps, global}}};
  }
  Batch eval;
  RS_RETURN_IF_ERROR(dataset.EvalBatch(&eval));
  if (tokens) {
    ArrayFile f(root, "eval_tokens.i32");
    f.Write(eval.tokens);
    RS_RETURN_IF_ERROR(f.Close());
    files["eval_tokens"] = {
        {"file", f.name()},
        {"shape", {eval.size,
                   static_cast<int64_t>(eval.tokens.size()) / eval.size}}};
  } else {
    ArrayFile x(root, "eval_features.f32"), y(root, "eval_labels.i32");
    x.Write(eval.features);
    y.Write(eval.labels);
    RS_RETURN_IF_ERROR(x.Close());
    RS_RETURN_IF_ERROR(y.Close());
    files["eval_features"] = {
        {"file", x.name()},
        {"shape", {eval.size,
                   static_cast<int64_t>(eval.features.size()) / eval.size}}};
    files["eval_labels"] = {{"file", y.name()}, {"shape", {eval.size}}};
  }
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
                 {"weight_decay", o.weight_decay}}},
               {"world_size", job.world_size},
               {"batch_size", job.batch_size},
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

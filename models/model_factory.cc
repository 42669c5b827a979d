#include "models/model_factory.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "models/gradient_profiles.h"
#include "models/mlp.h"
#include "models/synthetic_classification.h"
#include "models/synthetic_model.h"
#include "models/transformer/char_dataset.h"
#include "models/transformer/charlm.h"

namespace ringside {
namespace {

SyntheticClassificationOptions DataOptions(const ModelOptions& options,
                                           int64_t feature_dim,
                                           int64_t num_classes) {
  SyntheticClassificationOptions data;
  data.feature_dim = feature_dim;
  data.num_classes = num_classes;
  data.train_examples = options.train_examples;
  data.eval_examples = options.eval_examples;
  data.seed = options.data_seed;
  return data;
}

absl::StatusOr<ModelBundle> MakeMlp(const ModelOptions& options) {
  ModelBundle bundle;
  RS_ASSIGN_OR_RETURN(bundle.model,
                      Mlp::Create(options.mlp_widths, options.precision));
  RS_ASSIGN_OR_RETURN(
      bundle.dataset,
      SyntheticClassification::Create(DataOptions(
          options, options.mlp_widths.front(), options.mlp_widths.back())));
  return bundle;
}

absl::StatusOr<ModelBundle> MakeSynthetic(const ModelOptions& options) {
  if (options.precision != Precision::kFp32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--model=synthetic has no ", PrecisionName(options.precision),
        " arithmetic (its compute is emulated: set --emulated_compute_ms to "
        "the step's time at that precision)"));
  }
  RS_ASSIGN_OR_RETURN(GradientProfile profile,
                      FindGradientProfile(options.profile));
  RS_ASSIGN_OR_RETURN(
      profile, ScaledProfile(std::move(profile), options.emulation_scale));
  SyntheticModelOptions model_options;
  model_options.emulated_compute_s = options.emulated_compute_ms / 1000.0;
  model_options.compute_scale = options.compute_scale;
  ModelBundle bundle;
  RS_ASSIGN_OR_RETURN(
      bundle.model, SyntheticModel::Create(std::move(profile), model_options));
  // The model reads one feature per example; labels are unused.
  RS_ASSIGN_OR_RETURN(
      bundle.dataset,
      SyntheticClassification::Create(DataOptions(
          options, SyntheticModel::kFeatureDim, /*num_classes=*/2)));
  return bundle;
}

// The text first: the model's vocabulary is the text's.
absl::StatusOr<ModelBundle> MakeCharLm(const ModelOptions& options) {
  const CharLmModelOptions& o = options.charlm;
  CharLmConfig config;
  config.vocab_size = 1;  // the text's, once read; shape errors first
  config.n_layer = o.n_layer;
  config.n_head = o.n_head;
  config.n_embd = o.n_embd;
  config.block_size = o.block_size;
  RS_RETURN_IF_ERROR(config.Validate());
  CharDatasetOptions data;
  data.text_path = o.text_path;
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      !data.text_path.empty() && cwd != nullptr &&
      std::filesystem::path(data.text_path).is_relative()) {
    data.text_path = (std::filesystem::path(cwd) / data.text_path).string();
  }
  data.block_size = o.block_size;
  data.val_fraction = o.val_fraction;
  data.eval_examples = options.eval_examples;
  data.synthetic_chars = o.synthetic_chars;
  data.seed = options.data_seed;
  RS_ASSIGN_OR_RETURN(std::unique_ptr<CharDataset> dataset,
                      CharDataset::Create(data));
  config.vocab_size = dataset->vocab().size();
  ModelBundle bundle;
  RS_ASSIGN_OR_RETURN(bundle.model, CharLm::Create(config, options.precision));
  bundle.dataset = std::move(dataset);
  return bundle;
}

}  // namespace

std::string ModelNames() { return "mlp, synthetic, charlm"; }

absl::StatusOr<ModelBundle> MakeModel(const ModelOptions& options) {
  if (options.emulation_scale != 1 && options.name != "synthetic") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--emulation_scale=", options.emulation_scale,
        " needs --model=synthetic (a real model's tensors cannot shrink; "
        "got --model=",
        options.name, ")"));
  }
  if (options.name == "mlp") return MakeMlp(options);
  if (options.name == "synthetic") return MakeSynthetic(options);
  if (options.name == "charlm") return MakeCharLm(options);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown model '", options.name, "' (known: ", ModelNames(), ")"));
}

}  // namespace ringside

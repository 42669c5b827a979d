// Builds a model and its dataset by name from ModelOptions (the flags
// --model, --mlp_widths, --profile, ... map onto it). Thread-safe (pure
// function).
#ifndef RINGSIDE_MODELS_MODEL_FACTORY_H_
#define RINGSIDE_MODELS_MODEL_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/precision.h"

namespace ringside {

// "charlm": the character-level GPT-2-style transformer and its text
// (models/transformer/charlm.h, char_dataset.h).
struct CharLmModelOptions {
  // Transformer blocks; >= 1.
  int64_t n_layer = 2;
  // Attention heads per block; >= 1, divides n_embd.
  int64_t n_head = 4;
  // Width of the residual stream; >= 1.
  int64_t n_embd = 64;
  // Context length in characters; >= 1.
  int64_t block_size = 32;
  // Training text (bytes); the vocabulary is its distinct characters.
  // Empty: a built-in seeded synthetic text of synthetic_chars characters
  // (seeded by ModelOptions::data_seed). A relative path is taken from the
  // working directory, or under `bazel run` from where the command was
  // typed (BUILD_WORKING_DIRECTORY).
  std::string text_path;
  // Fraction of the text (its end) held out for the evaluation loss; (0, 1).
  double val_fraction = 0.1;
  // Length of the synthetic text; > 0.
  int64_t synthetic_chars = 200000;
};

struct ModelOptions {
  // Model name: "mlp", "synthetic" (a gradient profile's tensors with a
  // cheap exact loss and emulated compute time; see synthetic_model.h) or
  // "charlm" (see CharLmModelOptions).
  std::string name = "mlp";
  // MLP layer widths, input first, classes last (>= 2 entries, each > 0).
  std::vector<int64_t> mlp_widths = {64, 1024, 1024, 10};
  // "synthetic" only: the gradient profile whose tensors the model has
  // (GradientProfileNames(): resnet50, vgg16, bert-base, gpt2, mobilenet_v2).
  std::string profile = "resnet50";
  // "synthetic" only: emulated wall time of one forward+backward, in
  // milliseconds (>= 0; 0 = only the model's cheap real arithmetic).
  double emulated_compute_ms = 0.0;
  // "synthetic" only: multiplies the compute a profile file measured (used
  // when emulated_compute_ms is 0), > 0.
  double compute_scale = 1.0;
  // "synthetic" only: the emulation scale S >= 1 (ScaledProfile): each
  // tensor holds 1/S of its elements; 1: the profile as it is.
  double emulation_scale = 1.0;
  // "charlm" only.
  CharLmModelOptions charlm;
  // Synthetic data: training examples (one epoch), held-out examples, and
  // the seed of the data and of its order. charlm: its training set is
  // every window of its text (train_examples is unused), eval_examples caps
  // its validation windows and data_seed seeds its order (and the
  // synthetic text).
  int64_t train_examples = 16384;
  int64_t eval_examples = 1024;
  uint64_t data_seed = 1;
  // The products' arithmetic (models/precision.h): "mlp" and "charlm" in
  // kBf16 round their operands to bfloat16 (on the CPU, at float32's
  // speed: a numerics reference; a CUDA worker's model computes it on the
  // tensor cores); "synthetic" has no bf16 arithmetic (INVALID_ARGUMENT).
  Precision precision = Precision::kFp32;
};

struct ModelBundle {
  std::unique_ptr<Model> model;
  std::unique_ptr<Dataset> dataset;
};

// Names accepted by MakeModel, comma-separated (for flag help and errors).
std::string ModelNames();

// INVALID_ARGUMENT on an unknown name (listing the known ones), an unknown
// profile or bad sizes.
absl::StatusOr<ModelBundle> MakeModel(const ModelOptions& options);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_MODEL_FACTORY_H_

#include "models/model_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "models/charlm_shape_flags.h"

ABSL_FLAG(std::string, model, "mlp", "Model name: mlp, synthetic or charlm.");
ABSL_FLAG(std::vector<std::string>, mlp_widths,
          std::vector<std::string>({"64", "1024", "1024", "10"}),
          "MLP widths, input first, classes last.");
ABSL_FLAG(std::string, profile, "resnet50",
          "--model=synthetic: gradient profile (resnet50, vgg16, bert-base, "
          "gpt2, mobilenet_v2, or a profile file's path: "
          "models/profile_file.h) whose exact tensor list the synthetic model "
          "has.");
ABSL_FLAG(double, emulated_compute_ms, 0,
          "--model=synthetic: emulated compute time of one forward+backward "
          "(ms, >= 0); outputs are labelled emulated.");
ABSL_FLAG(double, compute_scale, 1.0,
          "--model=synthetic with a profile file that carries measured "
          "compute and --emulated_compute_ms=0: its forward, backward and "
          "gradient-ready times are multiplied by this (> 0), standing in "
          "for a faster or slower device.");
ABSL_FLAG(double, emulation_scale, 1.0,
          "--model=synthetic: every tensor holds 1/S of its elements (at "
          "least one), so a run moves S times fewer bytes; compare "
          "--emulation_scale also divides the link's bandwidth and the "
          "byte thresholds by S, which keeps a full-size run's transfer "
          "times (>= 1; 1: full size).");
ABSL_FLAG(int64_t, train_examples, 16384, "Synthetic training examples.");
ABSL_FLAG(int64_t, eval_examples, 1024, "Synthetic held-out examples.");
ABSL_FLAG(uint64_t, data_seed, 1, "Seed of the data and its order.");
// --model=charlm: the character transformer (models/transformer/).
ABSL_FLAG(std::string, text, "",
          "--model=charlm: training text file (its distinct characters are "
          "the vocabulary; the last 10% is held out for eval_loss); empty: "
          "a built-in seeded synthetic text.");
// --n_layer, --n_head and --block_size: models/charlm_shape_flags.h.
ABSL_FLAG(int64_t, n_embd, 64, "--model=charlm: embedding width.");

namespace ringside {

absl::StatusOr<ModelOptions> ModelOptionsFromFlags() {
  ModelOptions m;
  m.name = absl::GetFlag(FLAGS_model);
  m.mlp_widths.clear();
  for (const std::string& t : absl::GetFlag(FLAGS_mlp_widths)) {
    int64_t w = 0;
    if (!absl::SimpleAtoi(t, &w)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mlp_widths: '", t, "' is not an integer"));
    }
    m.mlp_widths.push_back(w);
  }
  m.profile = absl::GetFlag(FLAGS_profile);
  m.emulated_compute_ms = absl::GetFlag(FLAGS_emulated_compute_ms);
  m.compute_scale = absl::GetFlag(FLAGS_compute_scale);
  m.emulation_scale = absl::GetFlag(FLAGS_emulation_scale);
  m.train_examples = absl::GetFlag(FLAGS_train_examples);
  m.eval_examples = absl::GetFlag(FLAGS_eval_examples);
  m.data_seed = absl::GetFlag(FLAGS_data_seed);
  m.charlm.text_path = absl::GetFlag(FLAGS_text);
  m.charlm.n_layer = absl::GetFlag(FLAGS_n_layer);
  m.charlm.n_head = absl::GetFlag(FLAGS_n_head);
  m.charlm.n_embd = absl::GetFlag(FLAGS_n_embd);
  m.charlm.block_size = absl::GetFlag(FLAGS_block_size);
  return m;
}

}  // namespace ringside

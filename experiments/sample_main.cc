// sample: generates text from a character transformer trained by the worker,
// so a user sees what the model learned.
//
//   worker --model=charlm --text=input.txt --steps=2000 --save_params=lm.bin
//   sample --text=input.txt --params=lm.bin --prompt="ROMEO:" --length=300
//
// Takes the worker's model flags (--n_layer, --n_head, --n_embd,
// --block_size, --text, --data_seed) and builds the model exactly as the
// worker did: the vocabulary is the text's distinct characters (or the
// built-in synthetic text's, seeded by --data_seed, when --text is empty),
// so give the same --text as in training. --params is the worker's
// --save_params file (raw little-endian float32 in the model's layout).
// Each new character is drawn from softmax(logits / temperature) with a
// seeded generator (--temperature=0: the most likely one); the context is
// the last block_size characters.
//
// stdout: the prompt followed by the generated text. Exit 0 on success, 2
// on bad flags (a params file of the wrong size and a prompt character
// outside the vocabulary included), 1 on other failures.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "models/model_factory.h"
#include "models/model_flags.h"
#include "models/transformer/char_dataset.h"
#include "models/transformer/charlm.h"

// The model flags are the worker's (models/model_flags.h); --model
// defaults to charlm here, the only model that generates text.
ABSL_FLAG(std::string, params, "",
          "Parameters written by worker --save_params (required).");
ABSL_FLAG(std::string, prompt, "",
          "Text to continue; empty: start from a newline (or the "
          "vocabulary's first character when the text has none).");
ABSL_FLAG(int64_t, length, 200, "Characters to generate (>= 0).");
ABSL_FLAG(double, temperature, 0.8,
          "Sampling temperature (> 0; 0 picks the most likely character).");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the sampling.");

namespace ringside {
namespace {

// Exit codes.
constexpr int kFailed = 1;
constexpr int kBadFlags = 2;

absl::StatusOr<std::vector<float>> ReadParams(const std::string& path,
                                              int64_t want) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open --params file '", path, "'"));
  }
  const int64_t bytes = static_cast<int64_t>(in.tellg());
  if (bytes != want * 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--params file '", path, "' holds ", bytes, " bytes (", bytes / 4,
        " floats) but the model of these flags has ", want,
        " parameters: give the --n_layer, --n_head, --n_embd, --block_size "
        "and --text (or --data_seed) the worker trained with"));
  }
  std::vector<float> params(want);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(params.data()), bytes);
  if (!in) {
    return absl::UnavailableError(absl::StrCat("cannot read '", path, "'"));
  }
  return params;
}

int32_t Sample(const std::vector<float>& logits, double temperature,
               std::mt19937_64& rng) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  if (temperature <= 0) return best;
  std::vector<double> weights(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    weights[i] = std::exp((logits[i] - logits[best]) / temperature);
  }
  std::discrete_distribution<int32_t> pick(weights.begin(), weights.end());
  return pick(rng);
}

int Run() {
  auto fail = [](int code, const absl::Status& s) {
    std::fprintf(stderr, "sample: %s%s\n",
                 code == kBadFlags ? "bad flags: " : "",
                 std::string(s.message()).c_str());
    return code;
  };
  if (absl::GetFlag(FLAGS_model) != "charlm") {
    return fail(kBadFlags, absl::InvalidArgumentError(absl::StrCat(
                               "--model=", absl::GetFlag(FLAGS_model),
                               ": only charlm generates text")));
  }
  const std::string params_path = absl::GetFlag(FLAGS_params);
  if (params_path.empty()) {
    return fail(kBadFlags, absl::InvalidArgumentError(
                               "--params=PATH is required (a file written "
                               "by worker --save_params)"));
  }
  const int64_t length = absl::GetFlag(FLAGS_length);
  const double temperature = absl::GetFlag(FLAGS_temperature);
  if (length < 0 || !(temperature >= 0) || std::isinf(temperature)) {
    return fail(kBadFlags,
                absl::InvalidArgumentError(
                    "--length must be >= 0 and --temperature finite, >= 0"));
  }
  absl::StatusOr<ModelOptions> options = ModelOptionsFromFlags();
  if (!options.ok()) return fail(kBadFlags, options.status());
  options->eval_examples = 1;  // the sampler evaluates nothing
  absl::StatusOr<ModelBundle> bundle = MakeModel(*options);
  if (!bundle.ok()) {
    return fail(absl::IsInvalidArgument(bundle.status()) ||
                        absl::IsNotFound(bundle.status())
                    ? kBadFlags
                    : kFailed,
                bundle.status());
  }
  auto* model = dynamic_cast<CharLm*>(bundle->model.get());
  auto* data = dynamic_cast<CharDataset*>(bundle->dataset.get());
  if (model == nullptr || data == nullptr) {
    return fail(kFailed, absl::InternalError("charlm factory mismatch"));
  }
  absl::StatusOr<std::vector<float>> params =
      ReadParams(params_path, model->layout().total_elements());
  if (!params.ok()) {
    return fail(absl::IsUnavailable(params.status()) ? kFailed : kBadFlags,
                params.status());
  }
  const CharVocab& vocab = data->vocab();
  std::string prompt = absl::GetFlag(FLAGS_prompt);
  if (prompt.empty()) {
    prompt = vocab.Id('\n') >= 0 ? "\n" : std::string(1, vocab.Char(0));
  }
  absl::StatusOr<std::vector<int32_t>> tokens = vocab.Encode(prompt);
  if (!tokens.ok()) {
    return fail(kBadFlags, absl::InvalidArgumentError(absl::StrCat(
                               "--prompt: ", tokens.status().message())));
  }
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  const int64_t block = model->config().block_size;
  std::fputs(prompt.c_str(), stdout);
  for (int64_t i = 0; i < length; ++i) {
    const size_t n = tokens->size();
    const size_t start = n > static_cast<size_t>(block) ? n - block : 0;
    absl::StatusOr<std::vector<float>> logits = model->NextTokenLogits(
        absl::MakeConstSpan(tokens->data() + start, n - start), *params);
    if (!logits.ok()) return fail(kFailed, logits.status());
    const int32_t next = Sample(*logits, temperature, rng);
    tokens->push_back(next);
    std::fputc(vocab.Char(next), stdout);
  }
  std::fputc('\n', stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Generates text from a charlm checkpoint:\n  sample --text=PATH "
      "--params=PATH [--n_layer --n_head --n_embd --block_size as in "
      "training] --prompt=TEXT --length=N --temperature=T --seed=S");
  absl::SetFlag(&FLAGS_model, "charlm");  // the default here
  absl::ParseCommandLine(argc, argv);
  return ringside::Run();
}

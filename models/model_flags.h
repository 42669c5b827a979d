// The model flags, defined once for every binary that builds a model the
// way the worker does (worker, sample): --model, --mlp_widths, --profile,
// --emulated_compute_ms, --train_examples, --eval_examples, --data_seed and
// the character transformer's --text, --n_layer, --n_head, --n_embd,
// --block_size. Linking this library defines them.
#ifndef RINGSIDE_MODELS_MODEL_FLAGS_H_
#define RINGSIDE_MODELS_MODEL_FLAGS_H_

#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "models/model_factory.h"

// Declared for binaries that change its default before parsing (sample:
// charlm).
ABSL_DECLARE_FLAG(std::string, model);

namespace ringside {

// ModelOptions from the flags; INVALID_ARGUMENT naming the flag when
// --mlp_widths holds a non-integer (MakeModel checks the rest).
absl::StatusOr<ModelOptions> ModelOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_MODELS_MODEL_FLAGS_H_

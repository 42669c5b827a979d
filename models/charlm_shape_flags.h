// The character transformer's shape flags, defined once for every binary
// that builds one (through models/model_flags.h: worker, sample; and
// charlm_bench): --n_layer (blocks, default 2), --n_head (attention heads,
// 4; divides the width) and --block_size (context length, 32). Linking this
// library defines them.
#ifndef RINGSIDE_MODELS_CHARLM_SHAPE_FLAGS_H_
#define RINGSIDE_MODELS_CHARLM_SHAPE_FLAGS_H_

#include <cstdint>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(int64_t, n_layer);
ABSL_DECLARE_FLAG(int64_t, n_head);
ABSL_DECLARE_FLAG(int64_t, block_size);

#endif  // RINGSIDE_MODELS_CHARLM_SHAPE_FLAGS_H_

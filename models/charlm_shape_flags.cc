#include "models/charlm_shape_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(int64_t, n_layer, 2, "--model=charlm: transformer blocks.");
ABSL_FLAG(int64_t, n_head, 4,
          "--model=charlm: attention heads (divides the embedding width).");
ABSL_FLAG(int64_t, block_size, 32,
          "--model=charlm: context length in characters.");

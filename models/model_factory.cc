#include "models/model_factory.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "models/mlp.h"
#include "models/synthetic_classification.h"

namespace ringside {

std::string ModelNames() { return "mlp"; }

absl::StatusOr<ModelBundle> MakeModel(const ModelOptions& options) {
  if (options.name != "mlp") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown model '", options.name, "' (known: ", ModelNames(), ")"));
  }
  ModelBundle bundle;
  RS_ASSIGN_OR_RETURN(bundle.model, Mlp::Create(options.mlp_widths));
  SyntheticClassificationOptions data;
  data.feature_dim = options.mlp_widths.front();
  data.num_classes = options.mlp_widths.back();
  data.train_examples = options.train_examples;
  data.eval_examples = options.eval_examples;
  data.seed = options.data_seed;
  RS_ASSIGN_OR_RETURN(bundle.dataset, SyntheticClassification::Create(data));
  return bundle;
}

}  // namespace ringside

// OptimizerConfig: which update rule and its hyper-parameters, as workers,
// parameter servers and checkpoints carry it (the rules themselves are in
// models/optimizer.h). Equal configs apply bit-identical updates.
#ifndef RINGSIDE_CORE_OPTIMIZER_CONFIG_H_
#define RINGSIDE_CORE_OPTIMIZER_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "proto/tensor_layout.pb.h"

namespace ringside {

struct OptimizerConfig {
  // "sgd" (with momentum) or "adam".
  std::string type = "sgd";
  // Learning rate; > 0.
  float lr = 0.05f;
  // SGD momentum in [0, 1); 0 is plain SGD. PyTorch's convention:
  // v = momentum * v + g;  p -= lr * v.
  float momentum = 0.9f;
  // Adam moments' decay rates in [0, 1) and denominator epsilon (> 0).
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  // L2 penalty added to the gradient (g += weight_decay * p); >= 0.
  float weight_decay = 0.0f;
  // Linear learning-rate warm-up over the first `lr_warmup_steps` updates
  // (Goyal et al. 2017); 0: none. >= 0. See LrAt.
  int64_t lr_warmup_steps = 0;

  // The learning rate of update `step` (counted from 1, as Optimizer::Apply
  // counts it): lr * step / lr_warmup_steps while step < lr_warmup_steps,
  // else lr. Every optimizer (CPU, CUDA, parameter server, shard) calls
  // this, so all apply the same float.
  float LrAt(int64_t step) const;

  // INVALID_ARGUMENT naming the bad field.
  absl::Status Validate() const;
  // Floats of optimizer state per parameter when one optimizer holds all
  // of it: Adam 2 (its two moments), SGD with momentum 1 (the velocity),
  // plain SGD 0.
  int StateFloatsPerParameter() const;
  proto::OptimizerConfig ToProto() const;
  static OptimizerConfig FromProto(const proto::OptimizerConfig& p);
  bool operator==(const OptimizerConfig& o) const;
  std::string DebugString() const;
};

}  // namespace ringside

#endif  // RINGSIDE_CORE_OPTIMIZER_CONFIG_H_

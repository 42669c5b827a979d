#include "core/optimizer_config.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ringside {
namespace {

absl::Status CheckUnitInterval(const char* field, float value) {
  if (!(value >= 0.0f && value < 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer ", field, " must be in [0, 1), got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

int OptimizerConfig::StateFloatsPerParameter() const {
  if (type == "adam") return 2;
  return momentum > 0 ? 1 : 0;
}

absl::Status OptimizerConfig::Validate() const {
  if (type != "sgd" && type != "adam") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown optimizer type '", type, "' (known: sgd, adam)"));
  }
  // Also the fields this type ignores: a NaN there would make the config
  // unequal to itself (registrations and checkpoints could never match).
  for (const auto& [name, value] :
       {std::pair<const char*, float>{"lr", lr},
        {"momentum", momentum},
        {"beta1", beta1},
        {"beta2", beta2},
        {"eps", eps},
        {"weight_decay", weight_decay}}) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer ", name, " must be finite, got ", value));
    }
  }
  if (!(lr > 0.0f) || !std::isfinite(lr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer lr must be finite and > 0, got ", lr));
  }
  if (lr_warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer lr_warmup_steps must be >= 0, got ", lr_warmup_steps));
  }
  if (!(weight_decay >= 0.0f) || !std::isfinite(weight_decay)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer weight_decay must be finite and >= 0, got ", weight_decay));
  }
  if (type == "sgd") return CheckUnitInterval("momentum", momentum);
  if (absl::Status s = CheckUnitInterval("beta1", beta1); !s.ok()) return s;
  if (absl::Status s = CheckUnitInterval("beta2", beta2); !s.ok()) return s;
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer eps must be finite and > 0, got ", eps));
  }
  return absl::OkStatus();
}

proto::OptimizerConfig OptimizerConfig::ToProto() const {
  proto::OptimizerConfig p;
  p.set_type(type);
  p.set_lr(lr);
  p.set_momentum(momentum);
  p.set_beta1(beta1);
  p.set_beta2(beta2);
  p.set_eps(eps);
  p.set_weight_decay(weight_decay);
  p.set_lr_warmup_steps(lr_warmup_steps);
  return p;
}

OptimizerConfig OptimizerConfig::FromProto(const proto::OptimizerConfig& p) {
  OptimizerConfig c;
  c.type = p.type();
  c.lr = p.lr();
  c.momentum = p.momentum();
  c.beta1 = p.beta1();
  c.beta2 = p.beta2();
  c.eps = p.eps();
  c.weight_decay = p.weight_decay();
  c.lr_warmup_steps = p.lr_warmup_steps();
  return c;
}

bool OptimizerConfig::operator==(const OptimizerConfig& o) const {
  return type == o.type && lr == o.lr && momentum == o.momentum &&
         beta1 == o.beta1 && beta2 == o.beta2 && eps == o.eps &&
         weight_decay == o.weight_decay && lr_warmup_steps == o.lr_warmup_steps;
}

float OptimizerConfig::LrAt(int64_t step) const {
  if (step >= lr_warmup_steps) return lr;
  return lr * (static_cast<float>(step) / static_cast<float>(lr_warmup_steps));
}

std::string OptimizerConfig::DebugString() const {
  const std::string warmup =
      lr_warmup_steps > 0 ? absl::StrCat(", lr_warmup_steps=", lr_warmup_steps)
                          : "";
  if (type == "sgd") {
    return absl::StrFormat("sgd(lr=%g, momentum=%g, weight_decay=%g%s)", lr,
                           momentum, weight_decay, warmup);
  }
  return absl::StrFormat(
      "%s(lr=%g, beta1=%g, beta2=%g, eps=%g, weight_decay=%g%s)", type, lr,
      beta1, beta2, eps, weight_decay, warmup);
}

}  // namespace ringside

#include "worker/strategies/allreduce/powersgd_kernels.h"

namespace ringside {
namespace {

using Vector = Eigen::Map<Eigen::VectorXf>;
using ConstVector = Eigen::Map<const Eigen::VectorXf>;

}  // namespace

void AddError(absl::Span<float> g, absl::Span<float> e) {
  Vector gv(g.data(), static_cast<Eigen::Index>(g.size()));
  Vector ev(e.data(), static_cast<Eigen::Index>(e.size()));
  gv += ev;
  ev = gv;
}

void TakeResult(absl::Span<const float> g, absl::Span<float> e) {
  Vector(e.data(), static_cast<Eigen::Index>(e.size())) -=
      ConstVector(g.data(), static_cast<Eigen::Index>(g.size()));
}

void LowRankProject(const RowMajorMap& m, const RowMajorMap& q,
                    RowMajorMap p) {
  p.noalias() = m * q;
}

void LowRankBackProject(const RowMajorMap& m, const RowMajorMap& p,
                        RowMajorMap q, RowMajorMatrix& scratch) {
  scratch.resize(p.cols(), m.cols());
  scratch.noalias() = p.transpose() * m;
  q = scratch.transpose();
}

void LowRankReconstruct(const RowMajorMap& p, const RowMajorMap& q,
                        RowMajorMap m) {
  m.noalias() = p * q.transpose();
}

}  // namespace ringside

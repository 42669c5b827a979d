#include "worker/strategies/allreduce/powersgd_hook.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "core/step_floats.h"
#include "worker/strategies/allreduce/powersgd_kernels.h"
#include "worker/strategies/allreduce/powersgd_options.h"

namespace ringside {
namespace {

using RowMajor = RowMajorMatrix;
using MatrixMap = RowMajorMap;

// One compressed tensor of a bucket: its matrix view and its Q.
struct Compressed {
  int tensor = 0;
  int64_t offset = 0;  // elements, within the bucket
  int64_t rows = 0, cols = 0;
  int64_t rank = 0;      // min(r, rows, cols), as PyTorch clamps it
  std::vector<float> q;  // cols x rank, row-major
};

// A bucket's state across steps, keyed by its offset in the flat buffer.
struct BucketState {
  int64_t steps = 0;
  // This rank's error, the bucket's size; during a Reduce, the input (the
  // gradients plus the error) until the result is taken from it.
  std::vector<float> error;
  std::vector<Compressed> matrices;
  std::vector<std::pair<int64_t, int64_t>> plain;  // (offset, size)
  int64_t plain_elements = 0, p_elements = 0, q_elements = 0;
  std::vector<float> packed_p, packed_q;  // scratch for the all-reduces
};

// Fills `q` with N(0, 1) values from a seed every rank shares.
void SeededRandom(uint64_t seed, std::vector<float>& q) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : q) v = normal(engine);
}

// Orthonormalizes the columns of `p` (rows x r, r <= rows) as PyTorch's
// _orthogonalize does: Householder QR's thin Q where r > 2, Gram-Schmidt
// where r <= 2. In Gram-Schmidt a column left with under kVanishing of its
// norm once the earlier one is taken out (the gradients span fewer
// dimensions) is set to zero rather than normalized, which would turn
// rounding noise into a direction.
constexpr float kVanishing = 1e-6f;
void Orthonormalize(MatrixMap p) {
  if (p.cols() > 2) {
    const Eigen::HouseholderQR<RowMajor> qr(p);
    p = qr.householderQ() * RowMajor::Identity(p.rows(), p.cols());
    return;
  }
  for (int64_t j = 0; j < p.cols(); ++j) {
    const float before = p.col(j).norm();
    for (int64_t k = 0; k < j; ++k) {
      const float dot = p.col(k).dot(p.col(j));
      p.col(j) -= dot * p.col(k);
    }
    const float norm = p.col(j).norm();
    if (std::isfinite(norm) && norm > 0 && norm > kVanishing * before) {
      p.col(j) /= norm;
    } else {
      p.col(j).setZero();
    }
  }
}

class PowerSgdHook final : public BucketCommHook {
 public:
  absl::Status Connect(const SyncContext& context, Store&, const std::string&,
                       Collective& collective) override {
    options_ = context.options.strategy.Get<PowerSgdOptions>();
    RS_RETURN_IF_ERROR(options_.Validate());
    world_size_ = context.world_size;
    timeout_ = context.options.rpc_timeout;
    collective_ = &collective;
    layout_ = context.layout;
    return absl::OkStatus();
  }

  absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                      std::vector<HookPhase>* phases) override {
    BucketState& b = StateOf(grads.size(), offset);
    const bool timed = phases != nullptr;
    if (b.steps++ < options_.start_step) {
      wire_.Add(static_cast<int64_t>(grads.size()),
                static_cast<double>(grads.size()));
      return AverageBucket(*collective_, grads, timeout_,
                           "all-reduce (before PowerSGD starts)", phases);
    }
    const double t0 = timed ? NowSeconds() : 0.0;
    AddError(grads, absl::MakeSpan(b.error));
    // P = M·Q, packed after the plain tensors.
    int64_t at = 0;
    for (const auto& [begin, size] : b.plain) {
      std::copy_n(grads.data() + begin, size, b.packed_p.data() + at);
      at += size;
    }
    for (Compressed& m : b.matrices) {
      const int64_t r = m.rank;
      if (!options_.warm_start) {
        SeededRandom(QSeed(m.tensor, b.steps), m.q);
      }
      MatrixMap mat(grads.data() + m.offset, m.rows, m.cols);
      MatrixMap q(m.q.data(), m.cols, r);
      LowRankProject(mat, q, MatrixMap(b.packed_p.data() + at, m.rows, r));
      at += m.rows * r;
    }
    const double t1 = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllReduce(absl::MakeSpan(b.packed_p), ReduceOp::kSum,
                               timeout_),
        "PowerSGD all-reduce of P"));
    const double t2 = timed ? NowSeconds() : 0.0;
    // The plain tensors' mean; each P orthonormal; Q = Mᵀ·P.
    at = 0;
    const float inverse_n = 1.0f / static_cast<float>(world_size_);
    for (const auto& [begin, size] : b.plain) {
      for (int64_t i = 0; i < size; ++i) {
        grads[begin + i] = b.packed_p[at + i] * inverse_n;
      }
      at += size;
    }
    int64_t q_at = 0;
    for (Compressed& m : b.matrices) {
      const int64_t r = m.rank;
      MatrixMap p(b.packed_p.data() + at, m.rows, r);
      Orthonormalize(p);
      MatrixMap mat(grads.data() + m.offset, m.rows, m.cols);
      LowRankBackProject(mat, p, MatrixMap(b.packed_q.data() + q_at, m.cols, r),
                         scratch_);
      at += m.rows * r;
      q_at += m.cols * r;
    }
    const double t3 = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllReduce(absl::MakeSpan(b.packed_q),
                               ReduceOp::kAverage, timeout_),
        "PowerSGD all-reduce of Q"));
    const double t4 = timed ? NowSeconds() : 0.0;
    // M ≈ P·Qᵀ; Q kept for the next step's warm start.
    at = b.plain_elements;
    q_at = 0;
    for (Compressed& m : b.matrices) {
      const int64_t r = m.rank;
      MatrixMap p(b.packed_p.data() + at, m.rows, r);
      MatrixMap q(b.packed_q.data() + q_at, m.cols, r);
      LowRankReconstruct(p, q, MatrixMap(grads.data() + m.offset, m.rows,
                                         m.cols));
      std::copy_n(b.packed_q.data() + q_at, m.cols * r, m.q.data());
      at += m.rows * r;
      q_at += m.cols * r;
    }
    TakeResult(grads, absl::MakeSpan(b.error));
    wire_.Add(static_cast<int64_t>(grads.size()),
              static_cast<double>(b.plain_elements + b.p_elements +
                                  b.q_elements));
    if (timed) {
      phases->push_back({"COMPRESS", t0, t1});
      phases->push_back({"ALLREDUCE_P", t1, t2});
      phases->push_back({"ORTHOGONALIZE", t2, t3});
      phases->push_back({"ALLREDUCE_Q", t3, t4});
      phases->push_back({"DECOMPRESS", t4, NowSeconds()});
    }
    return absl::OkStatus();
  }

  int wire_bytes_per_element() const override { return 4; }
  double TakeWireShare() override { return wire_.Take(); }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu;
  }

  // "r=4, 8 exact first": the rank and the plain steps before compression.
  std::string Variant() const override {
    std::string variant = absl::StrCat("r=", options_.rank);
    if (options_.start_step > 0) {
      absl::StrAppend(&variant, ", ", options_.start_step, " exact first");
    }
    return variant;
  }

  // Per bucket: its step count (StepAsFloats), its error memory, then each
  // compressed matrix's Q.
  std::vector<float> ExportState(
      absl::Span<const BucketSpan> buckets) override {
    std::vector<float> state;
    for (const BucketSpan& span : buckets) {
      BucketState& b = StateOf(static_cast<size_t>(span.size), span.offset);
      const auto [high, low] = StepAsFloats(b.steps);
      state.push_back(high);
      state.push_back(low);
      state.insert(state.end(), b.error.begin(), b.error.end());
      for (const Compressed& m : b.matrices) {
        state.insert(state.end(), m.q.begin(), m.q.end());
      }
    }
    return state;
  }

  absl::Status ImportState(absl::Span<const BucketSpan> buckets,
                           absl::Span<const float> state) override {
    HookStateReader reader("PowerSGD", state);
    for (const BucketSpan& span : buckets) {
      BucketState& b = StateOf(static_cast<size_t>(span.size), span.offset);
      RS_ASSIGN_OR_RETURN(const absl::Span<const float> steps,
                          reader.Take(2));
      b.steps = StepFromFloats(steps[0], steps[1]);
      RS_ASSIGN_OR_RETURN(const absl::Span<const float> error,
                          reader.Take(span.size));
      std::copy(error.begin(), error.end(), b.error.begin());
      for (Compressed& m : b.matrices) {
        RS_ASSIGN_OR_RETURN(const absl::Span<const float> q,
                            reader.Take(static_cast<int64_t>(m.q.size())));
        std::copy(q.begin(), q.end(), m.q.begin());
      }
    }
    return reader.Done();
  }

 private:
  static uint64_t QSeed(int tensor, int64_t step) {
    return 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(tensor + 1) +
           static_cast<uint64_t>(step);
  }

  // The bucket at `offset` of `size` elements: made on its first Reduce.
  BucketState& StateOf(size_t size, int64_t offset) {
    auto [it, fresh] = buckets_.try_emplace(offset);
    BucketState& b = it->second;
    if (!fresh) return b;
    b.error.assign(size, 0.0f);
    for (const BucketPart& part :
         BucketParts(layout_, offset, static_cast<int64_t>(size))) {
      const int t = part.tensor;
      const TensorSpec& spec = layout_.tensor(t);
      const int64_t begin = part.begin;
      const int64_t stop = part.begin + part.size;
      const bool whole = part.whole;
      const int64_t rows = spec.shape.empty() ? 1 : spec.shape[0];
      const int64_t cols = rows > 0 ? spec.size / rows : 0;
      const int64_t r =
          std::min<int64_t>({options_.rank, rows, std::max<int64_t>(cols, 1)});
      const bool compress =
          whole && spec.shape.size() >= 2 &&
          static_cast<double>(rows) * static_cast<double>(cols) >=
              options_.min_compression_rate * static_cast<double>(r) *
                  static_cast<double>(rows + cols);
      if (!compress) {
        b.plain.emplace_back(begin, stop - begin);
        b.plain_elements += stop - begin;
        continue;
      }
      Compressed m;
      m.tensor = t;
      m.offset = begin;
      m.rows = rows;
      m.cols = cols;
      m.rank = r;
      m.q.resize(cols * r);
      SeededRandom(QSeed(t, 0), m.q);
      b.p_elements += rows * r;
      b.q_elements += cols * r;
      b.matrices.push_back(std::move(m));
    }
    b.packed_p.assign(b.plain_elements + b.p_elements, 0.0f);
    b.packed_q.assign(b.q_elements, 0.0f);
    return b;
  }

  PowerSgdOptions options_;
  int world_size_ = 1;
  absl::Duration timeout_;
  Collective* collective_ = nullptr;
  TensorLayout layout_;
  std::unordered_map<int64_t, BucketState> buckets_;
  RowMajor scratch_;  // LowRankBackProject's
  WireShare wire_;
};

}  // namespace

std::unique_ptr<BucketCommHook> MakePowerSgdHook() {
  return std::make_unique<PowerSgdHook>();
}

}  // namespace ringside

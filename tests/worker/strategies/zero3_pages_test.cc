// zero3 on buffers mapped page by page (SyncContext::param_pages and
// grad_pages), checked on the CPU with a stand-in for the device's
// MappedDeviceBuffer whose unmapped pages are mprotect(PROT_NONE): any read
// or write of a page zero3 gave back crashes the test. Two ranks drive the
// parameter-use hooks as a model does (forward reads, backward reads and
// gradient writes, a mid-run evaluation) and must end with the parameters
// of the same run on whole buffers, bit for bit; after Init only the pages
// of a rank's pieces stay mapped, the most mapped at once is what zero3
// holds logically plus at most a page at each end of each held range, and
// the final gather maps the whole parameter buffer again.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/in_memory_store.h"
#include "core/tensor_layout.h"
#include "device/mapped_device_buffer.h"
#include "device/page_refcounts.h"
#include "models/model.h"
#include "tests/testing/rank_threads.h"
#include "worker/strategies/sharded/zero_options.h"
#include "worker/sync_strategy.h"

namespace ringside {
namespace {

constexpr size_t kPageBytes = 16 << 10;

// Host memory whose unmapped pages cannot be touched.
class ProtectedPages final : public MappedDeviceBuffer {
 public:
  explicit ProtectedPages(size_t floats)
      : floats_(floats), counts_(floats * sizeof(float), kPageBytes) {
    bytes_ = counts_.num_pages() * kPageBytes;
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mapped_.assign(counts_.num_pages(), true);
    counts_.Hold(0, floats * sizeof(float)).IgnoreError();
    mapped_bytes_ = peak_ = static_cast<int64_t>(bytes_);
  }
  ~ProtectedPages() override { munmap(base_, bytes_); }

  bool ok() const { return base_ != MAP_FAILED; }
  float* data() const override { return static_cast<float*>(base_); }
  size_t size() const override { return floats_; }
  size_t page_bytes() const override { return kPageBytes; }

  absl::Status Hold(size_t begin, size_t end) override {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<std::vector<PageRun>> fresh =
        counts_.Hold(begin * sizeof(float), end * sizeof(float));
    if (!fresh.ok()) return fresh.status();
    for (const PageRun& run : *fresh) {
      for (size_t p = run.first; p < run.first + run.count; ++p) {
        if (mapped_[p]) continue;
        if (mprotect(Page(p), kPageBytes, PROT_READ | PROT_WRITE) != 0) {
          return absl::InternalError("mprotect");
        }
        mapped_[p] = true;
        mapped_bytes_ += kPageBytes;
        peak_ = std::max(peak_, mapped_bytes_);
      }
    }
    return absl::OkStatus();
  }

  absl::Status Drop(size_t begin, size_t end, CudaStream) override {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<std::vector<PageRun>> freed =
        counts_.Drop(begin * sizeof(float), end * sizeof(float));
    if (!freed.ok()) return freed.status();
    for (const PageRun& run : *freed) {
      for (size_t p = run.first; p < run.first + run.count; ++p) {
        // Its bytes are gone, as a device page's are.
        madvise(Page(p), kPageBytes, MADV_DONTNEED);
        if (mprotect(Page(p), kPageBytes, PROT_NONE) != 0) {
          return absl::InternalError("mprotect");
        }
        mapped_[p] = false;
        mapped_bytes_ -= kPageBytes;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Collect() override { return absl::OkStatus(); }
  int64_t mapped_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return mapped_bytes_;
  }
  int64_t peak_mapped_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }
  void ResetPeak() override {
    std::lock_guard<std::mutex> lock(mu_);
    peak_ = mapped_bytes_;
  }

 private:
  char* Page(size_t p) const { return static_cast<char*>(base_) + p * kPageBytes; }

  const size_t floats_;
  mutable std::mutex mu_;
  PageRefcounts counts_;
  size_t bytes_ = 0;
  void* base_ = MAP_FAILED;
  std::vector<bool> mapped_;
  int64_t mapped_bytes_ = 0;
  int64_t peak_ = 0;
};

// Tensors that straddle pages, none aligned to one.
TensorLayout Layout() {
  return *TensorLayout::FromShapes({{"w0", {197, 183}},
                                    {"b0", {183}},
                                    {"w1", {183, 251}},
                                    {"b1", {251}},
                                    {"w2", {251, 161}},
                                    {"b2", {161}}});
}

float Gradient(int rank, int step, int64_t i) {
  return static_cast<float>((i * 31 + rank * 7 + step * 13) % 17 - 8) / 64.0f;
}

struct RankOutcome {
  std::vector<float> params;
  int64_t mapped_after_init = -1;
  int64_t piece_bytes = 0;
  int64_t peak_param_mapped = -1;
  int64_t peak_grad_mapped = -1;
  int64_t logical_params = -1;
  int64_t logical_grads = -1;
  int64_t mapped_at_end = -1;
};

// Reads every float of `span` (through a volatile sum: the read happens).
float Touch(absl::Span<const float> span) {
  volatile float sum = 0;
  for (float v : span) sum = sum + v;
  return sum;
}

// Two ranks of zero3 (one tensor per unit) for 4 steps, the hooks called
// as the MLP calls them, on page-protected buffers when `paged`.
std::vector<RankOutcome> RunZero3(bool paged) {
  const TensorLayout layout = Layout();
  const int n = 2, steps = 4;
  InMemoryStore store;
  std::vector<RankOutcome> out(n);
  testing::ExpectAllOk(testing::RunRanks(n, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<SyncStrategy>> made =
        StrategyRegistry::Create("zero3");
    if (!made.ok()) return made.status();
    SyncStrategy& zero3 = **made;
    const size_t floats = layout.total_elements();
    ProtectedPages params_pages(floats), grads_pages(floats);
    std::vector<float> params_whole(floats), grads_whole(floats);
    absl::Span<float> params = paged
                                   ? absl::MakeSpan(params_pages.data(), floats)
                                   : absl::MakeSpan(params_whole);
    absl::Span<float> grads = paged ? absl::MakeSpan(grads_pages.data(), floats)
                                    : absl::MakeSpan(grads_whole);
    for (size_t i = 0; i < floats; ++i) {
      params[i] = static_cast<float>(i % 101) / 100.0f - 0.5f;
    }
    SyncContext context;
    context.rank = r;
    context.world_size = n;
    context.layout = layout;
    context.params = params;
    context.grads = grads;
    context.optimizer.type = "sgd";
    context.optimizer.lr = 0.05f;
    context.options.store = &store;
    context.options.rpc_timeout = absl::Seconds(20);
    context.options.connect_timeout = absl::Seconds(10);
    ZeroOptions per_tensor;
    per_tensor.zero3_unit_bytes = 0;
    context.options.strategy.Set(per_tensor);
    if (paged) {
      context.param_pages = &params_pages;
      context.grad_pages = &grads_pages;
    }
    if (absl::Status s = zero3.Init(context); !s.ok()) return s;
    const ParamUseHooks& hooks = *zero3.ParamUse();
    out[r].mapped_after_init = params_pages.mapped_bytes();
    out[r].piece_bytes = zero3.PeakParamBytes();
    const int tensors = layout.num_tensors();
    for (int step = 0; step < steps; ++step) {
      for (int i = 0; i < tensors; ++i) {  // forward
        hooks.needed(i);
        Touch(layout.View(i, params));
        hooks.forward_done(i);
      }
      for (int i = tensors - 1; i >= 0; --i) {  // backward
        if (i >= 2) {  // the first layer is not read in backward
          hooks.needed(i);
          Touch(layout.View(i, params));
        }
        hooks.writes_gradient(i);
        absl::Span<float> g = layout.View(i, grads);
        for (size_t k = 0; k < g.size(); ++k) {
          g[k] = Gradient(r, step, layout.tensor(i).offset + k);
        }
        zero3.OnGradientReady(i);
      }
      absl::StatusOr<StepStats> stats = zero3.FinishStep(step);
      if (!stats.ok()) return stats.status();
      if (step == 1) {  // an evaluation reads every parameter
        if (absl::Status s = zero3.PrepareEvaluation(); !s.ok()) return s;
        Touch(params);
        if (absl::Status s = zero3.EndEvaluation(); !s.ok()) return s;
      }
    }
    out[r].peak_param_mapped = params_pages.peak_mapped_bytes();
    out[r].peak_grad_mapped = grads_pages.peak_mapped_bytes();
    out[r].logical_params = zero3.PeakParamBytes();
    out[r].logical_grads = zero3.PeakGradBytes();
    if (absl::Status s = zero3.Shutdown(); !s.ok()) return s;
    out[r].mapped_at_end = params_pages.mapped_bytes();
    out[r].params.assign(params.begin(), params.end());
    return absl::OkStatus();
  }));
  return out;
}

TEST(Zero3PagesTest, GivesPagesBackAndTrainsAsOnWholeBuffers) {
  const std::vector<RankOutcome> whole = RunZero3(/*paged=*/false);
  if (HasFailure()) return;
  const std::vector<RankOutcome> paged = RunZero3(/*paged=*/true);
  if (HasFailure()) return;
  const int64_t model_bytes = Layout().total_bytes();
  const int64_t all_pages =
      (model_bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  const int64_t units = Layout().num_tensors();
  for (size_t r = 0; r < paged.size(); ++r) {
    SCOPED_TRACE(absl::StrCat("rank ", r));
    EXPECT_EQ(paged[r].params, whole[r].params);  // bit for bit
    EXPECT_EQ(paged[r].params, paged[0].params);
    // After Init: the pages of this rank's pieces (half the model), each
    // piece rounded out to whole pages.
    EXPECT_GE(paged[r].mapped_after_init, paged[r].piece_bytes);
    EXPECT_LE(paged[r].mapped_after_init,
              paged[r].piece_bytes + 2 * kPageBytes * units);
    EXPECT_LT(paged[r].mapped_after_init, all_pages);
    // While training: what zero3 holds logically, page for page (the
    // evaluation's whole buffer included).
    EXPECT_GE(paged[r].peak_param_mapped, paged[r].logical_params);
    EXPECT_LE(paged[r].peak_param_mapped, all_pages);
    EXPECT_GE(paged[r].peak_grad_mapped, paged[r].logical_grads);
    // (Both may reach the whole buffer: backward here outruns the
    // reductions.)
    EXPECT_LE(paged[r].peak_grad_mapped,
              paged[r].logical_grads + 2 * kPageBytes * units);
    // The final gather maps every parameter page again.
    EXPECT_EQ(paged[r].mapped_at_end, all_pages);
  }
}

}  // namespace
}  // namespace ringside

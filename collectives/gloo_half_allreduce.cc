#include "collectives/gloo_half_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "collectives/gloo_device.h"
#include "collectives/gloo_error.h"
#include "collectives/gloo_store.h"
#include "common/status_macros.h"
#include "gloo/allreduce.h"
#include "gloo/rendezvous/context.h"
#include "gloo/types.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ringside {

static_assert(sizeof(gloo::float16) == sizeof(uint16_t),
              "gloo::float16 is a bare binary16");

namespace {

// Portable conversions: Gloo's own (round to nearest even).
void FloatToHalfScalar(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = gloo::cpu_float2half_rn(in[i]).x;
}
void HalfToFloatScalar(const uint16_t* in, float* out, size_t n) {
  gloo::float16 h;
  for (size_t i = 0; i < n; ++i) {
    h.x = in[i];
    out[i] = gloo::cpu_half2float(h);
  }
}
// c = fp16(float(a) + float(b)), as gloo::float16's operator+.
void HalfSumScalar(uint16_t* c, const uint16_t* a, const uint16_t* b,
                   size_t n) {
  gloo::float16 x, y;
  for (size_t i = 0; i < n; ++i) {
    x.x = a[i];
    y.x = b[i];
    c[i] = gloo::cpu_float2half_rn(gloo::cpu_half2float(x) +
                                   gloo::cpu_half2float(y))
               .x;
  }
}

#if defined(__x86_64__)
// The same arithmetic with the F16C instructions, 8 elements at a time
// (exact conversions, round to nearest even: the same bits as above).
__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* in,
                                                         uint16_t* out,
                                                         size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  FloatToHalfScalar(in + i, out + i, n - i);
}
__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const uint16_t* in,
                                                         float* out,
                                                         size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  HalfToFloatScalar(in + i, out + i, n - i);
}
__attribute__((target("avx,f16c"))) void HalfSumF16c(uint16_t* c,
                                                     const uint16_t* a,
                                                     const uint16_t* b,
                                                     size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(c + i),
        _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  HalfSumScalar(c + i, a + i, b + i, n - i);
}
bool HasF16c() {
  static const bool has = __builtin_cpu_supports("avx") &&
                          __builtin_cpu_supports("f16c");
  return has;
}
#else
bool HasF16c() { return false; }
void FloatToHalfF16c(const float* in, uint16_t* out, size_t n) {
  FloatToHalfScalar(in, out, n);
}
void HalfToFloatF16c(const uint16_t* in, float* out, size_t n) {
  HalfToFloatScalar(in, out, n);
}
void HalfSumF16c(uint16_t* c, const uint16_t* a, const uint16_t* b,
                 size_t n) {
  HalfSumScalar(c, a, b, n);
}
#endif

// float -> bf16, round to nearest even; NaN kept quiet (its sign and top
// payload bits, as PyTorch's round_to_nearest_even).
inline uint16_t FloatToBf16One(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
inline float Bf16ToFloatOne(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Gloo's reduce-function signature: c = bf16(float(a) + float(b)).
void Bf16Sum(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<uint16_t*>(c);
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  for (size_t i = 0; i < n; ++i) {
    out[i] = FloatToBf16One(Bf16ToFloatOne(x[i]) + Bf16ToFloatOne(y[i]));
  }
}

// Gloo's reduce-function signature.
void HalfSum(void* c, const void* a, const void* b, size_t n) {
  auto* out = static_cast<uint16_t*>(c);
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  if (HasF16c()) {
    HalfSumF16c(out, x, y, n);
  } else {
    HalfSumScalar(out, x, y, n);
  }
}

}  // namespace

void FloatToHalf(absl::Span<const float> in, absl::Span<uint16_t> out) {
  if (HasF16c()) {
    FloatToHalfF16c(in.data(), out.data(), in.size());
  } else {
    FloatToHalfScalar(in.data(), out.data(), in.size());
  }
}

void HalfToFloat(absl::Span<const uint16_t> in, absl::Span<float> out) {
  if (HasF16c()) {
    HalfToFloatF16c(in.data(), out.data(), in.size());
  } else {
    HalfToFloatScalar(in.data(), out.data(), in.size());
  }
}

void FloatToBf16(absl::Span<const float> in, absl::Span<uint16_t> out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = FloatToBf16One(in[i]);
}

void Bf16ToFloat(absl::Span<const uint16_t> in, absl::Span<float> out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = Bf16ToFloatOne(in[i]);
}

const char* HalfFormatName(HalfFormat format) {
  return format == HalfFormat::kBf16 ? "bf16" : "fp16";
}

void FloatToFormat(HalfFormat format, absl::Span<const float> in,
                   absl::Span<uint16_t> out) {
  if (format == HalfFormat::kBf16) {
    FloatToBf16(in, out);
  } else {
    FloatToHalf(in, out);
  }
}

void FormatToFloat(HalfFormat format, absl::Span<const uint16_t> in,
                   absl::Span<float> out) {
  if (format == HalfFormat::kBf16) {
    Bf16ToFloat(in, out);
  } else {
    HalfToFloat(in, out);
  }
}

struct GlooHalfAllReduce::Impl {
  std::shared_ptr<gloo::rendezvous::Context> context;
  HalfFormat format = HalfFormat::kFp16;
  gloo::AllreduceOptions::Algorithm algorithm;
  std::string algorithm_name;
  absl::Status broken;
  uint32_t next_tag = 0;
};

GlooHalfAllReduce::GlooHalfAllReduce(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
GlooHalfAllReduce::~GlooHalfAllReduce() = default;

int GlooHalfAllReduce::rank() const { return impl_->context->rank; }
int GlooHalfAllReduce::size() const { return impl_->context->size; }

absl::StatusOr<std::unique_ptr<GlooHalfAllReduce>> GlooHalfAllReduce::Create(
    Store& store, int rank, int size, const GlooCollectiveOptions& options,
    HalfFormat format) {
  RS_RETURN_IF_ERROR(options.Validate());
  if (size < 1 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("GlooHalfAllReduce: need 0 <= rank < size, got rank ",
                     rank, ", size ", size));
  }
  auto impl = std::make_unique<Impl>();
  impl->format = format;
  impl->algorithm = options.algorithm == "ring"
                        ? gloo::AllreduceOptions::Algorithm::RING
                        : gloo::AllreduceOptions::Algorithm::BCUBE;
  impl->algorithm_name = options.algorithm;
  const std::string& prefix = options.store_prefix;
  const std::string where =
      absl::StrCat("gloo ", HalfFormatName(format),
                   " rendezvous (store prefix \"", prefix,
                   "\", rank ", rank, " of ", size, ")");
  const absl::Time deadline = absl::Now() + options.connect_timeout;

  RS_ASSIGN_OR_RETURN(
      std::shared_ptr<gloo::transport::Device> device,
      CreateGlooTcpDevice(options.host, options.interface,
                          options.event_loop, where));

  // Join: announce this rank, wait for every other one (names the absent).
  auto join_key = [&prefix](int i) {
    return absl::StrCat(prefix, "/joined/", i);
  };
  RS_RETURN_IF_ERROR(Annotate(store.Set(join_key(rank), "1"), where));
  std::vector<std::string> keys;
  for (int i = 0; i < size; ++i) keys.push_back(join_key(i));
  absl::Status joined = store.Wait(keys, deadline - absl::Now());
  if (absl::IsDeadlineExceeded(joined)) {
    std::vector<int> absent;
    for (int i = 0; i < size; ++i) {
      if (!store.Get(join_key(i), absl::ZeroDuration()).ok()) {
        absent.push_back(i);
      }
    }
    return absl::DeadlineExceededError(absl::StrCat(
        where, ": timed out after ",
        absl::FormatDuration(options.connect_timeout), ": rank(s) [",
        absl::StrJoin(absent, ", "), "] of ", size, " did not join"));
  }
  RS_RETURN_IF_ERROR(Annotate(joined, where));

  const absl::Duration left =
      std::max(deadline - absl::Now(), absl::Milliseconds(1));
  impl->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  GlooStore gloo_store(&store, absl::StrCat(prefix, "/mesh"), left);
  absl::Status connected = RS_GLOO_CALL(where, {
    impl->context->setTimeout(std::chrono::milliseconds(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(left))));
    impl->context->connectFullMesh(gloo_store, device);
  });
  if (!connected.ok()) {
    absl::Status cause = gloo_store.first_error();
    return cause.ok() ? connected : Annotate(cause, where);
  }
  return std::unique_ptr<GlooHalfAllReduce>(
      new GlooHalfAllReduce(std::move(impl)));
}

absl::Status GlooHalfAllReduce::AllReduceSum(absl::Span<uint16_t> data,
                                             absl::Duration timeout) {
  const std::string what = absl::StrCat(
      HalfFormatName(impl_->format), " AllReduce (gloo ",
      impl_->algorithm_name, ", rank ", rank(), " of ", size(), ", ",
      data.size(), " elements, timeout ",
      absl::FormatDuration(timeout), ")");
  if (!impl_->broken.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": group unusable after an earlier error: ",
                     impl_->broken.message()));
  }
  if (timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": timeout must be positive"));
  }
  if (data.empty() || size() == 1) return absl::OkStatus();
  const std::chrono::milliseconds t =
      timeout == absl::InfiniteDuration()
          ? gloo::kNoTimeout
          : std::chrono::milliseconds(std::max<int64_t>(
                1, absl::ToInt64Milliseconds(
                       absl::Ceil(timeout, absl::Milliseconds(1)))));
  const uint32_t tag = impl_->next_tag++;
  gloo::float16* halves = reinterpret_cast<gloo::float16*>(data.data());
  absl::Status s = RS_GLOO_CALL(what, {
    gloo::AllreduceOptions opts(impl_->context);
    opts.setOutput(halves, data.size());
    opts.setAlgorithm(impl_->algorithm);
    opts.setReduceFunction(impl_->format == HalfFormat::kBf16 ? &Bf16Sum
                                                              : &HalfSum);
    opts.setTag(tag);
    opts.setTimeout(t);
    gloo::allreduce(opts);
  });
  if (!s.ok()) impl_->broken = s;
  return s;
}

}  // namespace ringside

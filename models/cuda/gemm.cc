#include "models/cuda/gemm.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"
#include "models/cuda/bf16_kernels.h"

namespace ringside {
namespace {

absl::Status CheckInt(int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matrix product ", m, " x ", n, " x ", k, " exceeds cuBLAS's int"));
  }
  return absl::OkStatus();
}

cublasOperation_t Op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

absl::Status RowMajorGemm(cublasHandle_t handle, bool trans_a, bool trans_b,
                          int64_t m, int64_t n, int64_t k, const void* a,
                          const void* b, float* c, bool bf16) {
  RS_RETURN_IF_ERROR(CheckInt(m, n, k));
  const float one = 1.0f;
  const float zero = 0.0f;
  const int lda = static_cast<int>(trans_a ? m : k);
  const int ldb = static_cast<int>(trans_b ? k : n);
  if (bf16) {
    RS_CUBLAS_RETURN_IF_ERROR(cublasGemmEx(
        handle, Op(trans_b), Op(trans_a), static_cast<int>(n),
        static_cast<int>(m), static_cast<int>(k), &one, b, CUDA_R_16BF, ldb, a,
        CUDA_R_16BF, lda, &zero, c, CUDA_R_32F, static_cast<int>(n),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } else {
    RS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
        handle, Op(trans_b), Op(trans_a), static_cast<int>(n),
        static_cast<int>(m), static_cast<int>(k), &one,
        static_cast<const float*>(b), ldb, static_cast<const float*>(a), lda,
        &zero, c, static_cast<int>(n)));
  }
  return absl::OkStatus();
}

absl::Status RowMajorBatchedGemm(cublasHandle_t handle, bool trans_a,
                                 bool trans_b, int64_t m, int64_t n, int64_t k,
                                 const void* a, int64_t stride_a, const void* b,
                                 int64_t stride_b, float* c, int64_t stride_c,
                                 int64_t count, bool bf16) {
  RS_RETURN_IF_ERROR(CheckInt(m, n, k));
  if (count > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("batched product of ", count, " exceeds cuBLAS's int"));
  }
  const float one = 1.0f;
  const float zero = 0.0f;
  const int lda = static_cast<int>(trans_a ? m : k);
  const int ldb = static_cast<int>(trans_b ? k : n);
  if (bf16) {
    RS_CUBLAS_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
        handle, Op(trans_b), Op(trans_a), static_cast<int>(n),
        static_cast<int>(m), static_cast<int>(k), &one, b, CUDA_R_16BF, ldb,
        stride_b, a, CUDA_R_16BF, lda, stride_a, &zero, c, CUDA_R_32F,
        static_cast<int>(n), stride_c, static_cast<int>(count),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } else {
    RS_CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
        handle, Op(trans_b), Op(trans_a), static_cast<int>(n),
        static_cast<int>(m), static_cast<int>(k), &one,
        static_cast<const float*>(b), ldb, stride_b,
        static_cast<const float*>(a), lda, stride_a, &zero, c,
        static_cast<int>(n), stride_c, static_cast<int>(count)));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceBuffer> Bf16Buffer(int device, int64_t elements) {
  return DeviceBuffer::Create(device, static_cast<size_t>((elements + 1) / 2));
}

uint16_t* Bf16(const DeviceBuffer& buffer) {
  return reinterpret_cast<uint16_t*>(buffer.data());
}

absl::Status Bf16Slots::Reserve(int device, int slots, int64_t elements) {
  if (static_cast<int>(slots_.size()) >= slots && elements_ >= elements) {
    return absl::OkStatus();
  }
  const int64_t size = std::max(elements, elements_);
  std::vector<DeviceBuffer> grown(std::max<size_t>(slots, slots_.size()));
  for (DeviceBuffer& slot : grown) {
    RS_ASSIGN_OR_RETURN(slot, Bf16Buffer(device, size));
  }
  slots_ = std::move(grown);
  elements_ = size;
  return absl::OkStatus();
}

absl::StatusOr<const void*> Bf16Slots::Round(int slot, const float* x,
                                             int64_t count,
                                             cudaStream_t stream) {
  if (slot < 0 || slot >= static_cast<int>(slots_.size()) ||
      count > elements_) {
    return absl::InvalidArgumentError(
        absl::StrCat("bf16 slot ", slot, " of ", slots_.size(), " cannot hold ",
                     count, " elements (", elements_, " reserved)"));
  }
  uint16_t* out = Bf16(slots_[slot]);
  RS_CUDA_RETURN_IF_ERROR(kernels::LaunchToBf16(x, out, count, stream));
  return out;
}

}  // namespace ringside

// CudaStatus / CublasStatus / NcclStatus and their macros: the library's
// own names and messages, our call site, and the right codes. Needs
// --config=cuda but no GPU: the runtime, cuBLAS and NCCL describe their
// error codes without a driver.
#include "device/cuda_status.h"

#include <gtest/gtest.h>

#include <string>

namespace ringside {
namespace {

TEST(CudaStatusTest, SuccessIsOk) {
  EXPECT_TRUE(CudaStatus(cudaSuccess, "op", __FILE__, __LINE__).ok());
  EXPECT_TRUE(NcclStatus(ncclSuccess, "op", __FILE__, __LINE__).ok());
  EXPECT_TRUE(
      CublasStatus(CUBLAS_STATUS_SUCCESS, "op", __FILE__, __LINE__).ok());
}

TEST(CudaStatusTest, InsufficientDriverReadsAsUnavailable) {
  absl::Status s = CudaStatus(cudaErrorInsufficientDriver, "cudaGetDeviceCount",
                              "here.cc", 12);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("cudaGetDeviceCount [here.cc:12]: "
                             "cudaErrorInsufficientDriver: CUDA driver "
                             "version is insufficient"),
            std::string::npos)
      << s;
}

TEST(CudaStatusTest, CodesFollowTheKindOfError) {
  EXPECT_EQ(CudaErrorCode(cudaErrorNoDevice), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaErrorCode(cudaErrorMemoryAllocation),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaErrorCode(cudaErrorInvalidValue),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaErrorCode(cudaErrorIllegalAddress),
            absl::StatusCode::kInternal);
  EXPECT_EQ(NcclErrorCode(ncclSystemError), absl::StatusCode::kUnavailable);
  EXPECT_EQ(NcclErrorCode(ncclRemoteError), absl::StatusCode::kUnavailable);
  EXPECT_EQ(NcclErrorCode(ncclInvalidArgument),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NcclErrorCode(ncclInvalidUsage),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(NcclErrorCode(ncclInternalError), absl::StatusCode::kInternal);
}

TEST(CudaStatusTest, CublasCodesFollowTheKindOfError) {
  EXPECT_EQ(CublasErrorCode(CUBLAS_STATUS_NOT_INITIALIZED),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CublasErrorCode(CUBLAS_STATUS_ALLOC_FAILED),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CublasErrorCode(CUBLAS_STATUS_INVALID_VALUE),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CublasErrorCode(CUBLAS_STATUS_NOT_SUPPORTED),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CublasErrorCode(CUBLAS_STATUS_EXECUTION_FAILED),
            absl::StatusCode::kInternal);
  absl::Status s = CublasStatus(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate(&h)",
                                "here.cc", 7);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("cublasCreate(&h) [here.cc:7]: "
                             "CUBLAS_STATUS_ALLOC_FAILED"),
            std::string::npos)
      << s;
}

absl::Status ReturnsTheFirstError() {
  int* p = nullptr;
  RS_CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(nullptr, p));
  return absl::OkStatus();
}

TEST(CudaStatusTest, ReturnMacroReturnsTheCallsError) {
  absl::Status s = ReturnsTheFirstError();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaPointerGetAttributes(nullptr, p) ["),
            std::string::npos)
      << s;
}

TEST(CudaStatusTest, MacrosNameTheCallAndThisFile) {
  int* p = nullptr;
  // A null result pointer is a plain invalid-value error, no GPU needed.
  absl::Status s = RS_CUDA_STATUS(cudaPointerGetAttributes(nullptr, p));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cudaPointerGetAttributes(nullptr, p) ["),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("cuda_status_test.cc:"), std::string::npos) << s;

  int count = 0;
  s = RS_NCCL_STATUS(ncclCommCount(nullptr, &count), nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("ncclCommCount(nullptr, &count) ["),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("ncclInvalidArgument: invalid argument"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside

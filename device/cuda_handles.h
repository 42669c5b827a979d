// Opaque CUDA handle types, so that headers above the device layer compile
// without CUDA's headers (the default build has none). They are the CUDA
// runtime's own types: cudaStream_t is CUstream_st*, cudaEvent_t is
// CUevent_st* (driver_types.h), so values pass either way with no cast.
// nullptr as a CudaStream is the legacy default stream.
#ifndef RINGSIDE_DEVICE_CUDA_HANDLES_H_
#define RINGSIDE_DEVICE_CUDA_HANDLES_H_

struct CUstream_st;
struct CUevent_st;

namespace ringside {

using CudaStream = CUstream_st*;
using CudaEvent = CUevent_st*;

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_CUDA_HANDLES_H_

// Zero3DeviceOrder: the stream and event ordering of zero3
// (worker/strategies/sharded/zero3_strategy.h) on a CUDA worker, where the model's
// kernels run on the compute stream (SyncContext::compute_stream), the
// all-gathers and reduce-scatters on the NCCL group's own stream from the
// communication thread. A "released" tensor's region keeps its bytes until
// the next all-gather writes it, or, where the buffers are mapped page by
// page (SyncContext::param_pages), until its pages are unmapped after the
// released event's point on the compute stream (zero3_strategy.h).
//
//   Released(i)     training thread, when zero3 releases tensor i's
//                   parameters -- after the model has ENQUEUED its last read
//                   of them (models/cuda/cuda_model.h): records released(i)
//                   on the compute stream. Non-blocking.
//   BeforeGather(i) communication thread, before an all-gather writes
//                   tensor i's region: waits until the compute stream has
//                   passed released(i), i.e. the kernels that read the
//                   region are done (the NCCL group's stream does not order
//                   after the compute stream: nccl_collective.h). Bounded.
//   AfterGather(i)  communication thread, once the all-gather has returned
//                   (the Collective returns with the data final): records
//                   gathered(i) on this object's own stream. Non-blocking.
//   BeforeRead(i)   training thread, in needed(i) once the gather's ticket
//                   is done: the compute stream waits for gathered(i)
//                   (cudaStreamWaitEvent) before the kernels enqueued next,
//                   the device-side edge from the gather to its readers (with
//                   today's blocking Collective the host wait for the ticket
//                   has already passed it). Non-blocking.
//
// Gradient i's reduce-scatter waits for SyncContext::grad_ready_event(i)
// in ShardedGradients; the optimizer's step on the compute stream returns
// once final (ShardedOptimizer), so the next step's gathers read it.
//
// Thread-safety: Released and BeforeRead on the training thread,
// BeforeGather and AfterGather on the communication thread; the events are
// made once (Create) and the CUDA calls on them are thread-safe. Built
// without CUDA, Create fails with the device layer's UNIMPLEMENTED.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_DEVICE_ORDER_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_DEVICE_ORDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "device/cuda_event.h"
#include "device/cuda_stream.h"
#include "worker/sync_strategy.h"

namespace ringside {

class Zero3DeviceOrder {
 public:
  // Events for every tensor of context.layout on context.cuda_device and
  // a stream for the gathered events. `context` must outlive it.
  static absl::StatusOr<std::unique_ptr<Zero3DeviceOrder>> Create(
      const SyncContext& context);

  absl::Status Released(int tensor);
  // DEADLINE_EXCEEDED after `timeout`, naming the tensor.
  absl::Status BeforeGather(int tensor, absl::Duration timeout);
  absl::Status AfterGather(int tensor);
  absl::Status BeforeRead(int tensor);

 private:
  explicit Zero3DeviceOrder(const SyncContext& context) : context_(context) {}

  const SyncContext& context_;
  OwnedCudaStream gather_stream_;  // where gathered(i) is recorded
  std::vector<OwnedCudaEvent> released_;
  std::vector<OwnedCudaEvent> gathered_;
};

// Blocks until `event`'s last record has completed, polling (not
// cudaEventSynchronize, which has no deadline); DEADLINE_EXCEEDED naming
// `what` after `timeout`.
absl::Status WaitForEventWithin(CudaEvent event, absl::Duration timeout,
                                const std::string& what);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_DEVICE_ORDER_H_

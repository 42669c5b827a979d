// Device: where a buffer lives and a computation runs. The tag collectives
// (Collective::Supports), strategies (StrategyInfo's devices) and workers
// share.
#ifndef RINGSIDE_CORE_DEVICE_H_
#define RINGSIDE_CORE_DEVICE_H_

namespace ringside {

enum class Device { kCpu, kCuda };

}  // namespace ringside

#endif  // RINGSIDE_CORE_DEVICE_H_

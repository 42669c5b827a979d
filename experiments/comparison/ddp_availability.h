// Whether compare's PyTorch DDP row runs, and the report's note on it. The
// row itself (the peer, its data, its job) is experiments/comparison/ddp_row.h;
// this is compare's part: the options that ask for the row, where the peer
// script is, and the sentence that says what the row is or why it is
// absent. Blocking (FindDdp runs the interpreter); no state of its own.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_DDP_AVAILABILITY_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_DDP_AVAILABILITY_H_

#include <string>

#include "absl/status/statusor.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/ddp_row.h"

namespace ringside::compare {

// The DDP peer when the row is wanted (`ddp.enabled`) and can run: the
// model is `model` = mlp or charlm (trained from their export), or
// synthetic with `ddp.torch_model` and `ddp.torch_input` (the user's
// PyTorch model on random inputs, carried in the peer); the script
// (`ddp.peer_script`, else experiments/ddp_peer.py in the runfiles of
// `argv0`) exists and `ddp.torch_python` imports torch. INVALID_ARGUMENT
// for --torch_model without --model=synthetic or without --torch_input
// (compare stops); otherwise FAILED_PRECONDITION or NOT_FOUND saying why
// the row is absent.
absl::StatusOr<DdpPeer> FindDdp(const char* argv0, const DdpOptions& ddp,
                                const std::string& model);

// The report's note: what the DDP row is, or why it is absent.
std::string DdpNote(const absl::StatusOr<DdpPeer>& ddp);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_DDP_AVAILABILITY_H_

// Byte-string messages over a float Collective: the fusion runtime's
// negotiation sends serialized protos through the same Collective contract
// the data path uses. Bytes travel bit-for-bit (packed 4 per float; only
// all-gather and broadcast, which copy, never arithmetic).
// Collective calls: every rank calls with the same sequence; bounded by
// `timeout` each.
#ifndef RINGSIDE_COLLECTIVES_FUSION_BYTE_MESSAGES_H_
#define RINGSIDE_COLLECTIVES_FUSION_BYTE_MESSAGES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collective.h"

namespace ringside {

// Every rank's `mine`, in rank order, on every rank.
absl::StatusOr<std::vector<std::string>> AllGatherBytes(
    Collective& collective, const std::string& mine, absl::Duration timeout);

// Every rank's *message becomes root's.
absl::Status BroadcastBytes(Collective& collective, std::string* message,
                            int root, absl::Duration timeout);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_BYTE_MESSAGES_H_

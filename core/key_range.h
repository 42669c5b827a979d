// KeyRange: elements [begin, end) of the flat parameter buffer, the unit
// parameter servers own (server/partitioner.h cuts the buffer into them)
// and checkpoints hold (core/checkpoint.h).
#ifndef RINGSIDE_CORE_KEY_RANGE_H_
#define RINGSIDE_CORE_KEY_RANGE_H_

#include <cstdint>

namespace ringside {

// Elements [begin, end) of the flat buffer.
struct KeyRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const KeyRange& o) const {
    return begin == o.begin && end == o.end;
  }
};

}  // namespace ringside

#endif  // RINGSIDE_CORE_KEY_RANGE_H_

// PageRefcounts: how many holders each fixed-size page of a byte range has,
// the bookkeeping behind memory that is mapped page by page
// (MappedDeviceBuffer, device/mapped_device_buffer.h). Hold(begin, end) adds
// a holder to every page the byte range [begin, end) touches and returns
// the pages that had none (to map); Drop removes one and returns the pages
// left with none (to unmap). Two ranges that share a page share its count,
// so a page stays while any range on it is held.
//
// Pure host logic, no CUDA. Not thread-safe.
#ifndef RINGSIDE_DEVICE_PAGE_REFCOUNTS_H_
#define RINGSIDE_DEVICE_PAGE_REFCOUNTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace ringside {

// Pages [first, first + count).
struct PageRun {
  size_t first = 0;
  size_t count = 0;
  bool operator==(const PageRun& o) const {
    return first == o.first && count == o.count;
  }
};

class PageRefcounts {
 public:
  // ceil(bytes / page_bytes) pages, none held. page_bytes > 0.
  PageRefcounts(size_t bytes, size_t page_bytes);

  size_t page_bytes() const { return page_bytes_; }
  size_t num_pages() const { return counts_.size(); }
  // Pages with at least one holder.
  size_t held_pages() const { return held_pages_; }
  int64_t count(size_t page) const { return counts_[page]; }

  // INVALID_ARGUMENT when [begin, end) is not within the bytes; an empty
  // range touches no page.
  absl::StatusOr<std::vector<PageRun>> Hold(size_t begin, size_t end);
  // Also FAILED_PRECONDITION, changing nothing, when a page of the range
  // has no holder (a drop without its hold).
  absl::StatusOr<std::vector<PageRun>> Drop(size_t begin, size_t end);

 private:
  // The pages [first, last) of [begin, end), or an error.
  absl::Status Pages(size_t begin, size_t end, size_t* first,
                     size_t* last) const;

  size_t bytes_;
  size_t page_bytes_;
  std::vector<int64_t> counts_;
  size_t held_pages_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_PAGE_REFCOUNTS_H_

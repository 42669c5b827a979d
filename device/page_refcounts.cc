#include "device/page_refcounts.h"

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

// Appends `page` to `runs`, extending the last run when adjacent.
void Append(std::vector<PageRun>& runs, size_t page) {
  if (!runs.empty() && runs.back().first + runs.back().count == page) {
    ++runs.back().count;
  } else {
    runs.push_back(PageRun{page, 1});
  }
}

}  // namespace

PageRefcounts::PageRefcounts(size_t bytes, size_t page_bytes)
    : bytes_(bytes),
      page_bytes_(page_bytes),
      counts_(page_bytes == 0 ? 0 : (bytes + page_bytes - 1) / page_bytes,
              0) {}

absl::Status PageRefcounts::Pages(size_t begin, size_t end, size_t* first,
                                  size_t* last) const {
  if (begin > end || end > bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat("bytes [", begin, ", ", end, ") outside [0, ", bytes_,
                     ")"));
  }
  *first = begin / page_bytes_;
  *last = begin == end ? *first : (end + page_bytes_ - 1) / page_bytes_;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PageRun>> PageRefcounts::Hold(size_t begin,
                                                         size_t end) {
  size_t first = 0, last = 0;
  if (absl::Status s = Pages(begin, end, &first, &last); !s.ok()) return s;
  std::vector<PageRun> fresh;
  for (size_t p = first; p < last; ++p) {
    if (counts_[p]++ == 0) {
      ++held_pages_;
      Append(fresh, p);
    }
  }
  return fresh;
}

absl::StatusOr<std::vector<PageRun>> PageRefcounts::Drop(size_t begin,
                                                         size_t end) {
  size_t first = 0, last = 0;
  if (absl::Status s = Pages(begin, end, &first, &last); !s.ok()) return s;
  for (size_t p = first; p < last; ++p) {
    if (counts_[p] == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("dropping bytes [", begin, ", ", end, "): page ", p,
                       " is not held"));
    }
  }
  std::vector<PageRun> freed;
  for (size_t p = first; p < last; ++p) {
    if (--counts_[p] == 0) {
      --held_pages_;
      Append(freed, p);
    }
  }
  return freed;
}

}  // namespace ringside

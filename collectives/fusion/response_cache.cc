#include "collectives/fusion/response_cache.h"

namespace ringside {

std::optional<int> ResponseCache::BitOf(int tensor) const {
  auto it = bit_of_.find(tensor);
  if (it == bit_of_.end()) return std::nullopt;
  return it->second;
}

bool ResponseCache::Put(int tensor) {
  if (size() >= capacity_ || bit_of_.contains(tensor)) return false;
  bit_of_[tensor] = size();
  tensors_.push_back(tensor);
  return true;
}

}  // namespace ringside

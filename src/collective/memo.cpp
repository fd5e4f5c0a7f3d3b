#include "toposweep/collective/memo.hpp"

namespace toposweep {

const MultiRing& CollectiveMemo::multiring(const std::vector<VertexId>& members) {
  auto it = multirings_.find(members);
  if (it == multirings_.end())
    it = multirings_.emplace(members, toposweep::multiring(routes_.network(), routes_, members)).first;
  return it->second;
}

}  // namespace toposweep

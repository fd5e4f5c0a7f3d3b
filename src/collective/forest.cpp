#include "toposweep/collective/forest.hpp"

#include "toposweep/util/error.hpp"

namespace toposweep {

ForestSchedule forest_schedule(const Network&, CollectiveOp, const std::vector<VertexId>&, double, VertexId, bool) {
  throw BadInput("forest is not built yet", "collective.algorithm");
}

}  // namespace toposweep

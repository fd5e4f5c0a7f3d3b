#pragma once
// Analytical network model: each communication task takes the alpha-beta time of its
// algorithm on an otherwise idle network (plan_collective, time only), charged `repeat`
// times. Uncontended by construction, and cached per distinct (group, op, bytes), so a design
// point costs microseconds.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "toposweep/collective/routing.hpp"
#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/sim/network_model.hpp"

namespace toposweep::sim {

class AnalyticalModel final : public NetworkModel {
 public:
  AnalyticalModel(const Network& net, CommSettings settings);

  std::optional<double> begin(const CommTask& comm, double now, std::uint64_t token) override;
  double next_event_time() override;
  void advance_to(double, std::vector<std::uint64_t>&) override {}
  std::string name() const override { return "analytical"; }

  // Time of one operation of `task` (repeat not applied): the slowest timed instance.
  double operation_time(const CommTask& comm);
  std::uint64_t plans_computed() const { return plans_computed_; }

 private:
  struct Key {
    const TaskGraph* graph;
    std::uint32_t group;  // group_set index, or instance within it when all instances are timed
    std::uint32_t instance;
    std::uint8_t kind, op;
    double bytes;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  double instance_time(const Task& t, const std::vector<std::uint32_t>& ranks, const Placement& placement);

  const Network* net_;
  CommSettings settings_;
  RouteCache routes_;
  std::unordered_map<Key, double, KeyHash> cache_;
  std::uint64_t plans_computed_ = 0;
};

}  // namespace toposweep::sim

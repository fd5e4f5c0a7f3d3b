#pragma once
// The simulator's entry points: one iteration of one job, or of several jobs sharing one
// network, under the network model a configuration selects.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "toposweep/sim/analytical_model.hpp"
#include "toposweep/sim/engine.hpp"
#include "toposweep/sim/flow_network.hpp"
#include "toposweep/sim/network_model.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep::sim {

enum class NetworkModelKind { Analytical, Flow };

struct SimOptions {
  NetworkModelKind model = NetworkModelKind::Analytical;
  CommSettings comm;
  bool record_link_loads = false;  // flow model: keep every arc-load change (for --trace)
  bool operator==(const SimOptions&) const = default;
};

// simulate.network_model, simulate.hierarchical_model, simulate.analytical_instances and
// collective.algorithm; BadInput naming the key on a bad value.
SimOptions sim_options_from_config(const Config& config);
// The network models by name (simulate.network_model): help texts and checks come from here.
struct NetworkModelEntry {
  const char* name;
  NetworkModelKind kind;
  const char* summary;
  std::unique_ptr<NetworkModel> (*make)(const Network&, const SimOptions&);
};
const NetworkModelEntry* find_network_model(std::string_view name);  // nullptr when unknown
const std::vector<std::string>& network_model_names();
std::string_view network_model_name(NetworkModelKind kind);
std::unique_ptr<NetworkModel> make_network_model(const Network& net, const SimOptions& options);

struct LinkLoad {
  ArcId arc = 0;
  double bytes = 0;
  double utilisation = 0;  // bytes / (bandwidth x makespan)
};

struct SimResult {
  EngineResult engine;
  NetworkModelKind model = NetworkModelKind::Analytical;
  // Flow model only (empty / zero otherwise): every arc's load, and summary figures over all
  // arcs of the network.
  std::vector<LinkLoad> links;
  double max_link_utilisation = 0;
  double mean_link_utilisation = 0;
  std::uint64_t flows = 0;                // flows played (a merged flow counts once)
  std::uint64_t flows_represented = 0;    // the flows they stand for
  std::uint64_t rate_recomputations = 0;  // progressive-filling runs
  std::uint64_t rate_assignments = 0;     // flow rates those runs set (work measure)
  std::vector<LinkSample> link_samples;   // when SimOptions::record_link_loads
  const JobTimes& job(std::size_t j = 0) const { return engine.jobs.at(j); }
};

SimResult simulate_jobs(const Network& net, std::span<const Job> jobs, const SimOptions& options);
// One job with rank-order placement, timed by a caller-owned analytical model (which keeps its
// plan cache between calls: what a sweep evaluating many points on one network wants).
SimResult simulate_analytical(AnalyticalModel& model, const TaskGraph& graph, std::uint32_t gpus_per_node);
// One job; `placement` empty means rank order (rank r on node r / gpus_per_node).
SimResult simulate_iteration(const Network& net, const TaskGraph& graph, const SimOptions& options,
                             Placement placement = {});

// Megatron's rank order on `net`: ranks fill servers in order (servers may hold different counts).
Placement rank_order_on(const Network& net, std::uint32_t gpus);

}  // namespace toposweep::sim

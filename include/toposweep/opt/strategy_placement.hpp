#pragma once
// Where a 3-D strategy's GPU ranks run (issue 7, TAG's idea): rank order, or METIS placement that
// puts each tensor-parallel group (or, when TP fits inside one server, each pipeline group) on a
// set of servers METIS found well connected in the bandwidth-weighted topology.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::opt {

enum class PlacementKind { RankOrder, Metis };
PlacementKind parse_placement_kind(const std::string& text, const std::string& where);
const char* placement_kind_name(PlacementKind k);

struct StrategyPlacement {
  Placement placement;
  PlacementKind requested = PlacementKind::RankOrder;
  // "rank_order", or "metis" when METIS' grouping was used. METIS is requested but rank order
  // kept when no group spans several servers or METIS found nothing better (internal bandwidth).
  std::string method = "rank_order";
  std::string grouped;  // "tp", "pp" or "" : which parallel groups were mapped onto server sets
  std::vector<std::vector<std::uint32_t>> node_groups;  // physical servers of each mapped group
  double internal_bandwidth_Bps = 0;                    // of the chosen server grouping
  double rank_order_internal_bandwidth_Bps = 0;         // of rank order's grouping
};

// Server-level groups of logical servers (rank r on logical server r / gpus_per_node) that one
// kind of parallel group spans; empty if those groups do not cut the used servers into equal,
// disjoint sets of at least two servers. Ranks in the axis grid's order (workload/ranks.hpp).
std::vector<std::vector<std::uint32_t>> logical_server_groups(std::uint32_t gpus, std::uint32_t gpus_per_node,
                                                              std::uint32_t tp, std::uint32_t pp,
                                                              bool pipeline);

// Places `gpus` ranks of a dp x tp x pp strategy on `net`. With Metis: TP groups if they span
// several servers, else PP groups; each logical group is played by one METIS server set.
// Mixed servers (`device_of_server`, empty: one device; fabrics from the network): a server
// only takes the place of one of its class (same device, GPU count and fabric), so every rank
// keeps the device and fabric its plan was built for. Logical groups of one class each are
// partitioned class by class; groups of equal class composition by METIS with one balance
// constraint per class; otherwise, and on servers of different GPU counts, rank order stays.
StrategyPlacement place_strategy(const Network& net, std::uint32_t gpus, std::uint32_t tp, std::uint32_t pp,
                                 PlacementKind kind, std::uint64_t seed = 1,
                                 std::span<const std::uint16_t> device_of_server = {});

}  // namespace toposweep::opt

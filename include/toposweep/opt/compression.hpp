#pragma once
// Lossless gradient compression by sufficient-factor broadcasting (SFB; Xie et al. 2016, used
// per operator by TAG): a dense or conv layer's weight gradient is a sum of per-sample outer
// products, so replicas can AllGather the factors (samples x (in + out) values) instead of
// AllReducing the gradient (in x out values) and rebuild it exactly. The choice is per layer,
// timed by the network model on the stage's data-parallel groups where the plan runs them:
// a layer is compressed when AllGather + rebuild is faster than its AllReduce (isolated times,
// no overlap, as TAG's and Poseidon's rule).
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"

namespace toposweep::opt {

struct SfbLayerChoice {
  std::uint32_t layer = 0;
  std::string name;
  std::uint32_t stage = 0;
  double allreduce_bytes = 0;  // the weight gradient (nccl-tests buffer size)
  double allgather_bytes = 0;  // the gathered factors (output buffer)
  double allreduce_s = 0, allgather_s = 0, rebuild_s = 0;
  bool chosen = false;
};

struct SfbChoice {
  std::vector<SfbLayerChoice> layers;  // every candidate
  std::vector<std::uint32_t> chosen;   // layer indices
  // Data-parallel bytes one GPU sends per iteration (ring convention: AllReduce 2X(n-1)/n,
  // AllGather X(n-1)/n), the busiest stage, without and with the chosen layers compressed.
  double dp_bytes_per_rank_before = 0, dp_bytes_per_rank_after = 0;
};

// The candidates of a plan built with compression = sfb and no layers yet: data-parallel dense
// and conv layers (dp > 1, ZeRO 0, global strategies without tables).
SfbChoice choose_sfb_layers(const Network& net, const Workload& w, const IterationPlan& plain,
                            const Placement& placement, const sim::SimOptions& options);

// The plan `simulate` runs: with compression = sfb the layers are chosen on this network and
// placement first (plan_iteration otherwise). `choice` (optional) receives the choice.
IterationPlan plan_on(const Network& net, const Workload& w, const Strategy& s, const Placement& placement,
                      const sim::SimOptions& options, LayerCostCache* cache = nullptr,
                      SfbChoice* choice = nullptr);

}  // namespace toposweep::opt

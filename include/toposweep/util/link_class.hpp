#pragma once
// A class of links as collectives see it in practice: the line rate, the fraction of it NCCL
// reaches (nccl-tests bus bandwidth / line rate) and NCCL's latency model, a fixed cost per
// collective plus one per ring step. Shared by devices (the GPU fabric inside a server) and
// topologies (the fabric the network model uses).
#include <cstdint>

namespace toposweep {

struct LinkClass {
  double bandwidth_Bps = 0;   // line rate per GPU, one direction
  double efficiency = 1;      // achievable fraction of the line rate
  double latency_s = 0;       // once per collective (launch, synchronisation)
  double step_latency_s = 0;  // per ring step
  double achievable_Bps() const { return bandwidth_Bps * efficiency; }
  bool operator==(const LinkClass&) const = default;
};

}  // namespace toposweep

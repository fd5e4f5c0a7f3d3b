#pragma once
// How a strategy meets unequal devices (mixed servers, workload/devices.hpp): the stage split,
// every data-parallel replica's share of a microbatch, and each pipeline stage's compute
// slowdown. Tensor-parallel ranks run in lockstep, so a replica at a stage runs at the rate of
// its slowest TP rank; the graph keeps one representative per stage whose compute takes the
// slowest replica's time (docs/models.md, "Mixed servers").
#include <cstdint>
#include <span>
#include <vector>

#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct DeviceShares {
  std::vector<StageRange> chunks;       // layers of each model chunk (pp x virtual stages)
  std::vector<double> replica_samples;  // per DP replica: samples in each of its microbatches
  double max_samples = 0;               // the largest of them
  // Per pipeline stage (device): its compute time over the reference device's at the mean
  // microbatch. Exactly 1.0 when every replica of the stage runs the mean microbatch at the
  // reference rate (homogeneous clusters: durations unchanged bit for bit).
  std::vector<double> slow;
};
DeviceShares device_shares(const Workload& w, const Strategy& s);

// Rate of replica d at device stage p: its slowest TP rank's (rank order; Workload::kind_flops_per_s).
double replica_stage_rate(const Workload& w, const Strategy& s, std::uint32_t d, std::uint32_t p);
// The FLOP/s FLOP-timed work (an SFB rebuild) runs at on replica d at stage p: the workload's
// rate scaled by the replica's speed relative to the reference device.
double replica_stage_flops(const Workload& w, const Strategy& s, std::uint32_t d, std::uint32_t p);

// SFB (strategy.compression = sfb) of `layer` at device stage `stage`, what the graph and the
// chooser (opt/compression.hpp) both use: the AllGather's output bytes (every replica's factors of
// all its microbatches; NCCL's AllGather takes equal blocks, so unequal replicas pad to the
// largest), and the rebuild of the whole group's weight gradient from the other replicas' factors
// (one weight-gradient GEMM, the forward's FLOPs, per sample a replica did not compute), the
// slowest replica deciding.
double sfb_gather_bytes(const Workload& w, const Strategy& s, const DeviceShares& shares, const Layer& layer);
struct SfbRebuild {
  double flops = 0, seconds = 0;
};
SfbRebuild sfb_rebuild(const Workload& w, const Strategy& s, const DeviceShares& shares, const Layer& layer,
                       std::uint32_t stage);

// Per device stage p: the weight its layer share is proportional to with stage_split = speed
// (the slowest replica's rate there). Empty when the split is even or every weight is equal.
std::vector<double> stage_weights(const Workload& w, const Strategy& s);

// `units` whole units over replicas with `rates`, minimising max_d units_d / rates_d with at
// least one each: one each first, then every next unit to the replica that would finish it first
// (ties: lowest index). Equal rates give units / n each when n divides units.
std::vector<std::uint32_t> split_units(std::uint32_t units, std::span<const double> rates);

}  // namespace toposweep

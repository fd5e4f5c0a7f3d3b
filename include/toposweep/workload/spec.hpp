#pragma once
// The workload and the strategy of a design point as typed values, read from model.*, server.*
// and strategy.* keys once, at the edge. The specs are what the user asked for; make_workload and
// resolve_strategy turn them into the Workload and Strategy of a given GPU count (dp = 0 and a
// microbatch size become numbers there, and the strategy is checked against the model).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct WorkloadSpec {
  std::string model = "bert-large";  // a built-in name or a model file (resolved by make_workload)
  // A built-in name or a device file; mixed servers: the server.device run list as written
  // ("a100*4,v100*4", workload/devices.hpp). A list of one device is stored as its name.
  std::string device = "a100";
  std::uint32_t device_servers = 0;  // the run list's server count (0: a lone name, any count)
  std::string datatype = "fp16";
  std::int64_t batch_per_gpu = 0;  // 0: the model's default
  std::int64_t global_batch = 0;   // > 0: overrides batch_per_gpu x GPUs
  double efficiency = 0;           // > 0: overrides the device's
  std::string optimizer = "adam";
  std::string optimizer_moments = "fp32";  // model.optimizer_moments: fp32 or bf16
  std::string moe_activation_datatype;     // model.moe_activation_datatype; empty: the activations'
  bool moe_probs_in_activation = false;    // model.moe_probs_in_activation
  // model.fused_attention: one flash-attention kernel per layer; unset: the device's default
  // (Device::fused_attention_default).
  std::optional<bool> fused_attention;
  std::string grad_datatype;                 // model.grad_datatype; empty: the training datatype
  std::uint32_t seq_len = 0;                 // model.seq_len; > 0: overrides a transformer's sequence length
  SoftmaxKind softmax = SoftmaxKind::Fused;  // model.softmax: a transformer's unfused score kernels
  CrossEntropyKind cross_entropy = CrossEntropyKind::Unfused;  // model.cross_entropy: a transformer's loss
  double moe_imbalance = 1;                   // model.moe_imbalance (Workload::moe_imbalance)
  std::optional<double> moe_capacity_factor;  // model.moe_capacity_factor; unset: the model's
  bool moe_pad_to_capacity = false;           // model.moe_pad_to_capacity
  // model.moe_router_groups / model.moe_router_group_topk (moe_routing.hpp); unset: the model's.
  std::optional<std::uint32_t> moe_router_groups, moe_router_group_topk;
  std::string moe_dispatch_datatype;          // model.moe_dispatch_datatype; empty: the activations'
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // model.fp8_recipe (Workload::fp8_recipe)
  // model.chakra (read by the point module): a directory of Chakra traces played instead of
  // planning `model` (interop/chakra.hpp); empty: plan the model.
  std::string chakra;
  std::uint32_t chakra_replicas = 1;  // model.chakra_replicas: rank 0's trace on this many DP ranks
  bool operator==(const WorkloadSpec&) const = default;
};

// model.name, model.batch_per_gpu, model.global_batch, model.datatype, model.optimizer,
// model.fused_attention, model.grad_datatype, model.seq_len, model.softmax, model.cross_entropy,
// server.device, server.efficiency.
WorkloadSpec workload_spec_from_config(const Config& config);

// The workload on `gpus` GPUs (the model and device files are read here); errors name the key.
Workload make_workload(const WorkloadSpec& spec, std::uint32_t gpus);
// The same with the model and device already resolved (a caller that caches them).
Workload make_workload(const WorkloadSpec& spec, std::uint32_t gpus, Model model, Device device);

// The strategy knobs as written: dp = 0 means the GPUs tp x pp leaves, and a microbatch size, when
// given, sets the microbatch count from the batch (both resolved by resolve_strategy). The
// sufficient-factor layers are chosen by an optimizer, never read from a key.
struct StrategySpec : StrategyKnobs {
  StrategySpec() { dp = 0; }
  std::uint32_t microbatch_size = 0;  // > 0: sets the microbatch count from the batch
  bool operator==(const StrategySpec&) const = default;
};

// The GPU fabric of server.device's servers (Device::intra_server): what the server.intra_* keys
// default to.
LinkClass intra_link_from_config(const Config& config);

// strategy.* keys (strategy.zero1 as the deprecated alias of strategy.zero = 1).
StrategySpec strategy_spec_from_config(const Config& config);
// The spec as a strategy on `gpus` GPUs for workload `w`: dp = 0 and microbatch_size resolved,
// then validate_strategy. InvalidDesign / BadInput name the key ("key strategy.tp").
Strategy resolve_strategy(const StrategySpec& spec, const Workload& w, std::uint32_t gpus);
// A resolved strategy written back as a spec (what optimizers hand on).
StrategySpec spec_of(const Strategy& s);

}  // namespace toposweep

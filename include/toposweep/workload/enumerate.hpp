#pragma once
// Enumeration of every valid global strategy (dp x tp x pp = GPUs, microbatch counts dividing
// the per-replica batch, schedules, recompute, ZeRO stages) of a workload, each checked against the
// device memory. Infeasible strategies are counted and skipped, not planned or simulated.
// The memory check reuses per-(tp, pp) stage aggregates, so a check costs O(pp) flops.
#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <type_traits>
#include <vector>

#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/strategy_knobs.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

// The value lists of the knobs with a search list (a row of kStrategyKnobs with a search_key), by
// row, as codes (knob_code).
using KnobLists = std::array<std::vector<std::uint32_t>, std::size(kStrategyKnobs)>;
// Each searched row's search_default list (optimize.<search_key>'s default), except the mixed
// servers' splits and compression (optimize.batch_splits, stage_splits, compressions): the
// configured strategy's value (the knob's default) unless listed.
KnobLists default_knob_lists();

// The values each knob takes (optimize.* keys, docs/optimizers.md). Only canonical strategies
// are enumerated: a knob that changes nothing for a shape takes its default there (its row's
// scope: schedule and chunks with pp = 1, sequence parallelism and TP overlap with tp = 1, ZeRO
// and DP overlap with dp = 1), so no strategy is visited twice. A split is searched only on mixed
// devices.
struct StrategySpace {
  KnobLists lists = default_knob_lists();  // read and set with values() and set()
  // Model chunks per device tried with the interleaved schedule; empty: every count >= 2 with
  // pp x chunks <= layers and the microbatch count a multiple of pp (what Megatron-LM accepts).
  std::vector<std::uint32_t> virtual_stages;
  std::vector<std::uint32_t> tp, pp;           // degrees tried; empty: every divisor
  std::vector<std::uint32_t> microbatch_size;  // samples per microbatch tried; empty: every divisor
  std::uint32_t max_microbatches = 0;          // 0: every divisor of the per-replica batch
  std::uint32_t max_tp = 0;                    // 0: up to the head count (transformers), 1 otherwise
  // GPUs per server: tp is at most this unless tp_across_servers (0: no limit).
  std::uint32_t gpus_per_server = 0;
  bool tp_across_servers = false;
  double bucket_bytes = 25.0 * 1024 * 1024;
  bool operator==(const StrategySpace&) const = default;

  // A row's list, as codes.
  std::vector<std::uint32_t>& codes(const StrategyKnob& k) { return lists[knob_index(k)]; }
  const std::vector<std::uint32_t>& codes(const StrategyKnob& k) const { return lists[knob_index(k)]; }
  // A knob's list, typed (e.g. values(&StrategyKnobs::zero)).
  template <class T>
  std::vector<T> values(T StrategyKnobs::*member) const {
    std::vector<T> out;
    for (std::uint32_t code : codes(*find_strategy_knob(member))) out.push_back(static_cast<T>(code));
    return out;
  }
  // `s` with what the space fixes without searching it: the gradient bucket and the configured
  // strategy.recompute_modules and strategy.recompute_layers (one value each). Every strategy a
  // search starts from or visits carries them.
  Strategy fixed(Strategy s) const;
  template <class T>
  void set(T StrategyKnobs::*member, const std::type_identity_t<std::vector<T>>& values) {
    std::vector<std::uint32_t>& list = codes(*find_strategy_knob(member));
    list.clear();
    for (const T v : values) list.push_back(static_cast<std::uint32_t>(v));
  }
};

struct StrategyCount {
  std::uint64_t checked = 0;  // valid strategies whose memory was checked
  std::uint64_t feasible = 0;
  std::uint64_t infeasible = 0;  // do not fit in device memory
};

// Calls `visit(strategy, memory_per_gpu_bytes, feasible)` for every valid canonical strategy, in
// a fixed order (tp, pp ascending; then the levels of kEnumerationOrder, strategy_knobs.hpp).
// `visit` may be empty.
using StrategyVisitor = std::function<void(const Strategy&, double, bool)>;
StrategyCount for_each_strategy(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                const StrategyVisitor& visit);

// The feasible strategies (and the counts, when `counts` is given).
std::vector<Strategy> feasible_strategies(const Workload& w, std::uint32_t gpus,
                                          const StrategySpace& space = {}, StrategyCount* counts = nullptr);

// Divisors of n, ascending.
std::vector<std::uint64_t> divisors(std::uint64_t n);

}  // namespace toposweep

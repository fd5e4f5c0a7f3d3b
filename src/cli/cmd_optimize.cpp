// `toposweep optimize`: optimize one design point (alternating topology/strategy, bandwidth allocation).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/cli/mpi_search_team.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description& d) {
  d.add_options()("target", po::value<std::string>(),
                  "bandwidth, topology, strategy, alternating or placement (default: optimize.target)")(
      "op", po::value<std::string>(),
      "bandwidth target: optimize for one collective (allreduce, alltoall, ...)")(
      "bytes", po::value<std::string>(), "bandwidth target: the collective's per-rank buffer, e.g. 1GB");
}

std::string join_u32(const std::vector<std::uint32_t>& v) {
  std::ostringstream os;
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

// Every knob of a strategy that is not at its default for the shape, in words.
std::string describe(const Strategy& s) {
  std::ostringstream os;
  os << "dp " << s.dp << ", tp " << s.tp << ", pp " << s.pp;
  if (s.cp > 1) os << ", cp " << s.cp;
  if (s.ep > 1) os << ", ep " << s.ep << (s.ep_overlap ? " (overlapped)" : "");
  os << ", microbatches " << s.microbatches;
  if (s.pp > 1) {
    os << ", " << schedule_name(s.schedule);
    if (s.schedule == PipelineSchedule::Interleaved) os << " x" << s.virtual_stages;
  }
  if (s.recompute != Recompute::None) os << ", recompute " << recompute_name(s.recompute);
  if (s.recompute == Recompute::Full && s.recompute_layers > 0)
    os << " (the first " << s.recompute_layers << " blocks of each chunk)";
  if (s.recompute == Recompute::Selective && s.recompute_modules != RecomputeModules::CoreAttn)
    os << " (" << recompute_modules_name(s.recompute_modules) << ")";
  if (s.sequence_parallel) os << ", sequence parallel";
  if (s.tp_overlap != TpOverlap::None) os << ", TP overlap " << tp_overlap_name(s.tp_overlap);
  if (s.zero > 0) os << ", ZeRO-" << int{s.zero};
  if (s.dp > 1 && !s.dp_overlap) os << ", no DP overlap";
  if (s.per_layer()) os << ", per-layer degrees";
  if (!s.table_owner.empty()) os << ", tables placed";
  if (s.batch_split != BatchSplit::Even) os << ", batch split " << batch_split_name(s.batch_split);
  if (s.stage_split != StageSplit::Even) os << ", stage split " << stage_split_name(s.stage_split);
  if (s.compression != Compression::None) os << ", " << compression_name(s.compression);
  return os.str();
}

void print_summary(std::ostream& os, const opt::OptimizeResult& r) {
  const char* what = r.single_collective ? "collective time" : "iteration time";
  os << "target: " << opt::optimize_target_name(r.target) << "\n"
     << what << ": " << human_quantity(Quantity::Time, r.time_s);
  // No baseline time when even the fallback does not fit (NaN): say so instead of "nan ps".
  if (std::isnan(r.baseline_time_s))
    os << "  (no baseline: " << r.baseline << ")\n";
  else
    os << "  (baseline " << human_quantity(Quantity::Time, r.baseline_time_s) << ": " << r.baseline << ")\n"
       << "gain: " << r.baseline_time_s / r.time_s << "x\n";
  os << "network cost: " << r.cost_usd << " USD\n";
  if (r.bandwidth) {
    const auto& a = *r.bandwidth;
    os << "per-dimension bandwidth (" << r.comm_model << " model):\n";
    for (std::size_t k = 0; k < a.dim_bandwidth_Bps.size(); ++k)
      os << "  dim " << k << ": " << human_quantity(Quantity::Bandwidth, a.dim_bandwidth_Bps[k])
         << "  (equal split " << human_quantity(Quantity::Bandwidth, a.baseline_bandwidth_Bps[k]) << ")\n";
    os << "communication time: " << human_quantity(Quantity::Time, a.time_s) << " (equal split "
       << human_quantity(Quantity::Time, a.baseline_time_s) << "), objective gain " << a.gain
       << "x, certified gap " << a.certified_gap << "\n";
  }
  if (r.target == opt::OptimizeTarget::Placement) {
    os << "placement: " << r.placement_method
       << (r.placement_grouped.empty() ? " (no parallel group spans several servers)"
                                       : " (" + r.placement_grouped + " groups on server sets)")
       << "\ninternal bandwidth of the groups: "
       << human_quantity(Quantity::Bandwidth, r.placement_internal_bandwidth_Bps) << " (rank order "
       << human_quantity(Quantity::Bandwidth, r.rank_order_internal_bandwidth_Bps) << ")\n";
    for (std::size_t i = 0; i < r.placement_groups.size(); ++i)
      os << "  group " << i << ": servers " << join_u32(r.placement_groups[i]) << "\n";
  }
  if (!r.strides.empty()) os << "ring strides: " << join_u32(r.strides) << "\n";
  if (!r.mp_links.empty()) os << "model-parallel links: " << r.mp_links.size() << "\n";
  if (!r.single_collective) os << "strategy: " << describe(r.strategy) << "\n";
  if (!r.search_method.empty() && r.target == opt::OptimizeTarget::Strategy) {
    os << "search: " << r.search_method
       << (r.search_requested == "auto" ? " (chosen by optimize.search = auto)" : "") << ", " << r.candidates
       << " candidates, " << r.infeasible << " do not fit in memory, " << r.simulations << " simulated, "
       << r.pruned << " pruned by the lower bound\n";
    if (r.top.size() > 1) {
      os << "top " << r.top.size() << ":\n";
      for (std::size_t i = 0; i < r.top.size(); ++i) {
        char gap[32];
        std::snprintf(gap, sizeof gap, "%+.2f %%",
                      100 * (r.top[i].iteration_time_s / r.top[0].iteration_time_s - 1));
        os << "  " << i + 1 << ". " << human_quantity(Quantity::Time, r.top[i].iteration_time_s) << "  "
           << gap << "  " << describe(r.top[i].strategy) << "\n";
      }
    }
  }
  if (!r.rounds.empty()) {
    os << "rounds:\n";
    for (const auto& round : r.rounds) {
      os << "  " << round.round << ": " << human_quantity(Quantity::Time, round.iteration_time_s) << "  best "
         << human_quantity(Quantity::Time, round.best_time_s) << "  dp " << round.strategy.dp << " tp "
         << round.strategy.tp << " pp " << round.strategy.pp;
      if (round.strategy.cp > 1) os << " cp " << round.strategy.cp;
      if (round.strategy.ep > 1) os << " ep " << round.strategy.ep;
      if (round.strategy.zero > 0) os << " zero " << int{round.strategy.zero};
      os << "  strides " << join_u32(round.strides) << "  " << round.mp_links.size() << " MP links\n";
    }
    if (!r.stop_reason.empty()) os << "stopped: " << r.stop_reason << "\n";
  }
}

int run(CommandContext& ctx) {
  if (!ctx.positional.empty())
    throw BadInput("unexpected argument '" + ctx.positional.front() + "'", "command line of 'optimize'");
  const std::string target_text = ctx.options.count("target") ? ctx.options["target"].as<std::string>()
                                                              : ctx.config.get_string("optimize.target");
  const auto target = opt::parse_optimize_target(
      target_text, ctx.options.count("target") ? "--target" : ctx.config.where("optimize.target"));
  std::optional<opt::SingleCollective> single;
  if (ctx.options.count("op") || ctx.options.count("bytes")) {
    if (!ctx.options.count("op") || !ctx.options.count("bytes"))
      throw BadInput("--op and --bytes go together", "command line of 'optimize'");
    const auto op = parse_collective_op(ctx.options["op"].as<std::string>());
    if (!op) throw BadInput("unknown collective '" + ctx.options["op"].as<std::string>() + "'", "--op");
    single = opt::SingleCollective{*op, parse_size(ctx.options["bytes"].as<std::string>(), "--bytes")};
    if (!(single->bytes > 0)) throw BadInput("bytes must be positive", "--bytes");
  }
  DesignPoint point = design_point_from_config(ctx.config, target);
  point.single_collective = single;
  // Under mpirun with several ranks the exhaustive strategy search is split over them; every
  // rank computes the same result (other targets: every rank runs alone) and rank 0 prints it.
  const std::unique_ptr<opt::SearchTeam> team = mpi_search_team_if_launched();
  struct TeamScope {
    explicit TeamScope(opt::SearchTeam* t) { opt::set_strategy_search_team(t); }
    ~TeamScope() { opt::set_strategy_search_team(nullptr); }
  } scope(team.get());
  PointCache cache;
  const opt::OptimizeResult result =
      *key_origins(ctx.config).run([&] { return evaluate(point, cache, Detail::Full); }).optimized;
  if (team && team->rank() != 0) {
    ctx.log = Logger(LogLevel::Quiet);  // no warnings either: rank 0 gives them
    return kExitOk;
  }
  if (ctx.json) {
    *ctx.out << opt::optimize_result_to_json(result).dump() << "\n";
  } else {
    print_summary(*ctx.out, result);
  }
  return kExitOk;
}

}  // namespace

Command optimize_command() {
  return Command{"optimize",
                 "optimize one design point (alternating topology/strategy, bandwidth allocation, placement)",
                 "", add_options, run};
}

}  // namespace toposweep::cli

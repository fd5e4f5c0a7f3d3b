// `toposweep sweep`: explore a design space; run under mpirun or srun; writes HDF5.
// MPI is initialised here, and by `optimize` only when launched on several ranks
// (cli/mpi_search_team.hpp); the other commands never touch it.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "toposweep/cli/command.hpp"
#include "toposweep/cli/mpi_session.hpp"
#include "toposweep/point/check.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/frontier_groups.hpp"
#include "toposweep/sweep/mpi.hpp"
#include "toposweep/sweep/report.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/sweep/space_check.hpp"
#include "toposweep/sweep/synthetic.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::cli {
namespace {

// The one piece of process-wide mutable state: a signal handler can only talk to the program
// through a flag like this.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal) _exit(kExitInterrupted);  // second signal: leave now (the journal stays valid)
  g_stop_signal = sig;
}

class SignalGuard {
 public:
  SignalGuard() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGINT, &sa, &old_int_);
  }
  ~SignalGuard() {
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
  }

 private:
  struct sigaction old_term_ {
  }, old_int_{};
};

// The MPI library's own name and version (the first line of MPI_Get_library_version).
std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(std::max(length, 0)));
  s = s.substr(0, s.find_first_of("\n\r"));
  std::replace(s.begin(), s.end(), '\t', ' ');  // MPICH: "MPICH Version:<tab>4.0.2"
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }), s.end());
  while (!s.empty() && (s.back() == ' ' || s.back() == ',' || s.back() == '\0')) s.pop_back();
  return s;
}

void add_options(po::options_description& o) {
  o.add_options()("out", po::value<std::string>(),
                  "output HDF5 file (written as FILE.partial, renamed at the end)")(
      "resume", po::bool_switch(), "continue from FILE.journal/ (starts afresh if there is none)")(
      "dry-run", po::bool_switch(), "print the space size and sample points; evaluate nothing")(
      "sample", po::value<std::size_t>()->default_value(10), "number of sample points for --dry-run")(
      "keep", po::value<std::string>()->default_value("all"),
      "all: every point in /points; frontier: only the frontier's")(
      "slice", po::value<std::string>(), "K/N: evaluate only slice K (0-based) of N contiguous index ranges")(
      "merge", po::value<std::vector<std::string>>()->multitoken(), "merge these slice files into --out");
}

std::pair<std::uint64_t, std::uint64_t> parse_slice(const std::string& text, std::uint64_t size) {
  const auto slash = text.find('/');
  std::uint64_t k = 0, n = 0;
  try {
    std::size_t used_k = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    const std::string ks = text.substr(0, slash), ns = text.substr(slash + 1);
    k = std::stoull(ks, &used_k);
    n = std::stoull(ns, &used_n);
    if (used_k != ks.size() || used_n != ns.size() || ks.empty() || ns.empty() || ks[0] == '-' ||
        ns[0] == '-')
      throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw BadInput("'" + text + "' is not K/N", "--slice");
  }
  if (n == 0 || k >= n) throw BadInput("slice " + text + " needs 0 <= K < N", "--slice");
  const auto at = [&](std::uint64_t i) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(size) * i / n);
  };
  return {at(k), at(k + 1)};
}

sweep::Evaluator make_evaluator(const Config& config) {
  const std::string kind = config.get_string("sweep.evaluator");
  if (kind == "synthetic") {
    const double cost = config.get_time("sweep.synthetic_cost");
    const bool fail_all = config.get_string("sweep.synthetic_fail") == "all";
    return [cost, fail_all](const Config& point) { return sweep::synthetic_point(point, cost, fail_all); };
  }
  if (kind == "model") {
    auto cache = std::make_shared<PointCache>();
    return [cache](const Config& point) { return evaluate_row(point, *cache); };
  }
  throw BadInput("'" + kind + "' is not an evaluator (model or synthetic)", config.where("sweep.evaluator"));
}

// What a point of the evaluator reads, checked before the sweep runs (BadInput = exit 2).
sweep::PointCheck make_point_check(const Config& config) {
  if (config.get_string("sweep.evaluator") == "synthetic")
    // The synthetic evaluator hashes every value: it reads every key.
    return [](const Config& point) {
      for (const auto& entry : point.entries()) point.has(entry.first);
    };
  // One cache for every checked point: they share networks, models and devices.
  auto cache = std::make_shared<PointCache>();
  return [cache](const Config& point) { check_point_config(point, *cache); };
}

void print_result(CommandContext& ctx, const sweep::Space& space, const sweep::SweepSummary& s,
                  const sweep::SweepOptions& o, int ranks, bool merged) {
  const sweep::PointGroups models(space, o.frontier_by);
  if (ctx.json) {
    nlohmann::json j;
    j["out"] = o.out_path;
    j["space_size"] = space.size();
    j["points"] = s.points;
    j["evaluated"] = s.evaluated;
    j["infeasible"] = s.infeasible;
    j["failed"] = s.failed;
    j["done_this_run"] = s.done_this_run;
    j["seconds"] = s.seconds;
    j["chunks"] = s.chunks_this_run;
    j["rank_seconds"] = {
        {"evaluate", s.evaluate_seconds}, {"schedule", s.schedule_seconds}, {"journal", s.journal_seconds}};
    j["ranks"] = ranks;
    j["mpi_library"] = mpi_library();
    if (s.scheduler != sweep::SlotStoreKind::Auto) j["scheduler"] = sweep::spell(s.scheduler);
    j["merged"] = merged;
    if (!o.slice.empty()) j["slice"] = o.slice;
    j["objectives"] = nlohmann::json::array();
    for (const auto& ob : o.objectives) j["objectives"].push_back(ob.spelled());
    j["frontier_by"] = o.frontier_by;
    j["frontier"] = sweep::points_json(space, s.frontier_rows, o.objectives);
    if (models.size() > 1)  // name each point's model: /frontier is one frontier per model
      for (std::size_t i = 0; i < s.frontier_rows.size(); ++i)
        j["frontier"][i]["model"] = models.label(models.of(s.frontier_rows[i].index));
    *ctx.out << j.dump() << "\n";
    return;
  }
  *ctx.out << (merged ? "merged into " : "results in ") << o.out_path << ": " << s.points << " points ("
           << s.evaluated << " evaluated, " << s.infeasible << " infeasible, " << s.failed << " failed)\n";
  if (models.size() <= 1) {
    const std::size_t pooled = sweep::PointGroups(space, sweep::kFrontierByModel).size();
    *ctx.out << "frontier (" << frontier::spell_objectives(o.objectives)
             << (pooled > 1 ? "; " + std::to_string(pooled) + " models pooled, sweep.frontier_by = none" : "")
             << "): " << s.frontier_rows.size() << " point(s)\n";
    sweep::print_points_table(*ctx.out, space, s.frontier_rows, o.objectives, false);
    return;
  }
  // Several models: each one's own frontier under its own heading, never one table mixing them.
  std::vector<std::vector<sweep::PointRecord>> by_model(models.size());
  for (const auto& r : s.frontier_rows) by_model[models.of(r.index)].push_back(r);
  for (std::uint32_t g = 0; g < by_model.size(); ++g) {
    *ctx.out << "frontier for model.name = " << models.label(g) << " ("
             << frontier::spell_objectives(o.objectives) << "): " << by_model[g].size() << " point(s)\n";
    if (!by_model[g].empty()) sweep::print_points_table(*ctx.out, space, by_model[g], o.objectives, false);
  }
}

int run_sweep_command(CommandContext& ctx, const MpiSession& mpi) {
  const auto& vm = ctx.options;
  const sweep::Space space = sweep::parse_space(ctx.config, all_config_keys());
  // Every rank reads every sub-space's configurations before anything runs or is written, so
  // malformed input is exit 2 on all of them alike; rank 0 reports the keys no point reads.
  const auto unused = sweep::check_space(space, make_point_check(ctx.config));
  if (mpi.rank() == 0 && !vm.count("merge"))
    for (const auto& u : unused) ctx.log.warn(sweep::describe_unused(u));
  sweep::SweepOptions o;
  o.keep = sweep::parse_keep(vm["keep"].as<std::string>(), "--keep " + vm["keep"].as<std::string>());
  o.objectives = frontier::parse_objectives(ctx.config.get_string("sweep.objectives"),
                                            ctx.config.where("sweep.objectives"));
  const auto fields = sweep::known_fields(space);
  for (const auto& ob : o.objectives)
    if (std::find(fields.begin(), fields.end(), ob.field) == fields.end())
      throw BadInput("objective '" + ob.field + "' is not a field of the results",
                     ctx.config.where("sweep.objectives"));
  o.frontier_by = sweep::parse_frontier_by(ctx.config.get_string("sweep.frontier_by"),
                                           ctx.config.where("sweep.frontier_by"));
  o.chunk_seconds = ctx.config.get_double("sweep.chunk_seconds");
  o.scheduler = sweep::parse_slot_store_kind(ctx.config.get_string("sweep.scheduler"));
  if (!(o.chunk_seconds > 0)) throw BadInput("must be positive", ctx.config.where("sweep.chunk_seconds"));
  o.max_chunk_points = static_cast<std::uint64_t>(ctx.config.get_int("sweep.max_chunk_points", 1, 1 << 24));
  o.progress_interval_s = ctx.config.get_time("sweep.progress_interval");
  o.compression = static_cast<int>(ctx.config.get_int("sweep.compression", 0, 9));
  o.config_text = ctx.config.to_ini(false);
  o.begin = 0;
  o.end = space.size();

  if (vm["dry-run"].as<bool>()) {
    if (mpi.rank() == 0) {
      const std::size_t sample = vm["sample"].as<std::size_t>();
      if (ctx.json)
        *ctx.out << sweep::dry_run_json(space, sample).dump() << "\n";
      else
        sweep::print_dry_run(*ctx.out, space, sample);
    }
    return kExitOk;
  }
  if (!vm.count("out")) throw BadInput("--out FILE is required", "command line of 'sweep'");
  o.out_path = vm["out"].as<std::string>();
  o.resume = vm["resume"].as<bool>();

  std::vector<std::string> merge_inputs;
  if (vm.count("merge")) merge_inputs = vm["merge"].as<std::vector<std::string>>();
  if (vm.count("merge"))
    merge_inputs.insert(merge_inputs.end(), ctx.positional.begin(), ctx.positional.end());
  else if (!ctx.positional.empty())
    throw BadInput("unexpected argument '" + ctx.positional.front() + "'", "command line of 'sweep'");
  if (!merge_inputs.empty()) {
    if (vm.count("slice") || o.resume)
      throw BadInput("--merge does not combine with --slice or --resume", "--merge");
    // Merging is serial I/O: rank 0 does it, the others wait for its verdict.
    int ok = 1;
    std::string what, where;
    sweep::SweepSummary s;
    if (mpi.rank() == 0) {
      try {
        s = sweep::merge_slices(space, merge_inputs, o);
      } catch (...) {
        ok = 0;
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        throw;
      }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) return kExitFailure;  // rank 0 reports the error
    if (mpi.rank() == 0) print_result(ctx, space, s, o, mpi.size(), true);
    return kExitOk;
  }
  if (vm.count("slice")) {
    o.slice = vm["slice"].as<std::string>();
    std::tie(o.begin, o.end) = parse_slice(o.slice, space.size());
  }
  const sweep::Evaluator evaluate = make_evaluator(ctx.config);
  const Logger& log = mpi.rank() == 0 ? ctx.log : Logger(LogLevel::Warn);
  SignalGuard signals;
  const auto summary =
      sweep::run_sweep(space, o, evaluate, MPI_COMM_WORLD, log, [] { return g_stop_signal != 0; });
  if (mpi.rank() == 0) print_result(ctx, space, summary, o, mpi.size(), false);
  if (summary.points > 0 && summary.failed == summary.points) {
    // Nothing was evaluated: a run that "succeeds" with only failed points hides the cause.
    if (mpi.rank() == 0) {
      // The messages are in /failures with --keep all; replaying the first points gives them in
      // every mode.
      std::string first;
      for (std::uint64_t i = o.begin; i < std::min(o.end, o.begin + 3); ++i)
        first += "\n  point " + std::to_string(i) + ": " +
                 sweep::evaluate_point(space, i, evaluate).result.message;
      std::cerr << "toposweep: failure: every one of the " << summary.points
                << " points failed; the first:" << first << "\n";
    }
    return kExitFailure;
  }
  return kExitOk;
}

// `--merge` without `--config`: the space is the one the slices were made from, read back from
// the first slice's `config` attribute (--set still applies on top).
void adopt_config_of_first_slice(CommandContext& ctx) {
  const auto& vm = ctx.options;
  if (!vm.count("merge") || vm.count("config")) return;
  const std::string first = vm["merge"].as<std::vector<std::string>>().front();
  Config config;
  load_ini_text(config, sweep::ResultsReader(first).root_string("config"), first + " (config attribute)");
  if (vm.count("set"))
    for (const auto& s : vm["set"].as<std::vector<std::string>>()) apply_set(config, s);
  validate_and_default(config, all_config_keys());
  ctx.config = std::move(config);
}

int run(CommandContext& ctx) {
  MpiSession mpi;
  try {
    adopt_config_of_first_slice(ctx);
    return run_sweep_command(ctx, mpi);
  } catch (const BadInput&) {
    if (mpi.rank() != 0) return kExitBadInput;  // rank 0 prints the one error line
    throw;
  } catch (const Interrupted&) {
    if (mpi.rank() != 0) return kExitInterrupted;
    throw;
  } catch (const std::exception&) {
    if (mpi.rank() != 0) return kExitFailure;
    throw;
  }
}

}  // namespace

Command sweep_command() {
  return Command{"sweep",
                 "explore a design space; run under mpirun or srun; writes HDF5 (docs/sweep.md)",
                 "[--merge SLICE.h5 ...]",
                 add_options,
                 run,
                 false};
}

}  // namespace toposweep::cli

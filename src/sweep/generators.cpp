#include "toposweep/sweep/generators.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <regex>

#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::sweep {

std::vector<std::vector<std::int64_t>> compositions(std::int64_t total, std::int64_t parts) {
  std::vector<std::vector<std::int64_t>> out;
  if (parts < 1 || total < parts) return out;
  std::vector<std::int64_t> cur(static_cast<std::size_t>(parts), 1);
  cur.back() = total - (parts - 1);
  // Enumerate in lexicographic order: advance the rightmost position (before the last) that can
  // grow, reset everything after it to 1, and let the last part take the remainder.
  while (true) {
    out.push_back(cur);
    if (parts == 1) break;
    std::int64_t i = parts - 2;
    while (i >= 0 && cur.back() == 1) {
      // The last part cannot donate: fold position i back to 1 and move left.
      cur.back() += cur[static_cast<std::size_t>(i)] - 1;
      cur[static_cast<std::size_t>(i)] = 1;
      --i;
    }
    if (i < 0) break;
    ++cur[static_cast<std::size_t>(i)];
    --cur.back();
  }
  return out;
}

std::vector<std::string> simplex_allocations(double total_Bps, double step_Bps, std::int64_t dims,
                                             const std::string& where) {
  if (!(step_Bps > 0) || !(total_Bps > 0)) throw BadInput("simplex total and step must be positive", where);
  if (dims < 1) throw BadInput("simplex needs at least one dimension", where);
  const double ratio = total_Bps / step_Bps;
  const double k = std::round(ratio);
  if (std::abs(ratio - k) > 1e-9 * std::max(1.0, k))
    throw BadInput("simplex total is not a multiple of its step", where);
  if (k < static_cast<double>(dims))
    throw BadInput("simplex total is smaller than one step per dimension", where);
  if (k > 1e6) throw BadInput("simplex step too small (more than 1e6 steps)", where);
  std::vector<std::string> out;
  for (const auto& c : compositions(static_cast<std::int64_t>(k), dims)) {
    std::string v;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (i) v += ",";
      v += format_bandwidth(static_cast<double>(c[i]) * step_Bps);
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string StrategyTriple::spelled() const {
  return "dp" + std::to_string(dp) + "tp" + std::to_string(tp) + "pp" + std::to_string(pp);
}

std::vector<StrategyTriple> all_strategies(std::int64_t gpus, std::int64_t max_tp, std::int64_t max_pp) {
  std::vector<StrategyTriple> out;
  for (std::int64_t dp = 1; dp <= gpus; ++dp) {
    if (gpus % dp) continue;
    const std::int64_t rest = gpus / dp;
    for (std::int64_t tp = 1; tp <= rest; ++tp) {
      if (rest % tp) continue;
      const std::int64_t pp = rest / tp;
      if (tp <= max_tp && pp <= max_pp) out.push_back({dp, tp, pp});
    }
  }
  return out;
}

StrategyTriple parse_strategy(const std::string& text, const std::string& where) {
  static const std::regex pattern(R"(dp(\d{1,9})tp(\d{1,9})pp(\d{1,9}))");
  std::smatch m;
  if (!std::regex_match(text, m, pattern))
    throw BadInput("strategy '" + text + "' is not of the form dpNtpNppN", where);
  StrategyTriple t{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
  if (t.dp < 1 || t.tp < 1 || t.pp < 1) throw BadInput("strategy degrees must be at least 1", where);
  return t;
}

namespace {

std::int64_t int_of(const std::string& text, const std::string& what, const std::string& where) {
  Config one;
  one.set(what, text, where);
  try {
    return one.get_int(what, 1, 1 << 30);
  } catch (const BadInput& e) {
    throw BadInput(std::string(e.what()) + " for " + what, where);
  }
}

// simplex(TOTAL, STEP[, DIMS]): every allocation of TOTAL over the dimensions in STEP multiples.
std::vector<std::string> simplex_values(const GeneratorCall& c) {
  if (c.args.size() < 2 || c.args.size() > 3)
    throw BadInput("simplex takes (TOTAL, STEP) or (TOTAL, STEP, DIMS)", c.where);
  const std::int64_t dims = c.args.size() == 3
                                ? int_of(c.args[2], "simplex dimensions", c.where)
                                : static_cast<std::int64_t>(split_list(c.context("topology.dims")).size());
  return simplex_allocations(parse_bandwidth(c.args[0], c.where), parse_bandwidth(c.args[1], c.where), dims,
                             c.where);
}

// permutations(PORTS) or permutations(SERVERS, PORTS): every non-isomorphic connected circulant.
std::vector<std::string> permutation_values(const GeneratorCall& c) {
  if (c.args.empty() || c.args.size() > 2)
    throw BadInput("permutations takes (PORTS) or (SERVERS, PORTS)", c.where);
  const std::int64_t n = c.args.size() == 2
                             ? int_of(c.args[0], "servers", c.where)
                             : int_of(c.context("topology.servers"), "topology.servers", c.where);
  const std::int64_t d = int_of(c.args.back(), "ports", c.where);
  if (n > 4096) throw BadInput("permutations: at most 4096 servers", c.where);
  std::vector<std::string> out;
  for (const auto& set : topology::enumerate_stride_sets(static_cast<std::uint32_t>(n),
                                                         static_cast<std::uint32_t>(d), true, 0, c.where)) {
    std::string v;
    for (std::size_t i = 0; i < set.size(); ++i) {
      if (i) v += ',';
      v += std::to_string(set[i]);
    }
    out.push_back(v);
  }
  if (out.empty())
    throw BadInput("no connected circulant graph on " + std::to_string(n) + " servers with " +
                       std::to_string(d) + " ports",
                   c.where);
  return out;
}

// strategy = all | all(max_tp=T, max_pp=P): every dp x tp x pp of the GPU count.
std::vector<std::string> strategy_values(const GeneratorCall& c) {
  std::int64_t max_tp = INT64_MAX, max_pp = INT64_MAX;
  for (const auto& arg : c.args) {
    const auto eq = arg.find('=');
    const std::string name = eq == std::string::npos ? arg : std::string(trim(arg.substr(0, eq)));
    if (eq == std::string::npos || (name != "max_tp" && name != "max_pp"))
      throw BadInput("strategy generator takes max_tp=N and max_pp=N", c.where);
    const std::int64_t x = int_of(std::string(trim(arg.substr(eq + 1))), name, c.where);
    (name == "max_tp" ? max_tp : max_pp) = x;
  }
  const std::int64_t servers = int_of(c.context("topology.servers"), "topology.servers", c.where);
  const std::int64_t gpus = int_of(c.context("server.gpus"), "server.gpus", c.where);
  std::vector<std::string> out;
  for (const auto& t : all_strategies(servers * gpus, max_tp, max_pp)) out.push_back(t.spelled());
  if (out.empty()) throw BadInput("no strategy satisfies the limits", c.where);
  return out;
}

}  // namespace

const std::vector<Generator>& generators() {
  static const std::vector<Generator> table = {
      {"simplex", nullptr, false, simplex_values,
       "simplex(TOTAL, STEP[, DIMS]): bandwidth allocations over the dimensions in STEP multiples"},
      {"permutations", nullptr, false, permutation_values,
       "permutations([SERVERS,] PORTS): every non-isomorphic connected circulant (ring strides)"},
      {"all", "strategy", true, strategy_values, "all[(max_tp=T, max_pp=P)]: every dp x tp x pp of the GPUs"},
  };
  return table;
}

const Generator* find_generator(const std::string& key, const std::string& value) {
  for (const auto& g : generators()) {
    if (g.only_key && key != g.only_key) continue;
    const std::string name = g.name;
    if ((g.bare && value == name) || (value.starts_with(name + "(") && value.back() == ')')) return &g;
  }
  return nullptr;
}

}  // namespace toposweep::sweep

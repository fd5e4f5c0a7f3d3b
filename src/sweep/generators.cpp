#include "toposweep/sweep/generators.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>

#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

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
  std::string out = "dp" + std::to_string(dp) + "tp" + std::to_string(tp) + "pp" + std::to_string(pp);
  for (const auto& [name, value] : knobs) out += "/" + name + "=" + value;
  return out;
}

std::vector<StrategyTriple> all_strategies(std::int64_t gpus, std::int64_t max_tp, std::int64_t max_pp) {
  std::vector<StrategyTriple> out;
  for (std::int64_t dp = 1; dp <= gpus; ++dp) {
    if (gpus % dp) continue;
    const std::int64_t rest = gpus / dp;
    for (std::int64_t tp = 1; tp <= rest; ++tp) {
      if (rest % tp) continue;
      const std::int64_t pp = rest / tp;
      if (tp <= max_tp && pp <= max_pp) out.push_back({dp, tp, pp, {}});
    }
  }
  return out;
}

const std::vector<std::string>& strategy_value_knobs() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const StrategyKnob& k : toposweep::kStrategyKnobs) {
      if (!k.sweep) continue;
      out.emplace_back(k.name);
      if (k.member == KnobMember{&StrategyKnobs::microbatches}) out.emplace_back("microbatch_size");
    }
    return out;
  }();
  return names;
}

namespace {

bool is_value_knob(const std::string& name) {
  const auto& knobs = strategy_value_knobs();
  return std::find(knobs.begin(), knobs.end(), name) != knobs.end();
}

// "microbatches, schedule, ...": the value knobs, without the microbatch size (which the strategy
// generator does not take) unless `with_size`.
std::string value_knob_list(bool with_size) {
  std::vector<std::string> names;
  for (const auto& name : strategy_value_knobs())
    if (with_size || name != "microbatch_size") names.push_back(name);
  return join(names, ", ");
}

}  // namespace

StrategyTriple parse_strategy(const std::string& text, const std::string& where) {
  static const std::regex pattern(R"(dp(\d{1,9})tp(\d{1,9})pp(\d{1,9}))");
  const std::string head = text.substr(0, text.find('/'));
  std::smatch m;
  if (!std::regex_match(head, m, pattern))
    throw BadInput("strategy '" + text + "' is not of the form dpNtpNppN[/knob=value...]", where);
  StrategyTriple t{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3]), {}};
  if (t.dp < 1 || t.tp < 1 || t.pp < 1) throw BadInput("strategy degrees must be at least 1", where);
  for (std::size_t at = head.size(); at < text.size();) {
    const std::size_t end = std::min(text.find('/', at + 1), text.size());
    const std::string token = text.substr(at + 1, end - at - 1);
    const auto eq = token.find('=');
    const std::string name = token.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == token.size() || !is_value_knob(name))
      throw BadInput("strategy '" + text + "': '" + token + "' is not knob=value with a knob of " +
                         value_knob_list(true),
                     where);
    for (const auto& [seen, value] : t.knobs)
      if (seen == name) throw BadInput("strategy '" + text + "' sets " + name + " twice", where);
    t.knobs.emplace_back(name, token.substr(eq + 1));
    at = end;
  }
  return t;
}

namespace {

std::int64_t int_of(const std::string& text, const std::string& what, const std::string& where,
                    std::int64_t lo = 1, std::int64_t hi = 1 << 30) {
  Config one;
  one.set(what, text, where);
  try {
    return one.get_int(what, lo, hi);
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

// The strategy generator's axes, outermost last: the sweep knobs in table order, the chunk count
// inside the schedule's axis and the ZeRO stage before DP overlap (the order values have always
// come in).
const std::vector<const StrategyKnob*>& axis_knobs() {
  static const std::vector<const StrategyKnob*> axes = [] {
    std::vector<const StrategyKnob*> out;
    for (const StrategyKnob& k : toposweep::kStrategyKnobs)
      if (k.sweep && k.member != KnobMember{&StrategyKnobs::virtual_stages} &&
          k.member != KnobMember{&StrategyKnobs::cp} && k.member != KnobMember{&StrategyKnobs::ep} &&
          k.member != KnobMember{&StrategyKnobs::etp})
        out.push_back(&k);
    const auto at = [&](KnobMember m) {
      return std::find_if(out.begin(), out.end(), [&](const StrategyKnob* k) { return k->member == m; });
    };
    std::rotate(at(&StrategyKnobs::dp_overlap), at(&StrategyKnobs::zero), at(&StrategyKnobs::zero) + 1);
    return out;
  }();
  return axes;
}

// strategy = all | all(max_tp=T, max_pp=P, KNOB=v1|v2|..., ...): every dp x tp x pp of the GPU
// count, times the listed values of each knob (the optimizer's knob lists, docs/sweep.md). Only
// canonical combinations: schedules only with pp > 1 (interleaved once per listed chunk count,
// and only when the listed microbatch count is a multiple of pp), sequence parallelism and TP
// overlap only with tp > 1, ZeRO and DP overlap only with dp > 1; elsewhere the knob is left to
// the base configuration. A knob not listed is not written.
std::vector<std::string> strategy_values(const GeneratorCall& c) {
  std::int64_t max_tp = INT64_MAX, max_pp = INT64_MAX;
  std::map<std::string, std::vector<std::string>> lists;
  for (const auto& arg : c.args) {
    const auto eq = arg.find('=');
    const std::string name = eq == std::string::npos ? arg : std::string(trim(arg.substr(0, eq)));
    const std::string value = eq == std::string::npos ? "" : std::string(trim(arg.substr(eq + 1)));
    const bool knob = is_value_knob(name);
    if (eq == std::string::npos || (name != "max_tp" && name != "max_pp" && !knob) ||
        name == "microbatch_size")
      throw BadInput(
          "strategy generator takes max_tp=N, max_pp=N and knob lists (e.g. recompute=none|selective) of " +
              value_knob_list(false),
          c.where);
    if (!knob) {
      (name == "max_tp" ? max_tp : max_pp) = int_of(value, name, c.where);
      continue;
    }
    if (lists.count(name)) throw BadInput("strategy generator: " + name + " given twice", c.where);
    auto& list = lists[name];
    for (const auto& v : split_list(value, '|')) {
      if (std::find(list.begin(), list.end(), v) != list.end())
        throw BadInput("strategy generator: " + name + " lists '" + v + "' twice", c.where);
      list.push_back(v);
    }
    if (list.empty()) throw BadInput("strategy generator: empty list for " + name, c.where);
  }
  const bool interleaved =
      lists.count("schedule") &&
      std::find(lists["schedule"].begin(), lists["schedule"].end(), "interleaved") != lists["schedule"].end();
  if (interleaved != (lists.count("virtual_stages") > 0))
    throw BadInput("strategy generator: schedule=...interleaved needs virtual_stages=N|M, and only it",
                   c.where);
  const std::int64_t servers = int_of(c.context("topology.servers"), "topology.servers", c.where);
  // server.gpus may be a per-server run list (8*4,4*4): the GPUs are its sum.
  std::int64_t total = 0;
  const std::string gpus_text = c.context("server.gpus");
  if (has_run_counts(gpus_text)) {
    for (const auto& v :
         expand_runs(parse_runs(gpus_text, c.where), static_cast<std::uint32_t>(servers), c.where))
      total += int_of(v, "server.gpus", c.where);
  } else {
    total = servers * int_of(gpus_text, "server.gpus", c.where);
  }
  // Context parallelism is a degree: each listed cp takes its share of the GPUs, the rest split
  // as dp x tp x pp (cp written first, when listed).
  std::vector<std::pair<std::int64_t, std::string>> cps{{1, ""}};
  if (lists.count("cp")) {
    cps.clear();
    for (const auto& v : lists["cp"]) cps.emplace_back(int_of(v, "cp", c.where), v);
  }
  // Expert parallelism splits the dp x cp ranks: each listed ep dividing them (written after cp,
  // when listed); a shape no listed ep divides is left out.
  std::vector<std::pair<std::int64_t, std::string>> eps{{1, ""}};
  if (lists.count("ep")) {
    eps.clear();
    for (const auto& v : lists["ep"]) eps.emplace_back(int_of(v, "ep", c.where), v);
  }
  // Expert tensor parallelism (written after ep, when listed, only with tp > 1: with one TP rank
  // every etp is the same): etp = e < tp folds the EP group over tp / e of the tp ranks too, so an
  // ep there needs to divide tp / e x dp x cp instead (Megatron-Core's parallel folding,
  // docs/models.md); an e that does not divide a shape's tp is left out there.
  const std::vector<std::pair<std::int64_t, std::string>> unlisted{{0, ""}};
  std::vector<std::pair<std::int64_t, std::string>> etps;
  const StrategyKnob& etp_row = *find_strategy_knob(KnobMember{&StrategyKnobs::etp});
  if (lists.count("etp"))
    for (const auto& v : lists["etp"])
      etps.emplace_back(int_of(v, "etp", c.where, etp_row.min, etp_row.max), v);
  std::vector<StrategyTriple> shapes;
  for (const auto& [cp, cp_text] : cps) {
    if (total % cp != 0) continue;
    for (auto t : all_strategies(total / cp, max_tp, max_pp)) {
      if (!cp_text.empty()) t.knobs.emplace_back("cp", cp_text);
      for (const auto& [ep, ep_text] : eps) {
        for (const auto& [etp, etp_text] : t.tp > 1 && !etps.empty() ? etps : unlisted) {
          if (etp > t.tp || (etp > 0 && t.tp % etp != 0)) continue;  // not a divisor of this shape's tp
          const std::int64_t folded = etp == 0 || etp == t.tp ? 1 : t.tp / etp;
          if ((folded * t.dp * cp) % ep != 0) continue;
          StrategyTriple e = t;
          if (!ep_text.empty()) e.knobs.emplace_back("ep", ep_text);
          if (!etp_text.empty()) e.knobs.emplace_back("etp", etp_text);
          shapes.push_back(std::move(e));
        }
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& t : shapes) {
    // The knobs that matter for this shape (their rows' scope), in a fixed order; each a list of
    // (name, value) choices. The schedule carries the chunk counts of interleaving.
    std::vector<std::vector<std::pair<std::string, std::string>>> axes;
    for (const StrategyKnob* k : axis_knobs()) {
      const std::string name(k->name);
      const bool matters = k->scope == KnobScope::Always || (k->scope == KnobScope::Pipeline && t.pp > 1) ||
                           (k->scope == KnobScope::TensorParallel && t.tp > 1) ||
                           (k->scope == KnobScope::DataParallel && t.dp > 1);
      if (!matters || !lists.count(name)) continue;
      auto& axis = axes.emplace_back();
      if (k->member != KnobMember{&StrategyKnobs::schedule}) {
        for (const auto& v : lists[name]) axis.emplace_back(name, v);
        continue;
      }
      for (const auto& v : lists[name]) {
        if (v != "interleaved") {
          axis.emplace_back(name, v);
          continue;
        }
        for (const auto& chunks : lists["virtual_stages"])
          axis.emplace_back(name, "interleaved/virtual_stages=" + chunks);
      }
    }
    std::vector<std::size_t> at(axes.size(), 0);
    while (true) {
      StrategyTriple v{t.dp, t.tp, t.pp, t.knobs};
      std::string microbatches;
      bool valid = true;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const auto& [name, value] = axes[a][at[a]];
        if (name == "microbatches") microbatches = value;
        if (name == "schedule" && value.starts_with("interleaved/")) {
          v.knobs.emplace_back("schedule", "interleaved");
          v.knobs.emplace_back("virtual_stages", value.substr(value.find('=') + 1));
          // Megatron's interleaving needs the microbatch count to be a multiple of pp.
          if (!microbatches.empty() && std::stoll(microbatches) % t.pp != 0) valid = false;
          continue;
        }
        v.knobs.emplace_back(name, value);
      }
      if (valid) out.push_back(v.spelled());
      std::size_t a = 0;
      for (; a < axes.size(); ++a) {
        if (++at[a] < axes[a].size()) break;
        at[a] = 0;
      }
      if (a == axes.size()) break;
    }
  }
  if (out.empty()) throw BadInput("no strategy satisfies the limits", c.where);
  return out;
}

}  // namespace

const std::vector<Generator>& generators() {
  static const std::string all_help =
      "all[(max_tp=T, max_pp=P, KNOB=v1|v2...)]: every dp x tp x pp of the GPUs times the knob lists (" +
      value_knob_list(false) + ")";
  static const std::vector<Generator> table = {
      {"simplex", nullptr, false, simplex_values,
       "simplex(TOTAL, STEP[, DIMS]): bandwidth allocations over the dimensions in STEP multiples"},
      {"permutations", nullptr, false, permutation_values,
       "permutations([SERVERS,] PORTS): every non-isomorphic connected circulant (ring strides)"},
      {"all", "strategy", true, strategy_values, all_help.c_str()},
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

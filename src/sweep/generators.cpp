#include "toposweep/sweep/generators.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <regex>

#include "toposweep/util/error.hpp"
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

}  // namespace toposweep::sweep

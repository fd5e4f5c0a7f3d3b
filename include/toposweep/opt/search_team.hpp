#pragma once
// The processes that share one exact strategy search (an MPI launch of `toposweep optimize`):
// what the search's rounds exchange, without the search depending on MPI. The command line
// provides the MPI implementation (cli/mpi_search_team.hpp); tests may provide their own.
#include <cstdint>
#include <vector>

namespace toposweep::opt {

// One simulated candidate: its position in the bound-sorted order, its iteration time (NaN when
// its plan does not fit in memory) and whether the scorer simulated it afresh (not memoised
// before the search started, e.g. as the baseline).
struct SearchOutcome {
  std::uint64_t position = 0;
  double time_s = 0;
  std::uint64_t fresh = 0;  // 0 or 1; 64 bits so the struct has no padding
};

class SearchTeam {
 public:
  virtual ~SearchTeam() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  // Collective: every rank's outcomes, concatenated in rank order, on every rank.
  virtual std::vector<SearchOutcome> all_gather(const std::vector<SearchOutcome>& mine) = 0;
  // Collective: the largest of the ranks' values, on every rank.
  virtual double all_max(double value) = 0;
};

}  // namespace toposweep::opt

#include "toposweep/cli/mpi_search_team.hpp"

#include <cstdlib>
#include <vector>

#include "toposweep/cli/mpi_session.hpp"
#include "toposweep/sweep/mpi.hpp"

namespace toposweep::cli {
namespace {

// Ranks in the launch, from the launchers' environment (before MPI is initialised).
int launched_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 1;
}

class MpiSearchTeam final : public opt::SearchTeam {
 public:
  MpiSearchTeam() {
    const MpiSession mpi;  // MPI_Init here, MPI_Finalize at exit (as the sweep)
    rank_ = static_cast<std::uint32_t>(mpi.rank());
    size_ = static_cast<std::uint32_t>(mpi.size());
  }
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }

  std::vector<opt::SearchOutcome> all_gather(const std::vector<opt::SearchOutcome>& mine) override {
    // Outcomes travel as 3 x 64-bit words (SearchOutcome has no padding).
    static_assert(sizeof(opt::SearchOutcome) == 3 * sizeof(std::uint64_t));
    constexpr int kWords = 3;
    const int count = static_cast<int>(mine.size()) * kWords;
    std::vector<int> counts(size_), offsets(size_);
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (std::uint32_t r = 0; r < size_; ++r) {
      offsets[r] = total;
      total += counts[r];
    }
    std::vector<opt::SearchOutcome> all(static_cast<std::size_t>(total / kWords));
    MPI_Allgatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), offsets.data(), MPI_UINT64_T,
                   MPI_COMM_WORLD);
    return all;
  }

  double all_max(double value) override {
    double out = value;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }

 private:
  std::uint32_t rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<opt::SearchTeam> mpi_search_team_if_launched() {
  if (launched_size() <= 1) return nullptr;
  return std::make_unique<MpiSearchTeam>();
}

}  // namespace toposweep::cli

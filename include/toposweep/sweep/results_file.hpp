#pragma once
// The HDF5 results file of a sweep (layout: docs/hdf5-schema.md). Written by one process (rank 0
// after gathering through the journal) into OUT.partial and renamed, so an existing file is never
// half-overwritten and the bytes of /points depend only on the points' values.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/sweep/frontier_groups.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

namespace h5 {
class ReaderFile;
}

// What /points holds: every point of the range, or only the frontier's rows (`--keep`).
enum class Keep { All, Frontier };
// "all" or "frontier": the `keep` root attribute and the --keep values.
std::string spell_keep(Keep keep);
// Parse a --keep value; BadInput naming `where` otherwise.
Keep parse_keep(const std::string& text, const std::string& where);

struct ResultsMeta {
  std::string config_text;  // the full effective configuration as INI text
  std::string slice;        // "K/N" for a job-array slice, "" otherwise
  std::uint64_t begin = 0;  // index range covered
  std::uint64_t end = 0;
  Keep keep = Keep::All;
  std::vector<frontier::Objective> objectives;
  // /frontier's attribute group_by: "model.name" (one frontier per model) or "none" (pooled).
  std::string frontier_by = kFrontierByModel;
  int compression = 1;  // deflate level of /points, 0 = none
  // Status counts (evaluated, infeasible, failed) of the whole range when `rows` does not hold
  // every point (a --keep frontier sweep passes only its frontier rows); empty: count `rows`.
  std::optional<std::array<std::uint64_t, 3>> status_counts;
};

// Write `rows` (ascending by index) and the frontier (point indices, ascending) to `path`
// atomically. With Keep::Frontier only the frontier rows go to /points. Throws RuntimeFailure.
void write_results_file(const std::string& path, const Space& space, const std::vector<PointRecord>& rows,
                        const std::vector<std::uint64_t>& frontier_indices, const ResultsMeta& meta);

// Field names of /points in order, for a space.
std::vector<std::string> point_field_names(const Space& space);

// Reads a results file. Opening something that is not a toposweep results file is BadInput, and
// so is a failed HDF5 call while reading (the file is not what it should be), naming the file.
class ResultsReader {
 public:
  explicit ResultsReader(const std::string& path, bool writable = false);
  ~ResultsReader();
  ResultsReader(const ResultsReader&) = delete;
  ResultsReader& operator=(const ResultsReader&) = delete;

  const std::string& path() const { return path_; }
  std::string root_string(const std::string& name) const;
  std::uint64_t root_u64(const std::string& name) const;
  bool has_root_attribute(const std::string& name) const;
  std::vector<std::string> point_fields() const;
  std::uint64_t rows() const;
  // Every row of /points (ascending by index, else BadInput) with the messages of /failures.
  std::vector<PointRecord> records() const;
  // The space as stored in /space (axes, values, per-sub-space layout) with the base
  // configuration from the `config` attribute: decodes this file's indices whatever this
  // toposweep version's generators or key registry would make of the configuration today.
  Space space() const;
  std::vector<std::uint64_t> frontier() const;
  std::string frontier_objectives() const;
  // How /frontier was grouped: its group_by attribute ("model.name" or "none"); files written
  // before the attribute existed hold one pooled frontier: "none".
  std::string frontier_group_by() const;
  // Replace /frontier (file opened writable).
  void write_frontier(const std::vector<std::uint64_t>& indices, const std::string& objectives,
                      const std::string& group_by);

 private:
  std::string path_;
  std::unique_ptr<h5::ReaderFile> file_;
};

}  // namespace toposweep::sweep

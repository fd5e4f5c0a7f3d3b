#pragma once
// Per-server value lists: `VALUE*COUNT,VALUE*COUNT,...` gives runs of consecutive servers
// (server 0 first), e.g. server.device = a100*2,v100*2 or server.gpus = 8*4,4*4. A single value
// without a count covers every server; inside a longer list every item needs its count.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep {

struct ServerRun {
  std::string value;
  std::uint32_t count = 0;  // 0: one value alone, covering every server
  bool operator==(const ServerRun&) const = default;
};

// Parses the list; BadInput naming `where` on an empty item, a count that is not a whole
// number >= 1, or an item without a count in a list of several.
std::vector<ServerRun> parse_runs(std::string_view text, const std::string& where);
// True when `text` is a run list with a count (contains '*').
bool has_run_counts(std::string_view text);
// The per-server values: each run's value repeated count times. Counts must sum to `servers`
// (BadInput naming `where` and the sums otherwise); a lone value is repeated `servers` times.
std::vector<std::string> expand_runs(const std::vector<ServerRun>& runs, std::uint32_t servers,
                                     const std::string& where);
// The distinct values in order of first appearance.
std::vector<std::string> distinct_run_values(const std::vector<ServerRun>& runs);

namespace checks {
// Every run's value passes `inner`; counts as parse_runs wants them.
KeyCheck runs(KeyCheck inner);
}  // namespace checks

}  // namespace toposweep

#include "toposweep/interop/config_keys.hpp"

#include <filesystem>

#include "toposweep/util/config_checks.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::interop {
namespace {

void check_trace_dir(const std::string& value, const std::string& where) {
  std::error_code ec;
  if (!value.empty() && !std::filesystem::is_directory(value, ec))
    throw BadInput("'" + value + "' is not a directory (of Chakra traces <prefix>.<rank>.et)", where);
}

}  // namespace

std::vector<KeySpec> config_keys() {
  return {
      {"model.chakra", "",
       "directory of Chakra execution traces (<prefix>.<rank>.et, as `toposweep export chakra` writes): the "
       "iteration played instead of planning model.name with the strategy.* keys",
       check_trace_dir},
      {"model.chakra_replicas", "1",
       "with model.chakra: play the directory's one rank trace (rank 0's) on this many data-parallel ranks, "
       "each collective over all of them (a trace cut from a data-parallel job); 1: one file per rank",
       checks::integer(1, 1 << 24)},
  };
}

}  // namespace toposweep::interop

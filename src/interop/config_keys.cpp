#include "toposweep/interop/config_keys.hpp"

#include <filesystem>

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
  };
}

}  // namespace toposweep::interop

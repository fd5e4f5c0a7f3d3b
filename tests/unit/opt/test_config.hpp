#pragma once
// A validated, defaulted Config with the keys of every module opt depends on (the CLI's
// registry lives above opt).
#include <string>
#include <utility>
#include <vector>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep::opt::testing {

inline Config make_config(const std::vector<std::pair<std::string, std::string>>& values) {
  KeyRegistry r;
  r.add(workload::config_keys());
  r.add(topology::config_keys());
  r.add(collective::config_keys());
  r.add(sim::config_keys());
  r.add(opt::config_keys());
  Config c;
  for (const auto& [k, v] : values) c.set(k, v, "test");
  validate_and_default(c, r);
  return c;
}

}  // namespace toposweep::opt::testing

#pragma once
// Test helper: a validated, defaulted point configuration from key/value pairs, with the keys
// of every module the point evaluator reads.
#include <initializer_list>
#include <utility>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/point/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep::testing {

inline Config make_point_config(std::initializer_list<std::pair<const char*, const char*>> settings) {
  KeyRegistry reg;
  reg.add(util::config_keys());
  reg.add(workload::config_keys());
  reg.add(topology::config_keys());
  reg.add(collective::config_keys());
  reg.add(sim::config_keys());
  reg.add(opt::config_keys());
  reg.add(point::config_keys());
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v, "test");
  validate_and_default(c, reg);
  return c;
}

}  // namespace toposweep::testing

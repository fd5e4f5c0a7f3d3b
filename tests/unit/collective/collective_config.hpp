#pragma once
// The topology and collective keys' defaults under `kv` (origin "test"), validated: the Config the
// collective tests build networks and options from.
#include <map>
#include <string>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep::test {

inline Config collective_config(const std::map<std::string, std::string>& kv) {
  KeyRegistry registry(topology::config_keys());
  registry.add(collective::config_keys());
  Config c;
  for (const auto& [k, v] : kv) c.set(k, v, "test");
  validate_and_default(c, registry);
  return c;
}

}  // namespace toposweep::test

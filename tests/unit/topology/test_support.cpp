#include "test_support.hpp"

#include "toposweep/topology/config_keys.hpp"

namespace toposweep::test {

Config topology_config(std::initializer_list<std::pair<const char*, const char*>> kv) {
  Config c;
  for (const auto& [k, v] : kv) c.set(k, v, "test");
  validate_and_default(c, KeyRegistry(topology::config_keys()));
  return c;
}

}  // namespace toposweep::test

#pragma once
// The registry of configuration keys: names, defaults and one-line help. Each module lists its
// own keys (`<module>::config_keys()` in src/<module>/config_keys.cpp); the CLI concatenates them.
// An unknown key is a bad-input error with a spelling suggestion.
#include <optional>
#include <string>
#include <vector>

namespace toposweep {

struct KeySpec {
  std::string name;           // "topology.degree"; a name ending in ".*" accepts any suffix
  std::string default_value;  // effective value when unset; empty = no default (optional key)
  std::string help;           // one line, with the unit expected
};

class KeyRegistry {
 public:
  KeyRegistry() = default;
  explicit KeyRegistry(std::vector<KeySpec> specs);
  void add(const std::vector<KeySpec>& specs);

  const KeySpec* find(const std::string& key) const;  // exact or wildcard match
  bool known(const std::string& key) const { return find(key) != nullptr; }
  // Closest registered name within a small edit distance, for "did you mean".
  std::optional<std::string> suggest(const std::string& key) const;
  const std::vector<KeySpec>& specs() const { return specs_; }

 private:
  std::vector<KeySpec> specs_;
};

namespace util {
std::vector<KeySpec> config_keys();  // keys of the util module itself (none yet)
}

}  // namespace toposweep

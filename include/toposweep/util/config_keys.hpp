#pragma once
// The registry of configuration keys: names, defaults and one-line help. Each module lists its
// own keys (`<module>::config_keys()` in src/<module>/config_keys.cpp); the CLI concatenates them.
// An unknown key is a bad-input error with a spelling suggestion; a key may carry a check that
// parses its value on its own (units, ranges, names, files), so malformed input is found before
// anything runs, wherever the value was written (a config file, --set, a sweep axis).
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace toposweep {

class Config;

// Parses a key's value the way its reader will and throws BadInput naming `where` ("key K at
// FILE:LINE") when it is malformed. Context-free: checks that need other keys (degrees that must
// divide, lists whose length follows another key) belong to the reader.
using KeyCheck = std::function<void(const std::string& value, const std::string& where)>;

struct KeySpec {
  std::string name;           // "topology.degree"; a name ending in ".*" accepts any suffix
  std::string default_value;  // effective value when unset; empty = no default (optional key)
  std::string help;           // one line, with the unit expected
  KeyCheck check = nullptr;   // null: any text
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
  // Run the key's check on config's value of `key` (nothing when the key has none).
  void check(const Config& config, const std::string& key) const;

 private:
  std::vector<KeySpec> specs_;
};

namespace util {
std::vector<KeySpec> config_keys();  // keys of the util module itself (none yet)
}

}  // namespace toposweep

#include "toposweep/util/config_keys.hpp"

#include "toposweep/util/config.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

KeyRegistry::KeyRegistry(std::vector<KeySpec> specs) : specs_(std::move(specs)) {}

void KeyRegistry::add(const std::vector<KeySpec>& specs) {
  specs_.insert(specs_.end(), specs.begin(), specs.end());
}

const KeySpec* KeyRegistry::find(const std::string& key) const {
  for (const auto& s : specs_) {
    if (s.name == key) return &s;
    if (s.name.size() >= 2 && s.name.ends_with(".*")) {
      const std::string prefix = s.name.substr(0, s.name.size() - 1);  // keeps the dot
      if (key.size() > prefix.size() && key.starts_with(prefix)) return &s;
    }
  }
  return nullptr;
}

std::optional<std::string> KeyRegistry::suggest(const std::string& key) const {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& s : specs_) {
    if (s.name.ends_with(".*")) continue;
    std::size_t d = edit_distance(to_lower(key), to_lower(s.name));
    if (d <= std::max<std::size_t>(2, s.name.size() / 4) && (!best || d < best_d)) {
      best = s.name;
      best_d = d;
    }
  }
  return best;
}

void KeyRegistry::check(const Config& config, const std::string& key) const {
  const KeySpec* spec = find(key);
  if (spec && spec->check) spec->check(config.get_string(key), config.where(key));
}

namespace util {
std::vector<KeySpec> config_keys() {
  return {};
}
}  // namespace util

}  // namespace toposweep

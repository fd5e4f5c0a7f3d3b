#include "toposweep/util/key_origins.hpp"

namespace toposweep {

KeyOrigins KeyOrigins::of(const Config& config) {
  KeyOrigins o;
  for (const auto& [key, e] : config.entries())
    if (!e.origin.empty()) o.origin_.emplace(key, e.origin);
  return o;
}

KeyOrigins KeyOrigins::of(const Config& config, std::initializer_list<std::string_view> keys) {
  KeyOrigins o;
  for (std::string_view key : keys)
    if (const auto it = config.entries().find(key);
        it != config.entries().end() && !it->second.origin.empty())
      o.origin_.emplace(it->first, it->second.origin);
  return o;
}

void KeyOrigins::redirect(const std::string& key, const std::string& alias) {
  alias_[key] = alias;
}

std::string KeyOrigins::where(const std::string& name) const {
  const auto a = alias_.find(name);
  const std::string& key = a == alias_.end() ? name : a->second;
  const auto it = origin_.find(key);
  return it == origin_.end() ? "key " + key : "key " + key + " at " + it->second;
}

std::string KeyOrigins::located(const BadInput& e) const {
  std::string key = e.where();
  if (key.starts_with("key ")) key = key.substr(4);
  const bool known = origin_.count(key) != 0 || alias_.count(key) != 0;
  return known ? where(key) : e.where();
}

void KeyOrigins::rethrow(const BadInput& e) const {
  const std::string at = located(e);
  if (dynamic_cast<const InvalidDesign*>(&e)) throw InvalidDesign(e.what(), at);
  throw BadInput(e.what(), at);
}

}  // namespace toposweep

#include "toposweep/util/config.hpp"

#include <fstream>
#include <sstream>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

Config::Config(const Config& other) : entries_(other.entries_), reads_(other.reads_) {
  rebuild_index();
}

Config& Config::operator=(const Config& other) {
  if (this != &other) {
    entries_ = other.entries_;
    reads_ = other.reads_;
    rebuild_index();
  }
  return *this;
}

void Config::rebuild_index() {
  index_.clear();
  index_.reserve(entries_.size());
  for (const auto& [k, e] : entries_) index_.emplace(std::string_view(k), &e);
}

const ConfigEntry* Config::find(std::string_view key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : it->second;
}

void Config::set(const std::string& key, std::string value, std::string origin) {
  auto [it, fresh] = entries_.insert_or_assign(key, ConfigEntry{std::move(value), std::move(origin)});
  if (fresh) index_.emplace(std::string_view(it->first), &it->second);
}

void Config::erase(const std::string& key) {
  index_.erase(std::string_view(key));
  entries_.erase(key);
}

const ConfigEntry* Config::entry(std::string_view key) const {
  note_read(key);
  return find(key);
}

bool Config::user_set(std::string_view key) const {
  const ConfigEntry* e = entry(key);
  return e && e->origin != "default";
}

bool Config::has(std::string_view key) const {
  note_read(key);
  return find(key) != nullptr;
}

std::string Config::where(std::string_view key) const {
  const ConfigEntry* e = find(key);
  if (!e || e->origin.empty()) return "key " + std::string(key);
  return "key " + std::string(key) + " at " + e->origin;
}

const std::string& Config::get_string(std::string_view key) const {
  note_read(key);
  const ConfigEntry* e = find(key);
  if (!e) throw BadInput("missing required key '" + std::string(key) + "'", "key " + std::string(key));
  return e->value;
}

std::int64_t Config::get_int(std::string_view key, std::int64_t min, std::int64_t max) const {
  const std::string& text = get_string(key);
  std::int64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw BadInput("'" + text + "' is not an integer", where(key));
  if (v < min || v > max) {
    std::string range = min == INT64_MIN   ? "at most " + std::to_string(max)
                        : max == INT64_MAX ? "at least " + std::to_string(min)
                                           : "between " + std::to_string(min) + " and " + std::to_string(max);
    throw BadInput("value " + text + " is out of range (must be " + range + ")", where(key));
  }
  return v;
}

double Config::get_double(std::string_view key) const {
  const std::string& text = get_string(key);
  auto v = parse_plain_number(text);
  if (!v) throw BadInput("'" + text + "' is not a number", where(key));
  return *v;
}

bool Config::get_bool(std::string_view key) const {
  const std::string t = to_lower(get_string(key));
  if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
  if (t == "false" || t == "no" || t == "off" || t == "0") return false;
  throw BadInput("'" + get_string(key) + "' is not a boolean (true/false)", where(key));
}

double Config::get_quantity(std::string_view key, Quantity q, bool positive) const {
  double v = parse_quantity(q, get_string(key), where(key));
  if (positive && v <= 0) throw BadInput(std::string(quantity_name(q)) + " must be positive", where(key));
  return v;
}

std::vector<std::string> Config::get_list(std::string_view key) const {
  return split_list(get_string(key));
}

std::vector<std::int64_t> Config::get_int_list(std::string_view key, std::int64_t min,
                                               std::int64_t max) const {
  std::vector<std::int64_t> out;
  for (const auto& item : get_list(key)) {
    Config one;
    one.set(std::string(key), item, find(key)->origin);
    out.push_back(one.get_int(key, min, max));
  }
  return out;
}

std::vector<double> Config::get_quantity_list(std::string_view key, Quantity q, bool positive) const {
  std::vector<double> out;
  for (const auto& item : get_list(key)) {
    double v = parse_quantity(q, item, where(key));
    if (positive && v <= 0) throw BadInput(std::string(quantity_name(q)) + " must be positive", where(key));
    out.push_back(v);
  }
  return out;
}

std::map<std::string, ConfigEntry> Config::with_prefix(const std::string& prefix) const {
  std::map<std::string, ConfigEntry> out;
  for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
}

std::string Config::to_ini(bool with_origins) const {
  // Group by section = everything before the last dot, so "space.a.topology.degree" keeps
  // its full section name and reads back identically.
  std::map<std::string, std::vector<std::pair<std::string, const ConfigEntry*>>> sections;
  for (const auto& [key, e] : entries_) {
    auto dot = key.rfind('.');
    std::string sec = dot == std::string::npos ? "" : key.substr(0, dot);
    std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
    sections[sec].emplace_back(name, &e);
  }
  std::ostringstream out;
  bool first = true;
  for (const auto& [sec, items] : sections) {
    if (!sec.empty()) {
      if (!first) out << "\n";
      out << "[" << sec << "]\n";
    }
    first = false;
    for (const auto& [name, e] : items) {
      out << name << " = " << e->value;
      if (with_origins && !e->origin.empty()) out << "  ; " << e->origin;
      out << "\n";
    }
  }
  return out.str();
}

void load_ini_text(Config& config, const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  std::string section;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string origin = name + ":" + std::to_string(lineno);
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#' || t.front() == ';') continue;
    if (t.front() == '[') {
      if (t.back() != ']') throw BadInput("section header without closing ']'", origin);
      section = std::string(trim(t.substr(1, t.size() - 2)));
      if (section.empty()) throw BadInput("empty section name", origin);
      continue;
    }
    auto eq = t.find('=');
    if (eq == std::string_view::npos) throw BadInput("expected 'key = value'", origin);
    std::string key(trim(t.substr(0, eq)));
    std::string_view value = trim(t.substr(eq + 1));
    // Inline comments: " # ..." or " ; ..." after the value.
    for (const char* marker : {" #", " ;", "\t#", "\t;"}) {
      auto c = value.find(marker);
      if (c != std::string_view::npos) value = trim(value.substr(0, c));
    }
    if (key.empty()) throw BadInput("empty key", origin);
    config.set(section.empty() ? key : section + "." + key, std::string(value), origin);
  }
}

void load_ini_file(Config& config, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read config file '" + path + "'", path);
  std::ostringstream buf;
  buf << in.rdbuf();
  load_ini_text(config, buf.str(), path);
}

void apply_set(Config& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || trim(std::string_view(assignment).substr(0, eq)).empty())
    throw BadInput("--set expects KEY=VALUE, got '" + assignment + "'", "--set " + assignment);
  std::string key(trim(std::string_view(assignment).substr(0, eq)));
  config.set(key, std::string(trim(std::string_view(assignment).substr(eq + 1))), "--set");
}

void validate_and_default(Config& config, const KeyRegistry& registry) {
  for (const auto& [key, e] : config.entries()) {
    if (registry.known(key)) continue;
    std::string msg = "unknown key '" + key + "'";
    if (auto s = registry.suggest(key)) msg += "; did you mean '" + *s + "'?";
    throw BadInput(msg, e.origin.empty() ? "key " + key : e.origin);
  }
  for (const auto& spec : registry.specs()) {
    if (spec.default_value.empty() || spec.name.ends_with(".*") || config.has(spec.name)) continue;
    config.set(spec.name, spec.default_value, "default");
  }
  // Every value parses, whether or not the command at hand reads it: a malformed value is bad
  // input wherever it was written.
  for (const auto& [key, e] : config.entries()) registry.check(config, key);
}

}  // namespace toposweep

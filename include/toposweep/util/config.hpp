#pragma once
// Effective configuration: flat `section.key = value` strings with their origin, read from INI
// files (`[topology]` + `degree = 4` is `topology.degree`) and `--set KEY=VALUE`. Values stay
// text until a typed getter parses them, so errors can name the key and where it was set.
// Units are converted here, at the edge, into SI doubles.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toposweep/util/config_keys.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep {

struct ConfigEntry {
  std::string value;
  std::string origin;  // "path/file.ini:12", "--set", "default", or a caller's label
};

class Config {
 public:
  Config() = default;
  Config(const Config& other);
  Config& operator=(const Config& other);
  Config(Config&&) noexcept = default;
  Config& operator=(Config&&) noexcept = default;

  void set(const std::string& key, std::string value, std::string origin);
  void erase(const std::string& key);
  bool has(std::string_view key) const;
  // The entry of `key` (a read), or nullptr when unset.
  const ConfigEntry* entry(std::string_view key) const;
  // Set in a file, with --set or by a sweep axis; not a registry default.
  bool user_set(std::string_view key) const;
  const std::map<std::string, ConfigEntry, std::less<>>& entries() const { return entries_; }

  // "key topology.degree (set at file.ini:4)"-style location for error messages.
  std::string where(std::string_view key) const;

  // Typed getters. A missing key is BadInput ("missing required key"); a malformed or
  // out-of-range value is BadInput naming the key and where it was set.
  const std::string& get_string(std::string_view key) const;
  std::int64_t get_int(std::string_view key, std::int64_t min = INT64_MIN,
                       std::int64_t max = INT64_MAX) const;
  double get_double(std::string_view key) const;  // plain number, finite
  bool get_bool(std::string_view key) const;      // true/false/yes/no/on/off/1/0
  // Quantity with a unit; `positive` rejects zero.
  double get_quantity(std::string_view key, Quantity q, bool positive = true) const;
  double get_bandwidth(std::string_view key) const { return get_quantity(key, Quantity::Bandwidth); }
  double get_size(std::string_view key) const { return get_quantity(key, Quantity::Size); }
  // Times may be zero (e.g. zero latency).
  double get_time(std::string_view key) const { return get_quantity(key, Quantity::Time, false); }
  std::vector<std::string> get_list(std::string_view key) const;  // comma separated
  std::vector<std::int64_t> get_int_list(std::string_view key, std::int64_t min = INT64_MIN,
                                         std::int64_t max = INT64_MAX) const;
  std::vector<double> get_quantity_list(std::string_view key, Quantity q, bool positive = true) const;

  // All keys with a given prefix ("space.big."), prefix stripped.
  std::map<std::string, ConfigEntry> with_prefix(const std::string& prefix) const;

  // The effective configuration as INI text (sections by first dotted component), sorted,
  // each value annotated with its origin in a comment when `with_origins`.
  std::string to_ini(bool with_origins = false) const;

  // From now on, record in `log` every key asked for by has() or a typed getter, so a caller can
  // tell which keys a command or a point actually used (copies of this Config share the log;
  // null stops recording). Off by default: the hot paths pay one null test per read.
  void record_reads(std::shared_ptr<std::set<std::string>> log) { reads_ = std::move(log); }

 private:
  void note_read(std::string_view key) const {
    if (reads_) reads_->emplace(key);
  }
  const ConfigEntry* find(std::string_view key) const;
  void rebuild_index();
  // Sorted for printing and prefix scans; the hash index (views of the map's own keys, which
  // stay put) makes the per-point reads of a sweep one hash each instead of a tree walk.
  std::map<std::string, ConfigEntry, std::less<>> entries_;
  std::unordered_map<std::string_view, const ConfigEntry*> index_;
  std::shared_ptr<std::set<std::string>> reads_;
};

// Read an INI file into `config` (later files and later lines win). Throws BadInput with
// file:line for a missing/unreadable file or a syntax error.
void load_ini_file(Config& config, const std::string& path);
// Parse INI text; `name` is used in origins and errors.
void load_ini_text(Config& config, const std::string& text, const std::string& name);
// Apply one "KEY=VALUE" assignment from --set.
void apply_set(Config& config, const std::string& assignment);

// Reject keys the registry does not know (BadInput naming key, origin and a suggestion), fill
// in registry defaults for unset keys with origin "default", then run every key's check.
void validate_and_default(Config& config, const KeyRegistry& registry);

}  // namespace toposweep

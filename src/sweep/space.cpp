#include "toposweep/sweep/space.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "toposweep/sweep/generators.hpp"
#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::sweep {

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

bool is_list_valued_key(const std::string& key) {
  // Values of these keys are themselves comma lists, so their alternatives are split on '|'.
  static const char* const keys[] = {"topology.dims", "topology.dim_bandwidth", "topology.dim_latency",
                                     "topology.strides"};
  for (const char* k : keys)
    if (key == k) return true;
  return false;
}

// Per-server run lists (server.device = a100*4,v100*4): with a '*' count the comma is inside one
// value, so alternatives are split on '|' ("server.gpus = 4, 8" still means two values).
bool is_server_run_key(const std::string& key) {
  return key == "server.device" || key == "server.gpus" || key == "server.intra_bandwidth";
}

std::vector<std::string> split_alternatives(const std::string& key, const std::string& text) {
  const bool runs = is_server_run_key(key) && text.find('*') != std::string::npos;
  const bool bars = is_list_valued_key(key) || runs || text.find('|') != std::string::npos;
  return split_list(text, bars ? '|' : ',');
}

std::vector<std::string> keys_written_by(const Axis& axis, const std::vector<std::uint32_t>* positions) {
  switch (axis.kind) {
    case AxisKind::Strategy: {
      // The degrees, and every knob some value of the axis sets.
      std::vector<std::string> keys{"strategy.dp", "strategy.tp", "strategy.pp"};
      const auto add = [&](const std::string& v) {
        for (const auto& [name, value] : parse_strategy(v, axis.key).knobs)
          if (std::find(keys.begin(), keys.end(), "strategy." + name) == keys.end())
            keys.push_back("strategy." + name);
      };
      if (positions)
        for (auto p : *positions) add(axis.values.at(p));
      else
        for (const auto& v : axis.values) add(v);
      return keys;
    }
    case AxisKind::Optimize:
      return {"point.optimize"};
    case AxisKind::Plain:
      break;
  }
  return {axis.key};
}

std::vector<std::pair<std::string, std::string>> axis_assignments(const Axis& axis, std::size_t value,
                                                                  const std::string& where) {
  const std::string& v = axis.values.at(value);
  switch (axis.kind) {
    case AxisKind::Strategy: {
      const StrategyTriple t = parse_strategy(v, where);
      std::vector<std::pair<std::string, std::string>> out{{"strategy.dp", std::to_string(t.dp)},
                                                           {"strategy.tp", std::to_string(t.tp)},
                                                           {"strategy.pp", std::to_string(t.pp)}};
      for (const auto& [name, value] : t.knobs) out.emplace_back("strategy." + name, value);
      return out;
    }
    case AxisKind::Optimize:
      return {{"point.optimize", v}};
    case AxisKind::Plain:
      break;
  }
  return {{axis.key, v}};
}

Space::Space(Config base, std::vector<Axis> axes, std::vector<SubSpace> subspaces)
    : base_(std::move(base)), axes_(std::move(axes)), subspaces_(std::move(subspaces)) {
  std::uint64_t offset = 0;
  for (auto& s : subspaces_) {
    s.offset = offset;
    std::uint64_t size = 1;
    for (const auto& a : s.axes) {
      const std::uint64_t r = a.positions.size();
      if (r == 0 || size > UINT64_MAX / r)
        throw BadInput("sub-space '" + s.name + "' has more than 2^64-1 points", "section space." + s.name);
      size *= r;
    }
    s.size = size;
    if (offset > UINT64_MAX - size) throw BadInput("the space has more than 2^64-1 points", "space sections");
    offset += size;
  }
  size_ = offset;

  assignments_.resize(axes_.size());
  std::set<std::string> written_anywhere;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    for (std::size_t v = 0; v < axes_[i].values.size(); ++v)
      assignments_[i].push_back(axis_assignments(axes_[i], v, "space axis " + axes_[i].key));
    for (auto& k : keys_written_by(axes_[i])) written_anywhere.insert(std::move(k));
  }
  for (const auto& s : subspaces_) {
    // One key, one writer: two axes of a sub-space setting the same key would make the point
    // depend on the order they are applied in.
    std::map<std::string, std::string> writer;
    auto& written = written_.emplace_back();
    for (const auto& a : s.axes) written.push_back(keys_written_by(axes_.at(a.axis), &a.positions));
    for (std::size_t j = 0; j < s.axes.size(); ++j)
      for (const auto& k : written[j]) {
        const auto& a = s.axes[j];
        const auto [it, fresh] = writer.emplace(k, axes_[a.axis].key);
        if (!fresh)
          throw BadInput("sub-space '" + s.name + "' sets " + k + " twice: by its '" + it->second +
                             "' axis and by its '" + axes_[a.axis].key + "' axis; keep one",
                         "section space." + s.name);
      }
    std::vector<std::string> restore;
    for (const auto& k : written_anywhere)
      if (!writer.count(k)) restore.push_back(k);
    restore_.push_back(std::move(restore));
  }
}

PointCoordinates Space::decode(std::uint64_t index) const {
  if (index >= size_) throw RuntimeFailure("point index " + std::to_string(index) + " outside the space");
  // Sub-spaces are few; the last one whose offset is <= index holds the point.
  auto it = std::upper_bound(subspaces_.begin(), subspaces_.end(), index,
                             [](std::uint64_t i, const SubSpace& s) { return i < s.offset; });
  --it;
  PointCoordinates c;
  c.subspace = static_cast<std::uint32_t>(it - subspaces_.begin());
  c.axis_value.assign(axes_.size(), kAbsentAxis);
  std::uint64_t local = index - it->offset;
  for (auto a = it->axes.rbegin(); a != it->axes.rend(); ++a) {
    const std::uint64_t r = a->positions.size();
    c.axis_value[a->axis] = a->positions[local % r];
    local /= r;
  }
  return c;
}

std::uint64_t Space::encode(const PointCoordinates& c) const {
  const SubSpace& s = subspaces_.at(c.subspace);
  std::uint64_t local = 0;
  for (const auto& a : s.axes) {
    const auto pos = std::find(a.positions.begin(), a.positions.end(), c.axis_value.at(a.axis));
    if (pos == a.positions.end()) throw RuntimeFailure("coordinates not in sub-space " + s.name);
    local = local * a.positions.size() + static_cast<std::uint64_t>(pos - a.positions.begin());
  }
  return s.offset + local;
}

Config Space::point_config(std::uint64_t index) const {
  Config cfg = base_;
  apply_point(index, cfg);
  return cfg;
}

void Space::apply_point(std::uint64_t index, Config& cfg) const {
  const PointCoordinates c = decode(index);
  const auto restore = [&](const std::string& key) {
    auto it = base_.entries().find(key);
    if (it == base_.entries().end())
      cfg.erase(key);
    else
      cfg.set(key, it->second.value, it->second.origin);
  };
  for (const auto& key : restore_[c.subspace]) restore(key);
  const SubSpace& s = subspaces_[c.subspace];
  for (std::size_t j = 0; j < s.axes.size(); ++j) {
    const auto& a = s.axes[j];
    const std::string& origin = a.origin.empty() ? "space." + s.name : a.origin;
    const auto& set = assignments_[a.axis][c.axis_value[a.axis]];
    if (written_[c.subspace][j].size() > set.size())
      for (const auto& key : written_[c.subspace][j])
        if (std::none_of(set.begin(), set.end(), [&](const auto& kv) { return kv.first == key; }))
          restore(key);
    for (const auto& [key, value] : set) cfg.set(key, value, origin);
  }
}

std::string Space::describe(std::uint64_t index) const {
  const PointCoordinates c = decode(index);
  std::string out = "[" + subspaces_[c.subspace].name + "]";
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (c.axis_value[i] != kAbsentAxis) out += " " + axes_[i].key + "=" + axes_[i].values[c.axis_value[i]];
  return out;
}

std::string Space::canonical_text() const {
  std::ostringstream out;
  out << "toposweep-space-v1\n";
  for (const auto& s : subspaces_) {
    out << "subspace " << s.name << "\n";
    for (const auto& a : s.axes) {
      out << "  axis " << axes_[a.axis].key << " =";
      for (auto p : a.positions) out << " [" << axes_[a.axis].values[p] << "]";
      out << "\n";
    }
  }
  Config point_base;
  for (const auto& [k, e] : base_.entries())
    if (!k.starts_with("sweep.")) point_base.set(k, e.value, "");
  out << "base\n" << point_base.to_ini(false);
  return out.str();
}

std::uint64_t Space::fingerprint() const {
  return fnv1a64(canonical_text());
}

namespace {

struct RawAxis {
  std::string key;
  std::string value;
  std::string where;   // "key space.a.topology.degree at space.ini:12", for errors about the line
  std::string origin;  // "space.ini:12, sub-space a", what the values carry into a point
};

class SubSpaceBuilder {
 public:
  SubSpaceBuilder(std::string name, std::vector<RawAxis> raw, const Config& base)
      : name_(std::move(name)), raw_(std::move(raw)), base_(base) {}

  // Returns key -> (kind, values) for this sub-space.
  std::map<std::string, std::pair<AxisKind, std::vector<std::string>>> build() {
    std::map<std::string, std::pair<AxisKind, std::vector<std::string>>> out;
    // Plain lists first: generators read single-valued keys of the sub-space as context.
    for (const auto& r : raw_) {
      if (is_generated(r)) continue;
      out[r.key] = {kind_of(r.key), checked_list(r)};
    }
    for (const auto& r : raw_)
      if (is_generated(r)) out[r.key] = {kind_of(r.key), generate(r, out)};
    return out;
  }

 private:
  static AxisKind kind_of(const std::string& key) {
    if (key == "strategy") return AxisKind::Strategy;
    if (key == "optimize") return AxisKind::Optimize;
    return AxisKind::Plain;
  }
  static bool is_generated(const RawAxis& r) {
    return find_generator(r.key, std::string(trim(r.value))) != nullptr;
  }

  std::vector<std::string> checked_list(const RawAxis& r) const {
    auto values = split_alternatives(r.key, r.value);
    if (values.empty()) throw BadInput("empty list of values", r.where);
    std::set<std::string> seen;
    for (const auto& v : values) {
      if (v.empty()) throw BadInput("empty value in the list", r.where);
      if (!seen.insert(v).second) throw BadInput("value '" + v + "' is listed twice", r.where);
      if (r.key == "strategy") parse_strategy(v, r.where);
    }
    return values;
  }

  // A single value of `key` from the sub-space (if it has exactly one) or the base config.
  std::string context(const std::string& key,
                      const std::map<std::string, std::pair<AxisKind, std::vector<std::string>>>& plain,
                      const std::string& where) const {
    if (auto it = plain.find(key); it != plain.end()) {
      if (it->second.second.size() != 1)
        throw BadInput("this generator needs a single value of " + key + " in the sub-space, not a list",
                       where);
      return it->second.second.front();
    }
    if (!base_.has(key) || base_.get_string(key).empty())
      throw BadInput("this generator needs " + key + " (set it in the sub-space or the base config)", where);
    return base_.get_string(key);
  }

  std::vector<std::string> generate(
      const RawAxis& r,
      const std::map<std::string, std::pair<AxisKind, std::vector<std::string>>>& plain) const {
    const std::string v(trim(r.value));
    GeneratorCall call;
    call.where = r.where;
    const auto open = v.find('(');
    if (open != std::string::npos) call.args = split_list(v.substr(open + 1, v.size() - open - 2));
    call.context = [&](const std::string& key) { return context(key, plain, r.where); };
    return find_generator(r.key, v)->values(call);
  }

  std::string name_;
  std::vector<RawAxis> raw_;
  const Config& base_;
};

}  // namespace

Space parse_space(const Config& config, const KeyRegistry& registry) {
  static const std::regex name_pattern(R"([A-Za-z0-9_\-]+)");
  Config base;
  std::map<std::string, std::vector<RawAxis>> raw;  // sub-space name -> its keys (sorted by name)
  for (const auto& [key, e] : config.entries()) {
    if (!key.starts_with("space.")) {
      base.set(key, e.value, e.origin);
      continue;
    }
    const std::string rest = key.substr(6);
    const auto dot = rest.find('.');
    const std::string where = "key " + key + (e.origin.empty() ? "" : " at " + e.origin);
    if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size())
      throw BadInput("a sub-space key must be written [space.NAME] KEY = VALUES", where);
    const std::string name = rest.substr(0, dot), inner = rest.substr(dot + 1);
    if (!std::regex_match(name, name_pattern))
      throw BadInput("sub-space name '" + name + "' may hold only letters, digits, '_' and '-'", where);
    const bool special = inner == "strategy" || inner == "optimize";
    if (inner.starts_with("space.") || inner.starts_with("sweep."))
      throw BadInput("'" + inner + "' cannot be swept", where);
    if (!special && !registry.known(inner)) {
      std::string msg = "unknown key '" + inner + "' in sub-space '" + name + "'";
      if (auto s = registry.suggest(inner)) msg += " (did you mean '" + *s + "'?)";
      throw BadInput(msg, where);
    }
    if (special && inner == "optimize" && !registry.known("point.optimize"))
      throw BadInput("the optimize axis is not wired to an optimizer in this build (no key point.optimize)",
                     where);
    raw[name].push_back({inner, e.value, where,
                         (e.origin.empty() ? std::string("space") : e.origin) + ", sub-space " + name});
  }

  if (raw.empty()) {
    SubSpace only;
    only.name = "base";
    return Space(std::move(base), {}, {only});
  }

  // Build each sub-space's value lists, then the global axes (sorted by key) as unions.
  std::vector<std::pair<std::string, std::map<std::string, std::pair<AxisKind, std::vector<std::string>>>>>
      built;
  std::map<std::string, Axis> axes_by_key;
  for (auto& [name, keys] : raw) {
    SubSpaceBuilder b(name, keys, base);
    built.emplace_back(name, b.build());
    for (const auto& [key, kv] : built.back().second) {
      Axis& a = axes_by_key[key];
      a.key = key;
      a.kind = kv.first;
      for (const auto& v : kv.second)
        if (std::find(a.values.begin(), a.values.end(), v) == a.values.end()) a.values.push_back(v);
    }
  }
  // Every value of every axis parses as its key's reader will parse it, before any point runs.
  for (const auto& [name, lists] : built) {
    for (const auto& r : raw.at(name)) {
      const auto& [kind, values] = lists.at(r.key);
      Axis probe{r.key, kind, values};
      for (std::size_t v = 0; v < values.size(); ++v)
        for (const auto& [key, value] : axis_assignments(probe, v, r.where)) {
          Config one;
          one.set(key, value, r.origin);
          registry.check(one, key);
        }
    }
  }
  std::vector<Axis> axes;
  std::map<std::string, std::size_t> axis_index;
  for (auto& [key, a] : axes_by_key) {
    axis_index[key] = axes.size();
    axes.push_back(std::move(a));
  }
  std::vector<SubSpace> subspaces;
  for (const auto& [name, lists] : built) {
    SubSpace s;
    s.name = name;
    for (const auto& [key, kv] : lists) {  // map order = global axis order
      SubSpaceAxis sa;
      sa.axis = axis_index.at(key);
      const auto& values = axes[sa.axis].values;
      for (const auto& v : kv.second)
        sa.positions.push_back(
            static_cast<std::uint32_t>(std::find(values.begin(), values.end(), v) - values.begin()));
      for (const auto& r : raw.at(name))
        if (r.key == key) sa.origin = r.origin;
      s.axes.push_back(std::move(sa));
    }
    subspaces.push_back(std::move(s));
  }
  return Space(std::move(base), std::move(axes), std::move(subspaces));
}

}  // namespace toposweep::sweep

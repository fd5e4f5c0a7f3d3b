#include "toposweep/sweep/space_check.hpp"

#include <map>
#include <memory>
#include <set>

#include "toposweep/util/strings.hpp"

namespace toposweep::sweep {
namespace {

bool sweep_only(const std::string& key) {
  return key.starts_with("sweep.") || key.starts_with("space.");
}

}  // namespace

std::vector<UnusedKey> check_space(const Space& space, const PointCheck& check) {
  std::map<std::string, UnusedKey> unused;
  Config scratch = space.base();
  for (std::uint32_t s = 0; s < space.subspaces().size(); ++s) {
    const SubSpace& sub = space.subspaces()[s];
    auto reads = std::make_shared<std::set<std::string>>();
    std::map<std::string, std::string> explicit_keys;  // key -> origin, over the sub-space's checks
    PointCoordinates first;
    first.subspace = s;
    first.axis_value.assign(space.axes().size(), kAbsentAxis);
    for (const auto& a : sub.axes) first.axis_value[a.axis] = a.positions.front();
    auto run = [&](const PointCoordinates& c) {
      space.apply_point(space.encode(c), scratch);
      Config point = scratch;
      point.record_reads(reads);
      check(point);
      for (const auto& [key, e] : point.entries())
        if (e.origin != "default" && !sweep_only(key)) explicit_keys.emplace(key, e.origin);
    };
    run(first);
    for (const auto& a : sub.axes)
      for (std::size_t p = 1; p < a.positions.size(); ++p) {
        PointCoordinates c = first;
        c.axis_value[a.axis] = a.positions[p];
        run(c);
      }
    for (const auto& [key, origin] : explicit_keys) {
      if (reads->count(key)) continue;
      UnusedKey& u = unused[key];
      u.key = key;
      if (u.origin.empty()) u.origin = origin;
      u.subspaces.push_back(sub.name);
    }
  }
  std::vector<UnusedKey> out;
  for (auto& [key, u] : unused) {
    u.in_every_subspace = u.subspaces.size() == space.subspaces().size();
    out.push_back(std::move(u));
  }
  return out;
}

std::string describe_unused(const UnusedKey& u) {
  std::string text = "key " + u.key + (u.origin.empty() ? "" : " (set at " + u.origin + ")") +
                     " is not read by any point of ";
  if (u.in_every_subspace) return text + "the sweep";
  return text + (u.subspaces.size() == 1 ? "sub-space " : "sub-spaces ") + join(u.subspaces, ", ");
}

}  // namespace toposweep::sweep

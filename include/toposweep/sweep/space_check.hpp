#pragma once
// Checking a design space before any point runs: every sub-space's configurations are read the
// way its points will be (an injected check, so the sweep stays independent of the domain), and
// the keys that no point of a sub-space reads are reported.
#include <functional>
#include <string>
#include <vector>

#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

// Reads (and parses) what a point's evaluation reads; throws BadInput for malformed input.
using PointCheck = std::function<void(const Config&)>;

struct UnusedKey {
  std::string key;
  std::string origin;                  // where it was set
  std::vector<std::string> subspaces;  // sub-spaces none of whose points reads it
  bool in_every_subspace = false;
};

// Per sub-space, each value of each axis, with the sub-space's first value of every other axis,
// goes through `check` (so every axis value meets a reader at least once: a generator's
// arguments, units, names and files are all checked before a point runs). BadInput propagates.
// Returns the keys set explicitly (not defaults; sweep.* and space.* aside) that some sub-space
// never reads, in key order.
std::vector<UnusedKey> check_space(const Space& space, const PointCheck& check);

// "key topology.dims (set at q.ini:12) is not read by any point of sub-space switched"
std::string describe_unused(const UnusedKey& u);

}  // namespace toposweep::sweep

#pragma once
// Checking a design point's configuration without simulating it: every key its evaluation reads
// is read and parsed, so malformed or missing values surface as BadInput before a sweep runs any
// point. Design-level impossibilities (InvalidDesign: degrees that do not divide, degree >=
// servers, ...) are not errors here: a sweep records such points as infeasible.
#include "toposweep/util/config.hpp"

namespace toposweep {

void check_point_config(const Config& point);
// The same with a cache kept across the checks of a sweep's points (networks, models, devices).
class PointCache;
void check_point_config(const Config& point, PointCache& cache);

}  // namespace toposweep

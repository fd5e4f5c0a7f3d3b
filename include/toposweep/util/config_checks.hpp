#pragma once
// Building blocks for KeySpec checks: each returns a KeyCheck that parses a key's value with the
// same typed getter its reader uses, so the check and the reader cannot disagree on syntax.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "toposweep/util/config_keys.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::checks {

KeyCheck integer(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
KeyCheck number();                           // a plain finite number
KeyCheck number_in(double min, double max);  // min <= x <= max
KeyCheck boolean();
KeyCheck quantity(Quantity q, bool positive);  // positive: zero rejected
KeyCheck integer_list(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
KeyCheck quantity_list(Quantity q, bool positive);
// One of `names`, compared as the readers do: trimmed, case-insensitive.
KeyCheck one_of(std::vector<std::string> names);
// A comma list whose items are each one of `names`.
KeyCheck list_of(std::vector<std::string> names);
// A path to a file that exists and can be read.
KeyCheck readable_file();
// Empty (or blank) means "unset" for optional keys; otherwise `inner` applies.
KeyCheck optional(KeyCheck inner);

}  // namespace toposweep::checks

#include "toposweep/util/config_checks.hpp"

#include <fstream>
#include <sstream>

#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::checks {

KeyCheck integer(std::int64_t min, std::int64_t max) {
  return [min, max](const Config& c, const std::string& k) { c.get_int(k, min, max); };
}

KeyCheck number() {
  return [](const Config& c, const std::string& k) { c.get_double(k); };
}

namespace {
std::string plain(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
}  // namespace

KeyCheck number_in(double min, double max) {
  return [min, max](const Config& c, const std::string& k) {
    const double v = c.get_double(k);
    if (v < min || v > max)
      throw BadInput("value " + c.get_string(k) + " is out of range (must be between " + plain(min) +
                         " and " + plain(max) + ")",
                     c.where(k));
  };
}

KeyCheck boolean() {
  return [](const Config& c, const std::string& k) { c.get_bool(k); };
}

KeyCheck quantity(Quantity q, bool positive) {
  return [q, positive](const Config& c, const std::string& k) { c.get_quantity(k, q, positive); };
}

KeyCheck integer_list(std::int64_t min, std::int64_t max) {
  return [min, max](const Config& c, const std::string& k) { c.get_int_list(k, min, max); };
}

KeyCheck quantity_list(Quantity q, bool positive) {
  return [q, positive](const Config& c, const std::string& k) { c.get_quantity_list(k, q, positive); };
}

namespace {
void require_one_of(const std::string& text, const std::vector<std::string>& names, const Config& c,
                    const std::string& k) {
  const std::string v = to_lower(trim(text));
  for (const auto& n : names)
    if (v == n) return;
  throw BadInput("'" + text + "' is not one of " + join(names, ", "), c.where(k));
}
}  // namespace

KeyCheck one_of(std::vector<std::string> names) {
  return [names = std::move(names)](const Config& c, const std::string& k) {
    require_one_of(c.get_string(k), names, c, k);
  };
}

KeyCheck list_of(std::vector<std::string> names) {
  return [names = std::move(names)](const Config& c, const std::string& k) {
    const auto items = c.get_list(k);
    if (items.empty()) throw BadInput("empty list", c.where(k));
    for (const auto& item : items) require_one_of(item, names, c, k);
  };
}

KeyCheck readable_file() {
  return [](const Config& c, const std::string& k) {
    const std::string& path = c.get_string(k);
    std::ifstream in(path);
    if (!in) throw BadInput("cannot read file '" + path + "'", c.where(k));
  };
}

KeyCheck optional(KeyCheck inner) {
  return [inner = std::move(inner)](const Config& c, const std::string& k) {
    if (trim(c.get_string(k)).empty()) return;
    inner(c, k);
  };
}

}  // namespace toposweep::checks

#include "toposweep/util/config_checks.hpp"

#include <fstream>
#include <sstream>

#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::checks {
namespace {

// Parses `value` with the readers' own typed getters (so checks and readers agree on syntax and
// messages), naming `where` in the error.
template <class F>
void parse(const std::string& value, const std::string& where, F&& f) {
  Config c;
  c.set("value", value, "");
  try {
    f(c, std::string("value"));
  } catch (const BadInput& e) {
    throw BadInput(e.what(), where);
  }
}

std::string plain(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

void require_one_of(const std::string& text, const std::vector<std::string>& names,
                    const std::string& where) {
  const std::string v = to_lower(trim(text));
  for (const auto& n : names)
    if (v == n) return;
  throw BadInput("'" + text + "' is not one of " + join(names, ", "), where);
}

}  // namespace

KeyCheck integer(std::int64_t min, std::int64_t max) {
  return [min, max](const std::string& v, const std::string& w) {
    parse(v, w, [&](const Config& c, const std::string& k) { c.get_int(k, min, max); });
  };
}

KeyCheck number() {
  return [](const std::string& v, const std::string& w) {
    parse(v, w, [](const Config& c, const std::string& k) { c.get_double(k); });
  };
}

KeyCheck number_in(double min, double max) {
  return [min, max](const std::string& v, const std::string& w) {
    double x = 0;
    parse(v, w, [&](const Config& c, const std::string& k) { x = c.get_double(k); });
    if (x < min || x > max)
      throw BadInput(
          "value " + v + " is out of range (must be between " + plain(min) + " and " + plain(max) + ")", w);
  };
}

KeyCheck boolean() {
  return [](const std::string& v, const std::string& w) {
    parse(v, w, [](const Config& c, const std::string& k) { c.get_bool(k); });
  };
}

KeyCheck quantity(Quantity q, bool positive) {
  return [q, positive](const std::string& v, const std::string& w) {
    parse(v, w, [&](const Config& c, const std::string& k) { c.get_quantity(k, q, positive); });
  };
}

KeyCheck integer_list(std::int64_t min, std::int64_t max) {
  return [min, max](const std::string& v, const std::string& w) {
    parse(v, w, [&](const Config& c, const std::string& k) { c.get_int_list(k, min, max); });
  };
}

KeyCheck quantity_list(Quantity q, bool positive) {
  return [q, positive](const std::string& v, const std::string& w) {
    parse(v, w, [&](const Config& c, const std::string& k) { c.get_quantity_list(k, q, positive); });
  };
}

KeyCheck one_of(std::vector<std::string> names) {
  return
      [names = std::move(names)](const std::string& v, const std::string& w) { require_one_of(v, names, w); };
}

KeyCheck list_of(std::vector<std::string> names) {
  return [names = std::move(names)](const std::string& v, const std::string& w) {
    const auto items = split_list(v);
    if (items.empty()) throw BadInput("empty list", w);
    for (const auto& item : items) require_one_of(item, names, w);
  };
}

KeyCheck readable_file() {
  return [](const std::string& v, const std::string& w) {
    std::ifstream in(v);
    if (!in) throw BadInput("cannot read file '" + v + "'", w);
  };
}

KeyCheck optional(KeyCheck inner) {
  return [inner = std::move(inner)](const std::string& v, const std::string& w) {
    if (trim(v).empty()) return;
    inner(v, w);
  };
}

}  // namespace toposweep::checks

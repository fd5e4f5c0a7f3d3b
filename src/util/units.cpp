#include "toposweep/util/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

// A unit multiplies the written number by `mul` and divides by `div`; both are exactly
// representable so that "500ns" parses to the correctly rounded 5e-7.
struct NamedUnit {
  std::string text;
  double mul;
  double div;
};

std::vector<NamedUnit> make_units(Quantity q) {
  if (q == Quantity::Time)
    return {{"s", 1, 1},    {"ms", 1, 1e3},  {"us", 1, 1e6}, {"\xC2\xB5s", 1, 1e6},
            {"ns", 1, 1e9}, {"ps", 1, 1e12}, {"min", 60, 1}, {"h", 3600, 1}};
  static const std::pair<const char*, double> prefixes[] = {{"", 1.0},
                                                            {"k", 1e3},
                                                            {"K", 1e3},
                                                            {"M", 1e6},
                                                            {"G", 1e9},
                                                            {"T", 1e12},
                                                            {"P", 1e15},
                                                            {"Ki", 1024.0},
                                                            {"Mi", 1048576.0},
                                                            {"Gi", 1073741824.0},
                                                            {"Ti", 1099511627776.0},
                                                            {"Pi", 1125899906842624.0}};
  const std::vector<std::pair<std::string, double>> bases =
      q == Quantity::Bandwidth
          ? std::vector<std::pair<std::string, double>>{{"B/s", 1}, {"Bps", 1}, {"b/s", 8}, {"bps", 8}}
          : std::vector<std::pair<std::string, double>>{{"B", 1}, {"b", 8}};
  std::vector<NamedUnit> out;
  for (const auto& [pre, factor] : prefixes)
    for (const auto& [base, div] : bases) out.push_back({pre + base, factor, div});
  return out;
}

const std::vector<NamedUnit>& units_for(Quantity q) {
  static const std::vector<NamedUnit> bw = make_units(Quantity::Bandwidth);
  static const std::vector<NamedUnit> sz = make_units(Quantity::Size);
  static const std::vector<NamedUnit> tm = make_units(Quantity::Time);
  switch (q) {
    case Quantity::Bandwidth:
      return bw;
    case Quantity::Size:
      return sz;
    case Quantity::Time:
      return tm;
  }
  return tm;
}

const char* example_for(Quantity q) {
  switch (q) {
    case Quantity::Bandwidth:
      return "e.g. 100Gbps or 12.5GB/s";
    case Quantity::Size:
      return "e.g. 64MiB or 1GB";
    case Quantity::Time:
      return "e.g. 1us or 500ns";
  }
  return "";
}

std::string shortest(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

}  // namespace

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::Bandwidth:
      return "bandwidth";
    case Quantity::Size:
      return "size";
    case Quantity::Time:
      return "time";
  }
  return "quantity";
}

std::optional<double> parse_plain_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

double parse_quantity(Quantity q, std::string_view text, const std::string& where) {
  const std::string shown(text);
  if (text.empty())
    throw BadInput(std::string("empty ") + quantity_name(q) + " value (" + example_for(q) + ")", where);
  double number = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), number);
  if (res.ec == std::errc::result_out_of_range)
    throw BadInput("value '" + shown + "' is out of range", where);
  if (res.ec != std::errc() || res.ptr == text.data())
    throw BadInput("malformed " + std::string(quantity_name(q)) + " '" + shown + "' (" + example_for(q) + ")",
                   where);
  if (!std::isfinite(number))
    throw BadInput(std::string(quantity_name(q)) + " '" + shown + "' is not finite", where);
  if (number < 0 || std::signbit(number))
    throw BadInput(std::string(quantity_name(q)) + " '" + shown + "' is negative", where);
  std::string_view unit = text.substr(static_cast<std::size_t>(res.ptr - text.data()));
  if (unit.empty())
    throw BadInput(std::string(quantity_name(q)) + " '" + shown + "' needs a unit (" + example_for(q) + ")",
                   where);
  for (const auto& u : units_for(q)) {
    if (unit == u.text) {
      double v = number * u.mul / u.div;
      if (!std::isfinite(v)) throw BadInput("value '" + shown + "' is out of range", where);
      return v;
    }
  }
  throw BadInput("unknown " + std::string(quantity_name(q)) + " unit '" + std::string(unit) + "' in '" +
                     shown + "' (" + example_for(q) + ")",
                 where);
}

std::string format_quantity(Quantity q, double x) {
  // Candidates from the largest unit down; the first that round-trips exactly wins.
  struct Cand {
    const char* text;
    double mul;
    double div;
  };
  std::vector<Cand> cands;
  if (q == Quantity::Time) {
    cands = {{"s", 1, 1}, {"ms", 1, 1e3}, {"us", 1, 1e6}, {"ns", 1, 1e9}, {"ps", 1, 1e12}};
  } else {
    const char* b = q == Quantity::Bandwidth ? "B/s" : "B";
    static const char* bw[] = {"PB/s", "TB/s", "GB/s", "MB/s", "kB/s"};
    static const char* sz[] = {"PB", "TB", "GB", "MB", "kB"};
    const double f[] = {1e15, 1e12, 1e9, 1e6, 1e3};
    for (int i = 0; i < 5; ++i) cands.push_back({q == Quantity::Bandwidth ? bw[i] : sz[i], f[i], 1});
    cands.push_back({b, 1, 1});
  }
  const std::string base_unit = cands.back().text;
  if (x == 0) return q == Quantity::Time ? "0s" : "0" + base_unit;
  for (const auto& c : cands) {
    double v = x * c.div / c.mul;
    if (x != 0 && v < 1) continue;
    std::string s = shortest(v) + c.text;
    try {
      if (parse_quantity(q, s, "format") == x) return s;
    } catch (const BadInput&) {
    }
  }
  // Time: "s" is the base unit but may not have been reached for tiny values.
  return shortest(x) + (q == Quantity::Time ? std::string("s") : base_unit);
}

std::string human_quantity(Quantity q, double x) {
  struct Step {
    double factor;
    const char* text;
  };
  std::vector<Step> steps;
  if (q == Quantity::Time)
    steps = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
  else if (q == Quantity::Bandwidth)
    steps = {{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "kB/s"}, {1, "B/s"}};
  else
    steps = {{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}, {1, "B"}};
  const Step* chosen = &steps.back();
  for (const auto& s : steps)
    if (std::fabs(x) >= s.factor) {
      chosen = &s;
      break;
    }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", x / chosen->factor, chosen->text);
  return buf;
}

}  // namespace toposweep

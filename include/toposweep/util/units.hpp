#pragma once
// Strict parsing and formatting of values with units. Everything inside toposweep is SI:
// seconds, bytes, bytes per second. Decimal prefixes (k, M, G, T, P) are powers of 10,
// binary ones (Ki, Mi, Gi, Ti, Pi) powers of 2; `b` is bits, `B` bytes.
//   bandwidth: 100Gbps  12.5GB/s  25GBps  1e9B/s  800Mb/s
//   size:      64MiB  1GB  1e9B  512b
//   time:      1us  500ns  2.5ms  1s  1µs  1min  1h
#include <optional>
#include <string>
#include <string_view>

namespace toposweep {

enum class Quantity { Bandwidth, Size, Time };

const char* quantity_name(Quantity q);

// Parse `text` as a non-negative finite quantity. Throws BadInput naming `where` when the text
// is a bare number, has an unknown unit, is negative, NaN or infinite.
double parse_quantity(Quantity q, std::string_view text, const std::string& where);
inline double parse_bandwidth(std::string_view t, const std::string& where) {
  return parse_quantity(Quantity::Bandwidth, t, where);
}
inline double parse_size(std::string_view t, const std::string& where) {
  return parse_quantity(Quantity::Size, t, where);
}
inline double parse_time(std::string_view t, const std::string& where) {
  return parse_quantity(Quantity::Time, t, where);
}

// Exact formatting: parse_quantity(q, format_quantity(q, x)) == x for every finite x >= 0.
// Picks the largest decimal prefix that still round-trips, e.g. 12.5e9 -> "12.5GB/s".
std::string format_quantity(Quantity q, double value);
inline std::string format_bandwidth(double Bps) {
  return format_quantity(Quantity::Bandwidth, Bps);
}
inline std::string format_size(double bytes) {
  return format_quantity(Quantity::Size, bytes);
}
inline std::string format_time(double s) {
  return format_quantity(Quantity::Time, s);
}

// Human formatting with ~4 significant digits, for summaries (not round-trip exact).
std::string human_quantity(Quantity q, double value);

// Strict plain-number parsing: the whole string must be a finite number.
std::optional<double> parse_plain_number(std::string_view text);

}  // namespace toposweep

#include "toposweep/util/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

struct Case {
  Quantity q;
  const char* text;
  double si;
};

// Hand-checked conversions: decimal prefixes are powers of 10, binary ones powers of 2,
// bits are 1/8 byte.
TEST(Units, HandCheckedTable) {
  const Case cases[] = {
      {Quantity::Bandwidth, "100Gbps", 12.5e9},
      {Quantity::Bandwidth, "12.5GB/s", 12.5e9},
      {Quantity::Bandwidth, "25GBps", 25e9},
      {Quantity::Bandwidth, "1e9B/s", 1e9},
      {Quantity::Bandwidth, "800Mb/s", 1e8},
      {Quantity::Bandwidth, "1KiB/s", 1024},
      {Quantity::Bandwidth, "400Gbps", 50e9},
      {Quantity::Bandwidth, "10Gbps", 1.25e9},
      {Quantity::Size, "64MiB", 67108864},
      {Quantity::Size, "1GB", 1e9},
      {Quantity::Size, "1e9B", 1e9},
      {Quantity::Size, "1GiB", 1073741824},
      {Quantity::Size, "16b", 2},
      {Quantity::Size, "0B", 0},
      {Quantity::Size, "1.5kB", 1500},
      {Quantity::Time, "1us", 1e-6},
      {Quantity::Time, "500ns", 5e-7},
      {Quantity::Time, "2.5ms", 2.5e-3},
      {Quantity::Time, "1s", 1},
      {Quantity::Time, "1min", 60},
      {Quantity::Time, "2h", 7200},
      {Quantity::Time, "700ns", 7e-7},
      {Quantity::Time, "1\xC2\xB5s", 1e-6},
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(parse_quantity(c.q, c.text, "k"), c.si) << c.text;
  }
}

TEST(Units, ExactDecimalTimes) {
  // Division by an exact power of ten gives the correctly rounded literal.
  EXPECT_EQ(parse_time("500ns", "k"), 5e-7);
  EXPECT_EQ(parse_time("1us", "k"), 1e-6);
  EXPECT_EQ(parse_time("3ms", "k"), 3e-3);
}

void expect_bad(Quantity q, const char* text, const char* fragment) {
  try {
    parse_quantity(q, text, "key topology.link_bandwidth");
    FAIL() << "accepted " << text;
  } catch (const BadInput& e) {
    EXPECT_EQ(e.where(), "key topology.link_bandwidth");
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Units, RejectsBadInput) {
  expect_bad(Quantity::Bandwidth, "100", "needs a unit");
  expect_bad(Quantity::Bandwidth, "100Gbit", "unknown bandwidth unit");
  expect_bad(Quantity::Bandwidth, "-5Gbps", "negative");
  expect_bad(Quantity::Bandwidth, "infGbps", "not finite");
  expect_bad(Quantity::Bandwidth, "nanGbps", "not finite");
  expect_bad(Quantity::Bandwidth, "", "empty");
  expect_bad(Quantity::Bandwidth, "Gbps", "malformed");
  expect_bad(Quantity::Size, "64MB/s", "unknown size unit");
  expect_bad(Quantity::Time, "5", "needs a unit");
  expect_bad(Quantity::Time, "5 us", "unknown time unit");
  expect_bad(Quantity::Size, "1e400B", "out of range");
}

TEST(Units, FormatRoundTripsExactly) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mant(0, 10);
  std::uniform_int_distribution<int> ex(-15, 15);
  for (Quantity q : {Quantity::Bandwidth, Quantity::Size, Quantity::Time}) {
    for (int i = 0; i < 2000; ++i) {
      double x = mant(rng) * std::pow(10.0, ex(rng));
      std::string s = format_quantity(q, x);
      EXPECT_EQ(parse_quantity(q, s, "rt"), x) << s;
    }
    for (double x : {0.0, 1.0, 12.5e9, 1e-6, 5e-7, 67108864.0, 1e300, 4.9e-324}) {
      EXPECT_EQ(parse_quantity(q, format_quantity(q, x), "rt"), x);
    }
  }
}

TEST(Units, FormatPicksReadableUnit) {
  EXPECT_EQ(format_bandwidth(12.5e9), "12.5GB/s");
  EXPECT_EQ(format_size(1e9), "1GB");
  EXPECT_EQ(format_time(1e-6), "1us");
  EXPECT_EQ(format_time(5e-7), "500ns");
  EXPECT_EQ(format_size(0), "0B");
  EXPECT_EQ(format_time(0), "0s");
}

TEST(Units, PlainNumbers) {
  EXPECT_EQ(parse_plain_number("1.5"), 1.5);
  EXPECT_FALSE(parse_plain_number("1.5x"));
  EXPECT_FALSE(parse_plain_number("inf"));
  EXPECT_FALSE(parse_plain_number(""));
}

}  // namespace
}  // namespace toposweep

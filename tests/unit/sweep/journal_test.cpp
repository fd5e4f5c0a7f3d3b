#include "toposweep/sweep/journal.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace toposweep::sweep {
namespace {

PointRecord sample(std::uint64_t index, PointStatus status, std::string msg = "") {
  PointRecord r;
  r.index = index;
  r.result.status = status;
  r.result.message = std::move(msg);
  if (status == PointStatus::Evaluated) {
    r.result.iteration_time_s = 0.125 * static_cast<double>(index + 1);
    r.result.cost_usd = 1000.0 + static_cast<double>(index);
    r.result.dp = static_cast<std::uint32_t>(index);
    r.result.optimizer_rounds = 3;
  }
  return r;
}

void expect_same(const PointRecord& a, const PointRecord& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.result.status, b.result.status);
  EXPECT_EQ(a.result.message, b.result.message);
  EXPECT_EQ(std::memcmp(&a.result.iteration_time_s, &b.result.iteration_time_s, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a.result.cost_usd, &b.result.cost_usd, sizeof(double)), 0);
  EXPECT_EQ(a.result.dp, b.result.dp);
  EXPECT_EQ(a.result.optimizer_rounds, b.result.optimizer_rounds);
}

TEST(Crc32, KnownCheckValue) {
  // The CRC-32 (IEEE) check value of "123456789" is 0xCBF43926.
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32("", 0), 0u);
}

// CRC-32 (IEEE, reflected) bit by bit, from the polynomial alone.
std::uint32_t crc32_bitwise(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

TEST(Crc32, EqualsTheBitwiseDefinitionAtEveryLengthAndOffset) {
  std::vector<unsigned char> bytes(300);
  std::uint32_t x = 12345;
  for (auto& b : bytes) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (std::size_t offset = 0; offset < 8; ++offset)
    for (std::size_t n = 0; n + offset <= 200; ++n)
      ASSERT_EQ(crc32(bytes.data() + offset, n), crc32_bitwise(bytes.data() + offset, n))
          << offset << " " << n;
}

TEST(JournalRecords, RoundTripAndTornTailAtEveryByte) {
  std::vector<unsigned char> bytes;
  const std::vector<PointRecord> in = {sample(0, PointStatus::Evaluated),
                                       sample(7, PointStatus::Failed, "boom: x"),
                                       sample(9, PointStatus::Infeasible, "memory")};
  std::vector<std::size_t> ends;
  for (const auto& r : in) {
    append_encoded(bytes, r);
    ends.push_back(bytes.size());
  }
  std::vector<PointRecord> out;
  EXPECT_EQ(decode_records(bytes, out), bytes.size());
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_same(in[i], out[i]);
  EXPECT_TRUE(std::isnan(out[1].result.iteration_time_s));

  // Truncating anywhere keeps exactly the records that were complete.
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    std::vector<unsigned char> torn(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    std::vector<PointRecord> got;
    const std::size_t used = decode_records(torn, got);
    const std::size_t complete =
        static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    ASSERT_EQ(got.size(), complete) << "cut " << cut;
    EXPECT_EQ(used, complete ? ends[complete - 1] : 0u);
  }
}

TEST(JournalRecords, CorruptByteStopsTheReader) {
  std::vector<unsigned char> bytes;
  append_encoded(bytes, sample(1, PointStatus::Evaluated));
  const std::size_t first = bytes.size();
  append_encoded(bytes, sample(2, PointStatus::Evaluated));
  append_encoded(bytes, sample(3, PointStatus::Evaluated));
  for (std::size_t flip = first; flip < bytes.size(); flip += 7) {
    auto bad = bytes;
    bad[flip] ^= 0x40;
    std::vector<PointRecord> got;
    decode_records(bad, got);
    // The first record survives; the flipped one and everything after it are dropped, or (for a
    // flip in the third record) the second survives too.
    ASSERT_GE(got.size(), 1u);
    ASSERT_LE(got.size(), 2u);
    EXPECT_EQ(got[0].index, 1u);
  }
}

TEST(JournalDirectory, PartsFromSeveralRunsAndRanksMerge) {
  const std::string dir = ::testing::TempDir() + "journal_test_" + std::to_string(::getpid()) + ".journal";
  remove_journal(dir);
  EXPECT_FALSE(read_journal_header(dir).has_value());
  const JournalHeader h{0xABCDEF0123456789ULL, 100, 10, 60};
  create_journal(dir, h, "space text");
  EXPECT_EQ(read_journal_header(dir), h);
  {  // a header of other result fields round-trips too (as version 2)
    const std::string other = dir + ".other";
    JournalHeader g = h;
    g.fields = "cost_usd:f64,dp:u32";
    create_journal(other, g, "");
    EXPECT_EQ(read_journal_header(other), g);
    std::ifstream in(other + "/header");
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, "toposweep-journal-v2");
    remove_journal(other);
  }
  EXPECT_EQ(next_run_number(dir), 0u);
  {
    JournalWriter r0(dir, 0, 0), r1(dir, 0, 1);
    r0.add(sample(12, PointStatus::Evaluated));
    r1.add(sample(11, PointStatus::Failed, "x"));
    r0.commit();
    r1.commit();
    r0.add(sample(10, PointStatus::Evaluated));
  }  // destructor commits r0's buffered record
  EXPECT_EQ(next_run_number(dir), 1u);
  {
    JournalWriter w(dir, 1, 0);
    w.add(sample(13, PointStatus::Infeasible, "mem"));
    w.add(sample(12, PointStatus::Failed, "duplicate; the earlier run's record wins"));
    w.commit();
  }
  // A torn tail in one part file is ignored.
  {
    std::ofstream f(dir + "/run-0001-rank-00000.log", std::ios::binary | std::ios::app);
    f << "TSPR\x10";
  }
  std::uint64_t dropped = 0;
  const auto all = read_journal(dir, &dropped);
  EXPECT_EQ(dropped, 5u);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].index, 10u);
  EXPECT_EQ(all[1].index, 11u);
  EXPECT_EQ(all[2].index, 12u);
  EXPECT_EQ(all[2].result.status, PointStatus::Evaluated);
  EXPECT_EQ(all[3].index, 13u);
  EXPECT_EQ(next_run_number(dir), 2u);
  remove_journal(dir);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A rank's part that cannot be written (a link to /dev/full: writes fail with ENOSPC even for
// root) makes commit() throw with the file and the reason; such a part is neither read (it would
// never end) nor counted as a run, and the records already in the journal stay readable.
TEST(JournalDirectory, AnUnwritablePartFailsItsCommitAndIsSkippedByTheReader) {
  const std::string dir = ::testing::TempDir() + "journal_full_" + std::to_string(::getpid()) + ".journal";
  remove_journal(dir);
  create_journal(dir, JournalHeader{1, 10, 0, 10}, "space text");
  {
    JournalWriter w(dir, 0, 0);
    w.add(sample(3, PointStatus::Evaluated));
    w.commit();
  }
  std::filesystem::create_symlink("/dev/full", dir + "/run-0001-rank-00001.log");
  EXPECT_EQ(next_run_number(dir), 1u);
  {
    JournalWriter w(dir, 1, 1);
    // Nothing added since the last commit: no write and no fdatasync (which /dev/full refuses
    // with EINVAL), so the loop's final commit and the destructor's cost nothing.
    EXPECT_NO_THROW(w.commit());
    w.add(sample(4, PointStatus::Evaluated));
    try {
      w.commit();
      ADD_FAILURE() << "a write to /dev/full succeeded";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("run-0001-rank-00001.log"), std::string::npos) << what;
      EXPECT_NE(what.find(std::strerror(ENOSPC)), std::string::npos) << what;
    }
  }  // the destructor's retry fails silently
  const auto all = read_journal(dir);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].index, 3u);
  remove_journal(dir);
}

}  // namespace
}  // namespace toposweep::sweep

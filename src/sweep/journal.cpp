#include "toposweep/sweep/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kRecordMagic = 0x52505354;  // "TSPR"
// index, status, then every result field in table order; the message fills the rest.
constexpr std::size_t kFixedPayload = [] {
  std::size_t n = sizeof(std::uint64_t) + sizeof(std::uint8_t);
  for (const ResultField& f : kResultFields) n += f.size();
  return n;
}();
constexpr std::size_t kMaxMessage = 4096;
// The record layout of version-1 journals, whose header does not name it: journals of this layout
// keep that header (so the toposweeps before the layout was recorded resume them), any other
// layout gets a version-2 header with a `fields` line (which those toposweeps refuse instead of
// misreading its records). A historical fact: never update it when adding a field.
constexpr const char* kLayoutV1 =
    "iteration_time_s:f64,compute_time_s:f64,exposed_comm_time_s:f64,bubble_time_s:f64,cost_usd:f64,"
    "memory_per_gpu_bytes:f64,samples_per_s:f64,network_bisection_Bps:f64,dp:u32,tp:u32,pp:u32,"
    "microbatches:u32,optimizer_rounds:u32";
constexpr std::uint32_t kRangeMagic = 0x44505354;  // "TSPD"
constexpr std::size_t kRangePayload = 5 * 8;

// Tables of the slicing-by-8 CRC-32: t[0] is the byte-at-a-time table, t[k][b] the CRC of byte b
// followed by k zero bytes, so eight bytes are folded in with eight lookups (a CRC per record and
// point: the journal's main CPU cost).
std::array<std::array<std::uint32_t, 256>, 8> make_crc_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  return t;
}

template <class T>
void put(std::vector<unsigned char>& out, const T& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <class T>
T get(const unsigned char*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

std::string errno_text() {
  return std::strerror(errno);
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::uint32_t crc32(const void* data, std::size_t size) {
  static const auto t = make_crc_tables();  // immutable after first use
  std::uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  // Bytes are assembled into words by hand: the same CRC on hosts of either byte order.
  auto word = [](const unsigned char* q) {
    return std::uint32_t{q[0]} | std::uint32_t{q[1]} << 8 | std::uint32_t{q[2]} << 16 |
           std::uint32_t{q[3]} << 24;
  };
  for (; size >= 8; p += 8, size -= 8) {
    const std::uint32_t lo = c ^ word(p), hi = word(p + 4);
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; size > 0; ++p, --size) c = t[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string record_layout() {
  std::string out;
  for (const ResultField& f : kResultFields)
    out.append(out.empty() ? "" : ",").append(f.name).append(f.type() == FieldType::F64 ? ":f64" : ":u32");
  return out;
}

void append_encoded(std::vector<unsigned char>& out, const PointRecord& r) {
  const PointResult& x = r.result;
  const std::size_t msg = std::min(x.message.size(), kMaxMessage);
  const auto length = static_cast<std::uint32_t>(kFixedPayload + msg);
  put(out, kRecordMagic);
  put(out, length);
  const std::size_t start = out.size();
  // The fixed part is assembled on the stack and appended at once (a record per point: hot).
  unsigned char fixed[kFixedPayload];
  unsigned char* p = fixed;
  auto copy = [&p](const auto& v) {
    std::memcpy(p, &v, sizeof v);
    p += sizeof v;
  };
  copy(r.index);
  copy(static_cast<std::uint8_t>(x.status));
  for_each_result_field([&](auto i) {
    constexpr const ResultField& f = kResultFields[decltype(i)::value];
    if constexpr (f.f64 != nullptr)
      copy(x.*f.f64);
    else
      copy(x.*f.u32);
  });
  out.insert(out.end(), fixed, fixed + kFixedPayload);
  out.insert(out.end(), x.message.begin(), x.message.begin() + static_cast<std::ptrdiff_t>(msg));
  put(out, crc32(out.data() + start, length));
}

void append_encoded(std::vector<unsigned char>& out, const DoneRange& r) {
  put(out, kRangeMagic);
  put(out, static_cast<std::uint32_t>(kRangePayload));
  const std::size_t start = out.size();
  for (std::uint64_t v : {r.begin, r.end, r.evaluated, r.infeasible, r.failed}) put(out, v);
  put(out, crc32(out.data() + start, kRangePayload));
}

std::size_t decode_records(const std::vector<unsigned char>& bytes, std::vector<PointRecord>& out) {
  std::vector<DoneRange> ignored;
  return decode_journal_bytes(bytes, out, ignored);
}

std::size_t decode_journal_bytes(const std::vector<unsigned char>& bytes, std::vector<PointRecord>& out,
                                 std::vector<DoneRange>& ranges) {
  std::size_t pos = 0;
  while (bytes.size() - pos >= 12) {
    const unsigned char* p = bytes.data() + pos;
    const auto magic = get<std::uint32_t>(p);
    const auto length = get<std::uint32_t>(p);
    if (magic == kRangeMagic) {
      if (length != kRangePayload || bytes.size() - pos < 8 + std::size_t{length} + 4) break;
      const unsigned char* tail = p + length;
      if (get<std::uint32_t>(tail) != crc32(p, length)) break;
      DoneRange r;
      for (std::uint64_t* v : {&r.begin, &r.end, &r.evaluated, &r.infeasible, &r.failed})
        *v = get<std::uint64_t>(p);
      if (r.end < r.begin || r.evaluated + r.infeasible + r.failed != r.end - r.begin) break;
      ranges.push_back(r);
      pos += 8 + length + 4;
      continue;
    }
    if (magic != kRecordMagic || length < kFixedPayload || length > kFixedPayload + kMaxMessage) break;
    if (bytes.size() - pos < 8 + std::size_t{length} + 4) break;
    const unsigned char* payload = p;
    const unsigned char* tail = payload + length;
    if (get<std::uint32_t>(tail) != crc32(payload, length)) break;
    PointRecord r;
    r.index = get<std::uint64_t>(p);
    const auto status = get<std::uint8_t>(p);
    if (status > 2) break;
    PointResult& x = r.result;
    x.status = static_cast<PointStatus>(status);
    for_each_result_field([&](auto i) {
      constexpr const ResultField& f = kResultFields[decltype(i)::value];
      if constexpr (f.f64 != nullptr)
        x.*f.f64 = get<double>(p);
      else
        x.*f.u32 = get<std::uint32_t>(p);
    });
    x.message.assign(reinterpret_cast<const char*>(p), length - kFixedPayload);
    out.push_back(std::move(r));
    pos += 8 + length + 4;
  }
  return pos;
}

std::string journal_dir_for(const std::string& out_path) {
  return out_path + ".journal";
}

void create_journal(const std::string& dir, const JournalHeader& h, const std::string& space_text) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeFailure("cannot create the journal directory " + dir + ": " + ec.message());
  const std::string tmp = dir + "/header.tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    const bool v1 = h.fields == kLayoutV1;
    f << (v1 ? "toposweep-journal-v1\n" : "toposweep-journal-v2\n") << "fingerprint " << h.fingerprint
      << "\nspace_size " << h.space_size << "\nbegin " << h.begin << "\nend " << h.end << "\n";
    if (!v1) f << "fields " << h.fields << "\n";
    if (!f) throw RuntimeFailure("cannot write " + tmp);
  }
  {
    std::ofstream f(dir + "/space.txt", std::ios::trunc);
    f << space_text;  // for people reading the journal; the header's fingerprint is what counts
  }
  fsync_path(tmp, false);
  fs::rename(tmp, dir + "/header", ec);
  if (ec) throw RuntimeFailure("cannot write the journal header in " + dir + ": " + ec.message());
  fsync_path(dir, true);
}

std::optional<JournalHeader> read_journal_header(const std::string& dir) {
  if (!fs::exists(dir)) return std::nullopt;
  std::ifstream f(dir + "/header");
  std::string magic, k1, k2, k3, k4;
  JournalHeader h;
  std::string k5;
  const bool valid =
      (f >> magic >> k1 >> h.fingerprint >> k2 >> h.space_size >> k3 >> h.begin >> k4 >> h.end) &&
      k1 == "fingerprint" && k2 == "space_size" && k3 == "begin" && k4 == "end" &&
      (magic == "toposweep-journal-v1" ||
       (magic == "toposweep-journal-v2" && f >> k5 >> h.fields && k5 == "fields"));
  if (!valid)
    throw RuntimeFailure("the journal " + dir + " has no valid header; remove the directory to start afresh");
  if (magic == "toposweep-journal-v1") h.fields = kLayoutV1;
  return h;
}

std::uint32_t next_run_number(const std::string& dir) {
  std::uint32_t next = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // Like the reader, count only regular part files: a test makes a rank's next part a link to
    // /dev/full (docs/sweep.md, "Testing hooks").
    if (name.starts_with("run-") && name.size() > 8 && e.is_regular_file())
      next = std::max<std::uint32_t>(next, static_cast<std::uint32_t>(std::stoul(name.substr(4))) + 1);
  }
  return next;
}

JournalContents read_journal_contents(const std::string& dir, std::uint64_t* dropped_bytes) {
  std::vector<std::string> parts;
  // A part that is not a regular file (e.g. a link to a device) holds no records; reading a
  // device such as /dev/full would never end.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log" && e.is_regular_file()) parts.push_back(e.path().string());
  std::sort(parts.begin(), parts.end());  // deterministic "first record wins"
  JournalContents c;
  std::uint64_t dropped = 0;
  for (const auto& path : parts) {
    std::ifstream f(path, std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw RuntimeFailure("cannot read the journal file " + path);
    dropped += bytes.size() - decode_journal_bytes(bytes, c.records, c.ranges);
  }
  auto& all = c.records;
  std::stable_sort(all.begin(), all.end(),
                   [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const PointRecord& a, const PointRecord& b) { return a.index == b.index; }),
            all.end());
  std::sort(c.ranges.begin(), c.ranges.end(),
            [](const DoneRange& a, const DoneRange& b) { return a.begin < b.begin; });
  if (dropped_bytes) *dropped_bytes = dropped;
  return c;
}

std::vector<PointRecord> read_journal(const std::string& dir, std::uint64_t* dropped_bytes) {
  return read_journal_contents(dir, dropped_bytes).records;
}

void remove_journal(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

JournalWriter::JournalWriter(const std::string& dir, std::uint32_t run, int rank) {
  char name[64];
  std::snprintf(name, sizeof name, "/run-%04u-rank-%05d.log", run, rank);
  path_ = dir + name;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RuntimeFailure("cannot open the journal file " + path_ + ": " + errno_text());
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) {
    try {
      commit();
    } catch (...) {
      // A destructor must not throw; an uncommitted tail is re-done on resume.
    }
    ::close(fd_);
  }
}

void JournalWriter::commit() {
  if (buffer_.empty() && !unsynced_) return;  // e.g. the destructor after the last commit
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw RuntimeFailure("cannot write the journal file " + path_ + ": " + errno_text());
    }
    done += static_cast<std::size_t>(n);
    unsynced_ = true;
  }
  buffer_.clear();
  if (::fdatasync(fd_) != 0)
    throw RuntimeFailure("cannot sync the journal file " + path_ + ": " + errno_text());
  unsynced_ = false;
}

}  // namespace toposweep::sweep

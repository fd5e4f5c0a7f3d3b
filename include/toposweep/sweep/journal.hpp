#pragma once
// The sweep journal: durable, append-only progress of a sweep, so that a run killed at any moment
// loses only the points in flight. A journal is a directory next to the output (OUT.journal/)
// holding a header (the space fingerprint and the index range) and one file per rank and run.
// Each record is one evaluated point framed as [magic u32][length u32][payload][crc32 u32]; a
// reader stops at the first record that does not check out (a torn tail after kill -9).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/point/point_result.hpp"

namespace toposweep::sweep {

struct PointRecord {
  std::uint64_t index = 0;
  PointResult result;
};

std::uint32_t crc32(const void* data, std::size_t size);

// Binary framing of one record (host byte order: journals are not moved between machines of
// different endianness; the HDF5 output is the portable artefact).
void append_encoded(std::vector<unsigned char>& out, const PointRecord& r);
// Decode every valid record of `bytes` into `out`; returns the number of bytes consumed (less
// than bytes.size() when a torn or corrupt tail was dropped). Done-range records are skipped.
std::size_t decode_records(const std::vector<unsigned char>& bytes, std::vector<PointRecord>& out);

// A contiguous run of indices [begin, end) whose points are all done, with their status counts.
// `--keep frontier` journals these instead of every point (plus the rows on the rank's frontier),
// so its journal grows with chunks and frontier, not with points. Framed like a point record but
// with its own magic.
struct DoneRange {
  std::uint64_t begin = 0, end = 0;
  std::uint64_t evaluated = 0, infeasible = 0, failed = 0;
  bool operator==(const DoneRange&) const = default;
};
void append_encoded(std::vector<unsigned char>& out, const DoneRange& r);
// Decode point records and done ranges, in file order, stopping at the first invalid record.
std::size_t decode_journal_bytes(const std::vector<unsigned char>& bytes, std::vector<PointRecord>& records,
                                 std::vector<DoneRange>& ranges);

// The layout of a point record's fixed part: the result fields in order with their types,
// "iteration_time_s:f64,...,optimizer_rounds:u32" (from kResultFields).
std::string record_layout();

struct JournalHeader {
  std::uint64_t fingerprint = 0;
  std::uint64_t space_size = 0;
  std::uint64_t begin = 0, end = 0;  // the index range this sweep covers (a slice or everything)
  // record_layout() of the toposweep that wrote the records; a resume refuses a journal of
  // another layout. A version-1 header (every journal of the layout toposweep had when the header
  // began to record it) does not spell it out; any other layout makes a version-2 header.
  std::string fields = record_layout();
  bool operator==(const JournalHeader&) const = default;
};

std::string journal_dir_for(const std::string& out_path);  // OUT.journal

// Create the directory and write its header durably (tmp + rename + fsync). Throws RuntimeFailure.
void create_journal(const std::string& dir, const JournalHeader& header, const std::string& space_text);
// The header, or nullopt when the directory does not exist. Throws RuntimeFailure when malformed.
std::optional<JournalHeader> read_journal_header(const std::string& dir);
// The next run number (one more than the largest run-NNNN file present).
std::uint32_t next_run_number(const std::string& dir);
// Every valid record of every part file, ascending by index; the first record of an index wins.
// `dropped_bytes` (optional) receives the size of torn tails that were ignored.
std::vector<PointRecord> read_journal(const std::string& dir, std::uint64_t* dropped_bytes = nullptr);
// Everything a journal holds: point records (ascending by index, first of an index wins) and
// done ranges (ascending by begin) from every part file.
struct JournalContents {
  std::vector<PointRecord> records;
  std::vector<DoneRange> ranges;
};
JournalContents read_journal_contents(const std::string& dir, std::uint64_t* dropped_bytes = nullptr);
void remove_journal(const std::string& dir);

// One rank's append-only part file for one run.
class JournalWriter {
 public:
  JournalWriter(const std::string& dir, std::uint32_t run, int rank);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  void add(const PointRecord& r) { append_encoded(buffer_, r); }
  void add(const DoneRange& r) { append_encoded(buffer_, r); }
  // Write the buffered records and fdatasync (nothing when nothing was added or left unsynced
  // since the last commit): called at chunk boundaries.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<unsigned char> buffer_;
  bool unsynced_ = false;  // written since the last successful fdatasync
};

}  // namespace toposweep::sweep

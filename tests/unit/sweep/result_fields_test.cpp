// The table of result fields (kResultFields) against everything it drives, field by field: the
// /points compound type (read back with the HDF5 C API, not through the sweep's own reader), the
// `units` attribute, the journal record and its byte layout, the reader, field_column, the JSON of
// sweep rows and the NaN rule. The layouts that files and journals already on disk use are
// written out here by hand: the table must keep producing them.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/report.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

Space small_space() {
  Config c;
  load_ini_text(c, "[space.a]\ntopology.degree = 2, 4\ntopology.servers = 8\n", "fields.ini");
  return parse_space(
      c, KeyRegistry({{"topology.degree", "", ""}, {"topology.servers", "", ""}, {"space.*", "", ""}}));
}

// A value of field k that no other field has: doubles 1000 + k + 1/8, counts 100 + k.
PointResult distinct_values() {
  PointResult r;
  r.status = PointStatus::Evaluated;
  for (std::size_t k = 0; k < std::size(kResultFields); ++k) {
    const ResultField& f = kResultFields[k];
    if (f.f64)
      r.*f.f64 = 1000.0 + static_cast<double>(k) + 0.125;
    else
      r.*f.u32 = 100 + static_cast<std::uint32_t>(k);
  }
  return r;
}

std::string write_file(const std::string& name, const std::vector<PointRecord>& rows) {
  const std::string path = ::testing::TempDir() + "fields_" + std::to_string(::getpid()) + "_" + name;
  ResultsMeta meta;
  meta.objectives = {{"cost_usd", false}, {"iteration_time_s", false}};
  meta.begin = 0;
  meta.end = rows.size();
  write_results_file(path, small_space(), rows, {}, meta);
  return path;
}

std::vector<PointRecord> two_rows() {
  std::vector<PointRecord> rows(2);
  for (std::uint64_t i = 0; i < 2; ++i) {
    rows[i].index = i;
    rows[i].result = distinct_values();
  }
  return rows;
}

std::string read_units(hid_t file) {
  const hid_t d = H5Dopen2(file, "points", H5P_DEFAULT);
  const hid_t a = H5Aopen(d, "units", H5P_DEFAULT);
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  char* p = nullptr;
  EXPECT_GE(H5Aread(a, t, &p), 0);
  std::string out = p ? p : "";
  H5free_memory(p);
  H5Tclose(t), H5Aclose(a), H5Dclose(d);
  return out;
}

TEST(ResultFields, PointsCompoundTypeHasEveryFieldInTableOrderWithItsType) {
  const std::string path = write_file("type.h5", two_rows());
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t d = H5Dopen2(file, "points", H5P_DEFAULT);
  const hid_t t = H5Dget_type(d);
  // index, subspace, the two axes, status, then the table.
  const int first = 5;
  ASSERT_EQ(H5Tget_nmembers(t), first + static_cast<int>(std::size(kResultFields)));
  for (std::size_t k = 0; k < std::size(kResultFields); ++k) {
    const ResultField& f = kResultFields[k];
    SCOPED_TRACE(std::string(f.name));
    const auto m = static_cast<unsigned>(first + static_cast<int>(k));
    char* name = H5Tget_member_name(t, m);
    EXPECT_EQ(std::string(name), f.name);
    H5free_memory(name);
    const hid_t mt = H5Tget_member_type(t, m);
    if (f.type() == FieldType::F64) {
      EXPECT_EQ(H5Tget_class(mt), H5T_FLOAT);
      EXPECT_EQ(H5Tget_size(mt), 8u);
    } else {
      EXPECT_EQ(H5Tget_class(mt), H5T_INTEGER);
      EXPECT_EQ(H5Tget_sign(mt), H5T_SGN_NONE);
      EXPECT_EQ(H5Tget_size(mt), 4u);
    }
    EXPECT_EQ(H5Tget_order(mt), H5T_ORDER_LE);
    H5Tclose(mt);
    // The value stored under that member's name is the field's own.
    const hid_t one = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(one, std::string(f.name).c_str(), 0, H5T_NATIVE_DOUBLE);
    double v[2] = {0, 0};
    ASSERT_GE(H5Dread(d, one, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    EXPECT_EQ(v[1], f.as_double(distinct_values()));
    H5Tclose(one);
  }
  H5Tclose(t), H5Dclose(d), H5Fclose(file);
}

TEST(ResultFields, UnitsAttributeIsTheTablesAndTheOneFilesAlreadyCarry) {
  const std::string path = write_file("units.h5", two_rows());
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const std::string units = read_units(file);
  H5Fclose(file);
  std::map<std::string, std::string> unit_of;
  for (std::size_t at = 0; at <= units.size();) {
    const std::size_t end = std::min(units.find(';', at), units.size());
    const std::string pair = units.substr(at, end - at);
    unit_of[pair.substr(0, pair.find('='))] = pair.substr(pair.find('=') + 1);
    at = end + 1;
  }
  for (const ResultField& f : kResultFields) EXPECT_EQ(unit_of[std::string(f.name)], f.unit) << f.name;
  EXPECT_EQ(unit_of["index"], "1");
  EXPECT_EQ(unit_of["status"], "1");
  // What every file written carries (analysis reads it; docs/hdf5-schema.md shows it; cp since
  // context parallelism).
  EXPECT_EQ(units,
            "index=1;subspace=1;status=1;iteration_time_s=s;compute_time_s=s;exposed_comm_time_s=s;"
            "bubble_time_s=s;cost_usd=USD;memory_per_gpu_bytes=B;samples_per_s=1/s;network_bisection_Bps=B/s;"
            "dp=1;tp=1;pp=1;cp=1;ep=1;etp=1;microbatches=1;optimizer_rounds=1;"
            "axis fields=position in /space/axes/<key>/values");
}

TEST(ResultFields, ReaderAndFieldColumnReturnEveryFieldsValue) {
  const auto rows = two_rows();
  const auto back = ResultsReader(write_file("read.h5", rows)).records();
  ASSERT_EQ(back.size(), 2u);
  const Space space = small_space();
  for (const ResultField& f : kResultFields) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_EQ(f.as_double(back[1].result), f.as_double(rows[1].result));
    EXPECT_EQ(field_column(space, rows, std::string(f.name))[1], f.as_double(rows[1].result));
  }
  const auto names = known_fields(space);
  for (const ResultField& f : kResultFields)
    EXPECT_NE(std::find(names.begin(), names.end(), f.name), names.end()) << f.name;
}

// Offsets in the payload of a point record (after magic and length) as journals on disk have
// them: index u64, status u8, eight doubles, eight uint32, then the message.
const std::map<std::string, std::size_t> kJournalOffsets = {{"iteration_time_s", 9},
                                                            {"compute_time_s", 17},
                                                            {"exposed_comm_time_s", 25},
                                                            {"bubble_time_s", 33},
                                                            {"cost_usd", 41},
                                                            {"memory_per_gpu_bytes", 49},
                                                            {"samples_per_s", 57},
                                                            {"network_bisection_Bps", 65},
                                                            {"dp", 73},
                                                            {"tp", 77},
                                                            {"pp", 81},
                                                            {"cp", 85},
                                                            {"ep", 89},
                                                            {"etp", 93},
                                                            {"microbatches", 97},
                                                            {"optimizer_rounds", 101}};
constexpr std::size_t kJournalFixedPayload = 105;

TEST(ResultFields, JournalRoundTripsEveryFieldAtTheOffsetJournalsOnDiskUse) {
  ASSERT_EQ(kJournalOffsets.size(), std::size(kResultFields));
  PointRecord r;
  r.index = 0x0102030405060708ULL;
  r.result = distinct_values();
  r.result.message = "msg";
  std::vector<unsigned char> bytes;
  append_encoded(bytes, r);
  ASSERT_EQ(bytes.size(), 8 + kJournalFixedPayload + 3 + 4);
  std::uint32_t length = 0;
  std::memcpy(&length, bytes.data() + 4, 4);
  EXPECT_EQ(length, kJournalFixedPayload + 3);
  const unsigned char* payload = bytes.data() + 8;
  for (const ResultField& f : kResultFields) {
    SCOPED_TRACE(std::string(f.name));
    const std::size_t at = kJournalOffsets.at(std::string(f.name));
    if (f.f64) {
      double v = 0;
      std::memcpy(&v, payload + at, sizeof v);
      EXPECT_EQ(v, r.result.*f.f64);
    } else {
      std::uint32_t v = 0;
      std::memcpy(&v, payload + at, sizeof v);
      EXPECT_EQ(v, r.result.*f.u32);
    }
  }
  std::vector<PointRecord> out;
  ASSERT_EQ(decode_records(bytes, out), bytes.size());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].result.message, "msg");
  for (const ResultField& f : kResultFields)
    EXPECT_EQ(f.as_double(out[0].result), f.as_double(r.result)) << f.name;
  // The journal header names the same layout.
  std::string layout;
  for (const ResultField& f : kResultFields)
    layout += (layout.empty() ? "" : ",") + std::string(f.name) + (f.f64 ? ":f64" : ":u32");
  EXPECT_EQ(record_layout(), layout);
}

TEST(ResultFields, NonEvaluatedRowsGetNaNExactlyWhereTheSchemaPromisesIt) {
  const Space space = small_space();
  const Evaluator infeasible = [](const Config&) {
    PointResult r = distinct_values();
    r.status = PointStatus::Infeasible;
    r.message = "no";
    return r;
  };
  const PointResult x = evaluate_point(space, 0, infeasible).result;
  // docs/hdf5-schema.md: the times and the throughput are NaN unless status 0.
  for (const char* name :
       {"iteration_time_s", "compute_time_s", "exposed_comm_time_s", "bubble_time_s", "samples_per_s"})
    EXPECT_TRUE(std::isnan(find_result_field(name)->as_double(x))) << name;
  for (const ResultField& f : kResultFields)
    EXPECT_EQ(std::isnan(f.as_double(x)), f.nan_unless_evaluated) << f.name;
}

TEST(ResultFields, RowJsonOfAnEvaluatedRow) {
  const Space space = small_space();
  const auto rows = two_rows();
  const auto j = points_json(space, rows, {{"cost_usd", false}})[0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"axes", "cost_usd", "index", "iteration_time_s", "status",
                                            "strategy", "subspace"}));
  EXPECT_EQ(j["iteration_time_s"].get<double>(), rows[0].result.iteration_time_s);
  EXPECT_EQ(j["strategy"].dump(),
            "{\"cp\":111,\"dp\":108,\"ep\":112,\"etp\":113,\"microbatches\":114,\"pp\":110,\"tp\":109}");
}

}  // namespace
}  // namespace toposweep::sweep

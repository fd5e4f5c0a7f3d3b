// The results file's reader on files that are not what they should be: one BadInput naming the
// file with HDF5's reason, nothing printed, and the process's own HDF5 error handler left as it
// was (the reader silences HDF5 for its own calls only).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "toposweep/sweep/results_file.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

int g_reports = 0;
herr_t count_report(hid_t, void*) {
  ++g_reports;
  return 0;
}

// /points and space_size, as the reader's opening check wants, but nothing else.
std::string file_without_space() {
  const std::string path = ::testing::TempDir() + "reader_" + std::to_string(::getpid()) + ".h5";
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t n = 1;
  const hid_t s = H5Screate_simple(1, &n, nullptr);
  const hid_t d = H5Dcreate2(f, "points", H5T_STD_U64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(f, "space_size", H5T_STD_U64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const std::uint64_t one = 1;
  H5Awrite(a, H5T_NATIVE_UINT64, &one);
  H5Aclose(a), H5Sclose(scalar), H5Dclose(d), H5Sclose(s), H5Fclose(f);
  return path;
}

TEST(ResultsReader, FailuresNameTheFileAndLeaveTheProcessErrorHandlerAlone) {
  const std::string path = file_without_space();
  H5Eset_auto2(H5E_DEFAULT, count_report, nullptr);
  g_reports = 0;
  {
    ResultsReader reader(path);
    try {
      reader.frontier_objectives();
      ADD_FAILURE() << "read a /frontier that is not there";
    } catch (const BadInput& e) {
      EXPECT_EQ(e.where(), path);
      EXPECT_NE(std::string(e.what()).find("object 'frontier' doesn't exist"), std::string::npos) << e.what();
    }
    EXPECT_THROW(reader.records(), BadInput);  // /points has no field index
    EXPECT_THROW(reader.space(), BadInput);
  }
  EXPECT_EQ(g_reports, 0);  // the reader's own failures are not reported through the handler
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  EXPECT_EQ(func, &count_report);  // still the process's handler
  // ... which still sees the process's own failures.
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_LT(H5Gopen2(f, "space", H5P_DEFAULT), 0);
  H5Fclose(f);
  EXPECT_EQ(g_reports, 1);
  H5Eset_auto2(H5E_DEFAULT, reinterpret_cast<H5E_auto2_t>(H5Eprint2), stderr);
}

}  // namespace
}  // namespace toposweep::sweep

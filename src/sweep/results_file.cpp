#include "toposweep/sweep/results_file.hpp"

// Only the C API of MPI is used (hdf5.h pulls in mpi.h); skip its C++ bindings.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <hdf5.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/util/version.hpp"

namespace toposweep::sweep {
namespace {

// Owns one HDF5 identifier and closes it with the matching function.
class H5Handle {
 public:
  H5Handle() = default;
  H5Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw RuntimeFailure("HDF5: " + what + " failed");
  }
  ~H5Handle() {
    if (id_ >= 0 && close_) close_(id_);
  }
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

void check(herr_t status, const std::string& what) {
  if (status < 0) throw RuntimeFailure("HDF5: " + what + " failed");
}

H5Handle vlen_string_type() {
  H5Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(t, H5T_VARIABLE), "string size");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "string charset");
  return t;
}

void write_string_attribute(hid_t loc, const std::string& name, const std::string& value) {
  H5Handle type = vlen_string_type();
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  H5Handle attr(H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                "attribute " + name);
  const char* p = value.c_str();
  check(H5Awrite(attr, type, &p), "attribute " + name);
}

void write_u64_attribute(hid_t loc, const std::string& name, std::uint64_t value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  H5Handle attr(H5Acreate2(loc, name.c_str(), H5T_STD_U64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                "attribute " + name);
  check(H5Awrite(attr, H5T_NATIVE_UINT64, &value), "attribute " + name);
}

// A 1-D chunked dataset (chunked so that empty datasets are fine and it can be extended).
H5Handle create_1d(hid_t loc, const std::string& name, hid_t type, std::uint64_t n, int deflate = 0,
                   std::uint64_t chunk_rows = 4096) {
  const hsize_t dims[1] = {n}, maxdims[1] = {H5S_UNLIMITED};
  H5Handle space(H5Screate_simple(1, dims, maxdims), H5Sclose, "dataspace of " + name);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  const hsize_t chunk[1] = {std::max<hsize_t>(1, std::min<hsize_t>(n, chunk_rows))};
  check(H5Pset_chunk(dcpl, 1, chunk), "chunking of " + name);
  if (deflate > 0 && n > 0) {
    check(H5Pset_shuffle(dcpl), "shuffle filter");
    check(H5Pset_deflate(dcpl, static_cast<unsigned>(deflate)), "deflate filter");
  }
  H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "link properties");
  check(H5Pset_create_intermediate_group(lcpl, 1), "intermediate groups");
  return H5Handle(H5Dcreate2(loc, name.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose,
                  "dataset " + name);
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  H5Handle type = vlen_string_type();
  H5Handle d = create_1d(loc, name, type, values.size());
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (!ptrs.empty()) check(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "write " + name);
}

template <class T>
void write_numbers(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<T>& v) {
  H5Handle d = create_1d(loc, name, file_type, v.size());
  if (!v.empty()) check(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write " + name);
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The SI value of an axis value, when it is a plain number or a quantity with a unit.
std::optional<double> si_value(const std::string& v) {
  if (auto x = parse_plain_number(v)) return x;
  for (Quantity q : {Quantity::Bandwidth, Quantity::Size, Quantity::Time}) {
    try {
      return parse_quantity(q, v, "axis value");
    } catch (const BadInput&) {
    }
  }
  return std::nullopt;
}

// Packed row layout of /points: identical in memory and in the file, so HDF5 never converts.
struct PointsLayout {
  struct Member {
    std::string name;
    hid_t type;
    std::size_t offset;
  };
  std::vector<Member> members;
  std::size_t size = 0;
  std::size_t axis_first = 0;  // member index of the first axis field
  void add(const std::string& name, hid_t type) {
    members.push_back({name, type, size});
    size += H5Tget_size(type);
  }
};

const char* const kDoubleFields[] = {
    "iteration_time_s", "compute_time_s",       "exposed_comm_time_s", "bubble_time_s",
    "cost_usd",         "memory_per_gpu_bytes", "samples_per_s",       "network_bisection_Bps"};
const char* const kU32Fields[] = {"dp", "tp", "pp", "microbatches", "optimizer_rounds"};
const char* const kUnits =
    "index=1;subspace=1;status=1;iteration_time_s=s;compute_time_s=s;exposed_comm_time_s=s;bubble_time_s=s;"
    "cost_usd=USD;memory_per_gpu_bytes=B;samples_per_s=1/s;network_bisection_Bps=B/s;dp=1;tp=1;pp=1;"
    "microbatches=1;optimizer_rounds=1;axis fields=position in /space/axes/<key>/values";

PointsLayout points_layout(const Space& space) {
  PointsLayout l;
  l.add("index", H5T_STD_U64LE);
  l.add("subspace", H5T_STD_U32LE);
  l.axis_first = l.members.size();
  for (const auto& a : space.axes()) l.add(a.key, H5T_STD_U32LE);
  l.add("status", H5T_STD_U8LE);
  for (const char* f : kDoubleFields) l.add(f, H5T_IEEE_F64LE);
  for (const char* f : kU32Fields) l.add(f, H5T_STD_U32LE);
  return l;
}

H5Handle compound_type(const PointsLayout& l) {
  H5Handle t(H5Tcreate(H5T_COMPOUND, l.size), H5Tclose, "compound type");
  for (const auto& m : l.members) check(H5Tinsert(t, m.name.c_str(), m.offset, m.type), "member " + m.name);
  return t;
}

double canonical(double x) {
  return std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : x;
}

void encode_row(const PointsLayout& l, const Space& space, const PointRecord& r, unsigned char* row) {
  const PointCoordinates c = space.decode(r.index);
  const PointResult& x = r.result;
  std::size_t m = 0;
  auto put = [&](const auto& v) {
    std::memcpy(row + l.members[m].offset, &v, sizeof v);
    ++m;
  };
  put(r.index);
  put(c.subspace);
  for (auto v : c.axis_value) put(v);
  put(static_cast<std::uint8_t>(x.status));
  for (double d : {x.iteration_time_s, x.compute_time_s, x.exposed_comm_time_s, x.bubble_time_s, x.cost_usd,
                   x.memory_per_gpu_bytes, x.samples_per_s, x.network_bisection_Bps})
    put(canonical(d));
  for (std::uint32_t u : {x.dp, x.tp, x.pp, x.microbatches, x.optimizer_rounds}) put(u);
}

struct FailureRow {
  std::uint64_t index;
  std::uint8_t status;
  const char* message;
};

H5Handle failure_type() {
  H5Handle s = vlen_string_type();
  H5Handle t(H5Tcreate(H5T_COMPOUND, sizeof(FailureRow)), H5Tclose, "failure type");
  check(H5Tinsert(t, "index", HOFFSET(FailureRow, index), H5T_NATIVE_UINT64), "failure index");
  check(H5Tinsert(t, "status", HOFFSET(FailureRow, status), H5T_NATIVE_UINT8), "failure status");
  check(H5Tinsert(t, "message", HOFFSET(FailureRow, message), s), "failure message");
  return t;
}

void write_space_group(hid_t file, const Space& space) {
  H5Handle g(H5Gcreate2(file, "space", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "group /space");
  std::string keys;
  for (const auto& a : space.axes()) keys += (keys.empty() ? "" : ",") + a.key;
  write_string_attribute(g, "axes", keys);
  std::vector<std::string> names;
  for (const auto& s : space.subspaces()) names.push_back(s.name);
  write_strings(g, "subspaces", names);
  for (const auto& a : space.axes()) {
    const std::string base = "axes/" + a.key + "/";
    write_strings(g, base + "values", a.values);
    std::vector<double> si;
    for (const auto& v : a.values) {
      auto x = si_value(v);
      if (!x) break;
      si.push_back(*x);
    }
    if (si.size() == a.values.size())
      write_numbers(g, base + "values_si", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, si);
  }
  // How an index decodes (toposweep extension): per sub-space its offset, size and, per axis in
  // significance order, the positions it takes.
  for (const auto& s : space.subspaces()) {
    const std::string base = "layout/" + s.name;
    std::vector<std::uint64_t> range = {s.offset, s.size};
    write_numbers(g, base + "/offset_size", H5T_STD_U64LE, H5T_NATIVE_UINT64, range);
    H5Handle sg(H5Gopen2(g, base.c_str(), H5P_DEFAULT), H5Gclose, "group " + base);
    std::string order;
    for (const auto& a : s.axes) {
      order += (order.empty() ? "" : ",") + space.axes()[a.axis].key;
      write_numbers(sg, space.axes()[a.axis].key, H5T_STD_U32LE, H5T_NATIVE_UINT32, a.positions);
    }
    write_string_attribute(sg, "axes", order);
  }
}

}  // namespace

std::vector<std::string> point_field_names(const Space& space) {
  std::vector<std::string> out;
  for (const auto& m : points_layout(space).members) out.push_back(m.name);
  return out;
}

void write_results_file(const std::string& path, const Space& space, const std::vector<PointRecord>& all_rows,
                        const std::vector<std::uint64_t>& frontier_indices, const ResultsMeta& meta) {
  const std::string tmp = path + ".partial";
  std::filesystem::remove(tmp);
  {
    H5Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create " + tmp);
    write_string_attribute(file, "toposweep_version", version_string());
    write_string_attribute(file, "git_revision", git_revision());
    write_string_attribute(file, "config", meta.config_text);
    write_u64_attribute(file, "space_size", space.size());
    write_string_attribute(file, "created_utc", now_utc());
    char fp[17];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(space.fingerprint()));
    write_string_attribute(file, "space_fingerprint", fp);
    write_string_attribute(file, "slice", meta.slice);
    write_u64_attribute(file, "slice_begin", meta.begin);
    write_u64_attribute(file, "slice_end", meta.end);
    write_string_attribute(file, "keep", meta.keep);
    std::array<std::uint64_t, 3> counts = {0, 0, 0};
    for (const auto& r : all_rows) ++counts[static_cast<std::size_t>(r.result.status)];
    if (meta.status_counts) counts = *meta.status_counts;
    write_u64_attribute(file, "points_evaluated", counts[0]);
    write_u64_attribute(file, "points_infeasible", counts[1]);
    write_u64_attribute(file, "points_failed", counts[2]);

    write_space_group(file, space);

    // /points: all rows, or only the frontier's.
    std::vector<const PointRecord*> rows;
    if (meta.keep == "frontier") {
      std::size_t f = 0;
      for (const auto& r : all_rows) {
        while (f < frontier_indices.size() && frontier_indices[f] < r.index) ++f;
        if (f < frontier_indices.size() && frontier_indices[f] == r.index) rows.push_back(&r);
      }
    } else {
      for (const auto& r : all_rows) rows.push_back(&r);
    }
    const PointsLayout layout = points_layout(space);
    H5Handle type = compound_type(layout);
    const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, (1u << 20) / layout.size);
    H5Handle points = create_1d(file, "points", type, rows.size(), meta.compression, chunk_rows);
    write_string_attribute(points, "units", kUnits);
    // Write in blocks so memory stays bounded for very large sweeps.
    const std::size_t block = 1 << 16;
    std::vector<unsigned char> buf;
    for (std::size_t start = 0; start < rows.size(); start += block) {
      const std::size_t n = std::min(block, rows.size() - start);
      buf.assign(n * layout.size, 0);
      for (std::size_t i = 0; i < n; ++i)
        encode_row(layout, space, *rows[start + i], buf.data() + i * layout.size);
      const hsize_t off[1] = {start}, cnt[1] = {n};
      H5Handle fspace(H5Dget_space(points), H5Sclose, "points space");
      check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, off, nullptr, cnt, nullptr), "select rows");
      H5Handle mspace(H5Screate_simple(1, cnt, nullptr), H5Sclose, "memory space");
      check(H5Dwrite(points, type, mspace, fspace, H5P_DEFAULT, buf.data()), "write /points");
    }

    H5Handle fr = create_1d(file, "frontier", H5T_STD_U64LE, frontier_indices.size());
    if (!frontier_indices.empty())
      check(H5Dwrite(fr, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, frontier_indices.data()),
            "write /frontier");
    write_string_attribute(fr, "objectives", frontier::spell_objectives(meta.objectives));
    write_string_attribute(fr, "group_by", meta.frontier_by);

    std::vector<FailureRow> failures;
    for (const auto& r : all_rows)
      if (r.result.status != PointStatus::Evaluated)
        failures.push_back({r.index, static_cast<std::uint8_t>(r.result.status), r.result.message.c_str()});
    H5Handle ftype = failure_type();
    H5Handle fd = create_1d(file, "failures", ftype, failures.size());
    if (!failures.empty())
      check(H5Dwrite(fd, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, failures.data()), "write /failures");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw RuntimeFailure("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

// ---------------------------------------------------------------- reading

ResultsReader::ResultsReader(const std::string& path, bool writable) : path_(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // report our own one-line errors
  if (!std::filesystem::exists(path)) throw BadInput("no such results file", path);
  if (H5Fis_hdf5(path.c_str()) <= 0) throw BadInput("not an HDF5 file", path);
  file_ = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) throw BadInput("cannot open the HDF5 file", path);
  if (H5Lexists(file_, "points", H5P_DEFAULT) <= 0 || !has_root_attribute("space_size"))
    throw BadInput("not a toposweep results file (no /points or space_size)", path);
}

ResultsReader::~ResultsReader() {
  if (file_ >= 0) H5Fclose(file_);
}

bool ResultsReader::has_root_attribute(const std::string& name) const {
  return H5Aexists(file_, name.c_str()) > 0;
}

std::string ResultsReader::root_string(const std::string& name) const {
  if (!has_root_attribute(name)) throw BadInput("missing root attribute " + name, path_);
  H5Handle attr(H5Aopen(file_, name.c_str(), H5P_DEFAULT), H5Aclose, "attribute " + name);
  H5Handle type = vlen_string_type();
  char* p = nullptr;
  check(H5Aread(attr, type, &p), "read attribute " + name);
  std::string out = p ? p : "";
  H5free_memory(p);
  return out;
}

std::uint64_t ResultsReader::root_u64(const std::string& name) const {
  if (!has_root_attribute(name)) throw BadInput("missing root attribute " + name, path_);
  H5Handle attr(H5Aopen(file_, name.c_str(), H5P_DEFAULT), H5Aclose, "attribute " + name);
  std::uint64_t v = 0;
  check(H5Aread(attr, H5T_NATIVE_UINT64, &v), "read attribute " + name);
  return v;
}

std::vector<std::string> ResultsReader::point_fields() const {
  H5Handle d(H5Dopen2(file_, "points", H5P_DEFAULT), H5Dclose, "open /points");
  H5Handle t(H5Dget_type(d), H5Tclose, "type of /points");
  std::vector<std::string> out;
  const int n = H5Tget_nmembers(t);
  for (int i = 0; i < n; ++i) {
    char* name = H5Tget_member_name(t, static_cast<unsigned>(i));
    out.emplace_back(name);
    H5free_memory(name);
  }
  return out;
}

std::uint64_t ResultsReader::rows() const {
  H5Handle d(H5Dopen2(file_, "points", H5P_DEFAULT), H5Dclose, "open /points");
  H5Handle s(H5Dget_space(d), H5Sclose, "space of /points");
  return static_cast<std::uint64_t>(H5Sget_simple_extent_npoints(s));
}

std::vector<PointRecord> ResultsReader::records() const {
  H5Handle d(H5Dopen2(file_, "points", H5P_DEFAULT), H5Dclose, "open /points");
  H5Handle ftype(H5Dget_type(d), H5Tclose, "type of /points");
  // Read into a memory layout of our own (HDF5 converts by member name), so files written with
  // another axis set or member order still read.
  struct Row {
    std::uint64_t index;
    std::uint8_t status;
    double d[8];
    std::uint32_t u[5];
  };
  H5Handle mtype(H5Tcreate(H5T_COMPOUND, sizeof(Row)), H5Tclose, "memory type");
  check(H5Tinsert(mtype, "index", HOFFSET(Row, index), H5T_NATIVE_UINT64), "member index");
  check(H5Tinsert(mtype, "status", HOFFSET(Row, status), H5T_NATIVE_UINT8), "member status");
  for (int i = 0; i < 8; ++i)
    check(H5Tinsert(mtype, kDoubleFields[i], HOFFSET(Row, d) + i * sizeof(double), H5T_NATIVE_DOUBLE),
          "member");
  for (int i = 0; i < 5; ++i)
    check(H5Tinsert(mtype, kU32Fields[i], HOFFSET(Row, u) + i * sizeof(std::uint32_t), H5T_NATIVE_UINT32),
          "member");
  const std::uint64_t n = rows();
  std::vector<Row> raw(n);
  if (n) check(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), "read /points");
  std::vector<PointRecord> out(n);
  std::map<std::uint64_t, std::size_t> where;
  for (std::uint64_t i = 0; i < n; ++i) {
    const Row& r = raw[i];
    PointRecord& p = out[i];
    p.index = r.index;
    if (r.status > 2) throw BadInput("bad status in /points row " + std::to_string(i), path_);
    p.result.status = static_cast<PointStatus>(r.status);
    PointResult& x = p.result;
    double* ds[] = {
        &x.iteration_time_s, &x.compute_time_s,       &x.exposed_comm_time_s, &x.bubble_time_s,
        &x.cost_usd,         &x.memory_per_gpu_bytes, &x.samples_per_s,       &x.network_bisection_Bps};
    for (int k = 0; k < 8; ++k) *ds[k] = r.d[k];
    std::uint32_t* us[] = {&x.dp, &x.tp, &x.pp, &x.microbatches, &x.optimizer_rounds};
    for (int k = 0; k < 5; ++k) *us[k] = r.u[k];
    if (x.status != PointStatus::Evaluated) where[p.index] = i;
  }
  if (H5Lexists(file_, "failures", H5P_DEFAULT) > 0) {
    H5Handle fd(H5Dopen2(file_, "failures", H5P_DEFAULT), H5Dclose, "open /failures");
    H5Handle fs(H5Dget_space(fd), H5Sclose, "space of /failures");
    const auto m = static_cast<std::size_t>(H5Sget_simple_extent_npoints(fs));
    H5Handle ft = failure_type();
    std::vector<FailureRow> f(m);
    if (m) {
      check(H5Dread(fd, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.data()), "read /failures");
      for (const auto& row : f)
        if (auto it = where.find(row.index); it != where.end()) out[it->second].result.message = row.message;
      H5Dvlen_reclaim(ft, fs, H5P_DEFAULT, f.data());
    }
  }
  return out;
}

namespace {

std::vector<std::string> read_strings(hid_t loc, const std::string& name) {
  H5Handle d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "open " + name);
  H5Handle s(H5Dget_space(d), H5Sclose, "space of " + name);
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(s));
  std::vector<char*> ptrs(n, nullptr);
  H5Handle type = vlen_string_type();
  if (n) check(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "read " + name);
  std::vector<std::string> out;
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  if (n) H5Dvlen_reclaim(type, s, H5P_DEFAULT, ptrs.data());
  return out;
}

template <class T>
std::vector<T> read_numbers(hid_t loc, const std::string& name, hid_t mem_type) {
  H5Handle d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "open " + name);
  H5Handle s(H5Dget_space(d), H5Sclose, "space of " + name);
  std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s)));
  if (!out.empty()) check(H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), "read " + name);
  return out;
}

std::string read_string_attribute(hid_t loc, const std::string& name) {
  H5Handle attr(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose, "attribute " + name);
  H5Handle type = vlen_string_type();
  char* p = nullptr;
  check(H5Aread(attr, type, &p), "read attribute " + name);
  std::string out = p ? p : "";
  H5free_memory(p);
  return out;
}

}  // namespace

Space ResultsReader::space() const {
  try {
    Config base;
    load_ini_text(base, root_string("config"), path_ + ": attribute config");
    std::vector<std::string> swept;
    for (const auto& [k, e] : base.entries())
      if (k.starts_with("space.")) swept.push_back(k);
    for (const auto& k : swept) base.erase(k);
    H5Handle g(H5Gopen2(file_, "space", H5P_DEFAULT), H5Gclose, "open /space");
    const std::string keys = read_string_attribute(g, "axes");
    std::vector<Axis> axes;
    std::map<std::string, std::size_t> axis_of;
    for (const auto& key : split_list(keys)) {
      Axis a;
      a.key = key;
      a.kind = key == "strategy"   ? AxisKind::Strategy
               : key == "optimize" ? AxisKind::Optimize
                                   : AxisKind::Plain;
      a.values = read_strings(g, "axes/" + key + "/values");
      axis_of[key] = axes.size();
      axes.push_back(std::move(a));
    }
    std::vector<SubSpace> subspaces;
    for (const auto& name : read_strings(g, "subspaces")) {
      SubSpace s;
      s.name = name;
      H5Handle sg(H5Gopen2(g, ("layout/" + name).c_str(), H5P_DEFAULT), H5Gclose,
                  "open /space/layout/" + name);
      for (const auto& key : split_list(read_string_attribute(sg, "axes"))) {
        SubSpaceAxis sa;
        sa.axis = axis_of.at(key);
        sa.positions = read_numbers<std::uint32_t>(sg, key, H5T_NATIVE_UINT32);
        for (auto p : sa.positions)
          if (p >= axes[sa.axis].values.size()) throw RuntimeFailure("axis position out of range");
        s.axes.push_back(std::move(sa));
      }
      subspaces.push_back(std::move(s));
    }
    Space space(std::move(base), std::move(axes), std::move(subspaces));
    if (space.size() != root_u64("space_size")) throw RuntimeFailure("space size does not match");
    return space;
  } catch (const RuntimeFailure& e) {
    throw BadInput(std::string("malformed /space group: ") + e.what(), path_);
  } catch (const std::out_of_range&) {
    throw BadInput("malformed /space group: an axis of a sub-space is not listed in /space axes", path_);
  }
}

std::vector<std::uint64_t> ResultsReader::frontier() const {
  std::vector<std::uint64_t> out;
  if (H5Lexists(file_, "frontier", H5P_DEFAULT) <= 0) return out;
  H5Handle d(H5Dopen2(file_, "frontier", H5P_DEFAULT), H5Dclose, "open /frontier");
  H5Handle s(H5Dget_space(d), H5Sclose, "space of /frontier");
  out.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s)));
  if (!out.empty())
    check(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), "read /frontier");
  return out;
}

std::string ResultsReader::frontier_objectives() const {
  H5Handle d(H5Dopen2(file_, "frontier", H5P_DEFAULT), H5Dclose, "open /frontier");
  H5Handle attr(H5Aopen(d, "objectives", H5P_DEFAULT), H5Aclose, "attribute objectives");
  H5Handle type = vlen_string_type();
  char* p = nullptr;
  check(H5Aread(attr, type, &p), "read objectives");
  std::string out = p ? p : "";
  H5free_memory(p);
  return out;
}

std::string ResultsReader::frontier_group_by() const {
  if (H5Lexists(file_, "frontier", H5P_DEFAULT) <= 0) return "none";
  H5Handle d(H5Dopen2(file_, "frontier", H5P_DEFAULT), H5Dclose, "open /frontier");
  if (H5Aexists(d, "group_by") <= 0) return "none";
  return read_string_attribute(d, "group_by");
}

void ResultsReader::write_frontier(const std::vector<std::uint64_t>& indices, const std::string& objectives,
                                   const std::string& group_by) {
  if (H5Lexists(file_, "frontier", H5P_DEFAULT) > 0)
    check(H5Ldelete(file_, "frontier", H5P_DEFAULT), "delete /frontier");
  H5Handle fr = create_1d(file_, "frontier", H5T_STD_U64LE, indices.size());
  if (!indices.empty())
    check(H5Dwrite(fr, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, indices.data()), "write /frontier");
  write_string_attribute(fr, "objectives", objectives);
  write_string_attribute(fr, "group_by", group_by);
}

}  // namespace toposweep::sweep

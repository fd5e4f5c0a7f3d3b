#include "h5.hpp"

#include <algorithm>

namespace toposweep::sweep::h5 {
namespace {

// While alive, HDF5 does not print its error stack: one call's failure becomes an exception.
// The previous handler (the process's, whatever it is) comes back when it ends.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

herr_t take_innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
  return 0;
}

// HDF5's description of the failure where it was detected (the innermost entry of its stack).
std::string reason() {
  std::string desc;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, &desc);
  H5Eclear2(H5E_DEFAULT);
  return desc.empty() ? "HDF5 gave no reason" : desc;
}

// Runs one HDF5 call quietly; a negative result throws Error("HDF5: cannot <what>: <reason>").
template <class F>
auto call(const std::string& what, F&& f) {
  QuietErrors quiet;
  const auto result = f();
  if (result < 0) throw Error("HDF5: cannot " + what + ": " + reason());
  return result;
}

}  // namespace

// ---------------------------------------------------------------- types and spaces

Datatype Datatype::vlen_string() {
  Datatype t(call("copy the string type", [] { return H5Tcopy(H5T_C_S1); }));
  call("make the string type variable-length", [&] { return H5Tset_size(t.get(), H5T_VARIABLE); });
  call("set the string type's character set", [&] { return H5Tset_cset(t.get(), H5T_CSET_UTF8); });
  return t;
}

Datatype Datatype::compound(std::size_t size) {
  return Datatype(call("create a compound type", [&] { return H5Tcreate(H5T_COMPOUND, size); }));
}

void Datatype::insert(const std::string& member, std::size_t offset, hid_t type) {
  call("add member " + member + " to a compound type",
       [&] { return H5Tinsert(get(), member.c_str(), offset, type); });
}

std::vector<std::string> Datatype::member_names() const {
  const int n = call("count the members of a compound type", [&] { return H5Tget_nmembers(get()); });
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    char* name = nullptr;
    QuietErrors quiet;
    name = H5Tget_member_name(get(), static_cast<unsigned>(i));
    if (!name) throw Error("HDF5: cannot read the name of a compound member: " + reason());
    out.emplace_back(name);
    H5free_memory(name);
  }
  return out;
}

Dataspace Dataspace::scalar() {
  return Dataspace(call("create a scalar dataspace", [] { return H5Screate(H5S_SCALAR); }));
}

Dataspace Dataspace::of_1d(std::uint64_t n) {
  const hsize_t dims[1] = {n};
  return Dataspace(call("create a dataspace", [&] { return H5Screate_simple(1, dims, nullptr); }));
}

Dataspace Dataspace::of_1d_extensible(std::uint64_t n) {
  const hsize_t dims[1] = {n}, maxdims[1] = {H5S_UNLIMITED};
  return Dataspace(call("create a dataspace", [&] { return H5Screate_simple(1, dims, maxdims); }));
}

std::uint64_t Dataspace::points() const {
  return static_cast<std::uint64_t>(
      call("count the points of a dataspace", [&] { return H5Sget_simple_extent_npoints(get()); }));
}

void Dataspace::select_rows(std::uint64_t first, std::uint64_t count) {
  const hsize_t off[1] = {first}, cnt[1] = {count};
  call("select rows", [&] { return H5Sselect_hyperslab(get(), H5S_SELECT_SET, off, nullptr, cnt, nullptr); });
}

DatasetCreation::DatasetCreation()
    : Id(call("create dataset properties", [] { return H5Pcreate(H5P_DATASET_CREATE); })) {}

void DatasetCreation::chunk_1d(std::uint64_t rows) {
  const hsize_t chunk[1] = {rows};
  call("set the chunk size", [&] { return H5Pset_chunk(get(), 1, chunk); });
}

void DatasetCreation::shuffle_and_deflate(int level) {
  call("add the shuffle filter", [&] { return H5Pset_shuffle(get()); });
  call("add the deflate filter", [&] { return H5Pset_deflate(get(), static_cast<unsigned>(level)); });
}

// ---------------------------------------------------------------- attributes

std::string Attribute::read_string() const {
  const Datatype type = Datatype::vlen_string();
  char* p = nullptr;
  call("read a string attribute", [&] { return H5Aread(get(), type.get(), &p); });
  std::string out = p ? p : "";
  H5free_memory(p);
  return out;
}

std::uint64_t Attribute::read_u64() const {
  std::uint64_t v = 0;
  call("read an integer attribute", [&] { return H5Aread(get(), H5T_NATIVE_UINT64, &v); });
  return v;
}

template <herr_t (*Close)(hid_t)>
bool Object<Close>::has_attribute(const std::string& name) const {
  return call("look for attribute " + name, [&] { return H5Aexists(this->get(), name.c_str()); }) > 0;
}

template <herr_t (*Close)(hid_t)>
Attribute Object<Close>::open_attribute(const std::string& name) const {
  return Attribute(
      call("open attribute " + name, [&] { return H5Aopen(this->get(), name.c_str(), H5P_DEFAULT); }));
}

template <herr_t (*Close)(hid_t)>
void Object<Close>::write_attribute(const std::string& name, const std::string& value) const {
  const Datatype type = Datatype::vlen_string();
  const Dataspace space = Dataspace::scalar();
  const Attribute attr(call("create attribute " + name, [&] {
    return H5Acreate2(this->get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT);
  }));
  const char* p = value.c_str();
  call("write attribute " + name, [&] { return H5Awrite(attr.get(), type.get(), &p); });
}

template <herr_t (*Close)(hid_t)>
void Object<Close>::write_attribute(const std::string& name, std::uint64_t value) const {
  const Dataspace space = Dataspace::scalar();
  const Attribute attr(call("create attribute " + name, [&] {
    return H5Acreate2(this->get(), name.c_str(), H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT);
  }));
  call("write attribute " + name, [&] { return H5Awrite(attr.get(), H5T_NATIVE_UINT64, &value); });
}

// ---------------------------------------------------------------- links, groups, datasets

template <herr_t (*Close)(hid_t)>
bool Location<Close>::has_link(const std::string& name) const {
  return call("look for " + name, [&] { return H5Lexists(this->get(), name.c_str(), H5P_DEFAULT); }) > 0;
}

template <herr_t (*Close)(hid_t)>
void Location<Close>::remove_link(const std::string& name) const {
  call("delete " + name, [&] { return H5Ldelete(this->get(), name.c_str(), H5P_DEFAULT); });
}

template <herr_t (*Close)(hid_t)>
Group Location<Close>::create_group(const std::string& name) const {
  return Group(call("create group " + name, [&] {
    return H5Gcreate2(this->get(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  }));
}

template <herr_t (*Close)(hid_t)>
Group Location<Close>::open_group(const std::string& name) const {
  return Group(call("open group " + name, [&] { return H5Gopen2(this->get(), name.c_str(), H5P_DEFAULT); }));
}

template <herr_t (*Close)(hid_t)>
Dataset Location<Close>::open_dataset(const std::string& name) const {
  return Dataset(
      call("open dataset " + name, [&] { return H5Dopen2(this->get(), name.c_str(), H5P_DEFAULT); }));
}

template <herr_t (*Close)(hid_t)>
Dataset Location<Close>::create_dataset_1d(const std::string& name, hid_t type, std::uint64_t rows,
                                           const DatasetCreation& properties) const {
  const Dataspace space = Dataspace::of_1d_extensible(rows);
  const Id<H5Pclose> links(call("create link properties", [] { return H5Pcreate(H5P_LINK_CREATE); }));
  call("ask for intermediate groups", [&] { return H5Pset_create_intermediate_group(links.get(), 1); });
  return Dataset(call("create dataset " + name, [&] {
    return H5Dcreate2(this->get(), name.c_str(), type, space.get(), links.get(), properties.get(),
                      H5P_DEFAULT);
  }));
}

template class Object<H5Fclose>;
template class Object<H5Gclose>;
template class Object<H5Dclose>;
template class Location<H5Fclose>;
template class Location<H5Gclose>;

bool File::is_hdf5(const std::string& path) {
  QuietErrors quiet;
  const htri_t r = H5Fis_hdf5(path.c_str());
  if (r < 0) H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

File File::create(const std::string& path) {
  return File(call("create " + path,
                   [&] { return H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); }));
}

File File::open(const std::string& path, bool writable) {
  return File(call("open " + path, [&] {
    return H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  }));
}

Datatype Dataset::type() const {
  return Datatype(call("read a dataset's type", [&] { return H5Dget_type(get()); }));
}

Dataspace Dataset::space() const {
  return Dataspace(call("read a dataset's dataspace", [&] { return H5Dget_space(get()); }));
}

void Dataset::write(hid_t mem_type, const void* data) const {
  call("write a dataset", [&] { return H5Dwrite(get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data); });
}

void Dataset::write_rows(hid_t mem_type, std::uint64_t first, std::uint64_t count, const void* data) const {
  Dataspace in_file = space();
  in_file.select_rows(first, count);
  const Dataspace in_memory = Dataspace::of_1d(count);
  call("write rows of a dataset",
       [&] { return H5Dwrite(get(), mem_type, in_memory.get(), in_file.get(), H5P_DEFAULT, data); });
}

void Dataset::read(hid_t mem_type, void* data) const {
  call("read a dataset", [&] { return H5Dread(get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data); });
}

void Dataset::reclaim(hid_t mem_type, void* data) const {
  const Dataspace s = space();
  call("free variable-length data", [&] { return H5Dvlen_reclaim(mem_type, s.get(), H5P_DEFAULT, data); });
}

std::vector<std::string> read_strings(const Dataset& d) {
  const std::size_t n = d.rows();
  std::vector<char*> ptrs(n, nullptr);
  const Datatype type = Datatype::vlen_string();
  if (n) d.read(type.get(), ptrs.data());
  std::vector<std::string> out;
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  if (n) d.reclaim(type.get(), ptrs.data());
  return out;
}

void write_strings(const Dataset& d, const std::vector<std::string>& values) {
  const Datatype type = Datatype::vlen_string();
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (!ptrs.empty()) d.write(type.get(), ptrs.data());
}

}  // namespace toposweep::sweep::h5

#pragma once
// Private to the sweep module: the few HDF5 C calls the results file needs, each wrapped once.
// Every identifier is owned by an RAII type of its kind (closed with its own H5?close), and every
// call that can fail runs with HDF5's automatic error printing off for that call only (the
// process-wide setting is restored after it) and throws h5::Error with what was being done and
// HDF5's own description of the failure.
// Only the C API of MPI is used (hdf5.h pulls in mpi.h); skip its C++ bindings.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/util/error.hpp"

namespace toposweep::sweep::h5 {

// An HDF5 call failed. A RuntimeFailure: the results file's reader turns it into BadInput naming
// the file, its writer adds the file name.
class Error : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// Owns one identifier of the kind `Close` closes.
template <herr_t (*Close)(hid_t)>
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}  // adopts a valid id (the wrappers check the call first)
  ~Id() { reset(); }
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, -1)) {}
  Id& operator=(Id&& o) noexcept {
    if (this != &o) reset(), id_ = std::exchange(o.id_, -1);
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }

 private:
  void reset() {
    if (id_ >= 0) Close(id_);
    id_ = -1;
  }
  hid_t id_ = -1;
};

class Datatype : public Id<H5Tclose> {
 public:
  using Id::Id;
  static Datatype vlen_string();  // UTF-8, variable length
  static Datatype compound(std::size_t size);
  void insert(const std::string& member, std::size_t offset, hid_t type);  // compound member
  std::vector<std::string> member_names() const;                           // compound members
};

class Dataspace : public Id<H5Sclose> {
 public:
  using Id::Id;
  static Dataspace scalar();
  static Dataspace of_1d(std::uint64_t n);             // fixed size n
  static Dataspace of_1d_extensible(std::uint64_t n);  // size n, unlimited
  std::uint64_t points() const;
  void select_rows(std::uint64_t first, std::uint64_t count);  // a hyperslab of a 1-D space
};

// Dataset creation properties: chunking and filters.
class DatasetCreation : public Id<H5Pclose> {
 public:
  DatasetCreation();
  void chunk_1d(std::uint64_t rows);
  void shuffle_and_deflate(int level);
};

class Attribute : public Id<H5Aclose> {
 public:
  using Id::Id;
  std::string read_string() const;
  std::uint64_t read_u64() const;
};

class Dataset;
class Group;

// What files, groups and datasets share: attributes (and links, for files and groups).
template <herr_t (*Close)(hid_t)>
class Object : public Id<Close> {
 public:
  using Id<Close>::Id;
  bool has_attribute(const std::string& name) const;
  Attribute open_attribute(const std::string& name) const;
  void write_attribute(const std::string& name, const std::string& value) const;
  void write_attribute(const std::string& name, std::uint64_t value) const;  // stored as uint64 LE
};

template <herr_t (*Close)(hid_t)>
class Location : public Object<Close> {
 public:
  using Object<Close>::Object;
  bool has_link(const std::string& name) const;
  void remove_link(const std::string& name) const;
  Group create_group(const std::string& name) const;
  Group open_group(const std::string& name) const;
  Dataset open_dataset(const std::string& name) const;
  // A 1-D dataset of `type` and `rows` rows, chunked (so that an empty one is fine), created with
  // its intermediate groups.
  Dataset create_dataset_1d(const std::string& name, hid_t type, std::uint64_t rows,
                            const DatasetCreation& properties) const;
};

class Group : public Location<H5Gclose> {
 public:
  using Location::Location;
};

class File : public Location<H5Fclose> {
 public:
  using Location::Location;
  static bool is_hdf5(const std::string& path);
  static File create(const std::string& path);  // truncates
  static File open(const std::string& path, bool writable);
};

class Dataset : public Object<H5Dclose> {
 public:
  using Object::Object;
  Datatype type() const;
  Dataspace space() const;
  std::uint64_t rows() const { return space().points(); }
  void write(hid_t mem_type, const void* data) const;  // the whole dataset
  void write_rows(hid_t mem_type, std::uint64_t first, std::uint64_t count, const void* data) const;
  void read(hid_t mem_type, void* data) const;  // the whole dataset
  // Frees what a read of variable-length data (strings) allocated in `data`.
  void reclaim(hid_t mem_type, void* data) const;
};

// Convenience for the 1-D datasets of the results file.
std::vector<std::string> read_strings(const Dataset& d);
void write_strings(const Dataset& d, const std::vector<std::string>& values);
template <class T>
std::vector<T> read_numbers(const Dataset& d, hid_t mem_type) {
  std::vector<T> out(d.rows());
  if (!out.empty()) d.read(mem_type, out.data());
  return out;
}

}  // namespace toposweep::sweep::h5

#include "toposweep/sweep/results_file.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "h5.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/util/version.hpp"

namespace toposweep::sweep {

namespace h5 {
// The reader's file, a complete type only here.
class ReaderFile : public File {
 public:
  explicit ReaderFile(File f) : File(std::move(f)) {}
};
}  // namespace h5

namespace {

// A 1-D chunked dataset (chunked so that empty datasets are fine and it can be extended).
template <class Loc>
h5::Dataset create_1d(const Loc& loc, const std::string& name, hid_t type, std::uint64_t n, int deflate = 0,
                      std::uint64_t chunk_rows = 4096) {
  h5::DatasetCreation properties;
  properties.chunk_1d(std::max<std::uint64_t>(1, std::min<std::uint64_t>(n, chunk_rows)));
  if (deflate > 0 && n > 0) properties.shuffle_and_deflate(deflate);
  return loc.create_dataset_1d(name, type, n, properties);
}

template <class Loc>
void write_strings(const Loc& loc, const std::string& name, const std::vector<std::string>& values) {
  const h5::Datatype type = h5::Datatype::vlen_string();
  h5::write_strings(create_1d(loc, name, type.get(), values.size()), values);
}

template <class Loc, class T>
void write_numbers(const Loc& loc, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<T>& v) {
  const h5::Dataset d = create_1d(loc, name, file_type, v.size());
  if (!v.empty()) d.write(mem_type, v.data());
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

hid_t file_type(FieldType t) {
  return t == FieldType::F64 ? H5T_IEEE_F64LE : H5T_STD_U32LE;
}

// /points' `units` attribute: the row keys, every result field, then what axis fields hold.
std::string points_units() {
  std::string out = "index=1;subspace=1;status=1";
  for (const ResultField& f : kResultFields) out.append(";").append(f.name).append("=").append(f.unit);
  return out + ";axis fields=position in /space/axes/<key>/values";
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
  void add(const std::string& name, hid_t type) {
    members.push_back({name, type, size});
    size += H5Tget_size(type);
  }
};

PointsLayout points_layout(const Space& space) {
  PointsLayout l;
  l.add("index", H5T_STD_U64LE);
  l.add("subspace", H5T_STD_U32LE);
  for (const auto& a : space.axes()) l.add(a.key, H5T_STD_U32LE);
  l.add("status", H5T_STD_U8LE);
  for (const ResultField& f : kResultFields) l.add(std::string(f.name), file_type(f.type()));
  return l;
}

h5::Datatype compound_type(const PointsLayout& l) {
  h5::Datatype t = h5::Datatype::compound(l.size);
  for (const auto& m : l.members) t.insert(m.name, m.offset, m.type);
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
  for (const ResultField& f : kResultFields) {
    if (f.f64)
      put(canonical(x.*f.f64));
    else
      put(x.*f.u32);
  }
}

struct FailureRow {
  std::uint64_t index;
  std::uint8_t status;
  const char* message;
};

h5::Datatype failure_type() {
  const h5::Datatype s = h5::Datatype::vlen_string();
  h5::Datatype t = h5::Datatype::compound(sizeof(FailureRow));
  t.insert("index", HOFFSET(FailureRow, index), H5T_NATIVE_UINT64);
  t.insert("status", HOFFSET(FailureRow, status), H5T_NATIVE_UINT8);
  t.insert("message", HOFFSET(FailureRow, message), s.get());
  return t;
}

void write_space_group(const h5::File& file, const Space& space) {
  const h5::Group g = file.create_group("space");
  std::string keys;
  for (const auto& a : space.axes()) keys += (keys.empty() ? "" : ",") + a.key;
  g.write_attribute("axes", keys);
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
    const h5::Group sg = g.open_group(base);
    std::string order;
    for (const auto& a : s.axes) {
      order += (order.empty() ? "" : ",") + space.axes()[a.axis].key;
      write_numbers(sg, space.axes()[a.axis].key, H5T_STD_U32LE, H5T_NATIVE_UINT32, a.positions);
    }
    sg.write_attribute("axes", order);
  }
}

void write_frontier_dataset(const h5::File& file, const std::vector<std::uint64_t>& indices,
                            const std::string& objectives, const std::string& group_by) {
  const h5::Dataset fr = create_1d(file, "frontier", H5T_STD_U64LE, indices.size());
  if (!indices.empty()) fr.write(H5T_NATIVE_UINT64, indices.data());
  fr.write_attribute("objectives", objectives);
  fr.write_attribute("group_by", group_by);
}

// A failed HDF5 call while reading a results file: the file is not what it should be.
template <class F>
auto reading(const std::string& path, F&& f) {
  try {
    return f();
  } catch (const h5::Error& e) {
    throw BadInput(e.what(), path);
  }
}

// A failed HDF5 call while writing: a runtime failure, naming the file.
template <class F>
auto writing(const std::string& path, F&& f) {
  try {
    return f();
  } catch (const h5::Error& e) {
    throw RuntimeFailure(std::string(e.what()) + " (writing " + path + ")");
  }
}

}  // namespace

std::string spell_keep(Keep keep) {
  return keep == Keep::Frontier ? "frontier" : "all";
}

Keep parse_keep(const std::string& text, const std::string& where) {
  if (text == "all") return Keep::All;
  if (text == "frontier") return Keep::Frontier;
  throw BadInput("--keep takes all or frontier", where);
}

std::vector<std::string> point_field_names(const Space& space) {
  std::vector<std::string> out;
  for (const auto& m : points_layout(space).members) out.push_back(m.name);
  return out;
}

void write_results_file(const std::string& path, const Space& space, const std::vector<PointRecord>& all_rows,
                        const std::vector<std::uint64_t>& frontier_indices, const ResultsMeta& meta) {
  const std::string tmp = path + ".partial";
  std::filesystem::remove(tmp);
  writing(path, [&] {
    const h5::File file = h5::File::create(tmp);
    file.write_attribute("toposweep_version", version_string());
    file.write_attribute("git_revision", git_revision());
    file.write_attribute("config", meta.config_text);
    file.write_attribute("space_size", std::uint64_t{space.size()});
    file.write_attribute("created_utc", now_utc());
    char fp[17];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(space.fingerprint()));
    file.write_attribute("space_fingerprint", std::string(fp));
    file.write_attribute("slice", meta.slice);
    file.write_attribute("slice_begin", std::uint64_t{meta.begin});
    file.write_attribute("slice_end", std::uint64_t{meta.end});
    file.write_attribute("keep", spell_keep(meta.keep));
    std::array<std::uint64_t, 3> counts = {0, 0, 0};
    for (const auto& r : all_rows) ++counts[static_cast<std::size_t>(r.result.status)];
    if (meta.status_counts) counts = *meta.status_counts;
    file.write_attribute("points_evaluated", counts[0]);
    file.write_attribute("points_infeasible", counts[1]);
    file.write_attribute("points_failed", counts[2]);

    write_space_group(file, space);

    // /points: all rows, or only the frontier's.
    std::vector<const PointRecord*> rows;
    if (meta.keep == Keep::Frontier) {
      for (std::size_t i : frontier_positions(all_rows, frontier_indices)) rows.push_back(&all_rows[i]);
    } else {
      for (const auto& r : all_rows) rows.push_back(&r);
    }
    const PointsLayout layout = points_layout(space);
    const h5::Datatype type = compound_type(layout);
    const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, (1u << 20) / layout.size);
    const h5::Dataset points =
        create_1d(file, "points", type.get(), rows.size(), meta.compression, chunk_rows);
    points.write_attribute("units", points_units());
    // Write in blocks so memory stays bounded for very large sweeps.
    const std::size_t block = 1 << 16;
    std::vector<unsigned char> buf;
    for (std::size_t start = 0; start < rows.size(); start += block) {
      const std::size_t n = std::min(block, rows.size() - start);
      buf.assign(n * layout.size, 0);
      for (std::size_t i = 0; i < n; ++i)
        encode_row(layout, space, *rows[start + i], buf.data() + i * layout.size);
      points.write_rows(type.get(), start, n, buf.data());
    }

    write_frontier_dataset(file, frontier_indices, frontier::spell_objectives(meta.objectives),
                           meta.frontier_by);

    std::vector<FailureRow> failures;
    for (const auto& r : all_rows)
      if (r.result.status != PointStatus::Evaluated)
        failures.push_back({r.index, static_cast<std::uint8_t>(r.result.status), r.result.message.c_str()});
    const h5::Datatype ftype = failure_type();
    const h5::Dataset fd = create_1d(file, "failures", ftype.get(), failures.size());
    if (!failures.empty()) fd.write(ftype.get(), failures.data());
  });
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw RuntimeFailure("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

// ---------------------------------------------------------------- reading

ResultsReader::ResultsReader(const std::string& path, bool writable) : path_(path) {
  if (!std::filesystem::exists(path)) throw BadInput("no such results file", path);
  if (!h5::File::is_hdf5(path)) throw BadInput("not an HDF5 file", path);
  file_ = reading(path, [&] { return std::make_unique<h5::ReaderFile>(h5::File::open(path, writable)); });
  if (!reading(path, [&] { return file_->has_link("points") && file_->has_attribute("space_size"); }))
    throw BadInput("not a toposweep results file (no /points or space_size)", path);
}

ResultsReader::~ResultsReader() = default;

bool ResultsReader::has_root_attribute(const std::string& name) const {
  return reading(path_, [&] { return file_->has_attribute(name); });
}

std::string ResultsReader::root_string(const std::string& name) const {
  if (!has_root_attribute(name)) throw BadInput("missing root attribute " + name, path_);
  return reading(path_, [&] { return file_->open_attribute(name).read_string(); });
}

std::uint64_t ResultsReader::root_u64(const std::string& name) const {
  if (!has_root_attribute(name)) throw BadInput("missing root attribute " + name, path_);
  return reading(path_, [&] { return file_->open_attribute(name).read_u64(); });
}

std::vector<std::string> ResultsReader::point_fields() const {
  return reading(path_, [&] { return file_->open_dataset("points").type().member_names(); });
}

std::uint64_t ResultsReader::rows() const {
  return reading(path_, [&] { return file_->open_dataset("points").rows(); });
}

std::vector<PointRecord> ResultsReader::records() const {
  return reading(path_, [&] {
    const h5::Dataset d = file_->open_dataset("points");
    const auto in_file = d.type().member_names();
    auto has = [&](std::string_view name) {
      return std::find(in_file.begin(), in_file.end(), name) != in_file.end();
    };
    for (const char* key : {"index", "status"})
      if (!has(key)) throw BadInput(std::string("/points has no field ") + key, path_);
    // Read into a packed memory layout of our own (HDF5 converts by member name), so files written
    // with another axis set or member order still read; a result field the file lacks (written
    // before the field existed) keeps its PointResult default.
    constexpr std::size_t kIndex = 0, kStatus = sizeof(std::uint64_t);
    std::size_t size = kStatus + sizeof(std::uint8_t);
    std::vector<std::pair<const ResultField*, std::size_t>> present;  // field, offset
    for (const ResultField& f : kResultFields)
      if (has(f.name)) present.emplace_back(&f, size), size += f.size();
    h5::Datatype mtype = h5::Datatype::compound(size);
    mtype.insert("index", kIndex, H5T_NATIVE_UINT64);
    mtype.insert("status", kStatus, H5T_NATIVE_UINT8);
    for (const auto& [f, offset] : present)
      mtype.insert(std::string(f->name), offset, f->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT32);
    const std::uint64_t n = d.rows();
    std::vector<unsigned char> raw(n * size);
    if (n) d.read(mtype.get(), raw.data());
    std::vector<PointRecord> out(n);
    std::map<std::uint64_t, std::size_t> where;
    for (std::uint64_t i = 0; i < n; ++i) {
      const unsigned char* row = raw.data() + i * size;
      PointRecord& p = out[i];
      std::memcpy(&p.index, row + kIndex, sizeof p.index);
      if (i > 0 && p.index <= out[i - 1].index)  // the schema's promise, which lookups rely on
        throw BadInput("/points row " + std::to_string(i) + " is not in ascending index order", path_);
      const std::uint8_t status = row[kStatus];
      if (status > 2) throw BadInput("bad status in /points row " + std::to_string(i), path_);
      PointResult& x = p.result;
      x.status = static_cast<PointStatus>(status);
      for (const auto& [f, offset] : present) {
        if (f->f64)
          std::memcpy(&(x.*f->f64), row + offset, sizeof(double));
        else
          std::memcpy(&(x.*f->u32), row + offset, sizeof(std::uint32_t));
      }
      if (x.status != PointStatus::Evaluated) where[p.index] = i;
    }
    if (file_->has_link("failures")) {
      const h5::Dataset fd = file_->open_dataset("failures");
      const auto m = static_cast<std::size_t>(fd.rows());
      const h5::Datatype ft = failure_type();
      std::vector<FailureRow> f(m);
      if (m) {
        fd.read(ft.get(), f.data());
        for (const auto& row : f)
          if (auto it = where.find(row.index); it != where.end())
            out[it->second].result.message = row.message;
        fd.reclaim(ft.get(), f.data());
      }
    }
    return out;
  });
}

Space ResultsReader::space() const {
  try {
    Config base;
    load_ini_text(base, root_string("config"), path_ + ": attribute config");
    std::vector<std::string> swept;
    for (const auto& [k, e] : base.entries())
      if (k.starts_with("space.")) swept.push_back(k);
    for (const auto& k : swept) base.erase(k);
    const h5::Group g = file_->open_group("space");
    const std::string keys = g.open_attribute("axes").read_string();
    std::vector<Axis> axes;
    std::map<std::string, std::size_t> axis_of;
    for (const auto& key : split_list(keys)) {
      Axis a;
      a.key = key;
      a.kind = key == "strategy"   ? AxisKind::Strategy
               : key == "optimize" ? AxisKind::Optimize
                                   : AxisKind::Plain;
      a.values = h5::read_strings(g.open_dataset("axes/" + key + "/values"));
      axis_of[key] = axes.size();
      axes.push_back(std::move(a));
    }
    std::vector<SubSpace> subspaces;
    for (const auto& name : h5::read_strings(g.open_dataset("subspaces"))) {
      SubSpace s;
      s.name = name;
      const h5::Group sg = g.open_group("layout/" + name);
      for (const auto& key : split_list(sg.open_attribute("axes").read_string())) {
        SubSpaceAxis sa;
        sa.axis = axis_of.at(key);
        sa.positions = h5::read_numbers<std::uint32_t>(sg.open_dataset(key), H5T_NATIVE_UINT32);
        for (auto p : sa.positions)
          if (p >= axes[sa.axis].values.size()) throw RuntimeFailure("axis position out of range");
        s.axes.push_back(std::move(sa));
      }
      subspaces.push_back(std::move(s));
    }
    Space space(std::move(base), std::move(axes), std::move(subspaces));
    if (space.size() != root_u64("space_size")) throw RuntimeFailure("space size does not match");
    return space;
  } catch (const RuntimeFailure& e) {  // h5::Error included
    throw BadInput(std::string("malformed /space group: ") + e.what(), path_);
  } catch (const std::out_of_range&) {
    throw BadInput("malformed /space group: an axis of a sub-space is not listed in /space axes", path_);
  }
}

std::vector<std::uint64_t> ResultsReader::frontier() const {
  return reading(path_, [&] {
    std::vector<std::uint64_t> out;
    if (!file_->has_link("frontier")) return out;
    return h5::read_numbers<std::uint64_t>(file_->open_dataset("frontier"), H5T_NATIVE_UINT64);
  });
}

std::string ResultsReader::frontier_objectives() const {
  return reading(path_,
                 [&] { return file_->open_dataset("frontier").open_attribute("objectives").read_string(); });
}

std::string ResultsReader::frontier_group_by() const {
  return reading(path_, [&] {
    if (!file_->has_link("frontier")) return std::string("none");
    const h5::Dataset d = file_->open_dataset("frontier");
    if (!d.has_attribute("group_by")) return std::string("none");
    return d.open_attribute("group_by").read_string();
  });
}

void ResultsReader::write_frontier(const std::vector<std::uint64_t>& indices, const std::string& objectives,
                                   const std::string& group_by) {
  writing(path_, [&] {
    if (file_->has_link("frontier")) file_->remove_link("frontier");
    write_frontier_dataset(*file_, indices, objectives, group_by);
  });
}

}  // namespace toposweep::sweep

#include "toposweep/sweep/report.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "toposweep/sweep/columns.hpp"

namespace toposweep::sweep {
namespace {

// Tables round for reading; CSV keeps every digit (shortest round-trip form).
std::string number(double v, bool exact) {
  char buf[40];
  std::snprintf(buf, sizeof buf, exact ? "%.17g" : "%.6g", v);
  return buf;
}

}  // namespace

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::uint64_t> sample_indices(std::uint64_t size, std::size_t sample) {
  std::vector<std::uint64_t> out;
  if (size == 0 || sample == 0) return out;
  if (sample >= size) {
    for (std::uint64_t i = 0; i < size; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t k = 0; k < sample; ++k) {
    const auto i = static_cast<std::uint64_t>(static_cast<unsigned __int128>(size - 1) * k /
                                              (sample > 1 ? sample - 1 : 1));
    if (out.empty() || out.back() != i) out.push_back(i);
  }
  return out;
}

void print_points_table(std::ostream& os, const Space& space, const std::vector<PointRecord>& rows,
                        const std::vector<frontier::Objective>& objectives, bool csv) {
  // Columns: index, subspace, the axes any row uses (CSV: every axis, so that CSVs of different
  // groups share one header), the objectives.
  std::vector<bool> used(space.axes().size(), csv);
  std::vector<PointCoordinates> coords;
  for (const auto& r : rows) {
    coords.push_back(space.decode(r.index));
    for (std::size_t a = 0; a < used.size(); ++a)
      used[a] = used[a] || coords.back().axis_value[a] != kAbsentAxis;
  }
  std::vector<std::string> header = {"index", "subspace"};
  for (std::size_t a = 0; a < used.size(); ++a)
    if (used[a]) header.push_back(space.axes()[a].key);
  for (const auto& o : objectives) header.push_back(o.spelled());
  std::vector<std::vector<std::string>> table;
  std::vector<std::vector<double>> objective_columns;
  for (const auto& o : objectives) objective_columns.push_back(field_column(space, rows, o.field));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> line = {std::to_string(rows[i].index),
                                     space.subspaces()[coords[i].subspace].name};
    for (std::size_t a = 0; a < used.size(); ++a)
      if (used[a])
        line.push_back(
            coords[i].axis_value[a] == kAbsentAxis ? "-" : space.axes()[a].values[coords[i].axis_value[a]]);
    for (const auto& col : objective_columns) line.push_back(number(col[i], csv));
    table.push_back(std::move(line));
  }
  if (csv) {
    for (std::size_t c = 0; c < header.size(); ++c) os << (c ? "," : "") << csv_quote(header[c]);
    os << "\n";
    for (const auto& line : table) {
      for (std::size_t c = 0; c < line.size(); ++c) os << (c ? "," : "") << csv_quote(line[c]);
      os << "\n";
    }
    return;
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& line : table)
    for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  auto print_line = [&](const std::vector<std::string>& line) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      os << line[c];
      if (c + 1 < line.size()) os << std::string(width[c] - line[c].size() + 2, ' ');
    }
    os << "\n";
  };
  print_line(header);
  for (const auto& line : table) print_line(line);
}

nlohmann::json points_json(const Space& space, const std::vector<PointRecord>& rows,
                           const std::vector<frontier::Objective>& objectives) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::vector<double>> cols;
  for (const auto& o : objectives) cols.push_back(field_column(space, rows, o.field));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto c = space.decode(rows[i].index);
    nlohmann::json p;
    p["index"] = rows[i].index;
    p["subspace"] = space.subspaces()[c.subspace].name;
    nlohmann::json axes = nlohmann::json::object();
    for (std::size_t a = 0; a < space.axes().size(); ++a)
      if (c.axis_value[a] != kAbsentAxis) axes[space.axes()[a].key] = space.axes()[a].values[c.axis_value[a]];
    p["axes"] = axes;
    const PointResult& x = rows[i].result;
    p["status"] = static_cast<int>(x.status);
    for (std::size_t k = 0; k < objectives.size(); ++k) p[objectives[k].field] = cols[k][i];
    if (x.status == PointStatus::Evaluated) {
      nlohmann::json strategy = nlohmann::json::object();
      for (const ResultField& f : kResultFields) {
        if (f.row_json == RowJson::Omit) continue;
        nlohmann::json& to = f.row_json == RowJson::Strategy ? strategy : p;
        if (f.f64)
          to[std::string(f.name)] = x.*f.f64;
        else
          to[std::string(f.name)] = x.*f.u32;
      }
      if (!strategy.empty()) p["strategy"] = std::move(strategy);
    }
    out.push_back(p);
  }
  return out;
}

void print_dry_run(std::ostream& os, const Space& space, std::size_t sample) {
  os << "space: " << space.size() << " points in " << space.subspaces().size() << " sub-space(s)\n";
  for (const auto& s : space.subspaces()) {
    os << "  [" << s.name << "] " << s.size << " points from index " << s.offset << ":";
    for (const auto& a : s.axes) os << " " << space.axes()[a.axis].key << "(" << a.positions.size() << ")";
    os << "\n";
  }
  os << "axes:\n";
  for (const auto& a : space.axes()) {
    os << "  " << a.key << ": " << a.values.size() << " value(s):";
    const std::size_t show = std::min<std::size_t>(a.values.size(), 8);
    for (std::size_t i = 0; i < show; ++i) os << (i ? " | " : " ") << a.values[i];
    if (show < a.values.size()) os << " | ...";
    os << "\n";
  }
  os << "sample points:\n";
  for (auto i : sample_indices(space.size(), sample)) os << "  " << i << " " << space.describe(i) << "\n";
}

nlohmann::json dry_run_json(const Space& space, std::size_t sample) {
  nlohmann::json j;
  j["space_size"] = space.size();
  j["fingerprint"] = space.fingerprint();
  for (const auto& s : space.subspaces()) {
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& a : s.axes) axes.push_back(space.axes()[a.axis].key);
    j["subspaces"].push_back({{"name", s.name}, {"offset", s.offset}, {"size", s.size}, {"axes", axes}});
  }
  j["axes"] = nlohmann::json::array();
  for (const auto& a : space.axes()) j["axes"].push_back({{"key", a.key}, {"values", a.values}});
  j["sample"] = nlohmann::json::array();
  for (auto i : sample_indices(space.size(), sample)) {
    const auto c = space.decode(i);
    nlohmann::json axes = nlohmann::json::object();
    for (std::size_t a = 0; a < space.axes().size(); ++a)
      if (c.axis_value[a] != kAbsentAxis) axes[space.axes()[a].key] = space.axes()[a].values[c.axis_value[a]];
    j["sample"].push_back({{"index", i}, {"subspace", space.subspaces()[c.subspace].name}, {"axes", axes}});
  }
  return j;
}

}  // namespace toposweep::sweep

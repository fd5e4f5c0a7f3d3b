// `toposweep frontier`: Pareto frontier of a results file.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/report.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description& o) {
  o.add_options()(
      "objectives", po::value<std::string>(),
      "comma list of /points fields, max:FIELD to maximise (default: the file's /frontier objectives)")(
      "group-by", po::value<std::string>(), "one frontier per value of this axis (or 'subspace')")(
      "csv", po::bool_switch(), "print CSV instead of a table")(
      "write", po::bool_switch(), "store the frontier as /frontier in the file");
}

int run(CommandContext& ctx) {
  const auto& vm = ctx.options;
  if (ctx.positional.size() != 1)
    throw BadInput("give exactly one results file", "command line of 'frontier'");
  const std::string path = ctx.positional.front();
  const bool write = vm["write"].as<bool>();
  sweep::ResultsReader reader(path, write);

  // The file describes its own space (/space): decode indices from it, not from today's generators.
  const sweep::Space space = reader.space();

  std::string objective_text = "cost_usd,iteration_time_s";
  if (vm.count("objectives"))
    objective_text = vm["objectives"].as<std::string>();
  else if (auto stored_objectives = reader.frontier_objectives(); !stored_objectives.empty())
    objective_text = stored_objectives;
  const auto objectives = frontier::parse_objectives(objective_text, "--objectives");
  const auto fields = sweep::known_fields(space);
  for (const auto& o : objectives)
    if (std::find(fields.begin(), fields.end(), o.field) == fields.end())
      throw BadInput("'" + o.field + "' is not a field of " + path + " (fields: " + join(fields, ", ") + ")",
                     "--objectives");

  const auto rows = reader.records();
  // Groups: value of the group-by axis -> row positions (one group "" without --group-by).
  std::string group_by;
  std::map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::string> group_order;
  if (vm.count("group-by")) {
    group_by = vm["group-by"].as<std::string>();
    if (write) throw BadInput("--write stores one frontier; drop --group-by", "--write");
    std::size_t axis = space.axes().size();
    for (std::size_t a = 0; a < space.axes().size(); ++a)
      if (space.axes()[a].key == group_by) axis = a;
    if (axis == space.axes().size() && group_by != "subspace")
      throw BadInput("'" + group_by + "' is not an axis of this sweep", "--group-by");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto c = space.decode(rows[i].index);
      std::string v = group_by == "subspace" ? space.subspaces()[c.subspace].name
                      : c.axis_value[axis] == sweep::kAbsentAxis
                          ? "-"
                          : space.axes()[axis].values[c.axis_value[axis]];
      if (!groups.count(v)) group_order.push_back(v);
      groups[v].push_back(i);
    }
  } else {
    group_order.push_back("");
    auto& all = groups[""];
    for (std::size_t i = 0; i < rows.size(); ++i) all.push_back(i);
  }

  std::map<std::uint64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.size(); ++i) row_of[rows[i].index] = i;
  nlohmann::json jgroups = nlohmann::json::array();
  const bool csv = vm["csv"].as<bool>();
  bool header_done = false;
  for (const auto& g : group_order) {
    const auto front = sweep::frontier_indices(space, rows, groups[g], objectives);
    std::vector<sweep::PointRecord> front_rows;
    for (auto idx : front) front_rows.push_back(rows[row_of.at(idx)]);
    if (write) reader.write_frontier(front, frontier::spell_objectives(objectives));
    if (ctx.json) {
      nlohmann::json jg;
      if (!group_by.empty()) jg["value"] = g;
      jg["frontier"] = sweep::points_json(space, front_rows, objectives);
      jgroups.push_back(jg);
    } else if (csv) {
      std::ostringstream table;
      sweep::print_points_table(table, space, front_rows, objectives, true);
      std::string text = table.str();
      const auto nl = text.find('\n');
      if (!group_by.empty()) {
        // Prefix each line with the group value so one CSV holds every group.
        std::string out, line;
        std::istringstream in(text);
        bool first = true;
        while (std::getline(in, line)) {
          if (first) {
            if (!header_done) out += "group," + line + "\n";
            first = false;
          } else {
            out += g + "," + line + "\n";
          }
        }
        text = out;
      } else if (header_done && nl != std::string::npos) {
        text = text.substr(nl + 1);
      }
      header_done = true;
      *ctx.out << text;
    } else {
      *ctx.out << (group_by.empty() ? std::string("frontier") : "frontier for " + group_by + " = " + g)
               << " (" << frontier::spell_objectives(objectives) << "): " << front_rows.size() << " of "
               << groups[g].size() << " point(s)\n";
      sweep::print_points_table(*ctx.out, space, front_rows, objectives, false);
    }
  }
  if (ctx.json) {
    nlohmann::json j;
    j["file"] = path;
    j["objectives"] = nlohmann::json::array();
    for (const auto& o : objectives) j["objectives"].push_back(o.spelled());
    j["points"] = rows.size();
    if (group_by.empty()) {
      j["frontier"] = jgroups.front()["frontier"];
    } else {
      j["group_by"] = group_by;
      j["groups"] = jgroups;
    }
    j["written"] = write;
    *ctx.out << j.dump() << "\n";
  } else if (write && !csv) {
    *ctx.out << "wrote /frontier to " << path << "\n";
  }
  return kExitOk;
}

}  // namespace

Command frontier_command() {
  return Command{"frontier", "Pareto frontier of a results file", "RESULTS.h5", add_options, run};
}

}  // namespace toposweep::cli

// `toposweep frontier`: Pareto frontier of a results file.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/frontier_groups.hpp"
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
      "group-by", po::value<std::string>(),
      "one frontier per value of this axis (or 'subspace'), within each model")(
      "pool-models", po::bool_switch(),
      "put every model's points on one frontier (default: one frontier per model.name)")(
      "csv", po::bool_switch(), "print CSV instead of a table")(
      "write", po::bool_switch(), "store the frontier as /frontier in the file");
}

// One frontier to print: a model (when the file holds several and they are not pooled) and a
// value of the --group-by axis.
struct Group {
  std::uint32_t model = 0;
  std::string value;
  std::vector<std::size_t> rows;  // positions into the file's rows
};

// Prefix every line of a CSV table but the header with `prefix`; the header gets `header_prefix`
// or is dropped when `keep_header` is false.
std::string prefix_csv(const std::string& text, const std::string& header_prefix, const std::string& prefix,
                       bool keep_header) {
  std::string out, line;
  std::istringstream in(text);
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      if (keep_header) out += header_prefix + line + "\n";
      first = false;
    } else {
      out += prefix + line + "\n";
    }
  }
  return out;
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
  // Models are never compared unless --pool-models asks for it, whatever the file's /frontier did.
  const bool pool = vm["pool-models"].as<bool>();
  const sweep::PointGroups models(space, pool ? sweep::kFrontierPooled : sweep::kFrontierByModel);
  const std::size_t model_count = sweep::PointGroups(space, sweep::kFrontierByModel).size();
  const bool per_model = models.size() > 1;

  std::string group_by;
  std::size_t axis = space.axes().size();
  if (vm.count("group-by")) {
    group_by = vm["group-by"].as<std::string>();
    if (write) throw BadInput("--write stores one frontier; drop --group-by", "--write");
    for (std::size_t a = 0; a < space.axes().size(); ++a)
      if (space.axes()[a].key == group_by) axis = a;
    if (axis == space.axes().size() && group_by != "subspace")
      throw BadInput("'" + group_by + "' is not an axis of this sweep", "--group-by");
  }
  // Groups: (model, value of the group-by axis), models in label order, values in the order the
  // rows first show them.
  std::vector<Group> groups;
  std::map<std::pair<std::uint32_t, std::string>, std::size_t> group_of;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto c = space.decode(rows[i].index);
    std::string v;
    if (!group_by.empty())
      v = group_by == "subspace"                     ? space.subspaces()[c.subspace].name
          : c.axis_value[axis] == sweep::kAbsentAxis ? "-"
                                                     : space.axes()[axis].values[c.axis_value[axis]];
    const std::pair<std::uint32_t, std::string> key{models.of(c), v};
    auto it = group_of.find(key);
    if (it == group_of.end()) {
      it = group_of.emplace(key, groups.size()).first;
      groups.push_back(Group{key.first, v, {}});
    }
    groups[it->second].rows.push_back(i);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.model < b.model; });
  if (groups.empty() && group_by.empty() && !per_model)
    groups.push_back(Group{});  // no rows: still print the (empty) frontier

  nlohmann::json jgroups = nlohmann::json::array();
  const bool csv = vm["csv"].as<bool>();
  bool header_done = false;
  std::vector<std::uint64_t> written;
  for (const auto& g : groups) {
    const auto front = sweep::frontier_indices(space, rows, g.rows, objectives);
    written.insert(written.end(), front.begin(), front.end());
    const auto front_rows = sweep::frontier_rows(rows, front);
    const std::string model = models.label(g.model);
    if (ctx.json) {
      nlohmann::json jg;
      if (per_model) jg["model"] = model;
      if (!group_by.empty())
        jg["value"] = g.value;
      else if (per_model)
        jg["value"] = model;
      jg["frontier"] = sweep::points_json(space, front_rows, objectives);
      jgroups.push_back(jg);
    } else if (csv) {
      std::ostringstream table;
      sweep::print_points_table(table, space, front_rows, objectives, true);
      // Leading columns name the group, so one CSV holds every group.
      std::string header_prefix, prefix;
      if (per_model) header_prefix += "model,", prefix += sweep::csv_quote(model) + ",";
      if (!group_by.empty()) header_prefix += "group,", prefix += sweep::csv_quote(g.value) + ",";
      *ctx.out << prefix_csv(table.str(), header_prefix, prefix, !header_done);
      header_done = true;
    } else {
      std::vector<std::string> names;
      if (per_model) names.push_back("model.name = " + model);
      if (!group_by.empty()) names.push_back(group_by + " = " + g.value);
      std::string pooled;
      if (!per_model && model_count > 1)
        pooled = "; " + std::to_string(model_count) + " models pooled by --pool-models";
      *ctx.out << (names.empty() ? std::string("frontier") : "frontier for " + join(names, ", ")) << " ("
               << frontier::spell_objectives(objectives) << pooled << "): " << front_rows.size() << " of "
               << g.rows.size() << " point(s)\n";
      sweep::print_points_table(*ctx.out, space, front_rows, objectives, false);
    }
  }
  if (write) {
    std::sort(written.begin(), written.end());
    reader.write_frontier(written, frontier::spell_objectives(objectives), models.key());
  }
  if (ctx.json) {
    nlohmann::json j;
    j["file"] = path;
    j["objectives"] = nlohmann::json::array();
    for (const auto& o : objectives) j["objectives"].push_back(o.spelled());
    j["points"] = rows.size();
    if (model_count > 1) j["frontier_by"] = models.key();
    if (group_by.empty() && !per_model) {
      j["frontier"] = jgroups.front()["frontier"];
    } else {
      j["group_by"] = group_by.empty() ? std::string(sweep::kFrontierByModel) : group_by;
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
  return Command{"frontier", "Pareto frontier of a results file (one per model)", "RESULTS.h5", add_options,
                 run};
}

}  // namespace toposweep::cli

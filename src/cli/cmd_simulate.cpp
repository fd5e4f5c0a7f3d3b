// `toposweep simulate`: simulate one training iteration of one design point (or of several jobs
// sharing one topology, with simulate.jobs).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/sim/trace.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/heap_prefault.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/devices.hpp"
#include "toposweep/workload/strategy.hpp"

namespace toposweep::cli {
namespace {

using nlohmann::json;

// The JSON key of a result: its name in kResultFields (a string literal there), so simulate and
// the sweep's rows say the same; a member without a row does not compile.
consteval const char* field_key(double PointResult::*member) {
  for (const ResultField& f : kResultFields)
    if (f.f64 == member) return f.name.data();
  throw "no kResultFields row for this member";
}
consteval const char* field_key(std::uint32_t PointResult::*member) {
  for (const ResultField& f : kResultFields)
    if (f.u32 == member) return f.name.data();
  throw "no kResultFields row for this member";
}

void add_options(po::options_description& o) {
  o.add_options()("trace", po::value<std::string>(),
                  "write the simulated timeline as Chrome trace-event JSON to FILE")(
      "links", po::value<unsigned>()->default_value(10), "busiest links listed in the output (flow model)");
}

// "8 servers x 4 GPUs", or with servers of different sizes "4 servers, 24 GPUs (8, 4, 8, 4)".
std::string server_summary(const Network& net) {
  std::ostringstream o;
  if (net.uniform_gpus()) {
    o << net.compute_count() << " servers x " << net.gpus_per_node() << " GPUs";
    return o.str();
  }
  o << net.compute_count() << " servers, " << net.gpu_count() << " GPUs (";
  for (VertexId v = 0; v < net.compute_count() && v < 16; ++v) o << (v ? ", " : "") << net.gpus_on(v);
  o << (net.compute_count() > 16 ? ", ...)" : ")");
  return o.str();
}

json topology_json(const Network& net) {
  const TopologyInfo& info = net.info();
  json t = {{"kind", info.kind},
            {"servers", net.compute_count()},
            {"switches", net.switch_count()},
            {"gpus", net.gpu_count()},
            {"gpus_per_server", net.gpus_per_node()},
            {"links", net.arc_count()},
            {"intra_bandwidth_Bps", net.intra_bandwidth_Bps()}};
  if (info.degree) t["degree"] = info.degree;
  if (!net.uniform_servers()) {
    json per = json::array(), gpus = json::array();
    for (VertexId v = 0; v < net.compute_count(); ++v) {
      per.push_back(net.intra_link(v).bandwidth_Bps);
      gpus.push_back(net.gpus_on(v));
    }
    t["server_intra_bandwidth_Bps"] = std::move(per);
    t["server_gpus"] = std::move(gpus);
  }
  if (info.link_bandwidth_Bps > 0) t["link_bandwidth_Bps"] = info.link_bandwidth_Bps;
  t["link_latency_s"] = info.link_latency_s;
  if (!info.strides.empty()) t["strides"] = info.strides;
  if (!info.dims.empty()) {
    json dims = json::array();
    for (const Dimension& d : info.dims)
      dims.push_back({{"type", d.type == DimensionType::Ring     ? "ring"
                               : d.type == DimensionType::Switch ? "switch"
                                                                 : "fc"},
                      {"size", d.size},
                      {"bandwidth_Bps", d.bandwidth_Bps},
                      {"latency_s", d.latency_s}});
    t["dims"] = std::move(dims);
  }
  return t;
}

json job_times_json(const sim::JobTimes& j) {
  json busy = json::object(), bytes = json::object();
  for (std::size_t p = 1; p < sim::kPurposeCount; ++p) {
    const auto name = std::string(sim::comm_purpose_name(static_cast<CommPurpose>(p)));
    busy[name] = j.comm_busy_s[p];
    bytes[name] = j.comm_bytes[p];
  }
  return {{field_key(&PointResult::iteration_time_s), j.iteration_time_s},
          {field_key(&PointResult::compute_time_s), j.compute_time_s},
          {field_key(&PointResult::exposed_comm_time_s), j.exposed_comm_time_s},
          {field_key(&PointResult::bubble_time_s), j.bubble_time_s},
          {"critical_stage", j.critical_stage},
          {"comm_busy_s", std::move(busy)},
          {"comm_bytes_per_rank", std::move(bytes)}};
}

json links_json(const Network& net, const sim::SimResult& r, unsigned top) {
  std::vector<sim::LinkLoad> busy(r.links);
  std::sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) {
    return a.utilisation != b.utilisation ? a.utilisation > b.utilisation : a.arc < b.arc;
  });
  if (busy.size() > top) busy.resize(top);
  json list = json::array();
  for (const auto& l : busy)
    list.push_back({{"arc", l.arc},
                    {"src", net.arc(l.arc).src},
                    {"dst", net.arc(l.arc).dst},
                    {"bandwidth_Bps", net.arc(l.arc).bandwidth_Bps},
                    {"bytes", l.bytes},
                    {"utilisation", l.utilisation}});
  return {{"max_utilisation", r.max_link_utilisation},
          {"mean_utilisation", r.mean_link_utilisation},
          {"flows", r.flows},
          {"busiest", std::move(list)}};
}

// Checks the trace path before simulating, so a bad one fails fast without touching any file.
bool trace_requested(const CommandContext& ctx) {
  if (!ctx.options.count("trace")) return false;
  const std::filesystem::path path(ctx.options["trace"].as<std::string>());
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_directory(dir, ec) || std::filesystem::is_directory(path, ec))
    throw BadInput("cannot write the trace file '" + path.string() + "'", "--trace");
  return true;
}

void write_trace(const CommandContext& ctx, const json& trace) {
  const std::string path = ctx.options["trace"].as<std::string>();
  std::ofstream f(path, std::ios::trunc);
  f << trace.dump() << "\n";
  if (!f) throw RuntimeFailure("failed writing the trace file '" + path + "'");
}

std::string ms(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << s * 1e3 << " ms";
  return o.str();
}

void print_breakdown(std::ostream& out, const sim::JobTimes& j) {
  out << "  iteration     " << ms(j.iteration_time_s) << "  = compute " << ms(j.compute_time_s)
      << " + exposed communication " << ms(j.exposed_comm_time_s) << " + bubble/idle " << ms(j.bubble_time_s)
      << " (stage " << j.critical_stage << ")\n";
  out << "  comm busy    ";
  bool any = false;
  for (std::size_t p = 1; p < sim::kPurposeCount; ++p)
    if (j.comm_busy_s[p] > 0) {
      out << " " << sim::comm_purpose_name(static_cast<CommPurpose>(p)) << " " << ms(j.comm_busy_s[p]);
      any = true;
    }
  out << (any ? "\n" : " none\n");
}

void print_links(std::ostream& out, const Network& net, const sim::SimResult& r) {
  if (r.links.empty()) return;
  out << "  links         max utilisation " << std::setprecision(3) << r.max_link_utilisation * 100
      << " %, mean " << r.mean_link_utilisation * 100 << " % over " << net.arc_count() << " arcs, " << r.flows
      << " flows\n";
}

int run(CommandContext& ctx) {
  const bool trace_file = trace_requested(ctx);
  const unsigned top = ctx.options["links"].as<unsigned>();
  std::ostream& out = *ctx.out;

  DesignPoint point = design_point_from_config(ctx.config);
  point.sim.record_link_loads = trace_file;
  util::HeapPrefault heap;  // a large point's caches fault in 2 MiB at a time
  PointCache cache;
  const Evaluation ev = key_origins(ctx.config).run([&] { return evaluate(point, cache, Detail::Full); });

  if (!point.jobs.empty()) {
    const Evaluation& m = ev;
    const sim::SimResult& r = m.sim;
    std::vector<sim::Job> jobs;
    if (ctx.json) {
      json list = json::array();
      for (std::size_t j = 0; j < m.jobs.size(); ++j) {
        json e = job_times_json(r.engine.jobs[j]);
        e["model"] = m.jobs[j].spec.model;
        e["servers"] = m.jobs[j].spec.servers;
        e["first_server"] = m.jobs[j].first_server;
        e[field_key(&PointResult::memory_per_gpu_bytes)] = m.jobs[j].plan.memory_per_gpu_bytes;
        e["strategy"] = {{field_key(&PointResult::dp), m.jobs[j].plan.dp},
                         {field_key(&PointResult::tp), m.jobs[j].plan.tp},
                         {field_key(&PointResult::pp), m.jobs[j].plan.pp},
                         {field_key(&PointResult::microbatches), m.jobs[j].plan.microbatches}};
        list.push_back(std::move(e));
      }
      double compute = 0, exposed = 0, memory = 0;
      for (const auto& j : r.engine.jobs) {
        compute = std::max(compute, j.compute_time_s);
        exposed = std::max(exposed, j.exposed_comm_time_s);
      }
      for (const auto& j : m.jobs) memory = std::max(memory, j.plan.memory_per_gpu_bytes);
      json o = {{field_key(&PointResult::iteration_time_s), r.engine.makespan_s},
                {field_key(&PointResult::compute_time_s), compute},
                {field_key(&PointResult::exposed_comm_time_s), exposed},
                {field_key(&PointResult::cost_usd), m.cost.total_usd},
                {"cost_breakdown", m.cost.by_component},
                {field_key(&PointResult::memory_per_gpu_bytes), memory},
                {"feasible", true},
                {"strategy", {{"kind", "data_parallel_per_job"}}},
                {"topology", topology_json(*m.network)},
                {"network_model", std::string(sim::network_model_name(point.sim.model))},
                {"collective_algorithm", point.sim.comm.algorithm},
                {"jobs", std::move(list)}};
      if (!r.links.empty()) o["links"] = links_json(*m.network, r, top);
      out << o.dump(2) << "\n";
    } else {
      out << "toposweep simulate: " << m.jobs.size() << " jobs on " << m.network->info().kind << " ("
          << server_summary(*m.network) << "), " << sim::network_model_name(point.sim.model)
          << " network model\n";
      for (std::size_t j = 0; j < m.jobs.size(); ++j) {
        out << "job " << j << ": " << m.jobs[j].spec.model << " on servers " << m.jobs[j].first_server << ".."
            << m.jobs[j].first_server + m.jobs[j].spec.servers - 1 << " (dp " << m.jobs[j].plan.dp << ", tp "
            << m.jobs[j].plan.tp << ", pp " << m.jobs[j].plan.pp << ", " << m.jobs[j].plan.microbatches
            << " microbatch" << (m.jobs[j].plan.microbatches == 1 ? "" : "es") << ")\n";
        print_breakdown(out, r.engine.jobs[j]);
      }
      out << "  slowest job   " << ms(r.engine.makespan_s) << "\n";
      print_links(out, *m.network, r);
    }
    if (trace_file) {
      for (std::size_t j = 0; j < m.jobs.size(); ++j) {
        sim::Job job{m.jobs[j].spec.model, &m.jobs[j].plan.graph, {}};
        jobs.push_back(std::move(job));
      }
      write_trace(ctx, sim::chrome_trace(*m.network, jobs, r));
    }
    return kExitOk;
  }

  const Evaluation& p = ev;
  const PointResult& res = p.row;
  // model.chakra: the trace directory is the model; the model.* and strategy.* keys that plan one
  // are not used.
  const std::string model_name =
      point.workload.chakra.empty() ? point.workload.model : "chakra:" + point.workload.chakra;
  if (!point.workload.chakra.empty()) {
    std::string ignored;
    for (const auto& [key, e] : ctx.config.entries())
      if (e.origin != "default" && key != "model.chakra" && key != "model.chakra_replicas" &&
          (key.starts_with("model.") || key.starts_with("strategy.")))
        ignored += (ignored.empty() ? "" : ", ") + key;
    if (!ignored.empty()) ctx.log.warn("model.chakra plays a recorded iteration; not used: " + ignored);
  }
  const Network& net = *p.network;
  if (ctx.json) {
    // The strategy as planned (typed: defaults filled in, the ZeRO stage resolved from its alias).
    json strategy = strategy_to_json(p.plan.strategy);
    strategy[field_key(&PointResult::dp)] = p.plan.dp;
    strategy[field_key(&PointResult::tp)] = p.plan.tp;
    strategy[field_key(&PointResult::pp)] = p.plan.pp;
    strategy[field_key(&PointResult::microbatches)] = p.plan.microbatches;
    json o = {{"cost_breakdown", p.cost.by_component},
              {"feasible", res.status == PointStatus::Evaluated},
              {"global_batch", p.plan.global_batch},
              {"model", model_name},
              {"strategy", std::move(strategy)},
              {"topology", topology_json(net)},
              {"network_model", std::string(sim::network_model_name(point.sim.model))},
              {"collective_algorithm", point.sim.comm.algorithm},
              {"hierarchical_model", point.sim.comm.hierarchical_pipelined ? "pipelined" : "sequential"}};
    // Every measured result field; the strategy comes from the plan above (defaults filled in).
    for (const ResultField& f : kResultFields)
      if (f.f64) o[std::string(f.name)] = res.*f.f64;
    o["placement"] = p.placement_method;
    o["placement_requested"] = p.placement_requested;
    o["placement_groups"] = p.placement_groups;
    if (res.status != PointStatus::Evaluated) o["infeasible_reason"] = res.message;
    if (mixed_devices(point.workload.device)) o["server_devices"] = point.workload.device;
    if (!p.plan.replica_samples.empty())
      o["batch_split"] = {{"method", batch_split_name(p.plan.strategy.batch_split)},
                          {"replica_microbatch", p.plan.replica_samples}};
    if (p.compression) {
      json layers = json::array();
      for (const auto& l : p.compression->layers)
        layers.push_back({{"name", l.name},
                          {"layer", l.layer},
                          {"stage", l.stage},
                          {"allreduce_bytes", l.allreduce_bytes},
                          {"allgather_bytes", l.allgather_bytes},
                          {"allreduce_s", l.allreduce_s},
                          {"allgather_s", l.allgather_s},
                          {"rebuild_s", l.rebuild_s},
                          {"chosen", l.chosen}});
      o["compression"] = {{"method", "sfb"},
                          {"layers", std::move(layers)},
                          {"dp_bytes_per_rank_before", p.compression->dp_bytes_per_rank_before},
                          {"dp_bytes_per_rank_after", p.compression->dp_bytes_per_rank_after}};
    }
    if (p.simulated) {
      o["breakdown"] = job_times_json(p.sim.job());
      o["tasks"] = p.plan.graph.tasks.size();
      if (!p.sim.links.empty()) o["links"] = links_json(net, p.sim, top);
    }
    out << o.dump(2) << "\n";
  } else {
    out << "toposweep simulate: " << model_name << " on " << net.info().kind << " (" << server_summary(net)
        << "), " << sim::network_model_name(point.sim.model) << " network model\n";
    out << "  strategy      dp=" << p.plan.dp << " tp=" << p.plan.tp << " pp=" << p.plan.pp;
    if (p.plan.cp > 1) out << " cp=" << p.plan.cp;
    if (p.plan.ep > 1) out << " ep=" << p.plan.ep;
    if (p.plan.strategy.expert_tp() != p.plan.tp) out << " etp=" << p.plan.strategy.expert_tp();
    out << " microbatches=" << p.plan.microbatches << "\n";
    if (mixed_devices(point.workload.device)) out << "  devices       " << point.workload.device << "\n";
    if (p.plan.strategy.batch_split != BatchSplit::Even || p.plan.strategy.stage_split != StageSplit::Even)
      out << "  splits        batch " << batch_split_name(p.plan.strategy.batch_split) << ", stages "
          << stage_split_name(p.plan.strategy.stage_split) << "\n";
    if (p.compression)
      out << "  compression   sfb on " << p.compression->chosen.size() << " of "
          << p.compression->layers.size() << " candidate layers; DP bytes/GPU "
          << human_quantity(Quantity::Size, p.compression->dp_bytes_per_rank_before) << " -> "
          << human_quantity(Quantity::Size, p.compression->dp_bytes_per_rank_after) << "\n";
    out << "  memory/GPU    " << human_quantity(Quantity::Size, res.memory_per_gpu_bytes) << "\n";
    if (res.status != PointStatus::Evaluated) {
      out << "  infeasible    " << res.message << "\n";
    } else {
      print_breakdown(out, p.sim.job());
      out << "  throughput    " << std::setprecision(4) << res.samples_per_s << " samples/s\n";
      print_links(out, net, p.sim);
    }
    if (!std::isnan(res.cost_usd))
      out << "  cost          " << std::fixed << std::setprecision(0) << res.cost_usd << " USD\n";
  }
  if (trace_file) {
    if (!p.simulated) throw BadInput("nothing to trace: the strategy does not fit in memory", "--trace");
    const sim::Job job{"job0", &p.plan.graph, p.placement};
    write_trace(ctx, sim::chrome_trace(net, std::span<const sim::Job>(&job, 1), p.sim));
  }
  return kExitOk;
}

}  // namespace

Command simulate_command() {
  return Command{"simulate", "simulate one training iteration of one design point", "", add_options, run};
}

}  // namespace toposweep::cli

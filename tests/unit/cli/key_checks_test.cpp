// Every configuration key's check: defaults pass, malformed text fails, and a key without a
// check is a deliberate free-text key (so a new key cannot skip validation unnoticed).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "toposweep/cli/command.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::cli {
namespace {

// Keys whose value is free text checked by their reader in context.
const std::set<std::string> kFreeText = {"simulate.jobs", "space.*"};

Config one(const std::string& key, const std::string& value) {
  Config c;
  c.set(key, value, "test.ini:1");
  return c;
}

TEST(KeyChecks, EveryKeyHasACheckOrIsDeliberatelyFreeText) {
  const KeyRegistry r = all_config_keys();
  for (const auto& spec : r.specs())
    EXPECT_TRUE(spec.check || kFreeText.count(spec.name)) << spec.name << " has no check";
}

TEST(KeyChecks, EveryDefaultPasses) {
  const KeyRegistry r = all_config_keys();
  for (const auto& spec : r.specs()) {
    if (spec.name.ends_with(".*")) continue;
    EXPECT_NO_THROW(r.check(one(spec.name, spec.default_value), spec.name)) << spec.name;
  }
}

TEST(KeyChecks, GarbageFailsEveryCheckAndNamesTheKeyAndLine) {
  const KeyRegistry r = all_config_keys();
  for (const auto& spec : r.specs()) {
    if (!spec.check) continue;
    try {
      r.check(one(spec.name, "@garbage@"), spec.name);
      ADD_FAILURE() << spec.name << " accepted '@garbage@'";
    } catch (const BadInput& e) {
      EXPECT_EQ(e.where(), "key " + spec.name + " at test.ini:1") << spec.name;
    }
  }
}

TEST(KeyChecks, HandPickedValues) {
  const KeyRegistry r = all_config_keys();
  auto ok = [&](const std::string& k, const std::string& v) {
    EXPECT_NO_THROW(r.check(one(k, v), k)) << k << " = " << v;
  };
  auto bad = [&](const std::string& k, const std::string& v) {
    EXPECT_THROW(r.check(one(k, v), k), BadInput) << k << " = " << v;
  };
  bad("topology.link_bandwidth", "100");  // a bare number where a unit is required
  ok("topology.link_bandwidth", "12.5GB/s");
  bad("topology.link_bandwidth", "0Gbps");
  ok("topology.link_latency", "0s");
  bad("topology.servers", "sixteen");
  bad("topology.servers", "0");
  bad("topology.kind", "hypercube");
  ok("topology.kind", "TopoOpt");  // readers compare case-insensitively
  ok("topology.dims", "ring:4,fc:8,switch:32");
  ok("topology.dims", "8,8,8");
  bad("topology.dims", "ring:4,mesh:8");
  ok("topology.strides", "");
  ok("topology.strides", "1,5,11");
  bad("topology.strides", "1,five");
  ok("topology.extra_links", "0-5,3-9");
  bad("topology.extra_links", "0-5,3");
  bad("topology.file", "/no/such/topology.txt");
  bad("costs.table", "/no/such/prices.ini");
  bad("model.name", "gpt-9");
  ok("model.name", "gpt3-175b");
  bad("server.device", "a200");
  ok("server.device", "h100");
  bad("strategy.microbatches", "many");
  bad("strategy.zero", "4");
  bad("strategy.recompute", "maybe");
  ok("strategy.recompute", "selective");
  ok("strategy.recompute", "true");  // alias of full
  ok("strategy.tp_overlap", "backward");
  bad("strategy.tp_overlap", "sometimes");
  bad("strategy.scatter_gather", "both");
  bad("model.grad_datatype", "fp12");
  ok("model.grad_datatype", "fp32");
  bad("model.seq_len", "0");
  bad("model.seq_len", "long");
  bad("model.seq_len", "1.5");
  ok("model.seq_len", "131072");
  bad("model.moe_imbalance", "0.9");
  bad("model.moe_imbalance", "uneven");
  ok("model.moe_imbalance", "1.25");
  bad("model.moe_capacity_factor", "-1");
  bad("model.moe_capacity_factor", "lots");
  ok("model.moe_capacity_factor", "1.25");
  ok("model.moe_capacity_factor", "");
  bad("model.moe_pad_to_capacity", "maybe");
  bad("model.moe_router_groups", "-1");
  bad("model.moe_router_groups", "eight");
  ok("model.moe_router_groups", "8");
  ok("model.moe_router_group_topk", "");
  bad("model.moe_router_group_topk", "2.5");
  bad("server.intra_efficiency", "1.5");
  ok("server.intra_latency", "8.4us");
  bad("topology.link_efficiency", "0");
  ok("topology.link_efficiency", "0.96");
  bad("collective.algorithm", "butterfly");
  ok("collective.algorithm", "forest");
  bad("simulate.network_model", "packet");
  bad("point.optimize", "gradient-descent");
  ok("point.optimize", "none");
  ok("point.optimize", "strategy");
  bad("optimize.zero_stages", "0,5");
  bad("sweep.objectives", "cost_usd,,");
}

}  // namespace
}  // namespace toposweep::cli

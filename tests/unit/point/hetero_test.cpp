// Mixed servers (issue 18): devices per server, the batch split by speed, the stage split by
// speed and SFB compression, end to end through the point evaluator, against closed forms.
#include "toposweep/workload/hetero.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "evaluation_helpers.hpp"
#include "point_config.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

using testing::full_evaluation;
using testing::make_point_config;

// Device and model files in a per-process directory (ctest -j runs test processes side by side).
struct Files {
  std::filesystem::path dir;
  Files() {
    dir = std::filesystem::temp_directory_path() / ("toposweep-hetero-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // Two devices that differ only in peak FLOP/s (r = 3); no per-operator model.
    write("slow.json", device("slow", 100e12));
    write("fast.json", device("fast", 300e12));
    // Compute-bound: one layer of 1 TFLOP per sample, one parameter.
    write("bound.json", R"({"name": "bound", "layers": [{"name": "big", "kind": "other",
      "forward_flops": 1e12, "parameters": 1, "input_elements": 1, "output_elements": 1}]})");
    // 24 equal layers (for the stage split).
    std::string layers;
    for (int i = 0; i < 24; ++i)
      layers +=
          std::string(i ? "," : "") + R"({"name": "l)" + std::to_string(i) +
          R"(", "kind": "other", "forward_flops": 1e11, "parameters": 1, "input_elements": 1, "output_elements": 1})";
    write("deep.json", R"({"name": "deep", "layers": [)" + layers + "]}");
    // One dense layer, m x n = 25088 x 4096 (VGG16's fc6).
    write("fc6.json",
          R"({"name": "fc6", "layers": [{"name": "fc6", "kind": "dense", "in": 25088, "out": 4096}]})");
  }
  ~Files() { std::filesystem::remove_all(dir); }
  static std::string device(const std::string& name, double peak) {
    return R"({"name": ")" + name + R"(", "peak_flops": {"fp16": )" + std::to_string(peak) +
           R"(, "fp32": 1e12}, "efficiency": 0.5, "hbm_capacity": "80GiB", "hbm_bandwidth": "2000GB/s", "gpus_per_server": 1, "intra_server": {"bandwidth": "300GB/s"}})";
  }
  void write(const std::string& file, const std::string& text) const { std::ofstream(dir / file) << text; }
  std::string path(const std::string& file) const { return (dir / file).string(); }
};

const Files& files() {
  static Files f;
  return f;
}

Config config(std::initializer_list<std::pair<const char*, const char*>> extra) {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"topology.kind", "switch"},      {"topology.servers", "8"}, {"topology.link_bandwidth", "10Tbps"},
      {"topology.link_latency", "0us"}, {"server.gpus", "1"},      {"model.global_batch", "512"}};
  for (const auto& [k, v] : extra) {
    bool replaced = false;
    for (auto& [key, value] : kv)
      if (key == k) {
        value = v;
        replaced = true;
      }
    if (!replaced) kv.emplace_back(k, v);
  }
  Config c = make_point_config({});
  for (const auto& [k, v] : kv) c.set(k, v, "test");
  return c;
}

std::string mixed(const std::string& a, int na, const std::string& b, int nb) {
  return files().path(a + ".json") + "*" + std::to_string(na) + "," + files().path(b + ".json") + "*" +
         std::to_string(nb);
}

double iteration(const Config& c) {
  const Evaluation e = full_evaluation(c);
  EXPECT_EQ(e.row.status, PointStatus::Evaluated) << e.row.message;
  return e.row.iteration_time_s;
}

TEST(MixedServers, ProportionalSplitSpeedsUpByRPlusOneOverTwo) {
  // 8 replicas, 4 on devices 3x faster, 512 samples: an even split waits for the slow ones (64
  // samples at rate R); the proportional split gives them 32 and the fast ones 96, finishing
  // together at 32 / R. Speedup (r + 1) / 2 = 2 (communication and the step are negligible).
  const std::string devices = mixed("slow", 4, "fast", 4);
  const std::string model = files().path("bound.json");
  const Config even = config({{"server.device", devices.c_str()}, {"model.name", model.c_str()}});
  const Config prop = config({{"server.device", devices.c_str()},
                              {"model.name", model.c_str()},
                              {"strategy.batch_split", "proportional"}});
  const Evaluation e = full_evaluation(prop);
  EXPECT_EQ(e.plan.replica_samples, (std::vector<double>{32, 32, 32, 32, 96, 96, 96, 96}));
  // Closed form of the even split: 64 samples x 3 TFLOP (forward + backward) at 100e12 x 0.5.
  EXPECT_NEAR(iteration(even), 64 * 3e12 / 50e12, 1e-6 * 3.84);
  EXPECT_NEAR(iteration(even) / iteration(prop), 2.0, 1e-6);
}

TEST(MixedServers, EvenSplitRunsInLockstepWithTheSlowestDevice) {
  const std::string model = files().path("bound.json");
  const std::string devices = mixed("fast", 4, "slow", 4);
  const std::string slow = files().path("slow.json");
  const double t_mixed =
      iteration(config({{"server.device", devices.c_str()}, {"model.name", model.c_str()}}));
  const double t_slow = iteration(config({{"server.device", slow.c_str()}, {"model.name", model.c_str()}}));
  EXPECT_NEAR(t_mixed / t_slow, 1.0, 1e-12);
}

TEST(MixedServers, StageSplitBySpeedBalancesThePipeline) {
  // 24 equal layers over 2 stages, stage 0 on the slow devices (rate R), stage 1 on fast ones
  // (3R). GPipe with m microbatches and negligible communication: forward and backward (2x) of
  // stage times a (first) >= b (second) take 3ma + 3b. Even split 12/12: a = 12f/R, b = 4f/R;
  // speed split 6/18: a = b = 6f/R. With m = 8: (288 + 12) / (144 + 18) = 300 / 162.
  const std::string devices = mixed("slow", 4, "fast", 4);
  const std::string model = files().path("deep.json");
  auto point = [&](const char* split) {
    return config({{"server.device", devices.c_str()},
                   {"model.name", model.c_str()},
                   {"strategy.pp", "2"},
                   {"strategy.microbatches", "8"},
                   {"strategy.schedule", "gpipe"},
                   {"strategy.stage_split", split}});
  };
  EXPECT_NEAR(iteration(point("even")) / iteration(point("speed")), 300.0 / 162.0, 1e-6);
}

TEST(MixedServers, WeightedStagePartitionFollowsTheRates) {
  Model m;
  for (int i = 0; i < 24; ++i) {
    Layer l;
    l.forward_flops = 1;
    m.layers.push_back(l);
  }
  const std::vector<double> w{1, 3};
  const auto stages = partition_stages(m, 2, w);
  EXPECT_EQ(stages[0].last, 6u);
  EXPECT_EQ(stages[1].last, 24u);
  const std::vector<double> equal{2, 2};
  const auto even = partition_stages(m, 2, equal);
  EXPECT_EQ(even[0].last, 12u);
}

TEST(MixedServers, SplitUnitsIsTheMinMaxOptimumByBruteForce) {
  // Every split of U units over n replicas (>= 1 each): the greedy's max load equals the best.
  const std::vector<std::vector<double>> rate_sets{{1, 3}, {1, 2, 5}, {2, 2, 2}, {1, 1.5, 2, 7}, {3, 1}};
  for (const auto& rates : rate_sets)
    for (std::uint32_t U = static_cast<std::uint32_t>(rates.size()); U <= 12; ++U) {
      const auto got = split_units(U, rates);
      std::uint32_t sum = 0;
      double got_max = 0;
      for (std::size_t d = 0; d < rates.size(); ++d) {
        sum += got[d];
        got_max = std::max(got_max, got[d] / rates[d]);
      }
      ASSERT_EQ(sum, U);
      double best = 1e300;
      std::vector<std::uint32_t> x(rates.size(), 1);
      std::function<void(std::size_t, std::uint32_t)> rec = [&](std::size_t d, std::uint32_t left) {
        if (d + 1 == rates.size()) {
          x[d] = left;
          double mx = 0;
          for (std::size_t i = 0; i < rates.size(); ++i) mx = std::max(mx, x[i] / rates[i]);
          best = std::min(best, mx);
          return;
        }
        for (std::uint32_t k = 1; k + (rates.size() - d - 1) <= left; ++k) {
          x[d] = k;
          rec(d + 1, left - k);
        }
      };
      rec(0, U);
      EXPECT_DOUBLE_EQ(got_max, best) << "U = " << U;
    }
  const std::vector<double> equal(4, 1.0);
  EXPECT_EQ(split_units(12, equal), (std::vector<std::uint32_t>{3, 3, 3, 3}));
}

TEST(MixedServers, HomogeneousClustersAreUnchangedBitForBit) {
  for (const char* model : {"analytical", "flow"}) {
    auto bert = [&](std::initializer_list<std::pair<const char*, const char*>> extra) {
      Config c = make_point_config({{"topology.kind", "switch"},
                                    {"topology.servers", "4"},
                                    {"server.gpus", "4"},
                                    {"model.name", "bert-large"},
                                    {"strategy.pp", "2"},
                                    {"strategy.microbatches", "4"},
                                    {"simulate.network_model", model}});
      for (const auto& [k, v] : extra) c.set(k, v, "test");
      return iteration(c);
    };
    const double base = bert({});
    EXPECT_EQ(bert({{"server.device", "a100*4"}}), base) << model;
    EXPECT_EQ(bert({{"strategy.batch_split", "proportional"}}), base) << model;
    EXPECT_EQ(bert({{"strategy.stage_split", "speed"}}), base) << model;
    EXPECT_EQ(bert({{"strategy.compression", "sfb"}}), base) << model;  // no dense/conv layers
  }
}

TEST(MixedServers, PerOperatorModelOnMixedServersOfEqualDevices) {
  // The A100 under two names is two kinds with equal rates: the per-operator model stays on,
  // every stage's factor is exactly 1, and GPT-3 1.3B with TP, PP and interleaving takes exactly
  // the homogeneous time. With a V100 half, the stages on V100s slow down by the GEMM rates.
  std::ifstream in(std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/devices/a100.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\"a100\""), 6, "\"a100-copy\"");
  files().write("a100-copy.json", text);
  const std::string twins = "a100*4," + files().path("a100-copy.json") + "*4";
  auto gpt = [&](const std::string& devices) {
    return config({{"model.name", "gpt3-1.3b"},
                   {"model.global_batch", "64"},
                   {"server.gpus", "4"},
                   {"server.device", devices.c_str()},
                   {"strategy.tp", "4"},
                   {"strategy.pp", "2"},
                   {"strategy.microbatches", "8"},
                   {"strategy.schedule", "interleaved"},
                   {"strategy.virtual_stages", "2"}});
  };
  EXPECT_EQ(iteration(gpt(twins)), iteration(gpt("a100")));
  const double with_v100 = iteration(gpt("a100*4,v100*4"));
  EXPECT_GT(with_v100, iteration(gpt("a100")));
  EXPECT_LT(with_v100, iteration(gpt("v100")) * 1.5);
}

TEST(MixedServers, SfbSendsFactorsWhereTheyAreCheaper) {
  // fc6 (m x n = 25088 x 4096, bias n), p = 8 replicas, b = 64 samples each, fp16 (e = 2):
  // factors B (m + n) e gathered (B = 512) against the gradient's 2 (m n + n) e (p - 1) / p.
  const std::string model = files().path("fc6.json");
  const std::string a100 = "a100";
  auto point = [&](const char* bw) {
    return config({{"model.name", model.c_str()},
                   {"server.device", a100.c_str()},
                   {"topology.link_bandwidth", bw},
                   {"strategy.compression", "sfb"}});
  };
  const double m = 25088, n = 4096, p = 8, B = 512, e = 2;
  const Evaluation slow = full_evaluation(point("10Gbps"));
  ASSERT_TRUE(slow.compression.has_value());
  ASSERT_EQ(slow.compression->layers.size(), 1u);
  const auto& fc6 = slow.compression->layers[0];
  EXPECT_DOUBLE_EQ(fc6.allgather_bytes, B * (m + n) * e);
  EXPECT_DOUBLE_EQ(fc6.allreduce_bytes, m * n * e);
  EXPECT_TRUE(fc6.chosen);
  EXPECT_DOUBLE_EQ(slow.compression->dp_bytes_per_rank_before, 2 * (m * n + n) * e * (p - 1) / p);
  EXPECT_DOUBLE_EQ(slow.compression->dp_bytes_per_rank_after,
                   B * (m + n) * e * (p - 1) / p + 2 * n * e * (p - 1) / p);
  // The plan carries exactly that AllGather, and the result replays with the layer given.
  double gathered = 0;
  for (const Task& t : slow.plan.graph.tasks)
    if (t.op == CollectiveOp::AllGather && t.purpose == CommPurpose::DataParallel) gathered += t.bytes;
  EXPECT_DOUBLE_EQ(gathered, B * (m + n) * e);
  EXPECT_EQ(slow.plan.strategy.sfb_layers, std::vector<std::uint32_t>{0});
  // Compressed is faster than the plain AllReduce on this slow network.
  Config plain = point("10Gbps");
  plain.set("strategy.compression", "none", "test");
  EXPECT_LT(slow.row.iteration_time_s, iteration(plain));
  // On a fast network the rebuild (448 samples x 2 m n FLOPs) costs more than the AllReduce saves.
  const Evaluation fast = full_evaluation(point("3200Gbps"));
  ASSERT_TRUE(fast.compression.has_value());
  EXPECT_FALSE(fast.compression->layers[0].chosen);
  EXPECT_TRUE(fast.plan.strategy.sfb_layers.empty());
}

TEST(MixedServers, ServerFabricsPerServerTimeEveryInstanceTheSlowestWins) {
  // bert-large, TP 8 inside each of 2 servers, DP 2 across: one server on NVLink-class 300 GB/s,
  // the other on PCIe-class 15 GB/s. Tensor-parallel ranks of the two replicas run in lockstep
  // (the DP AllReduce joins them), so the iteration is the all-PCIe one, not the first
  // instance's (which sits on the fast server).
  for (const char* model : {"analytical", "flow"}) {
    auto point = [&](const char* intra) {
      Config c = make_point_config({{"topology.kind", "switch"},
                                    {"topology.servers", "2"},
                                    {"server.gpus", "8"},
                                    {"model.name", "bert-large"},
                                    {"strategy.tp", "8"},
                                    {"server.intra_bandwidth", intra},
                                    {"simulate.network_model", model}});
      return iteration(c);
    };
    const double mixed = point("300GB/s*1,15GB/s*1");
    EXPECT_NEAR(mixed / point("15GB/s"), 1.0, 1e-9) << model;
    EXPECT_GT(mixed, 1.5 * point("300GB/s")) << model;
    EXPECT_EQ(point("300GB/s*2"), point("300GB/s")) << model;  // one value repeated: the uniform network
  }
}

TEST(MixedServers, ServersOfDifferentSizes) {
  for (const char* model : {"analytical", "flow"}) {
    auto point = [&](const char* gpus, const char* tp) {
      return make_point_config({{"topology.kind", "switch"},
                                {"topology.servers", "4"},
                                {"server.gpus", gpus},
                                {"model.name", "bert-large"},
                                {"strategy.tp", tp},
                                {"simulate.network_model", model}});
    };
    // One value repeated is the uniform network, bit for bit.
    EXPECT_EQ(iteration(point("4*4", "4")), iteration(point("4", "4"))) << model;
    // 8, 4, 8, 4 GPUs: 24 GPUs, DP 6 over TP-4 groups that never straddle a server.
    const Evaluation e = full_evaluation(point("8*1,4*1,8*1,4*1", "4"));
    EXPECT_EQ(e.row.status, PointStatus::Evaluated) << model;
    EXPECT_EQ(e.plan.dp, 6u);
    EXPECT_EQ(e.placement.node_of_gpu[12], 2u);
    // The same 24 GPUs as 6 servers x 4 on the same switch: the TP groups and the fabric are the
    // same; only the DP rings' server crossings differ, so the times are close but not equal.
    Config six = point("4", "4");
    six.set("topology.servers", "6", "test");
    const double t6 = iteration(six);
    EXPECT_NEAR(e.row.iteration_time_s / t6, 1.0, 0.25) << model;
  }
}

TEST(MixedServers, BadInputsNameTheKey) {
  auto where = [](const Config& c) -> std::string {
    try {
      full_evaluation(c);
    } catch (const InvalidDesign& e) {
      return std::string("invalid: ") + e.what();
    } catch (const BadInput& e) {
      return e.where();
    }
    return "no error";
  };
  EXPECT_NE(where(config({{"server.device", "a100*3,v100*4"}})).find("server.device"), std::string::npos);
  EXPECT_NE(where(config({{"server.device", "a100,v100*4"}})).find("server.device"), std::string::npos);
  EXPECT_NE(where(config({{"server.device", "a100*4,nosuch*4"}})).find("server.device"), std::string::npos);
  EXPECT_NE(where(config({{"server.device", "a100*4"}})).find("server.device"), std::string::npos);
  EXPECT_NE(where(config({{"server.intra_bandwidth", "300GB/s*4,15GB/s*3"}})).find("server.intra_bandwidth"),
            std::string::npos);
  EXPECT_NE(where(config({{"server.gpus", "8*4,4*3"}})).find("server.gpus"), std::string::npos);
  EXPECT_NE(where(config({{"server.gpus", "8,4*7"}})).find("server.gpus"), std::string::npos);
  EXPECT_NE(where(config({{"server.gpus", "8*0,4*8"}})).find("server.gpus"), std::string::npos);
  EXPECT_NE(where(config({{"model.name", "vgg16"}, {"strategy.compression", "sfb"}, {"strategy.zero", "1"}}))
                .find("invalid"),
            std::string::npos);
}

}  // namespace
}  // namespace toposweep

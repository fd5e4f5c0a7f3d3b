// Built-in devices. Datasheet figures (dense, no sparsity): NVIDIA A100 80GB SXM, H100 SXM5 80GB,
// H200 141GB, H800 SXM5, B200, V100 SXM2 32GB. What training kernels reach on them comes with its
// source in `sources` (the same text is in inputs/devices/*.json and inputs/devices/README.md):
// the A100's sustained GEMM fraction and memory-kernel bandwidth are calibrated on Korthikanti et
// al. 2022, Table 4; the H100's and H200's per-operator numbers on measured operator tables
// (docs/validation/reference/hopper/); the H800 takes the H100's, the B200 is datasheet only
// (UNCALIBRATED) and the V100 takes the A100's, and each says so.
#include "toposweep/workload/device.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// NCCL's latency model for ring collectives on NVLink (Simple protocol): a base latency per
// collective and one per ring step (NVIDIA/nccl src/graph/tuning.cc).
using Sources = std::map<std::string, std::string>;

void nccl_nvlink_latency(Device& d, Sources sources) {
  d.intra_server.latency_s = 8.4e-6;
  d.intra_server.step_latency_s = 3.4e-6;
  sources["intra_server.latency"] = "NCCL tuning.cc: 8.4 us base latency (Ring, Simple)";
  sources["intra_server.step_latency"] = "NCCL tuning.cc: 3.4 us per NVLink ring step";
  d.sources = std::make_shared<const Sources>(std::move(sources));
}

Device a100() {
  Device d;
  d.name = "a100";
  d.description = "NVIDIA A100 80GB SXM4 (dense peaks; NVLink3 600 GB/s bidirectional)";
  d.peak_flops = {{"fp64", 19.5e12}, {"fp32", 19.5e12}, {"tf32", 156e12},
                  {"fp16", 312e12},  {"bf16", 312e12},  {"int8", 624e12}};
  d.hbm_bytes = 80 * kGiB;
  d.hbm_Bps = 2.039e12;
  d.memory_reserve_bytes = 6 * kGiB;
  d.gpus_per_server = 8;
  d.intra_server.bandwidth_Bps = 300e9;
  d.intra_server.efficiency = 230.0 / 300.0;
  d.collective_sms = 24;
  d.sms = 108;
  d.gemm_efficiency = 0.767;
  d.memory_efficiency = 0.6773;
  d.kernel_floor_s = 4e-6;
  d.flash_forward_efficiency = 0.6;
  d.flash_backward_efficiency = 0.5;
  const Sources sources = {
      {"peak_flops", "NVIDIA A100 datasheet (dense tensor-core peaks)"},
      {"hbm_capacity", "80 GiB: the A100 80GB part (81920 MiB)"},
      {"hbm_bandwidth", "NVIDIA A100 datasheet: HBM2e 2,039 GB/s"},
      {"memory_reserve",
       "assumption bounded to 4.3-17.2 GiB by Korthikanti et al. 2022 Sec. 6.1 (which of their runs fit in "
       "80 GiB) "
       "with the Table 2 memory model"},
      {"intra_server.bandwidth", "NVLink3: 12 links x 25 GB/s per GPU and direction (Ampere whitepaper)"},
      {"intra_server.efficiency",
       "230 / 300: nccl-tests all_reduce bus bandwidth on 8 x A100 (NVIDIA/nccl-tests#149)"},
      {"collective_sms", "24 NCCL channels on 8 x A100 NVSwitch (log in NVIDIA/nccl-tests#100)"},
      {"sms", "Ampere whitepaper: 108 SMs"},
      {"gemm_efficiency",
       "fitted: least squares of the 10 per-layer times of Korthikanti et al. 2022 Table 4 at the memory "
       "bandwidth below (burst matmul 267.9 TFLOP/s = 0.859 of peak, stas00/ml-engineering MAMF table, is "
       "the "
       "upper bound)"},
      {"memory_efficiency",
       "fitted: the selective-recompute backward delta of Korthikanti et al. 2022 Table 4 (+1.3 ms, only "
       "memory-bound attention kernels re-run) gives 1.381 TB/s; a streaming read reaches 1.80 TB/s"},
      {"kernel_floor", "assumption; results are insensitive between 2 and 8 us"},
      {"flash_attention_efficiency",
       "assumption inside the 50-73 % of peak FlashAttention-2 reaches on A100 (Dao 2023, arXiv:2307.08691); "
       "not "
       "calibrated"},
  };
  nccl_nvlink_latency(d, sources);
  return d;
}

// The Hopper per-operator numbers are fitted on measured operator tables of one H100 and one
// H200 (docs/validation/reference/hopper/, scripts/validation/fit_hopper.py prints them); the
// measured whole layers are the hold-out (docs/validation.md).
constexpr const char* kHopperRef = "docs/validation/reference/hopper/";

Device hopper_base() {
  Device d;
  d.peak_flops = {{"fp64", 67e12},    {"fp32", 67e12},    {"tf32", 494.7e12}, {"fp16", 989.4e12},
                  {"bf16", 989.4e12}, {"fp8", 1978.9e12}, {"int8", 1978.9e12}};
  d.hbm_bytes = 80 * kGiB;
  d.hbm_Bps = 3.35e12;
  d.memory_reserve_bytes = 6 * kGiB;
  d.gpus_per_server = 8;
  d.intra_server.bandwidth_Bps = 450e9;
  d.intra_server.efficiency = 370.0 / 450.0;
  d.collective_sms = 32;
  d.sms = 132;
  d.gemm_efficiency = 0.687;
  d.memory_efficiency = 0.5653;
  d.fp8_gemm_efficiency = 0.6306;
  d.grouped_gemm_efficiency = 0.6585;
  d.kernel_floor_s = 4e-6;
  d.gemm_tiles = {{1, 1}};  // no wave quantisation: Hopper's cuBLAS (stream-K) fits better without
  d.flash_forward_efficiency = 0.533;
  d.flash_backward_efficiency = 0.448;
  d.fused_attention_default = true;
  return d;
}

Sources hopper_sources(const std::string& ref_file) {
  const std::string ref = std::string(kHopperRef) + ref_file;
  return {
      {"peak_flops", "NVIDIA H100 SXM5 datasheet (dense tensor-core peaks)"},
      {"hbm_capacity", "80 GiB: the H100 80GB part"},
      {"hbm_bandwidth", "NVIDIA H100 SXM5 datasheet: HBM3 3.35 TB/s"},
      {"memory_reserve", "NOT MEASURED: the A100's value, transferred"},
      {"intra_server.bandwidth", "NVLink4: 18 links x 25 GB/s per GPU and direction"},
      {"intra_server.efficiency",
       "370 / 450: nccl-tests ring all_reduce bus bandwidth on 8 x H100 (NVIDIA/nccl-tests#212)"},
      {"collective_sms", "ASSUMED: 32 NCCL channels"},
      {"sms", "H100 SXM5 datasheet: 132 SMs"},
      {"gemm_efficiency",
       "fitted: least squares of the 96 measured GEMM times (forward; dgrad + wgrad) of " + ref +
           " `gemm` with a per-call timing overhead (scripts/validation/fit_hopper.py); an 8192^3 bf16 GEMM "
           "reaches 0.78 of peak there"},
      {"gemm_tiles",
       "fitted: 1 x 1 (no wave quantisation) fits " + ref +
           " `gemm` better than cuBLAS's 256x128 / 128x256 / 128x128 tiles (rms error 11 % vs 14 %; Hopper's "
           "cuBLAS runs stream-K kernels), scripts/validation/fit_hopper.py"},
      {"memory_efficiency",
       "fitted: least squares of the 40 memory-bound operator times of " + ref +
           " `memops` against the bytes the model counts for each kernel, with a per-call timing overhead "
           "(scripts/validation/fit_hopper.py); a 2 GiB copy reaches 0.89 of the datasheet bandwidth there"},
      {"fp8_gemm_efficiency",
       "fitted: mean fp8_tflops / 1978.9 (datasheet fp8 peak) of the 7 shapes with m = 8192 of "
       "docs/validation/reference/hopper/h100_attention_fp8.json `fp8_gemm` (Transformer Engine fp8 GEMMs; "
       "scripts/validation/fit_hopper.py); an 8192^3 fp8 GEMM reaches 1392 TFLOP/s = 0.703 of peak in " +
           std::string(kHopperRef) + "h100.json `peak.fp8_gemm_8192_tflops`"},
      {"grouped_gemm_efficiency", "fitted: the 8 measured expert FFN times (forward; backward) of " + ref +
                                      " `moe` (Mixtral-8x7B and DeepSeek-V3 expert shapes as batched bf16 "
                                      "GEMMs, SwiGLU), the activation at "
                                      "the fitted memory bandwidth and the `gemm` fit's per-call timing "
                                      "overhead, least squares of the times "
                                      "(scripts/validation/fit_hopper.py)"},
      {"kernel_floor", "assumption"},
      {"flash_attention_efficiency",
       "fitted: cuDNN fused attention (what Transformer Engine runs on Hopper), causal, sequence 2k-8k, "
       "forward and backward, docs/validation/reference/hopper/h100_attention_fp8.json `attention` "
       "(scripts/validation/fit_hopper.py); FlashAttention-2 reaches 0.282 / 0.251 there"},
      {"fused_attention_default", "Megatron-Core with Transformer Engine runs fused attention on Hopper"},
      {"efficiency", "assumption (the A100's): only for layers without the per-operator model"},
      {"gpus_per_server", "HGX / DGX H100: 8 GPUs per server"},
  };
}

Device h100() {
  Device d = hopper_base();
  d.name = "h100";
  d.description = "NVIDIA H100 80GB SXM5 (dense peaks; NVLink4 900 GB/s bidirectional)";
  nccl_nvlink_latency(d, hopper_sources("h100.json"));
  return d;
}

Device h800() {
  Device d = hopper_base();
  d.name = "h800";
  d.description = "NVIDIA H800 80GB SXM5 (H100 compute, FP64 cut; NVLink 400 GB/s bidirectional)";
  d.peak_flops["fp64"] = 1e12;
  d.intra_server.bandwidth_Bps = 200e9;
  Sources s = hopper_sources("h100.json");
  s["peak_flops"] = "NVIDIA H800 SXM5 datasheet: the H100 SXM5's dense tensor-core peaks, FP64 1 TFLOP/s";
  s["intra_server.bandwidth"] =
      "NVIDIA H800 SXM5 datasheet: NVLink 400 GB/s bidirectional = 8 links x 25 GB/s per GPU and direction";
  s["intra_server.efficiency"] = "ASSUMED: the H100's 370 / 450 nccl-tests fraction (NVIDIA/nccl-tests#212)";
  s["sms"] = "the H100 SXM5's 132 SMs (same GH100 configuration)";
  s["gemm_efficiency"] = "the H100's, transferred (same SMs and clocks): " + s["gemm_efficiency"];
  s["memory_efficiency"] = "the H100's, transferred (same HBM3): " + s["memory_efficiency"];
  s["fp8_gemm_efficiency"] = "the H100's, transferred (same SMs and clocks): " + s["fp8_gemm_efficiency"];
  s["grouped_gemm_efficiency"] =
      "the H100's, transferred (same SMs and clocks): " + s["grouped_gemm_efficiency"];
  s["flash_attention_efficiency"] = "the H100's, transferred: " + s["flash_attention_efficiency"];
  nccl_nvlink_latency(d, s);
  return d;
}

Device h200() {
  Device d = hopper_base();
  d.name = "h200";
  d.description = "NVIDIA H200 141GB SXM (H100 compute, HBM3e 4.8 TB/s; NVLink4 900 GB/s bidirectional)";
  d.hbm_bytes = 141 * kGiB;
  d.hbm_Bps = 4.8e12;
  d.gemm_efficiency = 0.6736;
  d.memory_efficiency = 0.5212;
  d.fp8_gemm_efficiency = 0.6572;
  d.grouped_gemm_efficiency = 0.6396;
  Sources s = hopper_sources("h200.json");
  s["peak_flops"] = "NVIDIA H200 SXM datasheet (dense tensor-core peaks, the H100 SXM5's)";
  s["hbm_capacity"] =
      "NVIDIA H200 datasheet: 141 GB (GiB, as the H100's 80 GB); the measured H200 reports 139.8 GiB";
  s["hbm_bandwidth"] = "NVIDIA H200 datasheet: HBM3e 4.8 TB/s";
  s["intra_server.efficiency"] = "ASSUMED: the H100's 370 / 450 nccl-tests fraction (NVIDIA/nccl-tests#212)";
  s["sms"] = "H200 SXM: 132 SMs (the measured H200 reports 132)";
  s["fp8_gemm_efficiency"] =
      "fitted: the H100's 0.6306 (mean fp8_tflops / 1978.9 of the 7 shapes with m = 8192 of "
      "docs/validation/reference/hopper/h100_attention_fp8.json `fp8_gemm`) x 1450.8 / 1392.0, the measured "
      "8192^3 fp8 GEMM of " +
      std::string(kHopperRef) +
      "h200.json / h100.json `peak.fp8_gemm_8192_tflops` (scripts/validation/fit_hopper.py)";
  s["flash_attention_efficiency"] =
      "the H100's, transferred (same SMs and clocks; attention was measured on the H100 only): " +
      s["flash_attention_efficiency"];
  nccl_nvlink_latency(d, s);
  return d;
}

Device b200() {
  Device d = hopper_base();
  d.name = "b200";
  d.description = "NVIDIA B200 180GB (HGX B200; dense peaks; NVLink5 1.8 TB/s bidirectional) - UNCALIBRATED";
  d.peak_flops = {{"fp64", 40e12},   {"tf32", 1.1e15}, {"fp16", 2.25e15},
                  {"bf16", 2.25e15}, {"fp8", 4.5e15},  {"int8", 4.5e15}};
  d.hbm_bytes = 180 * kGiB;
  d.hbm_Bps = 8e12;
  d.intra_server.bandwidth_Bps = 900e9;
  d.sms = 148;
  const Sources s = {
      {"peak_flops",
       "UNCALIBRATED/datasheet: NVIDIA HGX B200 datasheet per GPU, dense (half the sparse figures): FP64 40 "
       "TFLOP/s, TF32 1.1, FP16/BF16 2.25, FP8 4.5 PFLOP/s, INT8 4.5 POP/s"},
      {"hbm_capacity", "UNCALIBRATED/datasheet: HGX B200, 180 GB HBM3e per GPU (1,440 GB per 8 GPUs)"},
      {"hbm_bandwidth", "UNCALIBRATED/datasheet: HGX B200, 8 TB/s per GPU"},
      {"memory_reserve", "UNCALIBRATED: the A100's value, transferred"},
      {"intra_server.bandwidth",
       "UNCALIBRATED/datasheet: NVLink5 1.8 TB/s bidirectional = 18 links x 50 GB/s per GPU and direction"},
      {"intra_server.efficiency", "UNCALIBRATED: the H100's 370 / 450 nccl-tests fraction, transferred"},
      {"collective_sms", "UNCALIBRATED: the H100's assumed 32 NCCL channels"},
      {"sms", "UNCALIBRATED/datasheet: B200, 148 SMs (2 dies x 74)"},
      {"gemm_efficiency", "UNCALIBRATED: the H100's fitted fraction, transferred"},
      {"gemm_tiles", "UNCALIBRATED: the H100's fitted choice (no wave quantisation), transferred"},
      {"fp8_gemm_efficiency",
       "UNCALIBRATED: the H100's fitted fraction (of its fp8 peak), transferred to the datasheet FP8 4.5 "
       "PFLOP/s"},
      {"memory_efficiency", "UNCALIBRATED: the H100's fitted fraction, transferred"},
      {"grouped_gemm_efficiency", "UNCALIBRATED: the H100's fitted fraction, transferred"},
      {"kernel_floor", "UNCALIBRATED: assumption"},
      {"flash_attention_efficiency", "UNCALIBRATED: the H100's cuDNN fractions, transferred"},
      {"fused_attention_default", "Transformer Engine runs fused attention on Blackwell"},
      {"efficiency", "UNCALIBRATED: assumption (the A100's), only for layers without the per-operator model"},
      {"gpus_per_server", "UNCALIBRATED/datasheet: HGX B200, 8 GPUs per server"},
  };
  nccl_nvlink_latency(d, s);
  return d;
}

// One GPU of a GB200 NVL72 rack: 72 Blackwell GPUs on one NVLink-5 switch fabric (the scale-up domain
// is the rack: server.gpus = 72 by default). Its figures are the rack's datasheet totals over 72.
Device gb200() {
  Device d = b200();
  d.name = "gb200";
  d.description =
      "NVIDIA GB200 (one GPU of a GB200 NVL72 rack: 72 GPUs on NVLink5, 1.8 TB/s bidirectional each) - "
      "UNCALIBRATED";
  d.peak_flops = {{"fp64", 45e12},  {"tf32", 1.25e15}, {"fp16", 2.5e15},
                  {"bf16", 2.5e15}, {"fp8", 5e15},     {"int8", 5e15}};
  d.hbm_bytes = 186e9;
  d.hbm_Bps = 8e12;
  d.gpus_per_server = 72;
  Sources s = *d.sources;
  s["peak_flops"] =
      "UNCALIBRATED/datasheet: NVIDIA GB200 NVL72 datasheet, per rack of 72 GPUs (sparse): FP8/INT8 720 "
      "PFLOP/s, "
      "FP16/BF16 360, TF32 180, FP64 3,240 TFLOP/s (dense); per GPU and dense (half the sparse figures): FP8 "
      "5, "
      "BF16 2.5, TF32 1.25 PFLOP/s, FP64 45 TFLOP/s";
  s["hbm_capacity"] = "UNCALIBRATED/datasheet: GB200 NVL72, 13.4 TB HBM3e per rack = 186 GB per GPU";
  s["hbm_bandwidth"] = "UNCALIBRATED/datasheet: GB200 NVL72, 576 TB/s per rack = 8 TB/s per GPU";
  s["gpus_per_server"] =
      "UNCALIBRATED/datasheet: GB200 NVL72, 72 GPUs in one NVLink domain (130 TB/s = 72 x 1.8 TB/s)";
  s["intra_server.bandwidth"] =
      "UNCALIBRATED/datasheet: NVLink5 1.8 TB/s bidirectional per GPU through the NVLink switch trays = 900 "
      "GB/s "
      "per direction (GB200 NVL72: 130 TB/s over 72 GPUs)";
  s["fp8_gemm_efficiency"] =
      "UNCALIBRATED: the H100's fitted fraction (of its fp8 peak), transferred to the datasheet FP8 5 "
      "PFLOP/s";
  d.sources = std::make_shared<const Sources>(std::move(s));
  return d;
}

Device v100() {
  Device d;
  d.name = "v100";
  d.description = "NVIDIA V100 32GB SXM2 (NVLink2 300 GB/s bidirectional)";
  d.peak_flops = {{"fp64", 7.8e12}, {"fp32", 15.7e12}, {"fp16", 125e12}};
  d.hbm_bytes = 32 * kGiB;
  d.hbm_Bps = 900e9;
  d.memory_reserve_bytes = 6 * kGiB;
  d.gpus_per_server = 8;
  d.intra_server.bandwidth_Bps = 150e9;
  d.intra_server.efficiency = 230.0 / 300.0;
  d.collective_sms = 12;
  d.sms = 80;
  d.gemm_efficiency = 0.767;
  d.memory_efficiency = 0.6773;
  d.kernel_floor_s = 5e-6;
  const Sources sources = {
      {"peak_flops", "NVIDIA V100 SXM2 datasheet (tensor fp16 125 TFLOP/s)"},
      {"hbm_capacity", "32 GiB: the V100 32GB part"},
      {"hbm_bandwidth", "NVIDIA V100 datasheet: HBM2 900 GB/s"},
      {"memory_reserve", "NOT MEASURED: the A100's value, transferred"},
      {"intra_server.bandwidth", "NVLink2: 6 links x 25 GB/s per GPU and direction"},
      {"intra_server.efficiency", "ASSUMED: the A100 NVLink3 fraction"},
      {"collective_sms", "ASSUMED"},
      {"sms", "V100 datasheet: 80 SMs"},
      {"gemm_efficiency", "NOT CALIBRATED: the A100's fitted fraction, transferred (no V100 source found)"},
      {"memory_efficiency", "NOT CALIBRATED: the A100's fitted fraction, transferred"},
      {"kernel_floor", "assumption"},
      {"flash_attention_efficiency", "none: FlashAttention needs sm80 or newer"},
  };
  nccl_nvlink_latency(d, sources);
  return d;
}

double number_in(const json& j, const std::string& key, double lo, double hi, const std::string& where) {
  if (!j.contains(key)) throw BadInput("missing field", where + "." + key);
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    throw BadInput("expected a number in [" + json(lo).dump() + ", " + json(hi).dump() + "]",
                   where + "." + key);
  return v.get<double>();
}

double positive_number(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw BadInput("missing field", where + "." + key);
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    throw BadInput("expected a positive number", where + "." + key);
  return v.get<double>();
}

std::uint32_t whole_number(const json& j, const std::string& key, const std::string& where) {
  const double g = positive_number(j, key, where);
  if (g != std::floor(g) || g > 1e9) throw BadInput("expected a whole number", where + "." + key);
  return static_cast<std::uint32_t>(g);
}

// A quantity with a unit; `allow_zero` for latencies and reserves.
double quantity(const json& j, const std::string& key, Quantity q, const std::string& where,
                bool allow_zero = false) {
  if (!j.contains(key)) throw BadInput("missing field", where + "." + key);
  const json& v = j.at(key);
  if (!v.is_string())
    throw BadInput(std::string("expected a ") + quantity_name(q) + " with a unit, e.g. \"80GB\"",
                   where + "." + key);
  const double x = parse_quantity(q, v.get<std::string>(), where + "." + key);
  if (x < 0 || (x == 0 && !allow_zero)) throw BadInput("must be positive", where + "." + key);
  return x;
}

void only_fields(const json& j, std::initializer_list<const char*> known, const std::string& where) {
  if (!j.is_object()) throw BadInput("expected a JSON object", where);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }) == known.end())
      throw BadInput("unknown field", where + "." + it.key());
}

void read_intra_server(const json& j, Device& d, const std::string& where) {
  only_fields(j, {"bandwidth", "efficiency", "latency", "step_latency", "collective_sms"}, where);
  d.intra_server.bandwidth_Bps = quantity(j, "bandwidth", Quantity::Bandwidth, where);
  if (j.contains("efficiency")) d.intra_server.efficiency = number_in(j, "efficiency", 1e-6, 1, where);
  if (j.contains("latency")) d.intra_server.latency_s = quantity(j, "latency", Quantity::Time, where, true);
  if (j.contains("step_latency"))
    d.intra_server.step_latency_s = quantity(j, "step_latency", Quantity::Time, where, true);
  if (j.contains("collective_sms")) d.collective_sms = whole_number(j, "collective_sms", where);
}

}  // namespace

double Device::peak(const std::string& datatype, const std::string& where) const {
  const auto it = peak_flops.find(datatype);
  if (it == peak_flops.end())
    throw BadInput("device '" + name + "' has no peak FLOP/s for datatype '" + datatype + "'", where);
  return it->second;
}

double datatype_bytes(const std::string& datatype, const std::string& where) {
  if (datatype == "fp16" || datatype == "bf16") return 2;
  if (datatype == "fp32" || datatype == "tf32") return 4;
  if (datatype == "fp8" || datatype == "int8") return 1;
  if (datatype == "fp64") return 8;
  throw BadInput("unknown datatype '" + datatype + "' (fp8, fp16, bf16, tf32, fp32, fp64)", where);
}

std::vector<std::string> builtin_device_names() {
  return {"a100", "h100", "v100", "h200", "h800", "b200", "gb200"};
}

const std::string& Device::source(const std::string& field) const {
  static const std::string none;
  if (!sources) return none;
  const auto it = sources->find(field);
  return it == sources->end() ? none : it->second;
}

const Device* find_builtin_device(const std::string& name) {
  // Built once, never changed.
  static const Device devices[] = {a100(), h100(), v100(), h200(), h800(), b200(), gb200()};
  for (const Device& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

Device builtin_device(const std::string& name) {
  if (const Device* d = find_builtin_device(name)) return *d;
  throw BadInput(
      "unknown device '" + name + "' (a100, h100, h200, h800, b200, gb200, v100 or a .json device file)",
      "device " + name);
}

Device device_from_json(const json& j, const std::string& where) {
  only_fields(j,
              {"name",
               "description",
               "peak_flops",
               "efficiency",
               "hbm_capacity",
               "hbm_bandwidth",
               "memory_reserve",
               "gpus_per_server",
               "intra_server_bandwidth",
               "intra_server",
               "sms",
               "gemm_efficiency",
               "memory_efficiency",
               "fp8_gemm_efficiency",
               "grouped_gemm_efficiency",
               "kernel_floor",
               "gemm_tiles",
               "flash_attention_efficiency",
               "fused_attention_default",
               "sources"},
              where);
  Device d;
  if (!j.contains("name") || !j.at("name").is_string())
    throw BadInput("missing or non-string field", where + ".name");
  d.name = j.at("name").get<std::string>();
  if (j.contains("description")) {
    if (!j.at("description").is_string()) throw BadInput("expected a string", where + ".description");
    d.description = j.at("description").get<std::string>();
  }
  if (!j.contains("peak_flops") || !j.at("peak_flops").is_object() || j.at("peak_flops").empty())
    throw BadInput("expected an object datatype -> FLOP/s", where + ".peak_flops");
  for (auto it = j.at("peak_flops").begin(); it != j.at("peak_flops").end(); ++it) {
    datatype_bytes(it.key(), where + ".peak_flops." + it.key());
    d.peak_flops[it.key()] = positive_number(j.at("peak_flops"), it.key(), where + ".peak_flops");
  }
  d.efficiency = positive_number(j, "efficiency", where);
  if (d.efficiency > 1) throw BadInput("efficiency must be in (0, 1]", where + ".efficiency");
  d.hbm_bytes = quantity(j, "hbm_capacity", Quantity::Size, where);
  d.hbm_Bps = quantity(j, "hbm_bandwidth", Quantity::Bandwidth, where);
  if (j.contains("memory_reserve")) {
    d.memory_reserve_bytes = quantity(j, "memory_reserve", Quantity::Size, where, true);
    if (d.memory_reserve_bytes >= d.hbm_bytes)
      throw BadInput("the reserve must be smaller than the capacity", where + ".memory_reserve");
  }
  d.gpus_per_server = whole_number(j, "gpus_per_server", where);
  if (j.contains("intra_server") == j.contains("intra_server_bandwidth"))
    throw BadInput("give exactly one of intra_server (the link class) and intra_server_bandwidth",
                   where + ".intra_server");
  if (j.contains("intra_server"))
    read_intra_server(j.at("intra_server"), d, where + ".intra_server");
  else
    d.intra_server.bandwidth_Bps = quantity(j, "intra_server_bandwidth", Quantity::Bandwidth, where);
  // The per-operator model needs all three of its calibrated numbers, or none.
  const int model_fields =
      j.contains("sms") + j.contains("gemm_efficiency") + j.contains("memory_efficiency");
  if (model_fields != 0 && model_fields != 3)
    throw BadInput("the per-operator model needs sms, gemm_efficiency and memory_efficiency together",
                   where + (j.contains("sms")
                                ? (j.contains("gemm_efficiency") ? ".memory_efficiency" : ".gemm_efficiency")
                                : ".sms"));
  if (model_fields == 3) {
    d.sms = whole_number(j, "sms", where);
    d.gemm_efficiency = number_in(j, "gemm_efficiency", 1e-6, 1, where);
    d.memory_efficiency = number_in(j, "memory_efficiency", 1e-6, 1, where);
  }
  if (j.contains("fp8_gemm_efficiency")) {
    if (!j.contains("peak_flops") || !j.at("peak_flops").contains("fp8"))
      throw BadInput("needs an fp8 peak (peak_flops.fp8)", where + ".fp8_gemm_efficiency");
    d.fp8_gemm_efficiency = number_in(j, "fp8_gemm_efficiency", 1e-6, 1, where);
  }
  if (j.contains("grouped_gemm_efficiency")) {
    if (!d.per_operator())
      throw BadInput("needs the per-operator model (sms, gemm_efficiency, memory_efficiency)",
                     where + ".grouped_gemm_efficiency");
    d.grouped_gemm_efficiency = number_in(j, "grouped_gemm_efficiency", 1e-6, 1, where);
  }
  if (j.contains("kernel_floor")) d.kernel_floor_s = quantity(j, "kernel_floor", Quantity::Time, where, true);
  if (j.contains("gemm_tiles")) {
    const json& t = j.at("gemm_tiles");
    const std::string w = where + ".gemm_tiles";
    if (!t.is_array() || t.empty()) throw BadInput("expected a list of [rows, columns] tiles", w);
    d.gemm_tiles.clear();
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string wi = w + "[" + std::to_string(i) + "]";
      if (!t[i].is_array() || t[i].size() != 2) throw BadInput("expected [rows, columns]", wi);
      const json pair = {{"m", t[i][0]}, {"n", t[i][1]}};
      d.gemm_tiles.emplace_back(whole_number(pair, "m", wi), whole_number(pair, "n", wi));
    }
  }
  if (j.contains("flash_attention_efficiency")) {
    const json& f = j.at("flash_attention_efficiency");
    const std::string w = where + ".flash_attention_efficiency";
    only_fields(f, {"forward", "backward"}, w);
    d.flash_forward_efficiency = number_in(f, "forward", 1e-6, 1, w);
    d.flash_backward_efficiency = number_in(f, "backward", 1e-6, 1, w);
  }
  if (j.contains("fused_attention_default")) {
    if (!j.at("fused_attention_default").is_boolean())
      throw BadInput("expected true or false", where + ".fused_attention_default");
    d.fused_attention_default = j.at("fused_attention_default").get<bool>();
  }
  if (j.contains("sources")) {
    const json& s = j.at("sources");
    if (!s.is_object()) throw BadInput("expected an object field -> source text", where + ".sources");
    std::map<std::string, std::string> sources;
    for (auto it = s.begin(); it != s.end(); ++it) {
      if (!it.value().is_string()) throw BadInput("expected a string", where + ".sources." + it.key());
      sources[it.key()] = it.value().get<std::string>();
    }
    d.sources = std::make_shared<const std::map<std::string, std::string>>(std::move(sources));
  }
  return d;
}

Device load_device_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read device file", path);
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw BadInput(std::string("malformed JSON: ") + e.what(), path);
  }
  return device_from_json(j, path);
}

Device resolve_device(const std::string& name_or_path, const std::string& where) {
  if (const Device* d = find_builtin_device(name_or_path)) return *d;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return load_device_file(name_or_path);
  throw BadInput("unknown device '" + name_or_path +
                     "' (a100, h100, h200, h800, b200, gb200, v100 or a .json device file)",
                 where);
}

json device_to_json(const Device& d) {
  json peaks = json::object();
  for (const auto& [k, v] : d.peak_flops) peaks[k] = v;
  json j = {{"name", d.name},
            {"description", d.description},
            {"peak_flops", peaks},
            {"efficiency", d.efficiency},
            {"hbm_capacity_bytes", d.hbm_bytes},
            {"hbm_bandwidth_Bps", d.hbm_Bps},
            {"memory_reserve_bytes", d.memory_reserve_bytes},
            {"gpus_per_server", d.gpus_per_server},
            {"intra_server_bandwidth_Bps", d.intra_server.bandwidth_Bps},
            {"intra_server",
             {{"bandwidth_Bps", d.intra_server.bandwidth_Bps},
              {"efficiency", d.intra_server.efficiency},
              {"latency_s", d.intra_server.latency_s},
              {"step_latency_s", d.intra_server.step_latency_s},
              {"collective_sms", d.collective_sms}}}};
  if (d.per_operator()) {
    json tiles = json::array();
    for (const auto& [m, n] : d.gemm_tiles) tiles.push_back({m, n});
    j["sms"] = d.sms;
    j["gemm_efficiency"] = d.gemm_efficiency;
    j["memory_efficiency"] = d.memory_efficiency;
    if (d.fp8_gemm_efficiency > 0) j["fp8_gemm_efficiency"] = d.fp8_gemm_efficiency;
    if (d.grouped_gemm_efficiency > 0) j["grouped_gemm_efficiency"] = d.grouped_gemm_efficiency;
    j["kernel_floor_s"] = d.kernel_floor_s;
    j["gemm_tiles"] = tiles;
    if (d.flash_forward_efficiency > 0)
      j["flash_attention_efficiency"] = {{"forward", d.flash_forward_efficiency},
                                         {"backward", d.flash_backward_efficiency}};
  }
  if (d.fused_attention_default) j["fused_attention_default"] = true;
  j["sources"] = d.sources ? json(*d.sources) : json::object();
  return j;
}

}  // namespace toposweep

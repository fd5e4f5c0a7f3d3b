#include "toposweep/workload/config_keys.hpp"

#include "toposweep/util/config.hpp"
#include "toposweep/util/config_checks.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::workload {
namespace {

void check_model(const std::string& value, const std::string& where) {
  resolve_model(value, where);
}
void check_device(const std::string& value, const std::string& where) {
  resolve_device(value, where);
}
void check_datatype(const std::string& value, const std::string& where) {
  datatype_bytes(value, where);
}

}  // namespace

std::vector<KeySpec> config_keys() {
  return {
      {"model.name", "bert-large", "built-in model name (toposweep models) or path to a model JSON file",
       check_model},
      {"model.batch_per_gpu", "0",
       "samples per GPU per iteration (0: the model's default); global batch = this x GPUs",
       checks::integer(0, 1 << 30)},
      {"model.global_batch", "", "samples per iteration over all GPUs (overrides model.batch_per_gpu)",
       checks::optional(checks::integer(1, INT64_C(1) << 40))},
      {"model.datatype", "fp16", "training datatype: fp16, bf16, fp32, tf32, fp8", check_datatype},
      {"model.optimizer", "adam", "optimizer (sets its state memory): adam, momentum or sgd",
       checks::one_of({"adam", "momentum", "sgd"})},
      {"model.fused_attention", "false",
       "one fused (flash) attention kernel per layer instead of QK^T, softmax, dropout and x V; keeps no s x "
       "s "
       "activations",
       checks::boolean()},
      {"model.grad_datatype", "",
       "datatype of the gradient buffers and their data-parallel reduction (default: model.datatype; "
       "Megatron "
       "keeps fp32)",
       checks::optional(check_datatype)},
      {"server.device", "a100",
       "accelerator: a100, h100, v100 or a device JSON file; mixed servers: runs NAME*COUNT,... of "
       "consecutive "
       "servers, e.g. a100*4,v100*4",
       checks::runs(check_device)},
      {"server.efficiency", "", "achieved fraction of peak FLOP/s (default: the device's)",
       checks::optional(checks::number_in(1e-6, 1))},
      {"strategy.dp", "0", "data-parallel degree (0: all GPUs not used by tp*pp)",
       checks::integer(0, 1 << 24)},
      {"strategy.tp", "1", "tensor-parallel degree (transformers; divides the head count)",
       checks::integer(1, 1 << 24)},
      {"strategy.pp", "1", "pipeline-parallel stages", checks::integer(1, 1 << 24)},
      {"strategy.microbatches", "1", "microbatches per iteration and pipeline", checks::integer(1, 1 << 24)},
      {"strategy.microbatch_size", "", "samples per microbatch (sets strategy.microbatches from the batch)",
       checks::optional(checks::integer(1, 1 << 30))},
      {"strategy.schedule", "1f1b", "pipeline schedule: 1f1b, gpipe or interleaved",
       checks::one_of({"1f1b", "gpipe", "interleaved"})},
      {"strategy.virtual_stages", "1", "model chunks per device with the interleaved schedule (>= 2 there)",
       checks::integer(1, 1 << 24)},
      {"strategy.recompute", "none",
       "activation recomputation: none, selective (the attention core) or full (true/false: full/none)",
       checks::one_of({"none", "selective", "full", "true", "false", "yes", "no", "on", "off", "1", "0"})},
      {"strategy.sequence_parallel", "false",
       "Megatron sequence parallelism: TP AllReduces become ReduceScatter + AllGather, block activations / "
       "tp",
       checks::boolean()},
      {"strategy.scatter_gather", "true",
       "pipeline sends carry 1/tp of the boundary per TP rank, gathered inside the receiving server",
       checks::boolean()},
      {"strategy.tp_overlap", "none",
       "TP collectives under GEMMs: none, backward (Megatron-LM async input-gradient collective) or full "
       "(Megatron-Core)",
       checks::one_of({"none", "backward", "full"})},
      {"strategy.dp_overlap", "true",
       "gradient buckets reduce during the last backward (false: one reduction after it)", checks::boolean()},
      {"strategy.p2p_overlap", "true",
       "pipeline sends on their own stream (false: each send blocks the stage)", checks::boolean()},
      {"strategy.batch_split", "even",
       "data parallelism on unequal devices: even (same microbatch everywhere) or proportional (each "
       "replica's "
       "share of every microbatch in proportion to its compute rate, whole samples)",
       checks::one_of({"even", "proportional"})},
      {"strategy.stage_split", "even",
       "pipeline stages: even (equal blocks / FLOPs) or speed (layers in proportion to the compute rate of "
       "the devices each stage runs on)",
       checks::one_of({"even", "speed"})},
      {"strategy.compression", "none",
       "data-parallel gradients: none, or sfb (sufficient-factor broadcasting of dense and conv layers, "
       "lossless, per layer where the network model says it is faster)",
       checks::one_of({"none", "sfb"})},
      {"strategy.grad_accum_fusion", "true",
       "weight-gradient GEMMs accumulate into the gradient buffer (false: a separate add per microbatch, "
       "Megatron-LM "
       "before 2022-02)",
       checks::boolean()},
      {"strategy.zero", "0",
       "ZeRO stage over the data-parallel group: 0 none, 1 optimizer state sharded, 2 also gradients, 3 also "
       "weights",
       checks::integer(0, 3)},
      {"strategy.zero1", "false", "deprecated: true is strategy.zero = 1", checks::boolean()},
      {"strategy.bucket_size", "25MiB", "gradient AllReduce bucket size",
       checks::quantity(Quantity::Size, true)},
      {"strategy.layer_degrees", "",
       "per-layer degrees, one per model layer (1: data parallel, k: model parallel over k GPUs)",
       checks::optional(checks::integer_list(1, 1 << 24))},
      {"strategy.table_owners", "", "GPU rank owning each embedding table (default: round robin)",
       checks::optional(checks::integer_list(0, 1 << 30))},
  };
}

}  // namespace toposweep::workload

#include "toposweep/workload/config_keys.hpp"

namespace toposweep::workload {

std::vector<KeySpec> config_keys() {
  return {
      {"model.name", "bert-large", "built-in model name (toposweep models) or path to a model JSON file"},
      {"model.batch_per_gpu", "0",
       "samples per GPU per iteration (0: the model's default); global batch = this x GPUs"},
      {"model.global_batch", "", "samples per iteration over all GPUs (overrides model.batch_per_gpu)"},
      {"model.datatype", "fp16", "training datatype: fp16, bf16, fp32, tf32, fp8"},
      {"model.optimizer", "adam", "optimizer (sets its state memory): adam, momentum or sgd"},
      {"server.device", "a100", "accelerator: a100, h100, v100 or a device JSON file"},
      {"server.efficiency", "", "achieved fraction of peak FLOP/s (default: the device's)"},
      {"strategy.dp", "0", "data-parallel degree (0: all GPUs not used by tp*pp)"},
      {"strategy.tp", "1", "tensor-parallel degree (transformers; divides the head count)"},
      {"strategy.pp", "1", "pipeline-parallel stages"},
      {"strategy.microbatches", "1", "microbatches per iteration and pipeline"},
      {"strategy.microbatch_size", "", "samples per microbatch (sets strategy.microbatches from the batch)"},
      {"strategy.schedule", "1f1b", "pipeline schedule: 1f1b, gpipe or interleaved"},
      {"strategy.virtual_stages", "1", "model chunks per device with the interleaved schedule (>= 2 there)"},
      {"strategy.recompute", "false", "full activation recomputation"},
      {"strategy.sequence_parallel", "false",
       "Megatron sequence parallelism: TP AllReduces become ReduceScatter + AllGather, block activations / "
       "tp"},
      {"strategy.zero", "0",
       "ZeRO stage over the data-parallel group: 0 none, 1 optimizer state sharded, 2 also gradients, 3 also "
       "weights"},
      {"strategy.zero1", "false", "deprecated: true is strategy.zero = 1"},
      {"strategy.bucket_size", "25MiB", "gradient AllReduce bucket size"},
      {"strategy.layer_degrees", "",
       "per-layer degrees, one per model layer (1: data parallel, k: model parallel over k GPUs)"},
      {"strategy.table_owners", "", "GPU rank owning each embedding table (default: round robin)"},
  };
}

}  // namespace toposweep::workload

#include "toposweep/workload/config_keys.hpp"

namespace toposweep::workload {

std::vector<KeySpec> config_keys() {
  return {
      {"model.name", "bert-large", "built-in model name or path to a model JSON file"},
      {"model.batch_per_gpu", "16", "samples per GPU per iteration"},
      {"server.device", "a100", "accelerator: a100, h100, v100 or a device file"},
      {"strategy.dp", "0", "data-parallel degree (0: all GPUs not used by tp*pp)"},
      {"strategy.tp", "1", "tensor-parallel degree"},
      {"strategy.pp", "1", "pipeline-parallel stages"},
      {"strategy.microbatches", "1", "microbatches per iteration (pipeline)"},
  };
}

}  // namespace toposweep::workload

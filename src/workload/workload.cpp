#include "toposweep/workload/workload.hpp"

#include <cmath>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {

Workload make_workload(Model model, Device device, const std::string& datatype, double global_batch,
                       double efficiency_override, const std::string& optimizer) {
  if (optimizer != "adam" && optimizer != "momentum" && optimizer != "sgd")
    throw BadInput("unknown optimizer '" + optimizer + "' (adam, momentum or sgd)", "key model.optimizer");
  Workload w;
  w.optimizer = optimizer;
  w.model = std::move(model);
  w.device = std::move(device);
  w.datatype = datatype;
  w.bytes_per_element = datatype_bytes(datatype, "key model.datatype");
  const double eff = efficiency_override > 0 ? efficiency_override : w.device.efficiency;
  w.flops_per_s = w.device.peak(datatype, "key model.datatype") * eff;
  w.global_batch = global_batch;
  return w;
}

Workload workload_from_config(const Config& config, std::uint32_t gpus) {
  Model model = resolve_model(config.get_string("model.name"), config.where("model.name"));
  Device device = resolve_device(config.get_string("server.device"), config.where("server.device"));
  double batch = 0;
  if (config.has("model.global_batch")) {
    batch = static_cast<double>(config.get_int("model.global_batch", 1));
  } else {
    std::int64_t per_gpu = config.get_int("model.batch_per_gpu", 0);
    if (per_gpu == 0) per_gpu = model.default_batch_per_gpu;
    batch = static_cast<double>(per_gpu) * gpus;
  }
  double efficiency = 0;
  if (config.has("server.efficiency")) {
    efficiency = config.get_double("server.efficiency");
    if (!(efficiency > 0 && efficiency <= 1))
      throw BadInput("must be in (0, 1]", config.where("server.efficiency"));
  }
  const std::string optimizer = config.get_string("model.optimizer");
  if (optimizer != "adam" && optimizer != "momentum" && optimizer != "sgd")
    throw BadInput("unknown optimizer '" + optimizer + "' (adam, momentum or sgd)",
                   config.where("model.optimizer"));
  return make_workload(std::move(model), std::move(device), config.get_string("model.datatype"), batch,
                       efficiency, optimizer);
}

}  // namespace toposweep

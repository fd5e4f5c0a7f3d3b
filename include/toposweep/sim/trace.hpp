#pragma once
// The simulated timeline as Chrome trace-event JSON (chrome://tracing, Perfetto): one process
// per job with one track per task-graph stream (each task a complete event), and, for the flow
// model, one counter track per busy link showing its load over time.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "toposweep/sim/simulate.hpp"

namespace toposweep::sim {

// `max_links`: the busiest links (by bytes carried) that get a track.
nlohmann::json chrome_trace(const Network& net, std::span<const Job> jobs, const SimResult& result,
                            std::size_t max_links = 64);

}  // namespace toposweep::sim

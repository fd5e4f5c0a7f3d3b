#pragma once
// Bytes each NPU moves in each dimension of a multi-dimensional network for one hierarchical
// collective (docs/optimizers.md, bandwidth allocation, LIBRA/Themis model). A collective spans a subset of
// the dimensions, with `group` members along each (a TP group may use 4 of a dimension's 8 NPUs).
#include <cstdint>
#include <vector>

#include "toposweep/util/collective_op.hpp"

namespace toposweep::opt {

struct DimSpan {
  std::uint32_t dim = 0;    // dimension index, 0 fastest
  std::uint32_t group = 1;  // members of the collective along this dimension
};

// A communication operation on a multi-dimensional network. `point_to_point` marks a transfer
// (pipeline activations): it crosses each listed dimension once with all its bytes.
struct HierarchicalComm {
  CollectiveOp op = CollectiveOp::AllReduce;
  bool point_to_point = false;
  double bytes = 0;           // per-rank buffer, nccl-tests convention; payload for a transfer
  double count = 1;           // how many times per iteration it runs
  std::vector<DimSpan> dims;  // ascending dimension index
};

// size_k for every dimension (0 where the operation does not span k), `dim_count` entries:
//   AllReduce (dims ascending)  size_k = 2 m_k (g_k-1)/g_k,  m_{k+1} = m_k / g_k
//   ReduceScatter               size_k =   m_k (g_k-1)/g_k,  same shrinking
//   AllGather (output M)        the mirror image of ReduceScatter: identical per-dim sizes
//   AllToAll                    size_k = m (g_k-1)/g_k
//   Broadcast / Reduce          as AllReduce (scatter + gather halves)
//   point-to-point              size_k = bytes
// Throws BadInput for a dimension index >= dim_count or a group of 0.
std::vector<double> per_dimension_bytes(const HierarchicalComm& comm, std::size_t dim_count);

}  // namespace toposweep::opt

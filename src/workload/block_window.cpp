// Sliding-window attention (Beltagy et al. 2020; Mistral 7B, Gemma 2/3, GPT-OSS): in a windowed
// block each query attends to itself and the window - 1 tokens before it instead of every earlier
// token. Same operators, parameters and kept activations as causal attention; a fused attention
// kernel skips the key blocks outside the window, so its work is the window's share of the causal
// query-key pairs. The eager (unfused) chain still builds and masks the whole s x s score matrix,
// so its kernels are timed as before. The share counts exact pairs: the kernel's tile granularity
// (a 128-key tile half outside the window is still computed) is not modelled.
#include "toposweep/workload/block.hpp"

namespace toposweep {

double attended_share(double seq, double window) {
  if (!(window > 0) || window >= seq || !(seq > 0)) return 1.0;
  // Queries 1..window see i keys, the seq - window after them window each.
  const double pairs = window * (window + 1) / 2 + (seq - window) * window;
  return pairs / (seq * (seq + 1) / 2);
}

void apply_window(const TransformerShape& t, std::vector<BlockOp>& ops) {
  if (t.sliding_window == 0) return;
  for (BlockOp& op : ops)
    if (op.kind == OpKind::AttentionCore) op.window = t.sliding_window;
}

bool windowed_block(const TransformerShape& t, std::uint32_t index) {
  if (t.sliding_window == 0) return false;
  const std::uint32_t every = t.full_attention_every;
  return every == 0 || (index + 1) % every != 0;
}

}  // namespace toposweep

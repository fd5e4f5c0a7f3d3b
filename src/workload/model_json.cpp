// User model files (JSON, schema in docs/models.md) and the JSON description of a model.
// Every field is checked: an unknown, missing or ill-typed field is BadInput naming
// "file: path.to.field".
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/moe_routing.hpp"

namespace toposweep {
namespace {

using nlohmann::json;

// A JSON object whose fields are read once each; leftovers are reported as unknown.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j.is_object()) throw BadInput("expected a JSON object", where_);
  }
  const std::string& where() const { return where_; }
  std::string at(const std::string& key) const { return where_ + "." + key; }
  bool has(const std::string& key) const { return j_.contains(key); }
  const json& raw(const std::string& key) {
    seen_.insert(key);
    if (!j_.contains(key)) throw BadInput("missing field", at(key));
    return j_.at(key);
  }
  double number(const std::string& key, double min = 0) {
    const json& v = raw(key);
    if (!v.is_number()) throw BadInput("expected a number", at(key));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < min) throw BadInput("expected a finite number >= " + fmt(min), at(key));
    return x;
  }
  double number_or(const std::string& key, double fallback, double min = 0) {
    return has(key) ? number(key, min) : (seen_.insert(key), fallback);
  }
  std::uint32_t count(const std::string& key, std::uint32_t min = 1) {
    const double x = number(key, min);
    if (x != std::floor(x) || x > 4e9) throw BadInput("expected a whole number", at(key));
    return static_cast<std::uint32_t>(x);
  }
  std::uint32_t count_or(const std::string& key, std::uint32_t fallback, std::uint32_t min = 0) {
    return has(key) ? count(key, min) : (seen_.insert(key), fallback);
  }
  std::string text(const std::string& key) {
    const json& v = raw(key);
    if (!v.is_string()) throw BadInput("expected a string", at(key));
    return v.get<std::string>();
  }
  std::string text_or(const std::string& key, const std::string& fallback) {
    return has(key) ? text(key) : (seen_.insert(key), fallback);
  }
  bool flag_or(const std::string& key, bool fallback) {
    if (!has(key)) return fallback;
    const json& v = raw(key);
    if (!v.is_boolean()) throw BadInput("expected true or false", at(key));
    return v.get<bool>();
  }
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) throw BadInput("unknown field", at(it.key()));
  }

 private:
  static std::string fmt(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
  }
  const json& j_;
  std::string where_;
  std::set<std::string> seen_;
};

LayerKind parse_kind(const std::string& s, const std::string& where) {
  for (LayerKind k :
       {LayerKind::Dense, LayerKind::Conv, LayerKind::Pool, LayerKind::TransformerBlock, LayerKind::Embedding,
        LayerKind::Head, LayerKind::EmbeddingBag, LayerKind::Interaction, LayerKind::Other})
    if (s == layer_kind_name(k)) return k;
  throw BadInput("unknown layer kind '" + s + "' (dense, conv, pool, interaction, other, ...)", where);
}

ModelFamily parse_family(const std::string& s, const std::string& where) {
  for (ModelFamily f :
       {ModelFamily::Transformer, ModelFamily::Vision, ModelFamily::Recommendation, ModelFamily::Mlp})
    if (s == model_family_name(f)) return f;
  throw BadInput("unknown family '" + s + "' (transformer, vision, recommendation, mlp)", where);
}

// A text field that must be one of `names`: its index.
std::size_t choice(Fields& f, const std::string& key, std::initializer_list<const char*> names) {
  const std::string v = f.text(key);
  std::string list;
  std::size_t i = 0;
  for (const char* n : names) {
    if (v == n) return i;
    list += (i++ ? " or " : "") + std::string(n);
  }
  throw BadInput("unknown " + key + " '" + v + "' (" + list + ")", f.at(key));
}

// "moe": {experts, top_k, expert_ffn_hidden, shared_experts, dense_layers, capacity_factor,
// router_groups, router_group_topk}.
MoeShape read_moe(Fields f, std::uint32_t layers) {
  MoeShape m;
  m.experts = f.count("experts", 2);
  m.top_k = f.count("top_k", 1);
  m.expert_ffn_hidden = f.count("expert_ffn_hidden", 1);
  m.shared_experts = f.count_or("shared_experts", 0);
  m.dense_layers = f.count_or("dense_layers", 0);
  m.capacity_factor = f.number_or("capacity_factor", 0);
  m.router_groups = f.count_or("router_groups", 0);
  m.router_group_topk = f.count_or("router_group_topk", 0);
  f.done();
  if (m.top_k > m.experts)
    throw BadInput("more than the " + std::to_string(m.experts) + " experts", f.at("top_k"));
  if (const std::string problem = router_groups_problem(m); !problem.empty())
    throw BadInput(problem, f.at(f.has("router_groups") ? "router_groups" : "router_group_topk"));
  if (m.dense_layers >= layers)
    throw BadInput("leaves no MoE layer of the " + std::to_string(layers), f.at("dense_layers"));
  if (f.has("capacity_factor") && m.capacity_factor < 1)
    throw BadInput("expected >= 1 (or left out: dropless)", f.at("capacity_factor"));
  return m;
}

// "mla": {q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim}.
MlaShape read_mla(Fields f) {
  MlaShape m;
  m.q_lora_rank = f.count("q_lora_rank");
  m.kv_lora_rank = f.count("kv_lora_rank");
  m.qk_nope_head_dim = f.count("qk_nope_head_dim");
  m.qk_rope_head_dim = f.count("qk_rope_head_dim");
  m.v_head_dim = f.count("v_head_dim");
  f.done();
  return m;
}

TransformerShape read_transformer(Fields f) {
  TransformerShape t;
  t.layers = f.count("layers");
  t.hidden = f.count("hidden");
  t.heads = f.count("heads");
  t.kv_heads = f.count_or("kv_heads", t.heads, 1);
  t.ffn_hidden = f.count_or("ffn_hidden", 4 * t.hidden, 1);
  t.head_dim = f.count_or("head_dim", 0, 1);
  t.seq_len = f.count("seq_len");
  t.vocab = f.count("vocab");
  t.max_positions = f.count_or("max_positions", 0);
  t.token_types = f.count_or("token_types", 0);
  // The MLP: "mlp" by name, or the older "gated_mlp" flag; both given must agree.
  const bool gated_given = f.has("gated_mlp");
  t.gated_mlp = f.flag_or("gated_mlp", false);
  if (f.has("mlp")) {
    const bool gated = choice(f, "mlp", {"gelu", "swiglu"}) == 1;
    if (gated_given && gated != t.gated_mlp)
      throw BadInput(std::string("contradicts gated_mlp = ") + (t.gated_mlp ? "true" : "false"), f.at("mlp"));
    t.gated_mlp = gated;
  }
  if (f.has("norm")) t.norm = static_cast<NormKind>(choice(f, "norm", {"layernorm", "rmsnorm"}));
  if (f.has("position")) t.position = static_cast<PositionKind>(choice(f, "position", {"learned", "rotary"}));
  t.tied_embeddings = f.flag_or("tied_embeddings", true);
  t.biases = f.flag_or("biases", true);
  t.pooler = f.flag_or("pooler", false);
  if (f.has("moe")) t.moe = read_moe(Fields(f.raw("moe"), f.at("moe")), t.layers);
  if (f.has("mla")) t.mla = read_mla(Fields(f.raw("mla"), f.at("mla")));
  t.mtp_layers = f.count_or("mtp_layers", 0);
  t.sliding_window = f.count_or("sliding_window", 0, 1);
  t.full_attention_every = f.count_or("full_attention_every", 0, 2);
  if (t.full_attention_every > 0 && t.sliding_window == 0)
    throw BadInput("full_attention_every needs a sliding_window", f.at("full_attention_every"));
  f.done();
  if (t.head_dim == 0 && t.hidden % t.heads != 0)
    throw BadInput("hidden must be a multiple of heads (or give head_dim)", f.at("hidden"));
  if (t.heads % t.kv_heads != 0) throw BadInput("heads must be a multiple of kv_heads", f.at("kv_heads"));
  if (t.position == PositionKind::Rotary && t.max_positions > 0)
    throw BadInput("rotary positions have no learned table: max_positions must be 0 (or left out)",
                   f.at("max_positions"));
  return t;
}

Layer read_layer(Fields f) {
  const std::string name = f.text("name");
  const LayerKind kind = parse_kind(f.text("kind"), f.at("kind"));
  Layer l;
  if (kind == LayerKind::Dense && f.has("in")) {
    l = dense_layer(name, f.number("in", 1), f.number("out", 1), f.number_or("tokens", 1, 1));
  } else if (kind == LayerKind::Conv && f.has("in_channels")) {
    const double hi = f.number("input_size", 1), k = f.number("kernel", 1), st = f.number_or("stride", 1, 1);
    const double ho = std::ceil(hi / st);
    l = conv_layer(name, f.number("in_channels", 1), f.number("out_channels", 1), k, ho, ho,
                   f.flag_or("batch_norm", true), hi, hi);
  } else {
    if (kind == LayerKind::TransformerBlock || kind == LayerKind::Embedding || kind == LayerKind::Head ||
        kind == LayerKind::EmbeddingBag)
      throw BadInput("layer kind '" + std::string(layer_kind_name(kind)) +
                         "' is generated (use a \"transformer\" object or \"tables\")",
                     f.at("kind"));
    l.name = name;
    l.forward_flops = f.number("forward_flops");
    l.backward_flops = f.number_or("backward_flops", 2 * l.forward_flops);
    // `parameters` counts them all; `replicated_parameters` (biases, norms) are kept whole by
    // every model-parallel rank instead of split. Whole numbers, so the difference is exact.
    const double parameters = f.number_or("parameters", 0);
    l.params_replicated = f.number_or("replicated_parameters", 0);
    if (l.params_replicated > parameters)
      throw BadInput("more than the layer's parameters", f.at("replicated_parameters"));
    l.params_sharded = parameters - l.params_replicated;
    l.input_elements = f.number("input_elements");
    l.output_elements = f.number("output_elements");
    l.act_replicated = f.number_or("activation_elements", l.input_elements);
    l.sfb_elements = f.number_or("sfb_elements", 0);
  }
  l.kind = kind;
  f.done();
  return l;
}

void read_tables(const json& arr, const std::string& where, std::vector<EmbeddingTable>& out) {
  if (!arr.is_array()) throw BadInput("expected an array", where);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    Fields f(arr[i], where + "[" + std::to_string(i) + "]");
    const std::uint32_t copies = f.count_or("count", 1, 1);
    EmbeddingTable t;
    t.name = f.text_or("name", "table");
    t.rows = f.number("rows", 1);
    t.dim = f.number("dim", 1);
    t.lookups_per_sample = f.number_or("lookups_per_sample", 1, 0);
    t.pooled = f.flag_or("pooled", true);
    if (f.has("parameters") && f.number("parameters") != t.parameters())  // as model_to_json writes it
      throw BadInput("is not rows x dim", f.at("parameters"));
    f.done();
    for (std::uint32_t c = 0; c < copies; ++c) {
      out.push_back(t);
      if (copies > 1) out.back().name += std::to_string(c);
    }
  }
}

// The facts model_to_json writes beside a model, computed from it: a description reads back only
// if they still agree with the model it describes (an edited shape with stale totals does not).
void check_derived_facts(Fields& f, const Model& m) {
  const std::pair<const char*, double> facts[] = {
      {"parameters", m.parameters()},
      {"dense_parameters", m.dense_parameters()},
      {"forward_flops_per_sample", m.forward_flops_per_sample()},
      {"backward_flops_per_sample", m.backward_flops_per_sample()},
      {"pipeline_units", m.pipeline_units()},
      {"active_parameters", m.active_parameters()}};
  for (const auto& [key, value] : facts)
    if (f.has(key) && f.number(key) != value)
      throw BadInput("does not match the model (" + std::to_string(value) + "); remove it or fix it",
                     f.at(key));
  if (f.has("layer_list")) {  // a summary of the layers, one entry each
    const json& list = f.raw("layer_list");
    if (!list.is_array() || list.size() != m.layers.size())
      throw BadInput("expected an array of the model's " + std::to_string(m.layers.size()) + " layers",
                     f.at("layer_list"));
  }
}

}  // namespace

Model model_from_json(const json& j, const std::string& where) {
  Fields f(j, where);
  Model m;
  const std::string name = f.text("name");
  const std::string description = f.text_or("description", "");
  if (f.has("transformer")) {
    const TransformerShape t = read_transformer(Fields(f.raw("transformer"), f.at("transformer")));
    m = transformer_model(name, t, description);
    if (f.has("layers"))
      throw BadInput("give either \"transformer\" or \"layers\", not both", f.at("layers"));
  } else {
    m.name = name;
    m.description = description;
    m.family = ModelFamily::Mlp;
    if (f.has("tables")) read_tables(f.raw("tables"), f.at("tables"), m.tables);
    const json& layers = f.raw("layers");
    if (!layers.is_array() || layers.empty()) throw BadInput("expected a non-empty array", f.at("layers"));
    if (m.has_tables()) {
      Layer bag;
      bag.name = "embeddings";
      bag.kind = LayerKind::EmbeddingBag;
      bag.params_sharded = m.table_parameters();
      for (const auto& t : m.tables) {
        bag.forward_flops += t.lookups_per_sample * t.dim;
        bag.output_elements += t.exchanged_elements_per_sample();
      }
      bag.backward_flops = bag.forward_flops;
      m.layers.push_back(bag);
      m.family = ModelFamily::Recommendation;
    }
    for (std::size_t i = 0; i < layers.size(); ++i)
      m.layers.push_back(read_layer(Fields(layers[i], f.at("layers") + "[" + std::to_string(i) + "]")));
  }
  if (f.has("family")) m.family = parse_family(f.text("family"), f.at("family"));
  m.sample_unit = f.text_or("sample_unit", m.sample_unit);
  m.default_batch_per_gpu = f.count_or("batch_per_gpu", m.default_batch_per_gpu, 1);
  check_derived_facts(f, m);
  f.done();
  return m;
}

Model load_model_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read model file", path);
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw BadInput(std::string("malformed JSON: ") + e.what(), path);
  }
  return model_from_json(j, path);
}

Model resolve_model(const std::string& name_or_path, const std::string& where) {
  if (is_builtin_model(name_or_path)) return builtin_model(name_or_path);
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (looks_like_path) return load_model_file(name_or_path);
  throw BadInput(
      "unknown model '" + name_or_path + "' (a built-in name or a .json file; toposweep models lists them)",
      where);
}

json model_to_json(const Model& m) {
  json j;
  j["name"] = m.name;
  j["description"] = m.description;
  j["family"] = model_family_name(m.family);
  j["sample_unit"] = m.sample_unit;
  j["batch_per_gpu"] = m.default_batch_per_gpu;
  j["parameters"] = m.parameters();
  j["dense_parameters"] = m.dense_parameters();
  j["forward_flops_per_sample"] = m.forward_flops_per_sample();
  j["backward_flops_per_sample"] = m.backward_flops_per_sample();
  j["pipeline_units"] = m.pipeline_units();
  // What model_from_json builds the model from: the transformer's shape (below), or the layers
  // in full (an embedding bag is generated from the tables).
  if (!m.transformer) {
    json layers = json::array();
    for (const auto& l : m.layers) {
      if (l.kind == LayerKind::EmbeddingBag) continue;
      layers.push_back({{"name", l.name},
                        {"kind", layer_kind_name(l.kind)},
                        {"forward_flops", l.forward_flops},
                        {"backward_flops", l.backward_flops},
                        {"parameters", l.parameters()},
                        {"replicated_parameters", l.params_replicated},
                        {"input_elements", l.input_elements},
                        {"output_elements", l.output_elements},
                        {"activation_elements", l.act_replicated},
                        {"sfb_elements", l.sfb_elements}});
    }
    j["layers"] = std::move(layers);
  }
  if (m.transformer) {
    const auto& t = *m.transformer;
    j["transformer"] = {{"layers", t.layers},
                        {"hidden", t.hidden},
                        {"heads", t.heads},
                        {"kv_heads", t.kv_heads},
                        {"ffn_hidden", t.ffn_hidden},
                        {"seq_len", t.seq_len},
                        {"vocab", t.vocab},
                        {"max_positions", t.max_positions},
                        {"token_types", t.token_types},
                        {"mlp", t.gated_mlp ? "swiglu" : "gelu"},
                        {"norm", t.norm == NormKind::RMSNorm ? "rmsnorm" : "layernorm"},
                        {"position", t.position == PositionKind::Rotary ? "rotary" : "learned"},
                        {"tied_embeddings", t.tied_embeddings},
                        {"biases", t.biases},
                        {"pooler", t.pooler}};
    // Written only when present, so dense models' descriptions are as before.
    if (t.head_dim > 0) j["transformer"]["head_dim"] = t.head_dim;
    if (t.moe)
      j["transformer"]["moe"] = {{"experts", t.moe->experts},
                                 {"top_k", t.moe->top_k},
                                 {"expert_ffn_hidden", t.moe->expert_ffn_hidden},
                                 {"shared_experts", t.moe->shared_experts},
                                 {"dense_layers", t.moe->dense_layers}};
    if (t.moe && t.moe->capacity_factor > 0)
      j["transformer"]["moe"]["capacity_factor"] = t.moe->capacity_factor;
    if (t.moe && t.moe->router_groups > 0) {
      j["transformer"]["moe"]["router_groups"] = t.moe->router_groups;
      j["transformer"]["moe"]["router_group_topk"] = t.moe->router_group_topk;
    }
    if (t.mla)
      j["transformer"]["mla"] = {{"q_lora_rank", t.mla->q_lora_rank},
                                 {"kv_lora_rank", t.mla->kv_lora_rank},
                                 {"qk_nope_head_dim", t.mla->qk_nope_head_dim},
                                 {"qk_rope_head_dim", t.mla->qk_rope_head_dim},
                                 {"v_head_dim", t.mla->v_head_dim}};
    if (t.mtp_layers > 0) j["transformer"]["mtp_layers"] = t.mtp_layers;
    if (t.sliding_window > 0) j["transformer"]["sliding_window"] = t.sliding_window;
    if (t.full_attention_every > 0) j["transformer"]["full_attention_every"] = t.full_attention_every;
    if (t.moe) j["active_parameters"] = m.active_parameters();
  }
  json layers = json::array();
  for (const auto& l : m.layers)
    layers.push_back({{"name", l.name},
                      {"kind", layer_kind_name(l.kind)},
                      {"forward_flops", l.forward_flops},
                      {"backward_flops", l.backward_flops},
                      {"parameters", l.parameters()},
                      {"input_elements", l.input_elements},
                      {"output_elements", l.output_elements}});
  j["layer_list"] = layers;
  if (m.has_tables()) {
    json tables = json::array();
    for (const auto& t : m.tables)
      tables.push_back({{"name", t.name},
                        {"rows", t.rows},
                        {"dim", t.dim},
                        {"lookups_per_sample", t.lookups_per_sample},
                        {"pooled", t.pooled},
                        {"parameters", t.parameters()}});
    j["tables"] = tables;
  }
  return j;
}

}  // namespace toposweep

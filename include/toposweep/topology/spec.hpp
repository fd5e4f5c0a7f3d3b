#pragma once
// A network as a typed value: one family's specification (families.hpp) or an edge-list file,
// read from the topology.* and server.* keys once, at the edge (topology_spec_from_config), and
// built by build_network(spec). Specs compare by value, so a cache keyed by a spec cannot return
// a network built from other settings.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "toposweep/topology/families.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep::topology {

// kind = file: an edge-list file (edge_list.hpp).
struct FileTopologySpec {
  std::string path;
  double default_latency_s = 0;
  std::string optical = "none";
  ServerSpec server;
  bool gpus_given = false;  // server.gpus set by the user (checked against the file's gpus_per_node)
  bool operator==(const FileTopologySpec&) const = default;
};

using FamilySpec = std::variant<SwitchSpec, FatTreeSpec, TopoOptSpec, MultiDimSpec, TorusSpec, ExpanderSpec,
                                FileTopologySpec, RailSpec, DragonflySpec>;

struct TopologySpec {
  FamilySpec family;
  bool allow_disconnected = false;
  bool operator==(const TopologySpec&) const = default;
};

// The family names topology.kind accepts, in registration order (help texts and checks use it).
const std::vector<std::string>& topology_family_names();
// "switch", "fattree", ... for a spec.
std::string family_name(const TopologySpec& spec);

// Reads topology.kind and the keys that family reads. The server.intra_* keys left empty take
// `intra_defaults` (the device's fabric; point/ and the commands pass it), or without it the
// ideal 300 GB/s fabric of earlier versions. Malformed or missing values are BadInput
// naming the key and where it was set; a well-formed combination that cannot exist (degree at or
// above the servers, dimensions holding another NPU count) is InvalidDesign.
TopologySpec topology_spec_from_config(const Config& config, const LinkClass* intra_defaults = nullptr);
// server.gpus, server.intra_* and topology.link_efficiency, as above.
ServerSpec server_spec_from_config(const Config& config, const LinkClass* intra_defaults = nullptr);
// Per-server fabrics that are all equal become the uniform form (same spec, same network).
void normalize_server_fabrics(ServerSpec& s);
// The server spec inside a family's spec (nullptr for multidim, whose NPUs are not servers).
ServerSpec* server_of(TopologySpec& spec);
const ServerSpec* server_of(const TopologySpec& spec);

}  // namespace toposweep::topology

namespace toposweep {

// Builds the network (TotientPerms picks a topoopt spec's strides when it has none), checks it is
// connected unless allowed; BadInput / InvalidDesign name the key they concern ("key K").
Network build_network(const topology::TopologySpec& spec);

}  // namespace toposweep

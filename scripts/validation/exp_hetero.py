"""Item 6: heterogeneous clusters as in TAG (Zhang et al., TPDS 2023): mixed V100/A100 (and V100/1080 Ti)
servers, PCIe vs NVLink inside them. Per (cluster, model) the iteration time of
  (a) rank order with an even batch split (TAG's `dp-nccl`-like baseline),
  (b) + the batch split in proportion to replica speed,
  (c) + the stage split by speed and METIS placement (pipelined models),
  (d) + SFB gradient compression chosen per layer,
  (e) the strategy search over all of it (`optimize --target strategy`),
through `simulate --json` / `optimize --json` with the analytical network model. Cross-checks: the proportional
split's closed form on a compute-bound row, and SFB's DP bytes against b(m+n)(p-1)/p."""
import os

import tscli

DEVICES = os.path.join(tscli.SOURCE_DIR, "inputs", "devices")
V100_PCIE = os.path.join(DEVICES, "v100-pcie.json")
GTX1080TI = os.path.join(DEVICES, "gtx1080ti.json")

# id -> (description, sets). 8 servers on one switch; `degree` ports of `link_bandwidth` per server.
CLUSTERS = {
    "H1": ("4 A100 (NVLink) + 4 V100-PCIe servers x 8 GPUs, 100 Gb/s x 4 NICs, fp16",
           {"server.device": f"a100*4,{V100_PCIE}*4", "server.gpus": 8,
            
            "topology.link_bandwidth": "100Gbps", "topology.degree": 4, "model.datatype": "fp16"}),
    "H2": ("as H1 with 25 Gb/s x 1 NIC per server", {"server.device": f"a100*4,{V100_PCIE}*4", "server.gpus": 8,
                                                     
                                                     "topology.link_bandwidth": "25Gbps", "topology.degree": 1,
                                                     "model.datatype": "fp16"}),
    "H3": ("4 A100 + 4 V100 (both NVLink) servers x 8 GPUs, 100 Gb/s x 4 NICs, fp16",
           {"server.device": "a100*4,v100*4", "server.gpus": 8, "topology.link_bandwidth": "100Gbps",
            "topology.degree": 4, "model.datatype": "fp16"}),
    "T1": ("TAG's testbed without its P100s: 1 V100-PCIe server x 4 GPUs + 4 GTX 1080 Ti servers x 2 GPUs "
           "(PCIe inside), 22.5 Gb/s, fp32",
           {"server.device": f"{V100_PCIE}*1,{GTX1080TI}*4", "server.gpus": "4*1,2*4", "topology.servers": 5,
            "topology.link_bandwidth": "22.5Gbps", "topology.degree": 1, "model.datatype": "fp32"}),
}

# name -> (sets, pipelined). Batches per GPU as in TAG's and TopoOpt's evaluations; GPT-3 with a fixed
# 3-D layout (tp 8 inside a server, pp 2 across the two server kinds in rank order).
MODELS = {
    "vgg16": ({"model.name": "vgg16", "model.batch_per_gpu": 64}, False),
    "resnet50": ({"model.name": "resnet50", "model.batch_per_gpu": 128}, False),
    "bert-large": ({"model.name": "bert-large", "model.batch_per_gpu": 16}, False),
    "gpt3-1.3b": ({"model.name": "gpt3-1.3b", "model.global_batch": 512, "strategy.tp": 8, "strategy.pp": 2,
                   "strategy.microbatches": 8, "strategy.recompute": "selective"}, True),
}
# 11 GB GPUs in fp32: smaller batches per GPU (VGG16 8, ResNet-50 32, BERT-large 2); no GPT-3 there.
SMALL = {"T1": {"vgg16": 8, "resnet50": 32, "bert-large": 2}}
SKIP = {("T1", "gpt3-1.3b")}

VARIANTS = {
    "a_even": {},
    "b_proportional": {"strategy.batch_split": "proportional"},
    "c_speed_placement": {"strategy.batch_split": "proportional", "strategy.stage_split": "speed",
                          "optimize.placement": "metis"},
    "d_sfb": {"strategy.batch_split": "proportional", "strategy.stage_split": "speed",
              "optimize.placement": "metis", "strategy.compression": "sfb"},
}
SEARCH = {"optimize.batch_splits": "even,proportional", "optimize.stage_splits": "even,speed",
          "optimize.compressions": "none,sfb", "optimize.max_microbatches": 8, "optimize.search": "exhaustive"}


def run(workdir=None):
    calls, keys = [], []
    for cid, (_, csets) in CLUSTERS.items():
        for mname, (msets, pipelined) in MODELS.items():
            sets = {"topology.kind": "switch", "topology.servers": 8, "simulate.network_model": "analytical",
                    **csets, **msets}
            if (cid, mname) in SKIP:
                continue
            if mname in SMALL.get(cid, {}):
                sets["model.batch_per_gpu"] = SMALL[cid][mname]
            for vname, vsets in VARIANTS.items():
                if vname == "c_speed_placement" and not pipelined:
                    continue
                calls.append(("simulate", {**sets, **vsets}, [], []))
                keys.append((cid, mname, vname))
            search = dict(SEARCH)
            if not pipelined:
                search.update({"optimize.tp": 1, "optimize.pp": 1})
            else:
                search.update({"optimize.tp": "2,4,8", "optimize.pp": "1,2,4"})
            calls.append(("optimize", {**sets, **search}, [], ["--target", "strategy"]))
            keys.append((cid, mname, "e_search"))
    res = dict(zip(keys, tscli.run_many(calls)))
    rows = []
    for cid, (cdesc, _) in CLUSTERS.items():
        for mname in MODELS:
            if (cid, mname) in SKIP:
                continue
            row = {"cluster": cid, "cluster_desc": cdesc, "model": mname}
            for vname in list(VARIANTS) + ["e_search"]:
                r = res.get((cid, mname, vname))
                if r is None:
                    continue
                if isinstance(r, Exception):
                    row[f"{vname}_s"], row[f"{vname}_error"] = float("nan"), str(r)[-300:]
                    continue
                ok = r.get("feasible", True)
                row[f"{vname}_s"] = r["iteration_time_s"] if ok else float("nan")
                if not ok:
                    row[f"{vname}_note"] = r.get("infeasible_reason", "")
                if vname == "b_proportional" and "batch_split" in r:
                    row["replica_microbatch"] = sorted(set(r["batch_split"]["replica_microbatch"]))
                if vname == "d_sfb" and "compression" in r:
                    c = r["compression"]
                    row["sfb_layers"] = ",".join(l["name"] for l in c["layers"] if l["chosen"])
                    row["dp_bytes_before"] = c["dp_bytes_per_rank_before"]
                    row["dp_bytes_after"] = c["dp_bytes_per_rank_after"]
                if vname == "e_search":
                    row["search_strategy"] = r.get("strategy")
            rows.append(row)
    return rows


if __name__ == "__main__":
    import json
    for row in run():
        print(json.dumps(row, default=str))

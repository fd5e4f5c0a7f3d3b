"""Section 7e's Mixtral sweeps with NCCL's All-to-All and with DeepEP's dispatcher (strategy.ep_dispatcher =
deepep: one copy of a token per destination node). The same strategies with fewer network bytes: on every fabric
and bandwidth the best iteration with DeepEP is no slower, and where the fastest layout's EP group crosses servers
(ep 8 with tp 2 on the Clos-like fabrics) it is faster."""
import exp_fabrics


def test_deepep_never_slower_and_faster_across_servers(tmp_path):
    rows = exp_fabrics.run(str(tmp_path))
    plain = {(r["fabric"], r["bandwidth"]): r for r in rows if r["model"] == "mixtral-8x7b"}
    deepep = {(r["fabric"], r["bandwidth"]): r for r in rows if r["model"] == "mixtral-8x7b, DeepEP"}
    assert plain.keys() == deepep.keys() and len(plain) == 21
    for k in plain:
        assert deepep[k]["iteration_time_s"] <= plain[k]["iteration_time_s"] * (1 + 1e-12), k
    for fabric in ("switch", "fat-tree", "rail-optimized", "rail-only"):
        k = (fabric, "400Gbps")
        assert "ep8" in plain[k]["strategy"] and "t2" in plain[k]["strategy"], plain[k]
        assert deepep[k]["iteration_time_s"] < 0.99 * plain[k]["iteration_time_s"], k

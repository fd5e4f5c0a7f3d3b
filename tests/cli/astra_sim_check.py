#!/usr/bin/env python3
"""Checks a directory written by `toposweep export astra-sim` against values worked out by hand:

- network.yml: the topology, npus_count, bandwidth (GB/s, GB = 2^30 B) and latency (ns) lists;
- system.json: the fields given (implementations per dimension, endpoint-delay,
  preferred-dataset-splits, local-mem-bw, ...) and that compute durations come from the traces
  (roofline off);
- workload/: the Chakra traces pass chakra_check.py; every communicator-group id is positive
  (ASTRA-sim asserts it); each compute node's duration_micros is toposweep's duration x repeat in
  whole microseconds, the time ASTRA-sim's feeder charges without a roofline; each ALL_GATHER's
  comm_size is each rank's share (toposweep's bytes / group size), what ASTRA-sim's all-gather
  takes.

usage: astra_sim_check.py DIR EXPECTED_JSON   (EXPECTED_JSON: {"network": {...}, "system": {...}})
Prints a one-line summary; exits 1 with the first problem.
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chakra_check  # noqa: E402

ALL_GATHER = 2  # Chakra's CollectiveCommType


def read_yaml_lists(path):
    """network.yml as toposweep writes it: `key: [ a, b ]` lines, '#' comments."""
    out = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        assert value.startswith("[") and value.endswith("]"), line
        items = [v.strip() for v in value[1:-1].split(",") if v.strip()]
        conv = []
        for v in items:
            try:
                conv.append(float(v))
            except ValueError:
                conv.append(v)
        out[key.strip()] = conv
    return out


def close(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def nodes(path):
    """(type, duration_micros, attributes) of each node of one trace file; attributes by name
    (toposweep.duration_s and toposweep.bytes as doubles, toposweep.repeat, comm_type, comm_size,
    pg_name)."""
    out = []
    for buf in chakra_check.messages(path)[1:]:
        micros, kind, attrs = 0, 0, {}
        for f, w, v in chakra_check.fields(buf):
            if f == 3:
                kind = v
            elif f == 7:
                micros = v
            elif f == 10:
                name, val = None, None
                for af, aw, av in chakra_check.fields(v):
                    if af == 1:
                        name = av.decode()
                    elif af == 3:
                        val = struct.unpack("<d", av)[0]
                    elif af in (7, 9):
                        val = chakra_check.signed(av, 64)
                    elif af == 11:
                        val = av
                    elif af == 29:
                        val = av.decode()
                attrs[name] = val
        out.append((kind, micros, attrs))
    return out


def main():
    d, expected = sys.argv[1], json.loads(sys.argv[2])
    net = read_yaml_lists(os.path.join(d, "network.yml"))
    for key, want in expected["network"].items():
        got = net.get(key)
        assert got is not None and len(got) == len(want) and all(close(g, w) for g, w in zip(got, want)), \
            "network.yml %s: %s, expected %s" % (key, got, want)
    system = json.load(open(os.path.join(d, "system.json")))
    for key, want in expected["system"].items():
        got = system.get(key)
        ok = got == want if isinstance(want, (list, str)) else got is not None and close(got, want)
        assert ok, "system.json %s: %s, expected %s" % (key, got, want)
    assert system.get("roofline-enabled") == 0, "roofline must be off: compute nodes carry their times"
    assert json.load(open(os.path.join(d, "remote_memory.json"))) == {"memory-type": "NO_MEMORY_EXPANSION"}
    wl = os.path.join(d, "workload")
    check = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "chakra_check.py"), wl],
                           capture_output=True, text=True)
    assert check.returncode == 0, "chakra_check: " + (check.stdout + check.stderr).strip().splitlines()[-1]
    groups = [f for f in os.listdir(wl) if f.endswith(".comm_groups.json")]
    assert len(groups) == 1, os.listdir(wl)
    ids = [int(k) for k in json.load(open(os.path.join(wl, groups[0])))]
    assert ids and min(ids) >= 1, "communicator-group ids must be positive: %s" % sorted(ids)[:5]
    group_of = json.load(open(os.path.join(wl, groups[0])))
    comp = gathers = 0
    for f in sorted(os.listdir(wl)):
        if f.endswith(".et"):
            for kind, micros, a in nodes(os.path.join(wl, f)):
                rep = a.get("toposweep.repeat", 1)
                if kind == chakra_check.COMP:
                    dur = a.get("toposweep.duration_s")
                    assert dur is not None, "%s: a compute node without toposweep.duration_s" % f
                    want = int(round(dur * rep * 1e6))
                    assert abs(micros - want) <= 1, "%s: duration_micros %d, expected %d" % (f, micros, want)
                    comp += 1
                elif kind == chakra_check.COLL and a.get("comm_type") == ALL_GATHER:
                    # ASTRA-sim's all-gather sends comm_size per step: each rank's share.
                    want = int(round(a["toposweep.bytes"] * rep / len(group_of[a["pg_name"]])))
                    assert abs(a["comm_size"] - want) <= 1, "%s: all-gather comm_size %d, expected %d" % (
                        f, a["comm_size"], want)
                    gathers += 1
    assert comp > 0, "no compute nodes"
    print("ok: %d dims, %d communicator groups, %d compute nodes with toposweep's durations, "
          "%d all-gathers of each rank's share" % (len(net["topology"]), len(ids), comp, gathers))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks a directory of Chakra traces the way a per-rank consumer (ASTRA-sim's Chakra feeder)
meets them, decoding the protobuf wire format by hand (independent of toposweep's schema):

- each file: a GlobalMetadata, then Nodes with unique ids whose data_deps and ctrl_deps name
  nodes earlier in the same file;
- every COMM_SEND_NODE (rank r, comm_dst d, comm_tag t) has exactly one COMM_RECV_NODE on rank d
  with comm_src r and tag t, of the same comm_size, and every receive has its send;
- every COMM_COLL_NODE names a pg_name of <prefix>.comm_groups.json, is held by exactly that
  group's ranks, and each group's ranks issue their collectives in the same order.

usage: chakra_check.py DIR   (prints a one-line summary; exits 1 with the first problem)
"""
import collections
import glob
import json
import os
import re
import sys


def varint(buf, pos):
    value, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def fields(buf):
    """(field number, wire type, value) of one message; length-delimited values as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield field, wire, value


def packed(wire, value):
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = varint(value, pos)
        out.append(v)
    return out


def signed(v, bits):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def node(buf):
    n = {"deps": [], "ctrl": [], "attr": {}, "type": 0, "id": 0}
    for f, w, v in fields(buf):
        if f == 1:
            n["id"] = v
        elif f == 3:
            n["type"] = v
        elif f == 4:
            n["ctrl"] += packed(w, v)
        elif f == 5:
            n["deps"] += packed(w, v)
        elif f == 10:
            name, value = None, None
            for af, aw, av in fields(v):
                if af == 1:
                    name = av.decode()
                elif af in (7, 9):  # int32_val, int64_val
                    value = signed(av, 64)
                elif af == 29:  # string_val
                    value = av.decode()
            n["attr"][name] = value
    return n


def messages(path):
    data = open(path, "rb").read()
    pos, out = 0, []
    while pos < len(data):
        n, pos = varint(data, pos)
        out.append(data[pos:pos + n])
        pos += n
    return out


COMP, SEND, RECV, COLL = 4, 5, 6, 7


def main():
    d = sys.argv[1]
    files = {}
    for p in glob.glob(os.path.join(d, "*.et")):
        m = re.match(r"(.*)\.(\d+)\.et$", os.path.basename(p))
        files[int(m.group(2))] = p
        prefix = m.group(1)
    ranks = sorted(files)
    assert ranks == list(range(len(ranks))), ranks
    groups = json.load(open(os.path.join(d, prefix + ".comm_groups.json")))
    sends, recvs = collections.Counter(), collections.Counter()
    holders = collections.defaultdict(set)  # (id, pg) -> ranks
    order = {}  # (rank, pg) -> [collective ids in file order]
    count = collections.Counter()
    for r in ranks:
        msgs = messages(files[r])
        seen = set()
        for buf in msgs[1:]:
            n = node(buf)
            assert n["id"] not in seen, "rank %d: duplicate id %d" % (r, n["id"])
            for dep in n["deps"] + n["ctrl"]:
                assert dep in seen, "rank %d: node %d depends on %d, not earlier in the file" % (r, n["id"], dep)
            seen.add(n["id"])
            a = n["attr"]
            count[n["type"]] += 1
            if n["type"] == SEND:
                assert a["comm_src"] == r
                sends[(r, a["comm_dst"], a["comm_tag"], a["comm_size"])] += 1
            elif n["type"] == RECV:
                assert a["comm_dst"] == r
                recvs[(a["comm_src"], r, a["comm_tag"], a["comm_size"])] += 1
            elif n["type"] == COLL:
                pg = a["pg_name"]
                assert pg in groups, "rank %d: node %d: pg_name %s not in the group file" % (r, n["id"], pg)
                assert r in groups[pg], "rank %d: node %d: not a member of pg %s" % (r, n["id"], pg)
                holders[(n["id"], pg)].add(r)
                order.setdefault((r, pg), []).append(n["id"])
    assert sends == recvs, "unmatched sends/receives: %s" % ((sends - recvs) + (recvs - sends))
    assert all(v == 1 for v in sends.values()), "a (src, dst, tag) used twice"
    for (nid, pg), rs in holders.items():
        assert rs == set(groups[pg]), "node %d on pg %s held by %s, group %s" % (nid, pg, sorted(rs), groups[pg])
    for pg, members in groups.items():
        seqs = {tuple(order.get((r, pg), [])) for r in members}
        assert len(seqs) == 1, "pg %s: its ranks issue different collective sequences" % pg
    print("ok: %d ranks, %d compute, %d collective, %d send, %d receive nodes; %d send/receive pairs matched"
          % (len(ranks), count[COMP], count[COLL], count[SEND], count[RECV], len(sends)))


if __name__ == "__main__":
    main()

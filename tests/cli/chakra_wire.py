#!/usr/bin/env python3
"""Writes small Chakra execution traces byte by byte (protobuf wire format by hand, independent of
toposweep's schema and of any protobuf library), for tests/cli/test_chakra.sh.

usage: chakra_wire.py DIR CASE
  hand           2 ranks: node 1 a COMP_NODE of 100 us, node 2 an ALL_REDUCE of 100 MB over
                 pg "0" depending on node 1
  bad_varint     hand, with rank 1's file ending in an unterminated length prefix
  bad_comm_type  hand, with comm_type 42
  missing_dep    hand, with node 2 depending on node 7
  broadcast      hand, with a BROADCAST for the ALL_REDUCE
"""
import os
import sys


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def length_delimited(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def number(field, v):
    return tag(field, 0) + varint(v & (2**64 - 1))


# AttributeProto: name = 1, int64_val = 9, string_val = 29.
def attr_int64(name, v):
    return length_delimited(10, length_delimited(1, name.encode()) + number(9, v))


def attr_string(name, s):
    return length_delimited(10, length_delimited(1, name.encode()) + length_delimited(29, s.encode()))


# Node: id = 1, name = 2, type = 3, data_deps = 5, duration_micros = 7, attr = 10.
def node(node_id, name, node_type, deps=(), micros=0, attrs=b""):
    body = number(1, node_id) + length_delimited(2, name.encode()) + number(3, node_type)
    for d in deps:
        body += number(5, d)
    if micros:
        body += number(7, micros)
    return body + attrs


COMP_NODE, COMM_COLL_NODE = 4, 7


def trace(comm_type=0, dep=1):
    metadata = length_delimited(1, b"0.0.4")  # GlobalMetadata.version
    comp = node(1, "gemm", COMP_NODE, micros=100, attrs=attr_int64("num_ops", 10**9))
    coll = node(2, "allreduce", COMM_COLL_NODE, deps=[dep],
                attrs=attr_int64("comm_type", comm_type) + attr_int64("comm_size", 100_000_000)
                + attr_string("pg_name", "0"))
    return b"".join(varint(len(m)) + m for m in (metadata, comp, coll))


def check_encoder():
    """The hand encoder against the protobuf encoding guide's worked examples
    (protobuf.dev/programming-guides/encoding): 150 in field 1 is 08 96 01, 300 is ac 02, and the
    string "testing" in field 2 is 12 07 74 65 73 74 69 6e 67."""
    assert varint(1) == b"\x01"
    assert varint(300) == b"\xac\x02"
    assert tag(1, 0) + varint(150) == b"\x08\x96\x01"
    assert length_delimited(2, b"testing") == b"\x12\x07testing"


def main():
    check_encoder()
    out, case = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = {0: trace(), 1: trace()}
    if case == "bad_varint":
        files[1] += b"\xff\xff\xff"
    elif case == "bad_comm_type":
        files = {r: trace(comm_type=42) for r in (0, 1)}
    elif case == "missing_dep":
        files = {r: trace(dep=7) for r in (0, 1)}
    elif case == "broadcast":
        files = {r: trace(comm_type=5) for r in (0, 1)}
    elif case != "hand":
        sys.exit("unknown case " + case)
    for rank, data in files.items():
        with open(os.path.join(out, f"hand.{rank}.et"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()

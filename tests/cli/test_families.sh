#!/usr/bin/env bash
# Every topology family everywhere the others go (issue 34): each collective algorithm on switch,
# fat-tree, TopoOpt, torus, expander, rail, rail-only and dragonfly, never faster than its servers'
# ports allow (bounds derived in families_check.py); a training step under both network models;
# the exact strategy search's answer replaying with `simulate`.
set -u
TS=${1:?path to toposweep}
SRC=${2:?source dir}
/usr/bin/python3 "$SRC/tests/cli/families_check.py" "$TS"

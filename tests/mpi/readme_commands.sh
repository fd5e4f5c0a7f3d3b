#!/bin/bash
# The README's "whole space" commands, verbatim, with no MPI environment variables: a user who
# copies them gets exit 0 on the MPI library's default settings. Usage:
#   readme_commands.sh TOPOSWEEP_BINARY SOURCE_DIR MPIEXEC
# The block is read from README.md (from the line starting "# 3." to the closing fence) and run
# line by line in a scratch directory laid out like a checkout (build/toposweep, inputs/,
# analysis/). `mpirun` is the build's MPI launcher; as root, Open MPI's gets --allow-run-as-root
# (the only change a root user makes; MPICH's runs as root as it is), and the block runs once more
# as the ordinary user nobody, word for word.
set -u
TOPOSWEEP=$1 SRC=$2 MPIEXEC=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toposweep-readme.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/build"
ln -s "$TOPOSWEEP" "$WORK/build/toposweep"
ln -s "$SRC/inputs" "$WORK/inputs"
ln -s "$SRC/analysis" "$WORK/analysis"

# Every MPI-related variable of the environment goes: Open MPI's (OMPI_*, PMIX_*, PRTE_*) and
# MPICH's (MPICH_*, MPIR_*, HYDRA_*, MPIEXEC_*).
for v in $(env | sed -n 's/^\(\(OMPI\|PMIX\|PRTE\|MPICH\|MPIR\|HYDRA\|MPIEXEC\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
export MPLBACKEND=Agg

block=$(sed -n '/^# 3\. /,/^```/p' "$SRC/README.md" | grep -v '^#' | grep -v '^```' | grep -v '^\s*$')
[ -n "$block" ] || fail "no '# 3.' command block in README.md"
echo "$block" | grep -q '^mpirun ' || fail "the README block has no mpirun command"
chmod 755 "$WORK"

# run_block USER: the block's lines in a fresh results/, each as USER ("" = this user).
run_block() {
  local user=$1 as=() launcher=("$MPIEXEC")
  if [ -n "$user" ]; then
    as=(runuser -u "$user" -- env HOME="$WORK" MPLCONFIGDIR="$WORK/mpl")
  elif [ "$(id -u)" = 0 ] && "$MPIEXEC" --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then
    launcher+=(--allow-run-as-root)
  fi
  rm -rf "$WORK/results" "$WORK/mpl"
  [ -z "$user" ] || { mkdir -p "$WORK/results" "$WORK/mpl" && chown "$user" "$WORK/results" "$WORK/mpl" "$WORK"; }
  while IFS= read -r line; do
    echo "+ ${user:-$(id -un)}: $line"
    read -r -a words <<< "$line"
    if [ "${words[0]}" = mpirun ]; then words=("${launcher[@]}" "${words[@]:1}"); fi
    (cd "$WORK" && "${as[@]}" "${words[@]}" > "$WORK/out.txt" 2> "$WORK/err.txt" < /dev/null)
    rc=$?
    [ $rc = 0 ] || fail "'$line' as ${user:-$(id -un)} exited $rc: $(tail -5 "$WORK/err.txt") $(tail -5 "$WORK/out.txt")"
  done <<< "$block"
  [ -s "$WORK/results/q.h5" ] || fail "no results/q.h5"
  [ -s "$WORK/results/report/summary.md" ] || fail "no report"
}

run_block ""
# As root, once more as an ordinary user (nobody), where that user can run the binary: exactly the
# README's words, no --allow-run-as-root.
if [ "$(id -u)" = 0 ] && command -v runuser > /dev/null && runuser -u nobody -- test -x "$TOPOSWEEP" 2> /dev/null; then
  run_block nobody
  echo "README commands: exit 0 each, as root and as nobody"
else
  echo "README commands: exit 0 each (as $(id -un))"
fi

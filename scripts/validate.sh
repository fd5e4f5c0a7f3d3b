#!/usr/bin/env bash
# Regenerates docs/validation.md, its figures and raw rows (docs/validation/) from scratch by running the
# seed papers' experiments through the toposweep CLI. Minutes on two cores; not part of CI's default run.
#   scripts/validate.sh [path/to/toposweep]     (default: build/toposweep; VALIDATE_JOBS=2 parallel calls)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
export TOPOSWEEP="$(realpath -m "${1:-${TOPOSWEEP:-$here/build/toposweep}}")"
[[ -x "$TOPOSWEEP" ]] || { echo "validate.sh: no toposweep binary at $TOPOSWEEP (build it first)" >&2; exit 2; }
export MPLBACKEND=Agg
if [[ -z "${VALIDATE_WORK:-}" ]]; then
  VALIDATE_WORK="$(mktemp -d)"
  trap 'rm -rf "$VALIDATE_WORK"' EXIT  # generated topologies and the sweep file; keep them by setting it
fi
export VALIDATE_WORK
/usr/bin/python3 "$here/scripts/validation/report.py"

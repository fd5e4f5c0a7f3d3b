#!/usr/bin/env bash
# The MPI tests against MPICH as well as Open MPI: installs Debian's MPICH and its parallel HDF5,
# builds toposweep and the MPI test programs against them in build-mpich/ (Release, -Werror), and
# runs the tests that launch ranks (labels mpi and invariants: the sweep engine's MPI tests, the
# scheduler's claims with both slot stores, the README's commands verbatim, the sweep invariants)
# plus the sweep module's unit tests. scripts/test.sh runs it; on its own:
#   bash scripts/test-mpich.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

packages=(mpich libmpich-dev libhdf5-mpich-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  echo "test-mpich: installing ${missing[*]}"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}" > /dev/null ||
    { $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q && \
      $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"; }
fi
# Installing MPICH beside Open MPI leaves the system's default (mpirun, mpicc) on Open MPI.
grep -q "Open MPI" <<< "$(mpirun --version 2>&1)" || echo "test-mpich: note: mpirun is not Open MPI's here" >&2

echo "== build against MPICH ($(mpichversion | head -n 1 | tr -s ' '))"
BUILD_DIR=build-mpich BUILD_TARGETS="toposweep scheduler_claims test_sweep" bash scripts/build.sh \
  -DTOPOSWEEP_WERROR=ON -DTOPOSWEEP_BUILD_BENCH=OFF \
  -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich \
  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich
# The binary really is MPICH's: its library says so.
build-mpich/toposweep --version --log-level warn > /dev/null
# (ldd's output is read whole first: `ldd | grep -q` under pipefail fails whenever grep stops reading
# before ldd has written everything, and ldd dies of SIGPIPE; that failed CI once in nine runs.)
libs=$(ldd build-mpich/toposweep)
grep -q 'libmpich' <<< "$libs" || { echo "test-mpich: build-mpich/toposweep does not link MPICH" >&2; exit 1; }
if grep -q 'libmpi\.so' <<< "$libs"; then echo "test-mpich: build-mpich/toposweep links Open MPI too" >&2; exit 1; fi

echo "== MPI tests on MPICH"
status=0
(cd build-mpich && ctest --output-on-failure --timeout 900 -L 'mpi|invariants|unit-sweep') || status=$?
echo "== test-mpich.sh finished in $(( $(date +%s) - start )) s, status $status"
exit $status

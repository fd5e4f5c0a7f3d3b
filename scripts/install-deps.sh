#!/usr/bin/env bash
# Installs every Debian package toposweep needs to build, test and analyse.
# Idempotent: packages already present are skipped by apt. Needs root (or sudo).
set -euo pipefail

packages=(
  cmake g++ make git pkg-config clang-format ccache
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev libboost-graph-dev
  libmetis-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev
  libprotobuf-dev protobuf-compiler
  python3-h5py python3-numpy python3-pandas python3-matplotlib python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"

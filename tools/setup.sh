#!/usr/bin/env bash
# Installs the Debian 12 packages ringside builds, runs and tests with, when
# any is missing. Idempotent; uses sudo when not root.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap build-essential
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev libgloo-dev libgoogle-glog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  gnuplot-nox iproute2 procps zlib1g-dev libssl-dev
  openssl  # test certificates (tests/testing/test_pki.h)
  python3  # tools/test_case_counts.py; the DDP peer and parity_bench
  munge slurmctld slurmd slurm-client  # a real one-node Slurm in its test
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

#!/usr/bin/env bash
# Build hxsim with MPI and check that `mpirun -np 2/3/4 hxsim run` gives the single-process result
# (tests/mpi.rs) and that launches are checked (tests/launch.rs).
#
# Installs Open MPI and the libclang that rsmpi's bindgen needs when they are missing (Debian/Ubuntu,
# needs root or sudo). Takes a few minutes on 2 cores, most of it compiling mpi-sys.
#
#   scripts/test-mpi.sh              # debug build, as `cargo test`
#   CARGO_TARGET_DIR=/tmp/t scripts/test-mpi.sh
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(libopenmpi-dev openmpi-bin libclang1-14 libclang-common-14-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing ${missing[*]}" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v mpirun >/dev/null || { echo "mpirun not found after installing openmpi-bin" >&2; exit 1; }

# Containers often run as root, which Open MPI refuses unless told; ranks may outnumber cores, and
# a rank waiting for its neighbours should yield its core rather than spin.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

cargo test --features mpi --test mpi --test launch -- --test-threads=1

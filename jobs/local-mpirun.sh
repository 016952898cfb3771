#!/usr/bin/env bash
# Run hxsim over MPI ranks on this machine (a workstation or one node), with Open MPI.
#
#   jobs/local-mpirun.sh RANKS THREADS CONFIG [more `hxsim run` options...]
#   jobs/local-mpirun.sh 2 1 configs/hyperx-3d-8.toml --json
#
# Builds target/release/hxsim with `--features mpi` if it is missing or was built without MPI
# (HXSIM=path to use another; it must link MPI).
# RANKS x THREADS partitions; when that exceeds the cores, ranks are oversubscribed and told to
# yield while they wait (otherwise a waiting rank spins on a core its neighbour needs).
set -euo pipefail
if (($# < 3)); then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
ranks=$1 threads=$2 config=$3
shift 3
cd "$(dirname "$0")/.."
# A binary links libmpi only when built with --features mpi: a build without it would run RANKS
# independent copies (hxsim refuses that, but rebuilding is what was meant).
has_mpi() { [[ -x $1 ]] && ldd "$1" 2>/dev/null | grep -q 'libmpi\.'; }
if [[ -n ${HXSIM:-} ]]; then
    has_mpi "$HXSIM" || { echo "$HXSIM was not built with MPI: cargo build --release --features mpi" >&2; exit 2; }
else
    HXSIM=${CARGO_TARGET_DIR:-target}/release/hxsim
    if ! has_mpi "$HXSIM"; then
        cargo build --release --features mpi
        has_mpi "$HXSIM" || { echo "$HXSIM still links no MPI library" >&2; exit 2; }
    fi
fi
command -v mpirun >/dev/null || { echo "mpirun not found: install openmpi-bin (see README)" >&2; exit 2; }

opts=(-np "$ranks" --bind-to none)   # threads of a rank need more than the one core Open MPI binds to
if ((ranks * threads > $(nproc))); then
    opts+=(--oversubscribe --mca mpi_yield_when_idle 1)
fi
[[ $(id -u) -eq 0 ]] && opts+=(--allow-run-as-root)
exec mpirun "${opts[@]}" "$HXSIM" run "$config" --threads "$threads" "$@"

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
# (grep reads all of ldd's output: `grep -q` would stop early, and ldd's SIGPIPE fail the pipeline.)
has_mpi() { [[ -x $1 ]] && ldd "$1" 2>/dev/null | grep 'libmpi\.' >/dev/null; }
if [[ -n ${HXSIM:-} ]]; then
    has_mpi "$HXSIM" || { echo "$HXSIM was not built with MPI: cargo build --release --features mpi" >&2; exit 2; }
else
    HXSIM=${CARGO_TARGET_DIR:-target}/release/hxsim
    if ! has_mpi "$HXSIM"; then
        cargo build --release --features mpi
        has_mpi "$HXSIM" || { echo "$HXSIM still links no MPI library" >&2; exit 2; }
    fi
fi
command -v mpirun >/dev/null || { echo "mpirun not found: install openmpi-bin (see docs/mpi-slurm.md)" >&2; exit 2; }

opts=(-np "$ranks" --bind-to none)   # threads of a rank need more than the one core Open MPI binds to
if ((ranks * threads > $(nproc))); then
    opts+=(--oversubscribe --mca mpi_yield_when_idle 1)
fi
[[ $(id -u) -eq 0 ]] && opts+=(--allow-run-as-root)

# Open MPI's mpirun, sent SIGTERM or SIGINT itself, aborts the job and exits 1 whatever the ranks
# exit with (hxsim's stop at the next window, write what they gathered and exit 128 + the signal):
# the run's JSON record says how it ended, so the exit code is read back from it. A --json-out of
# the caller's is used; else one of this script's own.
record="" own_record=""
args=("$@")
for ((k = 0; k < ${#args[@]}; k++)); do
    case ${args[k]} in
    --json-out) record=${args[k + 1]:-} ;;
    --json-out=*) record=${args[k]#--json-out=} ;;
    esac
done
if [[ -z $record ]]; then
    own_record=$(mktemp --suffix=.json)
    rm -f "$own_record"
    record=$own_record
    args+=(--json-out "$record")
fi
mpirun "${opts[@]}" "$HXSIM" run "$config" --threads "$threads" "${args[@]}" &
pid=$!
# A signal to this script goes on to mpirun (which forwards SIGUSR1, and turns SIGTERM and SIGINT
# into a SIGTERM to every rank).
trap 'kill -TERM "$pid" 2>/dev/null' TERM
trap 'kill -INT "$pid" 2>/dev/null' INT
trap 'kill -USR1 "$pid" 2>/dev/null' USR1
# `wait` returns early (status > 128) when a trap runs: wait until mpirun itself has exited.
while :; do
    rc=0
    wait "$pid" || rc=$?
    kill -0 "$pid" 2>/dev/null || break
done
if ((rc != 0)); then
    case $(grep -o '"status":"interrupted by SIG[A-Z0-9]*' "$record" 2>/dev/null) in
    *SIGINT) rc=130 ;;
    *SIGTERM) rc=143 ;;
    *SIGUSR1) rc=138 ;;
    esac
fi
[[ -n $own_record ]] && rm -f "$own_record"
exit "$rc"

#!/usr/bin/env bash
# DAVC paper (Pascual and Navaridas, "High-Performance, Low-Complexity Deadlock Avoidance for
# Arbitrary Topologies/Routings"),
# Fig. 9: execution time (cycles) of the application kernels Stencil 2D, Stencil 3D, Butterfly and
# Waterfall (section 7.1) on the random regular graph RRG(876, 23, 17) (876 switches, 5256
# servers; configs/rrg-876-23-17.toml) with the generic routings SP, ECMP and AllPath(1) under
# DAVC's F_N, F_P and F_NP, against SPDA with m = 1, 2, 4, 8 and 16 spanning trees (one per VC;
# section 7.2). The paper plots it on a logarithmic axis and says (section 8.2): the differences
# between the DAVC functions are subtle, while SPDA with few VCs takes up to two orders of
# magnitude longer.
#
# Sizes as configs/davc-fig7.sh (the paper gives none): TASKS = 4096 tasks, BYTES = 1024-byte
# messages, ITERATIONS = 4, WAVES = 16 waves of 64 bytes for Waterfall.
#
# Usage: configs/davc-fig9.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary;
# default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing), TASKS, BYTES, ITERATIONS,
# WAVES, KERNELS (default "stencil-2d stencil-3d butterfly waterfall"), ROUTINGS (default "sp ecmp
# allpath"), POLICIES (default "davc-n davc-p davc-np"), TREES (default "1 2 4 8 16").
# Time: about 40 minutes with the defaults on this loaded 2-core machine (56 runs; SPDA with one
# tree is the slowest, as in the paper).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke TASKS "64"
smoke ITERATIONS "1"
smoke WAVES "2"
smoke ROUTINGS "sp"
smoke POLICIES "davc-p"
smoke TREES "1 4"
TASKS=${TASKS:-4096}
BYTES=${BYTES:-1024}
ITERATIONS=${ITERATIONS:-4}
WAVES=${WAVES:-16}
KERNELS=${KERNELS:-stencil-2d stencil-3d butterfly waterfall}
ROUTINGS=${ROUTINGS:-sp ecmp allpath}
POLICIES=${POLICIES:-davc-n davc-p davc-np}
TREES=${TREES:-1 2 4 8 16}
RAW=${1:-/dev/null}
CFG=configs/rrg-876-23-17.toml
start=$(date +%s)

run() { # kernel sets... -> makespan (or "error")
    local kernel=$1 bytes=$BYTES iters=$ITERATIONS
    shift
    [ "$kernel" = waterfall ] && bytes=64 && iters=$WAVES
    "$HXSIM" run "$CFG" --json --quiet --no-output --set workload.kernel="$kernel" --set workload.tasks="$TASKS" \
        --set workload.bytes="$bytes" --set workload.iterations="$iters" "$@" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("makespan_cycles", "error"))' || echo error
}

name() { case $1 in davc-n) echo F_N ;; davc-p) echo F_P ;; davc-np) echo F_NP ;; *) echo "$1" ;; esac; }

header=$(printf "%-8s %-7s" routing scheme)
for k in $KERNELS; do header+=$(printf " %11s" "$k"); done
header+="  | paper (section 8.2, Fig. 9)"
echo "$header"
out=""
row() { # routing label note sets...
    local routing=$1 label=$2 note=$3
    shift 3
    local line
    line=$(printf "%-8s %-7s" "$routing" "$label")
    for k in $KERNELS; do
        t=$(run "$k" "$@")
        line+=$(printf " %11s" "$t")
        printf "%s\t%s\t%s\t%s\n" "$routing" "$label" "$k" "$t" >>"$RAW"
    done
    echo "$line  | $note"
    out+="$line"$'\n'
}
for routing in $ROUTINGS; do
    for policy in $POLICIES; do
        row "$routing" "$(name "$policy")" "DAVC functions close to each other" \
            --set routing.algorithm="$routing" --set routing.vc_policy="$policy"
    done
done
for m in $TREES; do
    row spda "m=$m" "SPDA: up to 100x slower with few VCs" \
        --set routing.algorithm=spda --set routing.vc_policy=ladder --set routing.vcs="$m"
done
echo "# ${TASKS} tasks, ${BYTES}-byte messages, ${ITERATIONS} iterations (Waterfall: ${WAVES} waves of 64 bytes); $(($(date +%s) - start)) s in all"
smoke_check "$out"

#!/usr/bin/env bash
# DAVC paper (Pascual and Navaridas, "High-Performance, Low-Complexity Deadlock Avoidance for
# Arbitrary Topologies/Routings"),
# Fig. 7: execution time (cycles) of the application kernels Stencil 2D, Stencil 3D, Butterfly and
# Waterfall (section 7.1) on the dragonfly DF(6,12,6) (876 switches, 5256 servers;
# configs/dragonfly-6-12-6.toml) with Min and Valiant routing under Dally's scheme (2 VCs for Min,
# 3 for Valiant; Fig. 4) and DAVC's F_N, F_P and F_NP.
#
# The paper gives no sizes for its kernels; the defaults here are TASKS = 4096 tasks (a power of
# two, as Butterfly needs; the stencils on 64x64 and 16x16x16 grids) on the first 4096 servers,
# BYTES = 1024-byte messages (4 packets of 16 phits of 16 bytes), ITERATIONS = 4 for the stencils
# and Butterfly, WAVES = 16 waves of 64-byte messages for Waterfall. The paper's statement
# (section 8.1) is printed beside: the differences between Dally and DAVC are very small, except
# Min + F_N.
#
# Usage: configs/davc-fig7.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary;
# default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing), TASKS, BYTES, ITERATIONS,
# WAVES (above), KERNELS (default "stencil-2d stencil-3d butterfly waterfall"), ROUTINGS (default
# "dragonfly-min dragonfly-valiant"; sp, ecmp and allpath also take the DAVC schemes), POLICIES
# (default "dally davc-n davc-p davc-np").
# Time: about 15 minutes with the defaults on this loaded 2-core machine (32 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke TASKS "64"
smoke ITERATIONS "1"
smoke WAVES "2"
smoke ROUTINGS "dragonfly-min"
smoke POLICIES "dally davc-p"
TASKS=${TASKS:-4096}
BYTES=${BYTES:-1024}
ITERATIONS=${ITERATIONS:-4}
WAVES=${WAVES:-16}
KERNELS=${KERNELS:-stencil-2d stencil-3d butterfly waterfall}
ROUTINGS=${ROUTINGS:-dragonfly-min dragonfly-valiant}
POLICIES=${POLICIES:-dally davc-n davc-p davc-np}
RAW=${1:-/dev/null}
CFG=configs/dragonfly-6-12-6.toml
start=$(date +%s)

run() { # kernel sets... -> makespan (or "error")
    local kernel=$1 bytes=$BYTES iters=$ITERATIONS
    shift
    [ "$kernel" = waterfall ] && bytes=64 && iters=$WAVES
    "$HXSIM" run "$CFG" --json --quiet --no-output --set workload.kernel="$kernel" --set workload.tasks="$TASKS" \
        --set workload.bytes="$bytes" --set workload.iterations="$iters" "$@" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("makespan_cycles", "error"))' || echo error
}

name() { case $1 in davc-n) echo F_N ;; davc-p) echo F_P ;; davc-np) echo F_NP ;; dally) echo Dally ;; *) echo "$1" ;; esac; }

header=$(printf "%-17s %-6s" routing scheme)
for k in $KERNELS; do header+=$(printf " %11s" "$k"); done
header+="  | paper (section 8.1, Fig. 7)"
echo "$header"
out=""
for routing in $ROUTINGS; do
    for policy in $POLICIES; do
        line=$(printf "%-17s %-6s" "$routing" "$(name "$policy")")
        for k in $KERNELS; do
            t=$(run "$k" --set routing.algorithm="$routing" --set routing.vc_policy="$policy")
            line+=$(printf " %11s" "$t")
            printf "%s\t%s\t%s\t%s\n" "$routing" "$policy" "$k" "$t" >>"$RAW"
        done
        case "$routing:$policy" in
            dragonfly-min:davc-n) line+="  | Min + F_N: slower than Dally (congestion)" ;;
            *:dally) line+="  | reference" ;;
            *) line+="  | close to Dally" ;;
        esac
        echo "$line"
        out+="$line"$'\n'
    done
done
echo "# ${TASKS} tasks, ${BYTES}-byte messages, ${ITERATIONS} iterations (Waterfall: ${WAVES} waves of 64 bytes); $(($(date +%s) - start)) s in all"
smoke_check "$out"

#!/usr/bin/env bash
# Collectives under link faults (issue 33): the execution time (makespan) of a ring all-reduce and a
# pairwise all-to-all on the SurePath paper's 3-D HyperX (8x8x8, 8 servers per switch, 4096
# servers; configs/hyperx-3d-8.toml) with 0, 1% and 5% of its 5,376 links failed at random (0, 54
# and 269 links; the nested sequence of faults.random_links), for Minimal, Polarized, and SurePath
# on top of them (PolSP = surepath-polarized, OmniSP = surepath-omni; SurePath paper section 5).
# The tasks sit on TASKS servers drawn at random over the whole machine (workload.mapping =
# "random"), one per server. No paper reports these numbers; the script prints each makespan and its
# slowdown against the same routing without faults.
#
# Usage: configs/workload-hyperx-faults.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary;
# default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing), TASKS (default 512),
# ALLREDUCE_BYTES (the all-reduce's buffer; default 262144: 512-byte chunks), ALLTOALL_BYTES (each
# pairwise message; default 1024), FAULTS (default "0 54 269"), ROUTINGS (default "minimal
# polarized surepath-polarized surepath-omni").
# Time: about 10 minutes with the defaults on this loaded 2-core machine (24 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke TASKS "16"
smoke FAULTS "0 54"
smoke ROUTINGS "surepath-omni"
TASKS=${TASKS:-512}
ALLREDUCE_BYTES=${ALLREDUCE_BYTES:-262144}
ALLTOALL_BYTES=${ALLTOALL_BYTES:-1024}
FAULTS=${FAULTS:-0 54 269}
ROUTINGS=${ROUTINGS:-minimal polarized surepath-polarized surepath-omni}
RAW=${1:-/dev/null}
CFG=configs/hyperx-3d-8.toml
start=$(date +%s)

run() { # routing faults kernel bytes -> "makespan message_latency_mean" or "error"
    "$HXSIM" run "$CFG" --json --quiet --no-output --set routing.algorithm="$1" --set faults.random_links="$2" \
        --set workload.kernel="$3" --set workload.bytes="$4" --set workload.tasks="$TASKS" \
        --set workload.mapping=random 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%s %.1f" % (d.get("makespan_cycles", "error"), d.get("message_latency_mean") or 0))' ||
        echo "error -"
}

printf "%-19s %6s | %12s %8s %9s | %12s %8s %9s\n" routing faults "allreduce" "slowdown" "msg lat" "alltoall" "slowdown" "msg lat"
out=""
for routing in $ROUTINGS; do
    base_ar="" base_aa=""
    for f in $FAULTS; do
        read -r ar ar_lat < <(run "$routing" "$f" allreduce-ring "$ALLREDUCE_BYTES")
        read -r aa aa_lat < <(run "$routing" "$f" alltoall-pairwise "$ALLTOALL_BYTES")
        [ -z "$base_ar" ] && base_ar=$ar && base_aa=$aa
        ratio() { [[ "$1" =~ ^[0-9]+$ && "$2" =~ ^[0-9]+$ ]] && python3 -c "print('%.3f' % ($1 / $2))" || echo -; }
        line=$(printf "%-19s %6s | %12s %8s %9s | %12s %8s %9s" "$routing" "$f" "$ar" "$(ratio "$ar" "$base_ar")" \
            "$ar_lat" "$aa" "$(ratio "$aa" "$base_aa")" "$aa_lat")
        echo "$line"
        out+="$line"$'\n'
        printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$routing" "$f" "$ar" "$ar_lat" "$aa" "$aa_lat" >>"$RAW"
    done
done
echo "# ${TASKS} tasks at random servers; all-reduce of ${ALLREDUCE_BYTES} bytes, all-to-all of ${ALLTOALL_BYTES} bytes per pair; $(($(date +%s) - start)) s in all"
smoke_check "$out"

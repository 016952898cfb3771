#!/usr/bin/env bash
# A collective interrupted by a failure (issue 36): a ring all-reduce among TASKS tasks on random
# servers of the SurePath paper's 3-D HyperX (configs/hyperx-3d-8.toml: 8x8x8 switches, 4096
# servers), with FAILED random links failing at cycle AT, about half way through the collective.
# Lost packets are sent again by their source RETRANSMIT cycles after the loss
# (faults.retransmit_cycles); the routing is rebuilt RECONFIGURE cycles after the event. Per
# routing: the makespan without faults, with FAILED random links failed from the start (another
# draw of as many links), and with the failure during the run; the packets lost at the event,
# stranded after it, and sent again. No paper reports these numbers.
#
# Usage: configs/live-faults-allreduce.sh
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default
# ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing), TASKS (default 512), BYTES (the
# all-reduce's buffer, default 262144), FAILED (default 54, 1% of the links), AT (default 20000),
# RETRANSMIT (default 2000), RECONFIGURE (default 500), ROUTINGS (default "minimal polarized dal
# surepath-polarized surepath-omni").
# Time: about 5 minutes with the defaults on this loaded 2-core machine (15 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke CFG "configs/quickstart.toml"
smoke TASKS "64"
smoke BYTES "65536"
smoke FAILED "3"
smoke AT "3000"
smoke RETRANSMIT "500"
smoke ROUTINGS "surepath-polarized"
CFG=${CFG:-configs/hyperx-3d-8.toml}
TASKS=${TASKS:-512}
BYTES=${BYTES:-262144}
FAILED=${FAILED:-54}
AT=${AT:-20000}
RETRANSMIT=${RETRANSMIT:-2000}
RECONFIGURE=${RECONFIGURE:-500}
ROUTINGS=${ROUTINGS:-minimal polarized dal surepath-polarized surepath-omni}
start=$(date +%s)

run() { # routing, then --set arguments -> the summary's figures, or "error"
    local routing=$1
    shift
    "$HXSIM" run "$CFG" --json --quiet --no-output --set routing.algorithm="$routing" \
        --set workload.kernel=allreduce-ring --set workload.bytes="$BYTES" --set workload.tasks="$TASKS" \
        --set workload.mapping=random "$@" 2>/dev/null |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("makespan_cycles", "error"), d.get("packets_lost", 0), d.get("packets_stranded", 0),
      d.get("packets_retransmitted", 0), d.get("packets_abandoned", 0))' || echo "error 0 0 0 0"
}

printf "%-19s %9s %9s %9s %8s %6s %8s %6s %9s\n" routing "no fault" "static" "mid-run" slowdown lost stranded resent abandoned
out=""
for routing in $ROUTINGS; do
    read -r clean _ < <(run "$routing")
    read -r static _ < <(run "$routing" --set faults.random_links="$FAILED")
    read -r live lost stranded resent abandoned < <(run "$routing" --set "faults.events=[{cycle=$AT, random_links=$FAILED}]" \
        --set faults.retransmit_cycles="$RETRANSMIT" --set faults.reconfigure_cycles="$RECONFIGURE")
    slowdown=$( [[ "$live" =~ ^[0-9]+$ && "$clean" =~ ^[0-9]+$ ]] && python3 -c "print('%.3f' % ($live / $clean))" || echo -)
    line=$(printf "%-19s %9s %9s %9s %8s %6s %8s %6s %9s" "$routing" "$clean" "$static" "$live" "$slowdown" \
        "$lost" "$stranded" "$resent" "$abandoned")
    echo "$line"
    out+="$line"$'\n'
done
echo "# ring all-reduce of $BYTES bytes, $TASKS tasks at random servers of $CFG; $FAILED random links fail at cycle $AT; retransmission after $RETRANSMIT cycles, rebuild after $RECONFIGURE; makespans in cycles; $(($(date +%s) - start)) s in all"
smoke_check "$out"

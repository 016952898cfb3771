#!/usr/bin/env bash
# Failures during a run (issue 36): the SurePath paper's 3-D HyperX (configs/hyperx-3d-8.toml:
# 8x8x8 switches, 4096 servers) under uniform traffic, with FIRST random links failing at one cycle
# and then one more every EVERY cycles, for Minimal, Polarized, DAL, and SurePath on top of
# Polarized and Omnidimensional (PolSP, OmniSP). Each routing is rebuilt RECONFIGURE cycles after
# each event (until then it routes with its old tables, failed ports withdrawn). Per routing and
# event: the packets lost at the event, the cycles until the accepted load is back within 2% of its
# level before the event, and over the run the packets stranded (dropped for want of a live route).
# No paper reports these numbers.
#
# Usage: configs/live-faults.sh [DIR]   (DIR gets one results file per routing, for `hxsim plot`)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default
# ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing), LOAD (default 0.5), FIRST (default
# 20), EVENTS (events after the first, default 5), EVERY (default 2000), RECONFIGURE (default 500),
# ROUTINGS (default "minimal polarized dal surepath-polarized surepath-omni").
# Time: about 5 minutes with the defaults on this loaded 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke CFG "configs/quickstart.toml"
smoke FIRST "2"
smoke EVENTS "1"
smoke EVERY "600"
smoke ROUTINGS "minimal surepath-polarized"
CFG=${CFG:-configs/hyperx-3d-8.toml}
LOAD=${LOAD:-0.5}
FIRST=${FIRST:-20}
EVENTS=${EVENTS:-5}
EVERY=${EVERY:-2000}
RECONFIGURE=${RECONFIGURE:-500}
ROUTINGS=${ROUTINGS:-minimal polarized dal surepath-polarized surepath-omni}
DIR=${1:-}
[ -n "$DIR" ] && mkdir -p "$DIR"
start=$(date +%s)

# Warm up for 2 x EVERY cycles, fail FIRST links, then one every EVERY cycles; measure to the end.
warmup=$((2 * EVERY))
events="{cycle=$warmup, random_links=$FIRST}"
for k in $(seq 1 "$EVENTS"); do
    events+=", {cycle=$((warmup + k * EVERY)), random_links=1}"
done
measure=$(((EVENTS + 2) * EVERY))

printf "%-19s %8s %6s %6s %10s %9s\n" routing cycle links lost recovery "stranded (run)"
out=""
for routing in $ROUTINGS; do
    output=(--no-output)
    [ -n "$DIR" ] && output=(--output "$DIR/$routing.h5")
    line=$("$HXSIM" run "$CFG" --json --quiet "${output[@]}" --set routing.algorithm="$routing" \
        --set traffic.load="$LOAD" --set simulation.warmup_cycles="$warmup" \
        --set simulation.measure_cycles="$measure" --set output.sample_cycles=100 \
        --set faults.reconfigure_cycles="$RECONFIGURE" --set "faults.events=[$events]" 2>/dev/null |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
r = sys.argv[1]
for e in d["failure_events"]:
    rec = e["recovery_cycles"]
    print("%-19s %8d %6d %6d %10s %9d" % (r, e["cycle"], e["links"], e["packets_lost"],
          "-" if rec is None else rec, d["packets_stranded"]))
' "$routing") || line=$(printf "%-19s error" "$routing")
    echo "$line"
    out+="$line"$'\n'
done
echo "# $CFG, uniform load $LOAD, rebuild after $RECONFIGURE cycles; recovery: cycles until the accepted load is back within 2% (100-cycle intervals); $(($(date +%s) - start)) s in all"
smoke_check "$out"

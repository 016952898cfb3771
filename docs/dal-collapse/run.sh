#!/usr/bin/env bash
# DAL past saturation (issue 32 item 4): bit complement on configs/hyperx-3d-8.toml (8x8x8 HyperX,
# 8 servers per switch, DAL on its default 6 VCs: three sets of one adaptive and one escape VC,
# HyperX paper section 4.1), measured with the steady-state machinery
# (`simulation.measure_until_steady = true`: the window is run again twice as long until it is
# steady or 8 x (warm-up + measured) cycles would be passed), without congestion management and with
# the two injection limits of README *The model* (the end-to-end window of 16 packets; `switch` at
# threshold 0.7). Writes dal-collapse.tsv beside this script: offered load, mode, accepted load,
# steady, cycles run, average hops, latency, and the share of phits on the escape VCs (odd VCs);
# then transient.tsv: at offered 1.0 without congestion management, 1000-cycle windows after 0 to
# 8000 cycles of warm-up (window, accepted load, escape share, latency).
# Usage: docs/dal-collapse/run.sh   (HXSIM: binary, default target/release/hxsim; WARMUP / MEASURE:
# default 3000 / 3000). Run time: about 10-20 minutes on the shared 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
HXSIM=${HXSIM:-${CARGO_TARGET_DIR:-target}/release/hxsim}
WARMUP=${WARMUP:-3000}
MEASURE=${MEASURE:-3000}
OUT=docs/dal-collapse/dal-collapse.tsv
echo -e "offered\tmode\taccepted\tsteady\tcycles\thops\tlatency\tescape_share\tjain" > "$OUT"
run() { # offered mode sets...
    local load=$1 mode=$2
    shift 2
    "$HXSIM" run configs/hyperx-3d-8.toml --set routing.algorithm=dal --set traffic.pattern=bit-complement \
        --set traffic.load="$load" --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" \
        --set simulation.measure_until_steady=true "$@" --threads 1 --json -q --no-output 2>/dev/null |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d["vc_phits"]
esc = sum(v[1::2]) / max(1, sum(v))
print("\t".join(sys.argv[1:] + ["%.4f" % d["accepted_load"], str(d["steady_state"]), str(d["cycles"]),
      "%.3f" % d["average_hops"], "%.1f" % d["average_latency"], "%.4f" % esc, "%.4f" % d["jain_index"]]))' \
        "$load" "$mode" | tee -a "$OUT"
}
for load in 0.4 0.5 0.6 0.8 1.0; do
    run "$load" off
done
for load in 0.5 1.0; do
    run "$load" window16 --set router.injection_throttle=window --set router.injection_window=16
    run "$load" switch0.7 --set router.injection_throttle=switch --set router.injection_threshold=0.7
done
T=docs/dal-collapse/transient.tsv
echo -e "window\taccepted\tescape_share\tlatency" > "$T"
for w in 0 1000 2000 3000 5000 8000; do
    "$HXSIM" run configs/hyperx-3d-8.toml --set routing.algorithm=dal --set traffic.pattern=bit-complement \
        --set traffic.load=1.0 --set simulation.warmup_cycles="$w" --set simulation.measure_cycles=1000 \
        --threads 1 --json -q --no-output 2>/dev/null |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d["vc_phits"]
w = int(sys.argv[1])
print("%d-%d\t%.4f\t%.4f\t%.1f" % (w, w + 1000, d["accepted_load"], sum(v[1::2]) / max(1, sum(v)), d["average_latency"]))' "$w" |
        tee -a "$T"
done

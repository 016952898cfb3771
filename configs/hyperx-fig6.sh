#!/usr/bin/env bash
# Regenerates the DAL comparison of the HyperX paper's Figure 6 (Ahn et al., SC09, section 4.1):
# regular 8x8x8 HyperX, T = 8 servers per switch, K = 1 (configs/hyperx-3d-8.toml), DAL vs Min-AD
# vs Valiant on its four patterns, (a) Bit Complement, (b) Bit Rotate, (c) Transpose and (d) Swap2.
# DAL and Min-AD use the paper's 6 VCs, 3 sets of one adaptive and one escape VC ("one VC in each
# set is reserved for deadlock avoidance in the adaptive minimal and DAL routing algorithms"):
# Min-AD is `minimal` with `routing.vc_policy = dor-escape`. Valiant uses its ladder over the same
# 6 VCs. ECMP (oblivious, DAVC section 7.3) is added as a baseline; ROUTINGS picks a subset.
# Router and packets are this simulator's SurePath Table 2 defaults, not the HyperX paper's
# single-flit packets and 32-flit VCs, so compare trends, not absolute latencies.
#
# Usage: configs/hyperx-fig6.sh [raw.tsv]
# Environment as in configs/surepath-fig4-5.sh (HXSIM, WARMUP, MEASURE, LOADS).
set -euo pipefail
cd "$(dirname "$0")/.."
HXSIM=${HXSIM:-${CARGO_TARGET_DIR:-target}/release/hxsim}
[ -x "$HXSIM" ] || cargo build --release
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
LOADS=${LOADS:-0.5 0.7 0.9 1.0}
ROUTINGS=${ROUTINGS:-min-ad valiant dal ecmp}
RAW=${1:-/dev/null}

echo -e "config\tpattern\trouting\toffered\taccepted\tlatency\tjain\thops\tsteady"
for pat in bit-complement bit-rotate transpose swap2; do
    for load in $LOADS; do
        for alg in $ROUTINGS; do
            case $alg in
                min-ad) sets=(--set routing.algorithm=minimal --set routing.vc_policy=dor-escape) ;;
                *) sets=(--set routing.algorithm="$alg") ;;
            esac
            json=$("$HXSIM" run configs/hyperx-3d-8.toml "${sets[@]}" --set traffic.pattern=$pat \
                --set traffic.load="$load" --set simulation.warmup_cycles="$WARMUP" \
                --set simulation.measure_cycles="$MEASURE" --json -q --no-output)
            python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:6]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.4f"%d["jain_index"],"%.3f"%d["average_hops"],str(d["steady_state"]).lower()]))' \
                "$json" hyperx-3d-8 "$pat" "$alg" "$load" | tee -a "$RAW"
        done
    done
done

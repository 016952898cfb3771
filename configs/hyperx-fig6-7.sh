#!/usr/bin/env bash
# Regenerates the load-latency comparisons of the HyperX paper's Figures 6 and 7 (Ahn et al., SC09,
# section 4.1) as tables.
#
# Fig. 6: regular 8x8x8 HyperX, T = 8, K = 1, beta = 0.5 (configs/hyperx-3d-8.toml); Min-AD
# (minimal with a DOR escape VC per set, vc_policy = "dor-escape", section 4.1), Valiant, Clos-AD and DAL, each on the paper's 6 VCs (DAL, Clos-AD: 3 sets of 2;
# Min-AD, Valiant: their ladders over 6), on Bit Complement, Bit Rotate, Transpose and Swap2.
# Fig. 7: DAL on the beta = 0.5 HyperX and on the beta = 0.25 HyperX (7x7x7, T = 14,
# configs/hyperx-3d-7-t14.toml) against the paper's folded Clos (configs/clos-fig7.toml: 205 + 130 +
# 160 switches, the top ones two per package, P = 415) with adaptive up / deterministic down routing
# (minimal), plus Uniform as the benign reference.
#
# The beta = 0.25 HyperX has 4802 server ports; the paper says N = 4096 for all three networks
# without saying which 4096. Every run there uses traffic.active_servers = 4096: 4096 servers spread
# evenly over the 343 switches (12 on 323 switches, 11 on 20; the rest neither send nor receive), the
# patterns on their ranks 0..4095 and the accepted load per active server, so all three networks
# carry N = 4096 and the bit patterns are defined on 12 bits as in the paper.
#
# What this simulator cannot run and the tables mark "n/a":
# - Swap2 on the folded Clos: Swap2 is defined by HyperX coordinates.
# - Swap2 on the beta = 0.25 HyperX: its sides are 7 (odd), so no switch has a peer across a
#   bisection of dimension 0 or 1, and on a subset of servers "even-numbered" would change meaning.
# Router and packets are the simulator's defaults (SurePath Table 2: 16-phit packets, virtual
# cut-through), not the paper's single-flit packets, 32-flit VCs and iSLIP: compare shapes (where
# each network saturates), not absolute latencies.
#
# Usage: configs/hyperx-fig6-7.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# WARMUP / MEASURE (cycles; default 2000 / 2000), LOADS (default "0.2 0.4 0.6 0.8 1.0"), FIGS
# (default "6 7"), THREADS (hxsim --threads per run, default 1), JOBS (runs at once, default 1).
# Prints one TSV line per run (appended to raw.tsv if given), then per figure a table of accepted
# load (and average latency in cycles) per pattern and offered load, and the saturation throughput
# (the largest accepted load over LOADS).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WARMUP "40"
smoke MEASURE "40"
smoke LOADS "0.6"
smoke FIGS "6"
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
LOADS=${LOADS:-0.2 0.4 0.6 0.8 1.0}
FIGS=${FIGS:-6 7}
THREADS=${THREADS:-1}
JOBS=${JOBS:-1}
RAW=${1:-/dev/null}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

run() { # figure config pattern label load sets...
    local fig=$1 cfg=$2 pat=$3 label=$4 load=$5
    shift 5
    local json
    json=$("$HXSIM" run "configs/$cfg.toml" --set traffic.pattern="$pat" --set traffic.load="$load" \
        --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" "$@" \
        --threads "$THREADS" --json -q --no-output)
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:7]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.3f"%d["average_hops"]]))' \
        "$json" "$fig" "$cfg" "$pat" "$label" "$load"
}

job_list() { # one line of run's arguments per simulation
    local PATTERNS="bit-complement bit-rotate transpose swap2"
    for fig in $FIGS; do
        for load in $LOADS; do
            if [ "$fig" = 6 ]; then
                for pat in $PATTERNS; do
                    for alg in minimal valiant clos-ad dal; do
                        extra=""
                        [ "$alg" = minimal ] && extra="--set routing.vc_policy=dor-escape"
                        # No trailing blank: xargs -L joins a line ending in one with the next.
                        echo "6 hyperx-3d-8 $pat $alg $load --set routing.algorithm=$alg${extra:+ $extra}"
                    done
                done
            else
                for pat in uniform $PATTERNS; do
                    # The beta = 0.5 HyperX with DAL on the four patterns is Fig. 6's DAL run.
                    [[ " $FIGS " == *" 6 "* && "$pat" != uniform ]] ||
                        echo "7 hyperx-3d-8 $pat HyperX-b0.5 $load --set routing.algorithm=dal"
                    [ "$pat" = swap2 ] || echo "7 clos-fig7 $pat Clos-b0.5 $load"
                done
                for pat in uniform random-server-permutation bit-complement bit-rotate transpose; do
                    echo "7 hyperx-3d-7-t14 $pat HyperX-b0.25 $load --set traffic.active_servers=4096"
                done
            fi
        done
    done
}

export HXSIM WARMUP MEASURE THREADS
export -f run
echo -e "fig\tconfig\tpattern\trouting\toffered\taccepted\tlatency\thops"
# shellcheck disable=SC2016
# A failed run leaves its cells "n/a" in the tables and the script's exit status non-zero.
status=0
job_list | xargs -P "$JOBS" -L 1 bash -c 'run "$@"' _ | tee -a "$RAW" "$OUT" || status=$?

python3 - "$OUT" <<'PY'
import sys
from collections import defaultdict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
res = defaultdict(dict)
for fig, cfg, pat, label, load, acc, lat, hops in rows:
    res[fig][(pat, label, float(load))] = (float(acc), float(lat), float(hops))
# Fig. 7 reuses Fig. 6's DAL runs for the beta = 0.5 HyperX on the four patterns.
for (pat, label, load), v in list(res.get("6", {}).items()):
    if label == "dal" and "7" in res:
        res["7"].setdefault((pat, "HyperX-b0.5", load), v)
short = {"bit-rotate": "bit-rot", "random-server-permutation": "rand-perm"}
cols = {"6": ["minimal", "valiant", "clos-ad", "dal"], "7": ["HyperX-b0.5", "HyperX-b0.25", "Clos-b0.5"]}
pats = {"6": ["bit-complement", "bit-rotate", "transpose", "swap2"],
        "7": ["uniform", "random-server-permutation", "bit-complement", "bit-rotate", "transpose", "swap2"]}
for fig in sorted(res):
    r = res[fig]
    loads = sorted({k[2] for k in r})
    print(f"\nFig. {fig}: accepted load / average latency (cycles) / average hops")
    print("pattern         offered  " + "  ".join(f"{c:>20}" for c in cols[fig]))
    for pat in pats[fig]:
        for load in loads:
            cells = []
            for c in cols[fig]:
                v = r.get((pat, c, load))
                cells.append(f"{v[0]:.3f} /{v[1]:6.0f} /{v[2]:.2f}" if v else "n/a")
            print(f"{short.get(pat, pat):<15} {load:7.2f}  " + "  ".join(f"{x:>20}" for x in cells))
    print(f"\nFig. {fig}: saturation throughput (largest accepted load over the offered loads)")
    print("pattern         " + "  ".join(f"{c:>12}" for c in cols[fig]))
    for pat in pats[fig]:
        cells = []
        for c in cols[fig]:
            v = [r[(pat, c, l)][0] for l in loads if (pat, c, l) in r]
            cells.append(f"{max(v):.3f}" if v else "n/a")
        print(f"{short.get(pat, pat):<15} " + "  ".join(f"{x:>12}" for x in cells))
PY
exit $status

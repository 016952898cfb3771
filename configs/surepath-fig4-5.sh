#!/usr/bin/env bash
# Regenerates the saturation table for SurePath paper Figures 4 and 5 (fault-free 2-D 16x16 and 3-D
# 8x8x8 HyperX, 4096 servers each): accepted load at several offered loads for Minimal, Valiant,
# OmniWAR, Polarized (ladders over 2n VCs, Table 4), OmniSP and PolSP (2n-1 routing VCs + 1 escape
# VC, Table 4) and, to check "SurePath ... with fewer VCs", OmniSP/PolSP with 2n-2 VCs (n=2: 1+1,
# n=3: 3+1 as in section 6), under Uniform, Random Server Permutation, Dimension Complement Reverse,
# and Regular Permutation to Neighbour on the 3-D network.
#
# Usage: configs/surepath-fig4-5.sh [raw.tsv]
# Environment: HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# WARMUP / MEASURE (cycles; default 2000 / 2000), LOADS (default "0.5 0.7 0.9 1.0"), ONLY (space
# separated column labels to run, e.g. "PolSP PolSP-4VC"; default all).
# Prints one TSV line per run (appended to raw.tsv if given), then the summary table: the accepted
# load at offered load 1.0 and the largest accepted load over LOADS (with the offered load it was
# reached at).
set -euo pipefail
cd "$(dirname "$0")/.."
HXSIM=${HXSIM:-${CARGO_TARGET_DIR:-target}/release/hxsim}
[ -x "$HXSIM" ] || cargo build --release
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
LOADS=${LOADS:-0.5 0.7 0.9 1.0}
RAW=${1:-/dev/null}
OUT=$(mktemp)

run() { # config pattern label load sets...
    local cfg=$1 pat=$2 label=$3 load=$4
    shift 4
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $label "* ]]; then return; fi
    local json
    json=$("$HXSIM" run "configs/$cfg.toml" --set traffic.pattern="$pat" --set traffic.load="$load" \
        --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" "$@" --json -q --no-output)
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:6]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.4f"%d["jain_index"],"%.3f"%d["average_hops"]]))' \
        "$json" "$cfg" "$pat" "$label" "$load" | tee -a "$RAW" "$OUT"
}

echo -e "config\tpattern\trouting\toffered\taccepted\tlatency\tjain\thops"
for cfg in hyperx-2d-16 hyperx-3d-8; do
    if [ "$cfg" = hyperx-2d-16 ]; then
        n=2
        patterns="uniform random-server-permutation dimension-complement-reverse"
    else
        n=3
        patterns="uniform random-server-permutation dimension-complement-reverse regular-permutation-to-neighbour"
    fi
    few=$((2 * n - 2))
    for pat in $patterns; do
        for load in $LOADS; do
            run $cfg $pat Minimal "$load" --set routing.algorithm=minimal
            run $cfg $pat Valiant "$load" --set routing.algorithm=valiant
            run $cfg $pat OmniWAR "$load" --set routing.algorithm=omniwar
            run $cfg $pat Polarized "$load" --set routing.algorithm=polarized
            run $cfg $pat OmniSP "$load" --set routing.algorithm=surepath-omni
            run $cfg $pat PolSP "$load" --set routing.algorithm=surepath-polarized
            run $cfg $pat "OmniSP-${few}VC" "$load" --set routing.algorithm=surepath-omni --set routing.vcs=$few
            run $cfg $pat "PolSP-${few}VC" "$load" --set routing.algorithm=surepath-polarized --set routing.vcs=$few
        done
    done
done

python3 - "$OUT" <<'PY'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
at1 = {}; best = collections.defaultdict(lambda: (-1.0, ""))
order = []
for cfg, pat, r, load, acc, *_ in rows:
    key = (cfg, pat)
    if key not in order: order.append(key)
    if float(load) == 1.0: at1[(cfg, pat, r)] = float(acc)
    if float(acc) > best[(cfg, pat, r)][0]: best[(cfg, pat, r)] = (float(acc), load)
routings = []
for _, _, r, *_ in rows:
    if r not in routings: routings.append(r)
print("\naccepted load at offered 1.0 (max over offered loads @ load)")
print("%-14s %-34s" % ("network", "pattern") + "".join("%-18s" % r for r in routings))
for cfg, pat in order:
    cells = []
    for r in routings:
        if (cfg, pat, r) in best:
            a1 = at1.get((cfg, pat, r))
            b, l = best[(cfg, pat, r)]
            cells.append("%-18s" % ("%s (%.3f@%s)" % ("%.3f" % a1 if a1 is not None else "-", b, l)))
        else:
            cells.append("%-18s" % "")
    print("%-14s %-34s" % (cfg, pat) + "".join(cells))
PY
rm -f "$OUT"

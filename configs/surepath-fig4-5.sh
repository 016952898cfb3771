#!/usr/bin/env bash
# Regenerates the SurePath paper's Figures 4 and 5 grid (fault-free 2-D 16x16 and 3-D 8x8x8 HyperX,
# 4096 servers each): accepted load at offered loads 0.1 to 1.0 for Minimal, Valiant, OmniWAR,
# Polarized (ladders over 2n VCs, Table 4), OmniSP and PolSP (2n-1 routing VCs + 1 escape VC, Table
# 4) and, to check "SurePath ... with fewer VCs", OmniSP/PolSP with 2n-2 VCs (n=2: 1+1, n=3: 3+1 as
# in section 6), under Uniform, Random Server Permutation and Dimension Complement Reverse, and
# Regular Permutation to Neighbour on the 3-D network; each point without and with congestion
# management (injection throttling, docs/model.md, "Congestion management"), with long windows and the steady-state
# verdict of every run.
#
# Usage: configs/surepath-fig4-5.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# WARMUP / MEASURE (cycles; default 3000 / 10000: the collapse of escape-based routings past
# saturation builds up over thousands of cycles), LOADS (default "0.1 0.2 ... 1.0"), ONLY (space
# separated column labels to run, e.g. "PolSP PolSP-4VC"; default all), NETS (default
# "hyperx-2d-16 hyperx-3d-8"), PATTERNS (default: the figure's patterns of each network), CM (space
# separated congestion-management settings, "off", MODE:THRESHOLD of router.injection_throttle /
# router.injection_threshold, or window:PACKETS for router.injection_window; default
# "off window:16"), EXTRA (more --set KEY=VALUE pairs, space
# separated, e.g. "topology.sides=[4,4,4] topology.servers_per_switch=4" for a reduced run),
# THREADS (threads per run, default 1), JOBS (runs at a time, default 1: on a machine with C cores,
# JOBS=C runs up to C at once; results do not depend on it), RESUME (1: reuse the rows of
# raw.tsv that match a point's config, pattern, label, cm and offered load instead of running it
# again, so an interrupted grid goes on where it stopped; only for a raw.tsv written with the same
# WARMUP, MEASURE and EXTRA).
# Prints one TSV line per run as it finishes (appended to raw.tsv if given; columns config, pattern,
# routing, cm, offered, accepted, latency, jain, hops, steady, accepted_trend, wall_s), then, once
# every run has succeeded, the summary table in grid order: the accepted
# load at offered load 1.0 and the largest accepted load over LOADS (with the offered load it was
# reached at), per congestion-management setting, with "*" on values whose window was not steady,
# and the time the grid took. The full grid is 2 x 3.5 patterns x 10 loads x 8 routings x 2 CM =
# 1120 runs; at 3000 + 10000 cycles one run of a 4096-server network takes 1 s to 4 minutes of one
# core (past saturation the longest; 75 s on average over the 60 runs of the 3-D DCR panel on a
# shared 2-core machine), so the grid is about a day of one core: use many cores (JOBS), or ONLY,
# LOADS.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WARMUP "40"
smoke MEASURE "40"
smoke LOADS "0.5"
smoke NETS "hyperx-3d-8"
smoke CM "off"
WARMUP=${WARMUP:-3000}
MEASURE=${MEASURE:-10000}
LOADS=${LOADS:-0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0}
NETS=${NETS:-hyperx-2d-16 hyperx-3d-8}
CM=${CM:-off window:16}
THREADS=${THREADS:-1}
EXTRA_SETS=()
for kv in ${EXTRA:-}; do EXTRA_SETS+=(--set "$kv"); done
JOBS=${JOBS:-1}
RAW=${1:-/dev/null}
OUT=$(mktemp)
ROWS=$(mktemp -d)
trap 'kill $(jobs -rp) 2>/dev/null || true; rm -rf "$ROWS" "$OUT"' EXIT
START=$(date +%s)

point() { # config pattern label cm load sets...: one run, its TSV row on stdout
    local cfg=$1 pat=$2 label=$3 cm=$4 load=$5 json t0
    shift 5
    local cmsets=()
    if [ "$cm" = off ]; then
        :
    elif [ "${cm%%:*}" = window ]; then
        cmsets=(--set "router.injection_throttle=window" --set "router.injection_window=${cm#*:}")
    else
        cmsets=(--set "router.injection_throttle=${cm%%:*}" --set "router.injection_threshold=${cm#*:}")
    fi
    t0=$(date +%s)
    json=$("$HXSIM" run "configs/$cfg.toml" --set traffic.pattern="$pat" --set traffic.load="$load" \
        --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" "$@" \
        "${cmsets[@]}" "${EXTRA_SETS[@]}" --threads "$THREADS" --json -q --no-output) || return 1
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:7]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.4f"%d["jain_index"],"%.3f"%d["average_hops"],str(d.get("steady_state")),("%.3f"%d["accepted_trend"] if d.get("accepted_trend") is not None else ""),sys.argv[7]]))' \
        "$json" "$cfg" "$pat" "$label" "$cm" "$load" $(($(date +%s) - t0))
}

N=0
run() { # config pattern label load sets...: the point under each CM setting, JOBS at a time
    local cfg=$1 pat=$2 label=$3 load=$4 cm old
    shift 4
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $label "* ]]; then return; fi
    for cm in $CM; do
        N=$((N + 1))
        if [ "${RESUME:-0}" = 1 ]; then
            old=$(awk -F'\t' -v k="$cfg	$pat	$label	$cm	$load" \
                '$1"\t"$2"\t"$3"\t"$4"\t"$5 == k { print; exit }' "$RAW")
            if [ -n "$old" ]; then
                echo "$old" | tee "$ROWS/$N"
                continue
            fi
        fi
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
        # A row file appears only once its run succeeded; the check after the loop finds the others.
        (point "$cfg" "$pat" "$label" "$cm" "$load" "$@" >"$ROWS/$N.part" && mv "$ROWS/$N.part" "$ROWS/$N" &&
            tee -a "$RAW" <"$ROWS/$N" ||
            echo "surepath-fig4-5.sh: run failed: $cfg $pat $label cm=$cm load=$load" >&2) &
    done
}

echo -e "config\tpattern\trouting\tcm\toffered\taccepted\tlatency\tjain\thops\tsteady\taccepted_trend\twall_s"
for cfg in $NETS; do
    if [ "$cfg" = hyperx-2d-16 ]; then
        n=2
        patterns="uniform random-server-permutation dimension-complement-reverse"
    else
        n=3
        patterns="uniform random-server-permutation dimension-complement-reverse regular-permutation-to-neighbour"
    fi
    patterns=${PATTERNS:-$patterns}
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

wait
missing=0
for ((i = 1; i <= N; i++)); do
    if [ -f "$ROWS/$i" ]; then cat "$ROWS/$i" >>"$OUT"; else missing=$((missing + 1)); fi
done
if [ "$missing" -gt 0 ]; then
    echo "surepath-fig4-5.sh: $missing of $N runs failed (their errors are above); no summary" >&2
    exit 1
fi

python3 - "$OUT" <<'PY'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
at1 = {}; best = collections.defaultdict(lambda: (-1.0, "", True))
order, routings = [], []
for cfg, pat, r, cm, load, acc, lat, jain, hops, steady, *_ in rows:
    key = (cfg, pat, cm)
    if key not in order: order.append(key)
    if r not in routings: routings.append(r)
    ok = steady != "False"
    if float(load) == 1.0: at1[(cfg, pat, cm, r)] = (float(acc), ok)
    if float(acc) > best[(cfg, pat, cm, r)][0]: best[(cfg, pat, cm, r)] = (float(acc), load, ok)
mark = lambda ok: "" if ok else "*"
print("\naccepted load at offered 1.0 (max over offered loads @ load); * = window not steady")
print("%-14s %-34s %-12s" % ("network", "pattern", "cm") + "".join("%-20s" % r for r in routings))
for cfg, pat, cm in order:
    cells = []
    for r in routings:
        if (cfg, pat, cm, r) in best:
            b, l, okb = best[(cfg, pat, cm, r)]
            a1 = at1.get((cfg, pat, cm, r))
            one = "%.3f%s" % (a1[0], mark(a1[1])) if a1 else "-"
            cells.append("%-20s" % ("%s (%.3f%s@%s)" % (one, b, mark(okb), l)))
        else:
            cells.append("%-20s" % "")
    print("%-14s %-34s %-12s" % (cfg, pat, cm) + "".join(cells))
PY
echo "grid took $(( $(date +%s) - START )) s"

#!/usr/bin/env bash
# SurePath paper Figure 10: completion time of a fixed workload under Regular Permutation to
# Neighbour on the 8x8x8 HyperX with the Star fault shape (three K_7 through switch 0, 63 links;
# switch 0, the escape root, keeps 3 of its 21 links), OmniSP vs PolSP with 4 VCs (3 + 1 escape).
# Every server sends WORKLOAD phits as fast as its source queue allows (`traffic.mode = "fixed"`);
# the run ends when the last tail arrives. From the run's time series (`-o FILE.h5`,
# /timeseries) the script also reports when 50%, 90% and 99% of all phits had arrived, the peak
# accepted load of a sample interval and the mean accepted load up to the 90% point (the "bulk").
#
# Usage: configs/surepath-fig10.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# WORKLOAD (phits per server; default 2000, a quarter of the paper's 8000, to fit a shared 2-core
# machine), BASELINE (1: also run the fault-free network; default 0), SAMPLE (time-series interval,
# default 100 cycles), THREADS (default 1). Needs python3 with h5py.
# Run time here (shared 2-core machine at load about 12, WORKLOAD=2000): 2.5 minutes (OmniSP 90 s,
# PolSP 60 s); WORKLOAD=8000 took 7 (OmniSP) and 8 (PolSP) minutes of wall time each.
# Prints one TSV line per run (appended to raw.tsv if given), then the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WORKLOAD "64"
WORKLOAD=${WORKLOAD:-2000}
BASELINE=${BASELINE:-0}
SAMPLE=${SAMPLE:-100}
THREADS=${THREADS:-1}
RAW=${1:-/dev/null}
OUT=$(mktemp)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$OUT"' EXIT

faults=("star")
[ "$BASELINE" = 1 ] && faults=("none" "star")
echo -e "faults\trouting\tworkload\tcompletion\tt50\tt90\tt99\tpeak_accepted\tbulk_accepted\twall_s"
for f in "${faults[@]}"; do
    shape=()
    [ "$f" = star ] && shape=(--set 'faults.shapes=[{kind="star"}]')
    for r in OmniSP PolSP; do
        [ $r = OmniSP ] && alg=surepath-omni || alg=surepath-polarized
        h5="$TMP/$f-$r.h5"
        "$HXSIM" run configs/hyperx-3d-8.toml --set routing.algorithm=$alg --set routing.vcs=4 \
            --set routing.escape_root=0 "${shape[@]}" --set traffic.pattern=regular-permutation-to-neighbour \
            --set traffic.mode=fixed --set traffic.workload_phits="$WORKLOAD" --set traffic.load=1.0 \
            --set output.sample_cycles="$SAMPLE" --threads "$THREADS" --json -q -o "$h5" > "$TMP/run.json"
        python3 - "$TMP/run.json" "$h5" "$f" "$r" "$WORKLOAD" <<'PY' | tee -a "$RAW" "$OUT"
import json, sys, h5py, numpy as np
d = json.load(open(sys.argv[1]))
with h5py.File(sys.argv[2]) as h:
    cyc = h["timeseries/cycle"][()]
    acc = h["timeseries/accepted_phits"][()].astype(float)
    load = h["timeseries/accepted_load"][()]
cum = np.cumsum(acc)
tot = cum[-1]
t = lambda q: int(cyc[np.searchsorted(cum, q * tot)])
t90 = t(0.9)
print("\t".join([sys.argv[3], sys.argv[4], sys.argv[5], str(d["completion_cycles"]), str(t(0.5)), str(t90), str(t(0.99)),
                 "%.4f" % load.max(), "%.4f" % (0.9 * tot / t90 / 4096), "%.0f" % d["wall_seconds"]]))
PY
    done
done

python3 - "$OUT" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("\nRPN, fixed workload of %s phits per server, 8x8x8 HyperX, 4 VCs" % rows[0][2])
print("%-8s %-8s %12s %8s %8s %8s %10s %10s" % ("faults", "routing", "completion", "t50", "t90", "t99", "peak acc", "bulk acc"))
comp = {}
for f, r, w, c, t50, t90, t99, pk, bk, _ in rows:
    comp[(f, r)] = int(c)
    print("%-8s %-8s %12s %8s %8s %8s %10s %10s" % (f, r, c, t50, t90, t99, pk, bk))
for f in dict.fromkeys(r[0] for r in rows):
    if (f, "OmniSP") in comp and (f, "PolSP") in comp:
        print("%s: completion OmniSP / PolSP = %.2f" % (f, comp[(f, "OmniSP")] / comp[(f, "PolSP")]))
print("paper (section 6, Fig. 10, star, 8000 phits): OmniSP has the higher throughput, but its completion time"
      " is 2.8x PolSP's")
PY

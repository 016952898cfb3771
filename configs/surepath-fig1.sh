#!/usr/bin/env bash
# SurePath paper Figure 1: diameter of the 8x8x8 HyperX (5376 links) as random link faults
# accumulate along one nested random sequence per fault seed (`hxsim analyze --sequence`), with the
# fault counts at which the diameter first reaches 4, 5, 6, ... and at which the network first
# disconnects, beside the values the paper's text gives (section 2; Fig. 1 itself is a plot, its
# exact values are not in the text).
#
# Usage: configs/surepath-fig1.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# SEEDS (fault seeds, default "1 2 3 4 5"), FINE (exact count by steps of 1 up to this many faults,
# default 200, where the 3 -> 4 step happens), STEP (step beyond, default 16: later thresholds are
# upper bounds within STEP).
# Run time here (shared 2-core machine, loaded): about 50 s per seed, 4 minutes in all.
# Prints one TSV line per (seed, fault count) (appended to raw.tsv if given), then the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke SEEDS "1"
smoke FINE "4"
smoke STEP "2000"
SEEDS=${SEEDS:-1 2 3 4 5}
FINE=${FINE:-200}
STEP=${STEP:-16}
RAW=${1:-/dev/null}
OUT=$(mktemp)
LINKS=5376

echo -e "seed\tfailed_links\tdiameter\taverage_distance\tconnected\tunreachable_pairs"
for seed in $SEEDS; do
    for seq in "0:$FINE:1" "0:$LINKS:$STEP"; do
        "$HXSIM" analyze configs/hyperx-3d-8.toml --set faults.seed="$seed" --sequence "$seq" --json |
            python3 -c 'import json,sys
for r in json.load(sys.stdin):
    print("\t".join([sys.argv[1], str(r["failed_links"]), str(r["diameter"]), "%.5f" % r["average_distance"], str(r["connected"]).lower(), str(r["unreachable_pairs"])]))' "$seed"
    done
done | sort -n -k1,1 -k2,2 -u | tee -a "$RAW" "$OUT"

python3 - "$OUT" "$LINKS" "$FINE" "$STEP" <<'PY'
import sys, collections
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
links, fine, step = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
by = collections.defaultdict(list)
for s, f, d, a, c, u in rows:
    by[int(s)].append((int(f), int(d), c.strip() == "true"))
firsts = {}
for s, pts in sorted(by.items()):
    pts.sort()
    first = {}
    disc = None
    for f, d, c in pts:
        if not c:
            disc = disc if disc is not None else f
            continue
        if disc is None and d not in first:
            first[d] = f
    firsts[s] = (first, disc)
diams = sorted({d for first, _ in firsts.values() for d in first if d > 3})
paper = {4: "about 80", 5: "about 35% (~1880)"}
print("\nfirst fault count (of %d links) at which the diameter reaches D; exact up to %d faults, "
      "within %d beyond (an upper bound)" % (links, fine, step))
print("%-22s" % "" + "".join("%-14s" % ("seed %d" % s) for s in firsts) + "%-16s" % "mean (% links)" + "paper (text)")
for d in diams:
    vals = [firsts[s][0].get(d) for s in firsts]
    ok = [v for v in vals if v is not None]
    mean = "%d (%.1f%%)" % (sum(ok) / len(ok), 100.0 * sum(ok) / len(ok) / links) if ok else "-"
    print("%-22s" % ("diameter %d" % d) + "".join("%-14s" % (v if v is not None else "-") for v in vals)
          + "%-16s" % mean + paper.get(d, ""))
vals = [firsts[s][1] for s in firsts]
ok = [v for v in vals if v is not None]
mean = "%d (%.1f%%)" % (sum(ok) / len(ok), 100.0 * sum(ok) / len(ok) / links) if ok else "-"
print("%-22s" % "disconnected" + "".join("%-14s" % (v if v is not None else "-") for v in vals)
      + "%-16s" % mean + "about 75% (~4030)")
PY
rm -f "$OUT"

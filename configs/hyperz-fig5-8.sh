#!/usr/bin/env bash
# The HyperZ paper's Figs. 5-8 (Adda 2023, section 5.2): ODim, CLIOD and ALIOD under random
# (uniform), transpose, bit-reversal and bit-complement traffic, on the 1024-processor h = 2 A and
# h = 3 A designs of SPEC section 4.3 (configs/hyperz-1024-h2a.toml, configs/hyperz-1024-h3a.toml).
# Sweeps the offered load, then prints the saturation throughput of each routing: the largest
# accepted load over the sweep (phits/cycle/server). All three routings get 2 VCs per port: CLIOD
# and ALIOD use them as VC scheme A (VC 0 = ODim escape, VC 1 adaptive; SPEC 5.3), ODim uses both
# freely. Router and packets are this simulator's defaults (SurePath Table 2: VCT, 16-phit packets),
# not the paper's 10 Gbit/s links and 3200-bit messages, so compare orderings, not latencies.
#
# Takes about 7.5 minutes on an otherwise idle 2-core machine with the defaults (144 runs of 4000
# cycles each, one at a time; 13 minutes while a build ran beside it).
#
# Usage: configs/hyperz-fig5-8.sh [raw.tsv]
# Environment: HXSIM (binary, default target/release/hxsim), WARMUP, MEASURE (cycles, default
# 2000 each), LOADS (default "0.2 0.4 0.6 0.8 0.9 1.0").
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WARMUP "40"
smoke MEASURE "40"
smoke LOADS "0.6"
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
LOADS=${LOADS:-0.2 0.4 0.6 0.8 0.9 1.0}
RAW=${1:-$(mktemp)}
: > "$RAW"

echo -e "design\tpattern\trouting\toffered\taccepted\tlatency\thops" >&2
for design in h2a h3a; do
    for pat in uniform transpose bit-reverse bit-complement; do
        for alg in odim cliod aliod; do
            for load in $LOADS; do
                json=$("$HXSIM" run "configs/hyperz-1024-$design.toml" --set routing.algorithm=$alg \
                    --set traffic.pattern=$pat --set traffic.load="$load" \
                    --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" \
                    --json -q --no-output)
                python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:6]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.3f"%d["average_hops"]]))' \
                    "$json" "$design" "$pat" "$alg" "$load" | tee -a "$RAW" >&2
            done
        done
    done
done

python3 - "$RAW" <<'PY'
import sys, collections
best = collections.defaultdict(float)
for line in open(sys.argv[1]):
    design, pat, alg, offered, acc, lat, hops = line.split("\t")
    best[design, pat, alg] = max(best[design, pat, alg], float(acc))
print("Saturation throughput (max accepted load over the sweep, phits/cycle/server)")
print("design  pattern          odim    cliod   aliod   aliod>=cliod>=odim")
for design in ("h2a", "h3a"):
    for pat in ("uniform", "transpose", "bit-reverse", "bit-complement"):
        o, c, a = (best[design, pat, x] for x in ("odim", "cliod", "aliod"))
        # 0.005: the Bernoulli noise of a 2000-cycle window on 1024 servers.
        ok = "yes" if a >= c - 0.005 and c >= o - 0.005 else "NO"
        print(f"{design:7s} {pat:16s} {o:.4f}  {c:.4f}  {a:.4f}  {ok}")
PY

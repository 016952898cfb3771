#!/usr/bin/env bash
# HyperZ paper (Adda 2023) section 5.4, "ALIOD is more tolerant to faults than DAL": accepted load
# against the number of random link faults, in the manner of SurePath Fig. 6 (configs/surepath-fig6.sh:
# one nested fault sequence per fault seed, `faults.random_links` = 0 .. 10% of the switch-to-switch
# links), on the 1024-processor HyperZ designs h = 2 A and h = 3 A of SPEC section 4.3
# (configs/hyperz-1024-h2a.toml, configs/hyperz-1024-h3a.toml) and, beside them, the HyperX of the
# same size, the paper's h = 1 design (8x8 switches, 16 servers each: configs/hyperx-2d-16.toml with
# topology.sides = [8,8]).
#
# Routings (issue 32; routing.vcs in brackets):
# - HyperZ: ALIOD, CLIOD, ODim with their detours on faulty networks (src/routing/hyperz_faults.rs) on
#   SPEC 5.3 scheme B, `routing.vc_policy = "hyperz-b"` at every fault count (3 VCs without faults,
#   4 with: one more for a deroute; the fault-free scheme A of the other HyperZ tables has no detours);
#   `surepath-aliod`, ALIOD's live moves over SurePath's Up*/Down* escape (4: 3 + 1, escape root 0);
#   Minimal (its default VC ladder, sized for the faulty diameter).
# - HyperX: DAL (4: two sets of one adaptive and one escape VC, the least it takes with faults),
#   `surepath-polarized` (4: 3 + 1, as SurePath section 6), Minimal (its default).
# Traffic: uniform and transpose (the HyperZ paper's Figs. 5 and 6). Throughput is the saturation
# throughput, the largest accepted load over the offered loads LOADS (as configs/hyperz-fig5-8.sh),
# not the accepted load at offered 1.0 alone (SurePath Fig. 6): past saturation DAL and SurePath lose
# throughput over time (docs/model.md, *Congestion management*; DAL on the HyperX here: 0.34 at offered 1.0 against
# 0.49 below it), which would measure that collapse rather than the faults. A routing that cannot
# route a fault set (exit 2, e.g. a pair its rule leaves without a route) prints `refused`.
#
# Usage: configs/hyperz-faults.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# WARMUP / MEASURE (cycles, default 1000 / 1500), LOADS (default "0.5 0.7 0.9 1.0": the HyperX
# saturates near 0.5 on uniform traffic, ALIOD on h = 2 above 0.9), PERCENTS (fault counts in % of the
# links, default "0 2 4 6 8 10"), FSEEDS (fault seeds, default "1 2": each its own nested sequence;
# the table gives the mean over them; without faults only the first runs, the seed changing nothing),
# PATTERNS (default "uniform transpose"), NETS (default "h2a h3a hx"), THREADS (default 1).
# Run time: 0.2-3 s per run (1024 servers, 2500 cycles; saturated CLIOD and ODim runs are the
# slowest), 1144 runs with the defaults: about 2 hours on the shared 2-core machine at a load average
# of 7 (other engineers' builds and runs beside it).
# FROM=raw.tsv prints the table of the lines in raw.tsv (runs of several invocations) without running.
# Prints one TSV line per run (appended to raw.tsv if given), then the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
smoke WARMUP 40
smoke MEASURE 40
smoke LOADS 0.5
smoke PERCENTS "0 2"
smoke FSEEDS 1
smoke PATTERNS uniform
hxsim_binary
WARMUP=${WARMUP:-1000}
MEASURE=${MEASURE:-1500}
LOADS=${LOADS:-0.5 0.7 0.9 1.0}
PERCENTS=${PERCENTS:-0 2 4 6 8 10}
FSEEDS=${FSEEDS:-1 2}
PATTERNS=${PATTERNS:-uniform transpose}
NETS=${NETS:-h2a h3a hx}
THREADS=${THREADS:-1}
RAW=${1:-/dev/null}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

net_args() { # net -> config and sets
    case $1 in
        h2a) echo "configs/hyperz-1024-h2a.toml" ;;
        h3a) echo "configs/hyperz-1024-h3a.toml" ;;
        hx) echo "configs/hyperx-2d-16.toml --set topology.sides=[8,8] --set topology.servers_per_switch=16" ;;
    esac
}
routings() { # net -> routing:sets ...
    case $1 in
        h2a | h3a) echo "aliod:routing.vc_policy=hyperz-b cliod:routing.vc_policy=hyperz-b" \
            "odim:routing.vc_policy=hyperz-b surepath-aliod:routing.vcs=4 minimal:-" ;;
        hx) echo "dal:routing.vcs=4 surepath-polarized:routing.vcs=4 minimal:-" ;;
    esac
}

if [ -n "${FROM:-}" ]; then
    # Only the table, from the lines of earlier runs.
    grep -v '^net' "$FROM" >"$OUT"
else
    echo -e "net\tpattern\trouting\tpercent\tfaults\tfseed\toffered\tvcs\taccepted\tlatency\thops\tsteady"
    for net in $NETS; do
        # shellcheck disable=SC2046
        links=$("$HXSIM" analyze $(net_args "$net") --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["links"])')
        for pct in $PERCENTS; do
            faults=$((links * pct / 100))
            for fseed in $FSEEDS; do
                # Without faults the fault seed changes nothing: one run.
                [ "$faults" -gt 0 ] || [ "$fseed" = "${FSEEDS%% *}" ] || continue
                for pat in $PATTERNS; do
                    for rs in $(routings "$net"); do
                        r=${rs%%:*} extra=${rs#*:}
                        sets=(--set routing.algorithm="$r" --set routing.escape_root=0)
                        [ "$extra" = - ] || sets+=(--set "$extra")
                        for load in $LOADS; do
                            # shellcheck disable=SC2046
                            if json=$("$HXSIM" run $(net_args "$net") "${sets[@]}" --set faults.random_links="$faults" \
                                --set faults.seed="$fseed" --set traffic.pattern="$pat" --set traffic.load="$load" \
                                --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" \
                                --threads "$THREADS" --json -q --no-output 2>/dev/null); then
                                python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:]+[str(len(d.get("vc_phits",[]))),"%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.3f"%d["average_hops"],str(d.get("steady_state"))]))' \
                                    "$json" "$net" "$pat" "$r" "$pct" "$faults" "$fseed" "$load"
                            else
                                # Exit 2: the routing refuses this fault set; anything else is an error.
                                [ $? = 2 ] && what=refused || what=error
                                echo -e "$net\t$pat\t$r\t$pct\t$faults\t$fseed\t$load\t-\t$what\t-\t-\t-"
                            fi | tee -a "$RAW" "$OUT"
                        done
                    done
                done
            done
        done
    done

fi

python3 - "$OUT" <<'PY'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
# Per fault seed: the saturation throughput (largest accepted load over the offered loads) and the
# offered load it was reached at; then the mean over the seeds.
best = {}
refused = collections.Counter()
unsteady = collections.Counter()
faults = {}
for net, pat, r, pct, f, seed, offered, vcs, a, lat, hops, steady in rows:
    key = (net, pat, r, int(pct))
    faults[net, int(pct)] = f
    if a == "error":
        sys.exit("a run failed (not a refusal): %s" % " ".join((net, pat, r, pct, f, seed, offered)))
    if a == "refused":
        refused[key, seed] = 1
        continue
    b = best.get((key, seed))
    if b is None or float(a) > b[0]:
        best[key, seed] = (float(a), offered, steady == "True")
acc = collections.defaultdict(list)
for (key, seed), (a, offered, steady) in best.items():
    acc[key].append(a)
    unsteady[key] += not steady
refusals = collections.Counter()
for (key, seed) in refused:
    if (key, seed) not in best:
        refusals[key] += 1
pcts = sorted({int(r[3]) for r in rows})
seeds = len({r[5] for r in rows})
loads = sorted({r[6] for r in rows}, key=float)
print("\nsaturation throughput (largest accepted load over offered %s) against random link faults (%% of the"
      " switch-to-switch links); mean over %d fault seed(s); rN: refused by N seeds (the mean is over the"
      " others), *: the best window of some seed not steady" % (" ".join(loads), seeds))
print("%-5s %-10s %-19s" % ("net", "pattern", "routing") + "".join("%9s" % ("%d%%" % p) for p in pcts)
      + "   0->%d%%" % pcts[-1])
for net in dict.fromkeys(r[0] for r in rows):
    print("%-5s %-10s %-19s" % (net, "", "(failed links)") + "".join("%9s" % faults.get((net, p), "-") for p in pcts))
    for pat in dict.fromkeys(r[1] for r in rows):
        for r in dict.fromkeys(x[2] for x in rows if x[0] == net):
            cells, first, last = "", None, None
            for p in pcts:
                key = (net, pat, r, p)
                v = acc.get(key)
                mark = ("*" if unsteady[key] else "") + ("r%d" % refusals[key] if refusals[key] else "")
                mean = sum(v) / len(v) if v else None
                cells += "%9s" % (("%.3f" % mean if v else "-") + mark)
                if mean is not None:
                    first = mean if first is None else first
                    last = mean
            loss = "%+.1f%%" % (100 * (last / first - 1)) if first and last is not None else "-"
            print("%-5s %-10s %-19s" % (net, pat, r) + cells + "   " + loss)
print("paper (section 5.4): ALIOD is more tolerant to faults than DAL (no numbers given)")
PY

#!/usr/bin/env bash
# Nue paper (Domke, Hoefler, Matsuoka, HPDC 2016; dissertation section 2), Fig. 2a: throughput of a
# fail-in-place network over the machine's lifetime. The lifetime model of section 2 (1% of the
# links and 1% of the switches fail per year, failures accumulate over eight years, critical ones
# are repaired; `[faults.lifetime]`, `hxsim faults`) is stepped year by year on a fat tree and a
# torus, and at every step the script simulates Nue, Up*/Down* and DFSSSP, and on the fat tree also
# its own routings, NCA and D-mod-K (issue 32: up ports chosen to avoid failed down paths,
# src/routing/hyperz_faults.rs; `-` on the torus, `refused` where a fault set leaves a pair without
# an up*/down* route).
#
# Traffic (TRAFFIC): `shift` (default), the paper's all-to-all shift exchange (Fig. 2a's right
# panels, its reference [36]): `traffic.pattern = "all-to-all-shift"` in `fixed` mode, one full
# exchange (every live server sends one message of SHIFT_PACKETS packets to every other live server,
# in shift order, each at its own pace); the number printed is the rate the exchange achieves,
# hxsim's accepted load of a fixed workload: delivered phits / completion cycle / live servers.
# `uniform`: uniform random traffic at offered load LOAD for WARMUP + MEASURE cycles (the paper's
# left panels inject uniform random traffic), the accepted load, i.e. the consumption bandwidth.
#
# Networks: the 4-ary 3-tree (configs/fattree-4ary-3tree.toml: 48 switches, 64 servers) and a
# k x k x k torus with 4 servers per switch (configs/torus-7x7x7.toml with topology.sides, k =
# TORUS; default 6: 216 switches, 864 servers). Columns: step (= years), failed links and
# switches at that step, servers lost, then per routing the throughput (phits/cycle/server, per
# live server): Nue with each of NUE_VCS virtual channels, Up*/Down* (1 VC), DFSSSP (the layers it
# needs), and DFSSSP's virtual layers. `*`: not steady (uniform), or the exchange did not finish
# within MAX_CYCLES (shift; the number is then the rate up to that cycle).
#
# Usage: configs/nue-fig2a.sh [raw.tsv]   (raw.tsv gets one line per run: network, step, failed
# links, failed switches, routing, VCs asked for (- the default), throughput, layers, steady or finished, table
# bytes, table build seconds, cycles)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if
# missing), TRAFFIC (shift or uniform; default shift), TORUS (default 6), STEPS (default
# "0 1 2 3 4 5 6 7 8", of 8 one-year steps), SEED (default 1; the paper uses ten fault seeds),
# NUE_VCS (default "1 8"), NETS (default "fattree torus"); shift: SHIFT_PACKETS (packets per
# message, default 1), MAX_CYCLES (default 5000000); uniform: LOAD (default 1.0), WARMUP and
# MEASURE (cycles; default 2000 and 2000).
# Time, one core of a loaded 2-core machine: shift, the fat tree 12 s for all nine years; the
# 6x6x6 torus 3.5-9 minutes per year (217 s for year 8 alone; Nue k=1 and Up*/Down* 80 s each:
# below 0.05 phits/cycle a full exchange of up to 745,632 packets takes 0.3-3.5 million cycles),
# so 40-60 minutes for all nine years (2131 s for years 1, 3, 5, 6, 7). Uniform: about a minute (the saturated torus runs move little).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke STEPS "0 1"
smoke NUE_VCS "1"
smoke NETS "fattree"
smoke TORUS "3"
smoke MAX_CYCLES "20000"
TRAFFIC=${TRAFFIC:-shift}
TORUS=${TORUS:-6}
STEPS=${STEPS:-0 1 2 3 4 5 6 7 8}
SEED=${SEED:-1}
NUE_VCS=${NUE_VCS:-1 8}
NETS=${NETS:-fattree torus}
SHIFT_PACKETS=${SHIFT_PACKETS:-1}
MAX_CYCLES=${MAX_CYCLES:-5000000}
LOAD=${LOAD:-1.0}
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
RAW=${1:-/dev/null}
start=$(date +%s)

case $TRAFFIC in
    shift)
        traffic=(--set traffic.pattern=all-to-all-shift --set traffic.mode=fixed
            --set traffic.shift_message_packets="$SHIFT_PACKETS" --set simulation.max_cycles="$MAX_CYCLES")
        what="all-to-all shift exchange, $SHIFT_PACKETS packet(s) per message, at most $MAX_CYCLES cycles"
        ;;
    uniform)
        traffic=(--set traffic.pattern=uniform --set traffic.load="$LOAD" --set simulation.warmup_cycles="$WARMUP"
            --set simulation.measure_cycles="$MEASURE")
        what="uniform at $LOAD, ${WARMUP} + ${MEASURE} cycles"
        ;;
    *)
        echo "TRAFFIC=$TRAFFIC: shift or uniform" >&2
        exit 2
        ;;
esac

net_args() { # net -> config and sets
    case $1 in
        fattree) echo "configs/fattree-4ary-3tree.toml" ;;
        torus) echo "configs/torus-7x7x7.toml --set topology.sides=[$TORUS,$TORUS,$TORUS]" ;;
    esac
}

life() { # step -> lifetime sets
    echo "--set seed=$SEED --set faults.lifetime.years=8 --set faults.lifetime.steps=8 --set faults.lifetime.step=$1"
}

faults() { # net step -> "failed_links failed_switches servers_lost"
    # shellcheck disable=SC2046
    # The fault set does not depend on the routing; the config's own (nca, torus-dor) takes no faults.
    "$HXSIM" faults $(net_args "$1") $(life "$2") --set routing.algorithm=updown --json |
        python3 -c 'import json,sys; d=[json.loads(l) for l in sys.stdin if l.strip()]; d=[x for x in d if x["step"] == int(sys.argv[1])][0]; print(d["failed_links"], d["failed_switches"], d["servers_lost"])' "$2"
}

run() { # net step routing vcs -> "throughput layers ok bytes seconds cycles"
    # shellcheck disable=SC2046
    local vcs=()
    [ "$4" = - ] || vcs=(--set routing.vcs="$4")
    "$HXSIM" run $(net_args "$1") $(life "$2") --json --quiet --no-output --set routing.algorithm="$3" "${vcs[@]}" \
        "${traffic[@]}" |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
# Fixed mode is never judged for steadiness: there "ok" says the exchange finished before the bound.
ok = d["cycles"] < int(sys.argv[1]) if sys.argv[2] == "shift" else d["steady_state"]
print("%.4f %d %s %d %.3f %d" % (d["accepted_load"], d.get("routing_layers", 0), "yes" if ok else "NO",
      d.get("routing_table_bytes", 0), d.get("routing_build_seconds", 0), d["cycles"]))' "$MAX_CYCLES" "$TRAFFIC"
}

header=$(printf "%-8s %5s %6s %8s %6s |" network years links switches lost)
for k in $NUE_VCS; do header+=$(printf " %8s" "Nue k=$k"); done
header+=$(printf " %8s %8s %7s %8s %8s | %s" "Up*/Dn*" "DFSSSP" "DF VCs" "NCA" "D-mod-K" "paper (section 2, Fig. 2a)")
echo "$header"
for net in $NETS; do
    for step in $STEPS; do
        read -r fl fs lost < <(faults "$net" "$step")
        row=$(printf "%-8s %5s %6s %8s %6s |" "$net" "$step" "$fl" "$fs" "$lost")
        layers=-
        # Nue with each VC count, Up*/Down* on its one VC (its default), DFSSSP with the layers it needs (vcs 0).
        for rk in $(for k in $NUE_VCS; do echo "nue:$k"; done) updown:- dfsssp:0; do
            r=${rk%:*} k=${rk#*:}
            read -r a l ok bytes secs cyc < <(run "$net" "$step" "$r" "$k")
            [ "$ok" = yes ] || a="$a*"
            [ "$r" = dfsssp ] && layers=$l
            row+=$(printf " %8s" "$a")
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$net" "$step" "$fl" "$fs" "$r" "$k" "${a%\*}" "$l" \
                "$ok" "$bytes" "$secs" "$cyc" >>"$RAW"
        done
        if [ "$step" = 0 ]; then
            paper="no failures"
        else
            paper="agnostic (DF)SSSP degrades least; Up*/Down* more with many failures"
        fi
        row+=$(printf " %7s" "$layers")
        # The fat tree's own routings (one VC each, their default).
        for r in nca dmodk; do
            if [ "$net" != fattree ]; then
                row+=$(printf " %8s" -)
            elif read -r a l ok bytes secs cyc < <(run "$net" "$step" "$r" - 2>/dev/null) && [ -n "$a" ]; then
                [ "$ok" = yes ] || a="$a*"
                row+=$(printf " %8s" "$a")
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$net" "$step" "$fl" "$fs" "$r" - "${a%\*}" "$l" \
                    "$ok" "$bytes" "$secs" "$cyc" >>"$RAW"
            else
                row+=$(printf " %8s" refused)
            fi
        done
        echo "$row $(printf "| %s" "$paper")"
    done
done
echo "# torus ${TORUS}x${TORUS}x${TORUS}, fault seed $SEED, $what; * = $([ "$TRAFFIC" = shift ] && echo "exchange not finished" || echo "not steady"); $(($(date +%s) - start)) s in all"

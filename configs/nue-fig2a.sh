#!/usr/bin/env bash
# Nue paper (Domke, Hoefler, Matsuoka, HPDC 2016; dissertation section 2), Fig. 2a: throughput of a
# fail-in-place network over the machine's lifetime. The lifetime model of section 2 (1% of the
# links and 1% of the switches fail per year, failures accumulate over eight years, critical ones
# are repaired; `[faults.lifetime]`, `hxsim faults`) is stepped year by year on a fat tree and a
# torus, and at every step the script simulates Nue, Up*/Down* and DFSSSP and prints the accepted
# load. The paper measures an all-to-all shift exchange; hxsim has no shift pattern
# (src/traffic/), so the traffic is uniform random at offered load 1.0 (the paper's left panels use
# uniform random injection too), i.e. the consumption bandwidth at saturation.
#
# Networks: the 4-ary 3-tree (configs/fattree-4ary-3tree.toml: 48 switches, 64 servers) and a
# k x k x k torus with 4 servers per switch (configs/torus-7x7x7.toml with topology.sides, k =
# TORUS; default 6: 216 switches, 864 servers). Columns: step (= years), failed links and
# switches at that step, servers lost, then per routing the accepted load (phits/cycle/server, per
# live server), and DFSSSP's virtual layers (VCs it needs; Nue uses NUE_VCS, Up*/Down* 1).
#
# Usage: configs/nue-fig2a.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if
# missing), TORUS (default 6), STEPS (default "0 1 2 3 4 5 6 7 8", of 8 one-year steps), SEED
# (default 1; the paper uses ten fault seeds), NUE_VCS (default 1), LOAD (default 1.0), WARMUP and
# MEASURE (cycles; default 2000 and 2000), NETS (default "fattree torus").
# Time: under a minute with the defaults (54 short runs: the saturated torus runs move little).
set -euo pipefail
cd "$(dirname "$0")/.."
HXSIM=${HXSIM:-${CARGO_TARGET_DIR:-target}/release/hxsim}
[ -x "$HXSIM" ] || cargo build --release
TORUS=${TORUS:-6}
STEPS=${STEPS:-0 1 2 3 4 5 6 7 8}
SEED=${SEED:-1}
NUE_VCS=${NUE_VCS:-1}
LOAD=${LOAD:-1.0}
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
NETS=${NETS:-fattree torus}
RAW=${1:-/dev/null}
start=$(date +%s)

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
    "$HXSIM" faults $(net_args "$1") $(life "$2") --json |
        python3 -c 'import json,sys; d=[json.loads(l) for l in sys.stdin if l.strip()]; d=[x for x in d if x["step"] == int(sys.argv[1])][0]; print(d["failed_links"], d["failed_switches"], d["servers_lost"])' "$2"
}

run() { # net step routing -> "accepted layers steady"
    local vcs=()
    [ "$3" = nue ] && vcs=(--set routing.vcs="$NUE_VCS")
    [ "$3" = dfsssp ] && vcs=(--set routing.vcs=0)
    # shellcheck disable=SC2046
    "$HXSIM" run $(net_args "$1") $(life "$2") --json --quiet --no-output --set routing.algorithm="$3" "${vcs[@]}" \
        --set traffic.pattern=uniform --set traffic.load="$LOAD" --set simulation.warmup_cycles="$WARMUP" \
        --set simulation.measure_cycles="$MEASURE" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.4f %d %s %d %.3f" % (d["accepted_load"], d.get("routing_layers", 0), "yes" if d["steady_state"] else "NO", d.get("routing_table_bytes", 0), d.get("routing_build_seconds", 0)))'
}

printf "%-8s %5s %6s %8s %6s | %8s %8s %8s %7s | %s\n" network years links switches lost \
    "Nue" "Up*/Dn*" "DFSSSP" "DF VCs" "paper (section 2, Fig. 2a)"
for net in $NETS; do
    for step in $STEPS; do
        read -r fl fs lost < <(faults "$net" "$step")
        declare -A acc=()
        layers=-
        for r in nue updown dfsssp; do
            read -r a l st bytes secs < <(run "$net" "$step" "$r")
            acc[$r]=$a
            [ "$st" = yes ] || acc[$r]="$a*"
            [ "$r" = dfsssp ] && layers=$l
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$net" "$step" "$fl" "$fs" "$r" "$a" "$l" "$st" "$bytes" "$secs" >>"$RAW"
        done
        if [ "$step" = 0 ]; then
            paper="no failures"
        else
            paper="agnostic (DF)SSSP degrades least; Up*/Down* more with many failures"
        fi
        printf "%-8s %5s %6s %8s %6s | %8s %8s %8s %7s | %s\n" "$net" "$step" "$fl" "$fs" "$lost" \
            "${acc[nue]}" "${acc[updown]}" "${acc[dfsssp]}" "$layers" "$paper"
    done
done
echo "# torus ${TORUS}x${TORUS}x${TORUS}, fault seed $SEED, Nue on $NUE_VCS VCs, uniform at $LOAD, ${WARMUP} + ${MEASURE} cycles; * = not steady; $(($(date +%s) - start)) s in all"

#!/usr/bin/env bash
# DAVC paper (Pascual and Navaridas, "High-Performance, Low-Complexity Deadlock Avoidance for
# Arbitrary Topologies/Routings"),
# Fig. 6: accepted load and VC utilization of the dragonfly DF(6,12,6) (876 switches, 5256
# servers; configs/dragonfly-6-12-6.toml) with Min and Valiant routing under DAVC's F_N, F_P, F_NP
# and Dally's scheme (2 VCs for Min, 3 for Valiant; paper section 7.1 and Fig. 4), uniform and
# adversarial traffic (every group sends to the next one, section 7.1).
#
# For every routing and VC scheme the script prints:
# - "needed": the VCs the scheme can use on this network, from `hxsim check-deadlock` (the highest
#   VC any route reaches, plus one; the check also proves the CDG acyclic);
# - per pattern, the accepted load at each offered load of LOADS and the VCs that carried phits in
#   the simulation at the highest load ("used", the summary's vcs_used);
# - the paper's VCs and what it says about the throughput (section 8.1; the figure's bars are not
#   given as numbers in the text).
#
# Usage: configs/davc-fig6.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if
# missing), LOADS (offered loads; default "1.0": the paper's figure is at the maximum injection
# load; e.g. "0.5 1.0" for more points), WARMUP and MEASURE (cycles; default 2000 and 2000: a few minutes per
# pattern on one core; the paper does not state its windows, use e.g. WARMUP=10000
# MEASURE=10000 for longer ones), ROUTINGS (default "dragonfly-min dragonfly-valiant"), CHECK
# (1: run check-deadlock, default; Valiant's exploration takes about a minute per scheme).
# Time: 25 minutes with the defaults on this loaded 2-core machine (16 runs of 4000 cycles on
# 5256 servers, 8 deadlock checks); each further load adds about 12 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WARMUP "60"
smoke MEASURE "60"
smoke ROUTINGS "dragonfly-min"
smoke CHECK "0"
LOADS=${LOADS:-1.0}
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
ROUTINGS=${ROUTINGS:-dragonfly-min dragonfly-valiant}
CHECK=${CHECK:-1}
RAW=${1:-/dev/null}
CFG=configs/dragonfly-6-12-6.toml
start=$(date +%s)

run() { # routing policy pattern load -> "accepted vcs_used steady vc_phits"
    "$HXSIM" run "$CFG" --json --quiet --no-output --set routing.algorithm="$1" --set routing.vc_policy="$2" \
        --set traffic.pattern="$3" --set traffic.load="$4" --set simulation.warmup_cycles="$WARMUP" \
        --set simulation.measure_cycles="$MEASURE" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.4f %d %s %s" % (d["accepted_load"], d["vcs_used"], "yes" if d["steady_state"] else "NO", ",".join(map(str, d["vc_phits"]))))'
}

needed() { # routing policy -> VCs needed by the CDG exploration
    [ "$CHECK" = 1 ] || { echo "-"; return; }
    "$HXSIM" check-deadlock "$CFG" --set routing.algorithm="$1" --set routing.vc_policy="$2" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%d%s" % (d["vcs_needed"], "" if d["verdict"] == "acyclic" else "(" + d["verdict"] + ")"))'
}

paper_vcs() { # routing policy
    local base=2
    [ "$1" = dragonfly-valiant ] && base=3
    case $2 in
        dally | davc-p | davc-np) echo "$base" ;;
        davc-n) echo ">$base" ;;
    esac
}

paper_says() { # routing policy pattern
    case "$3:$2" in
        uniform:davc-n) echo "F_N: pathological, far below Dally (congestion)" ;;
        uniform:*) echo "F_P, F_NP at the level of Dally" ;;
        adversarial-group:dally) [ "$1" = dragonfly-valiant ] && echo "Valiant+Dally: acceptable" || echo "most schemes highly congested" ;;
        adversarial-group:davc-p) [ "$1" = dragonfly-valiant ] && echo "Valiant+F_P: competitive" || echo "most schemes highly congested" ;;
        adversarial-group:*) echo "most schemes highly congested" ;;
    esac
}

name() { case $1 in davc-n) echo F_N ;; davc-p) echo F_P ;; davc-np) echo F_NP ;; dally) echo Dally ;; esac; }

header=$(printf "%-17s %-6s %6s | %-17s %5s" routing scheme needed pattern used)
for l in $LOADS; do header+=$(printf " %8s" "acc@$l"); done
header+=$(printf " %6s | %-5s  %s" steady paper "paper (section 8.1)")
echo "$header"
for routing in $ROUTINGS; do
    for policy in dally davc-n davc-p davc-np; do
        need=$(needed "$routing" "$policy")
        for pattern in uniform adversarial-group; do
            accs=""
            used=-
            steady=yes
            for l in $LOADS; do
                read -r acc u st vcp < <(run "$routing" "$policy" "$pattern" "$l")
                accs+=$(printf " %8s" "$acc")
                used=$u
                [ "$st" = yes ] || steady=NO
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$routing" "$policy" "$pattern" "$l" "$acc" "$u" "$st" "$vcp" >>"$RAW"
            done
            line=$(printf "%-17s %-6s %6s | %-17s %5s" "$routing" "$(name "$policy")" "$need" "$pattern" "$used")
            line+="$accs"
            line+=$(printf " %6s | %-5s  %s" "$steady" "$(paper_vcs "$routing" "$policy")" \
                "$(paper_says "$routing" "$policy" "$pattern")")
            echo "$line"
        done
    done
done
echo "# ${WARMUP} + ${MEASURE} cycles per run; $(($(date +%s) - start)) s in all"

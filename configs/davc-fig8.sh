#!/usr/bin/env bash
# DAVC paper (Pascual and Navaridas, "High-Performance, Low-Complexity Deadlock Avoidance for
# Arbitrary Topologies/Routings"),
# Fig. 8: accepted load and VC utilization of the random regular graph RRG(876, 23, 17) (876
# switches, 17 switch links and 6 servers each, 5256 servers; configs/rrg-876-23-17.toml) with the
# generic routings SP, ECMP and AllPath(1) under DAVC's F_N, F_P and F_NP, against SPDA with m
# spanning trees (one per VC; section 7.2), uniform and adversarial traffic. Adversarial on the
# RRG is the paper's adaptation (section 7.1): the switches are divided into groups of a given size
# (here GROUP = 12 consecutive switch ids, 73 groups, as the dragonfly's) and every group sends to
# the next one (traffic.group_switches).
#
# SPDA stops at m = 64 trees: the router's VC masks are 64-bit words. The paper goes to 128.
#
# For every scheme the script prints the accepted load at each offered load of LOADS, the VCs that
# carried phits at the highest one ("used", the summary's vcs_used) and the VCs configured, and
# with CHECK=1 the VCs the scheme needs from `hxsim check-deadlock` (the highest VC a route
# reaches, plus one; it also proves the CDG acyclic). The paper's Fig. 8 gives no numbers in its
# text; its statements (section 8.2) are printed beside.
#
# Usage: configs/davc-fig8.sh [raw.tsv]   (raw.tsv gets one line per run)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if
# missing), LOADS (default "1.0", the maximum injection load), WARMUP and MEASURE (cycles;
# default 2000 and 2000; the paper does not state its windows), TREES (SPDA's m values; default
# "1 4 16 64"; the paper's are 1 2 4 8 16 32 64 128), POLICIES (default "davc-n davc-p davc-np"),
# ROUTINGS (default "sp ecmp allpath"), PATTERNS (default "uniform adversarial-group"), GROUP
# (default 12), CHECK (default 0; 1 runs check-deadlock for every DAVC scheme: seconds for SP
# and ECMP, about a minute for AllPath).
# Time: about 45 minutes with the defaults on this loaded 2-core machine (26 runs of 4000 cycles
# on 5256 servers, 1-2 minutes each); WARMUP=1000 MEASURE=1000 halves it.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke WARMUP "60"
smoke MEASURE "60"
smoke TREES "1"
smoke POLICIES "davc-p"
smoke ROUTINGS "sp"
smoke PATTERNS "uniform"
LOADS=${LOADS:-1.0}
WARMUP=${WARMUP:-2000}
MEASURE=${MEASURE:-2000}
TREES=${TREES:-1 4 16 64}
POLICIES=${POLICIES:-davc-n davc-p davc-np}
ROUTINGS=${ROUTINGS:-sp ecmp allpath}
PATTERNS=${PATTERNS:-uniform adversarial-group}
GROUP=${GROUP:-12}
CHECK=${CHECK:-0}
RAW=${1:-/dev/null}
CFG=configs/rrg-876-23-17.toml
start=$(date +%s)

run() { # pattern load sets... -> "accepted vcs_used vcs steady vc_phits"
    local pattern=$1 load=$2
    shift 2
    local group=()
    [ "$pattern" = adversarial-group ] && group=(--set traffic.group_switches="$GROUP")
    "$HXSIM" run "$CFG" --json --quiet --no-output --set traffic.pattern="$pattern" "${group[@]}" \
        --set traffic.load="$load" --set simulation.warmup_cycles="$WARMUP" \
        --set simulation.measure_cycles="$MEASURE" "$@" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.4f %d %d %s %s" % (d["accepted_load"], d["vcs_used"], len(d["vc_phits"]), "yes" if d["steady_state"] else "NO", ",".join(map(str, d["vc_phits"]))))'
}

needed() { # sets... -> VCs needed by the CDG exploration
    [ "$CHECK" = 1 ] || { echo "-"; return; }
    "$HXSIM" check-deadlock "$CFG" --json "$@" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("%d%s" % (d["vcs_needed"], "" if d["verdict"] == "acyclic" else "(" + d["verdict"] + ")"))'
}

paper_says() { # scheme-kind pattern
    case "$1:$2" in
        davc-n:*) echo "F_N: saturates more than F_P, F_NP" ;;
        davc-p:*) echo "F_P: best DAVC function" ;;
        davc-np:*) echo "F_NP: close to F_P, fewer VCs a priori" ;;
        spda:*) echo "SPDA: far below DAVC even with up to 128 VCs; more trees help" ;;
    esac
}

name() { case $1 in davc-n) echo F_N ;; davc-p) echo F_P ;; davc-np) echo F_NP ;; *) echo "$1" ;; esac; }

header=$(printf "%-8s %-9s %6s | %-17s %4s %4s" routing scheme needed pattern used VCs)
for l in $LOADS; do header+=$(printf " %8s" "acc@$l"); done
header+=$(printf " %6s |  %s" steady "paper (section 8.2, Fig. 8)")
echo "$header"

row() { # routing scheme-label scheme-kind need sets...
    local routing=$1 label=$2 kind=$3 need=$4
    shift 4
    for pattern in $PATTERNS; do
        local accs="" used=- vcs=- steady=yes
        for l in $LOADS; do
            read -r acc u v st vcp < <(run "$pattern" "$l" "$@")
            accs+=$(printf " %8s" "$acc")
            used=$u
            vcs=$v
            [ "$st" = yes ] || steady=NO
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$routing" "$label" "$pattern" "$l" "$acc" "$u" "$st" "$vcp" >>"$RAW"
        done
        local line
        line=$(printf "%-8s %-9s %6s | %-17s %4s %4s" "$routing" "$label" "$need" "$pattern" "$used" "$vcs")
        line+="$accs"
        line+=$(printf " %6s |  %s" "$steady" "$(paper_says "$kind" "$pattern")")
        echo "$line"
    done
}

for routing in $ROUTINGS; do
    for policy in $POLICIES; do
        sets=(--set routing.algorithm="$routing" --set routing.vc_policy="$policy")
        row "$routing" "$(name "$policy")" "$policy" "$(needed "${sets[@]}")" "${sets[@]}"
    done
done
for m in $TREES; do
    row spda "m=$m" spda "$m" --set routing.algorithm=spda --set routing.vc_policy=ladder --set routing.vcs="$m"
done
echo "# ${WARMUP} + ${MEASURE} cycles per run, groups of ${GROUP} switches for adversarial; $(($(date +%s) - start)) s in all"

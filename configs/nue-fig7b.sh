#!/usr/bin/env bash
# Nue paper (Domke, Hoefler, Matsuoka, HPDC 2016; dissertation section 4), Fig. 7b: routing runtime
# and applicability on 3-D tori of growing size with 1% random link failures (4 servers per
# switch, as the paper's tori). For every size the script builds Nue's tables with 1 and with 8
# virtual layers and Up*/Down*'s tables (`hxsim analyze` reports the build) and prints: size,
# switches, failed links, Nue build time and destinations that fell back to the escape paths for
# k = 1 and k = 8, whether Nue routed the network within 8 VCs (deadlock free by construction; the
# VCs it needs are the k it is given), Up*/Down*'s build time, an empty DFSSSP/LASH column, and
# the paper's statement.
#
# Usage: configs/nue-fig7b.sh [raw.tsv]
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# SIZES (torus sides k of the k x k x k tori; default "3 4 5 6 7 8"), SEED (fault seed; default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke SIZES "3"
SIZES=${SIZES:-3 4 5 6 7 8}
SEED=${SEED:-1}
RAW=${1:-/dev/null}

build() { # side algorithm vcs -> "seconds fallbacks failed_links switches"
    local k=$1 alg=$2 vcs=$3
    local links=$((3 * k * k * k))
    local faults=$(((links + 50) / 100)) # 1% of the links, rounded
    "$HXSIM" analyze configs/torus-7x7x7.toml --json --set "topology.sides=[$k, $k, $k]" \
        --set seed="$SEED" --set faults.random_links="$faults" --set routing.algorithm="$alg" \
        --set routing.vcs="$vcs" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["routing_tables"]; print("%.3f %d %d %d" % (t["build_seconds"], t["escape_fallbacks"], d["failed_links"], d["switches"]))'
}

printf "%-9s %8s %6s %12s %9s %12s %9s %11s %12s %12s  %s\n" size switches failed "nue k=1 [s]" fallback \
    "nue k=8 [s]" fallback "within 8VC" "updown [s]" "DFSSSP/LASH" "paper (Fig. 7b)"
for k in $SIZES; do
    read -r t1 f1 failed sw < <(build "$k" nue 1)
    read -r t8 f8 _ _ < <(build "$k" nue 8)
    read -r tu _ _ _ < <(build "$k" updown 1)
    if [ "$k" -le 4 ]; then
        paper="Nue routes (100% applicability); LASH faster up to 4x4x4"
    else
        paper="Nue routes (100% applicability); faster than DFSSSP and LASH"
    fi
    line=$(printf "%-9s %8s %6s %12s %9s %12s %9s %11s %12s %12s  %s" "${k}x${k}x${k}" "$sw" "$failed" "$t1" "$f1" "$t8" "$f8" \
        "yes (1 VC)" "$tu" "-" "$paper")
    echo "$line"
    echo "$line" >>"$RAW"
done

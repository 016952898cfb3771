#!/usr/bin/env bash
# How many VCs (virtual layers) DFSSSP and LASH need on 3-D k x k x k tori (4 servers per switch)
# with 1% random link faults, and how long their tables take to build: the Nue paper's Fig. 7b
# setting (Domke, section 4: "LASH and DFSSSP for the 3-dimensional torus(7,7,7) [...] both exceed
# the limit of eight VCs"). Each row runs `hxsim check-deadlock` with routing.vcs = 0 (the layers
# needed), which also proves the result deadlock free (column "acyclic").
#
# Usage: configs/dfsssp-lash-vcs.sh [k ...]   (default: 3 4 5 6 7 8 9 10)
# Environment: HXSIM_SMOKE=1 (a run at reduced size, see configs/common.sh), HXSIM (binary; default ${CARGO_TARGET_DIR:-target}/release/hxsim, built if missing),
# FAULT_SEED (faults.seed; default: the config's seed).
# Faults: round(1% of the 3 k^3 links). Build times are wall-clock seconds of the table build alone
# (one thread), from check-deadlock's "tables" line.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
hxsim_binary
smoke SIDES "3"
SIDES=${*:-${SIDES:-3 4 5 6 7 8 9 10}}

one() { # alg k faults -> "vcs build_s acyclic"
    local out
    out=$("$HXSIM" check-deadlock configs/torus-7x7x7.toml --set "topology.sides=[$2,$2,$2]" \
        --set "faults.random_links=$3" ${FAULT_SEED:+--set faults.seed=$FAULT_SEED} \
        --set "routing.algorithm=$1" --set routing.vcs=0 2>&1) || true
    # check-deadlock's line: "routing tables built in S s, SIZE in L layer(s); ALG: N virtual layer(s) needed".
    if [[ "$out" =~ tables\ built\ in\ ([0-9.]+)\ s,.*:\ ([0-9]+)\ virtual\ layer\(s\)\ needed ]]; then
        local ok=no
        [[ "$out" == *"acyclic:"* ]] && ok=yes
        echo "${BASH_REMATCH[2]} ${BASH_REMATCH[1]} $ok"
    elif [[ "$out" =~ needs\ ([0-9]+)\ virtual\ layers ]]; then
        echo "${BASH_REMATCH[1]} - (>64)"
    else
        echo "? - error"
    fi
}

printf "%-9s %8s %8s %7s | %12s %10s %8s | %10s %10s %8s\n" torus switches servers faults \
    "DFSSSP VCs" "build s" acyclic "LASH VCs" "build s" acyclic
table=$(for k in $SIDES; do
    sw=$((k * k * k))
    faults=$(((3 * sw + 50) / 100))
    read -r dv dt da <<<"$(one dfsssp "$k" "$faults")"
    read -r lv lt la <<<"$(one lash "$k" "$faults")"
    printf "%-9s %8d %8d %7d | %12s %10s %8s | %10s %10s %8s\n" "${k}x${k}x${k}" "$sw" $((4 * sw)) "$faults" \
        "$dv" "$dt" "$da" "$lv" "$lt" "$la"
done)
echo "$table"
smoke_check "$table"

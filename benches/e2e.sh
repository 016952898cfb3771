#!/usr/bin/env bash
# End-to-end speed: hops_per_second (switch traversals per wall second) on the SurePath paper's 3-D
# HyperX (configs/hyperx-3d-8.toml: 8x8x8, 8 servers/switch, minimal routing, uniform traffic at
# load 0.6, 3000 + 3000 cycles), at 1 and 2 threads, best of 3 runs each.
# Usage: benches/e2e.sh [CONFIG] [extra hxsim args...]
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-configs/hyperx-3d-8.toml}
shift || true
cargo build --release --quiet
printf '%-8s %16s %12s %12s\n' threads hops_per_second wall_s peak_MiB
for t in 1 2; do
  best=""
  for _ in 1 2 3; do
    line=$(./target/release/hxsim run "$cfg" --threads "$t" --json --quiet --no-output "$@")
    hps=$(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(int(d["hops_per_second"]), round(d["wall_seconds"],3), round(d["peak_memory_bytes"]/2**20,1))')
    if [ -z "$best" ] || [ "${hps%% *}" -gt "${best%% *}" ]; then best=$hps; fi
  done
  read -r h w m <<<"$best"
  printf '%-8s %16s %12s %12s\n' "$t" "$h" "$w" "$m"
done

#!/usr/bin/env bash
# PolSP on uniform traffic at offered 1.0 over 33,000 link cycles, hxsim beside CAMINOS 0.6.3 (the
# SurePath paper's simulator): accepted load per 500 cycles. HyperX 4x4x4, 4 servers per switch,
# hxsim with the router matched to CAMINOS (random allocator, 21-packet source queue); CAMINOS with
# caminos-polsp-uniform-33000.cfg (the SurePath composition of ../../../shared/caminos/ style:
# Polarized on VCs 0-4 + UpDownStar on VC 5, the paper's penalties, Q + P selection; frequency
# divisor 2, so its loads are doubled and its cycles halved here).
# Usage: docs/surepath-fig4-5/uniform-collapse.sh [OUT.tsv]   (HXSIM=..., CAMINOS=... to choose
# binaries; CAMINOS is skipped when not installed). hxsim: about 1 CPU-minute; CAMINOS: about 10.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/uniform-collapse.tsv}
hx=${HXSIM:-hxsim}
cam=${CAMINOS:-caminos}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$hx" run "$here/../../configs/hyperx-3d-8.toml" --quiet --json -o "$tmp/hx.h5" \
  --set topology.sides=[4,4,4] --set topology.servers_per_switch=4 --set router.allocator=random \
  --set traffic.source_queue_packets=21 --set routing.algorithm=surepath-polarized \
  --set traffic.pattern=uniform --set traffic.load=1.0 --set simulation.warmup_cycles=3000 \
  --set simulation.measure_cycles=30000 --set output.sample_cycles=500 > "$tmp/hx.json"
if command -v "$cam" > /dev/null; then
  (cd "$tmp" && "$cam" "$here/caminos-polsp-uniform-33000.cfg" --results=cam.res > cam.log 2>&1)
fi
python3 - "$tmp" "$out" <<'PY'
import json, re, sys, h5py
tmp, out = sys.argv[1], sys.argv[2]
hx = [float(x) for x in h5py.File(f"{tmp}/hx.h5")["timeseries"]["accepted_load"][:]]
cam = []
try:
    s = open(f"{tmp}/cam.res").read()
    t = s[s.find("temporal_statistics"):]
    j = t.find("accepted_load")
    cam = [2 * float(x) for x in re.findall(r"[0-9.]+(?:e-?[0-9]+)?", t[t.find("[", j):t.find("]", j)])]
except OSError:
    pass
with open(out, "w") as f:
    f.write("cycle\thxsim_accepted\tcaminos_accepted\n")
    for i, a in enumerate(hx):
        c = f"{cam[i]:.3f}" if i < len(cam) else ""
        f.write(f"{(i + 1) * 500}\t{a:.3f}\t{c}\n")
d = json.load(open(f"{tmp}/hx.json"))
print(f"hxsim: accepted {d['accepted_load']:.4f} over the window, vc_phits {d['vc_phits']}; table in {out}")
PY

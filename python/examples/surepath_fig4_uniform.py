#!/usr/bin/env python3
"""Rebuild SurePath Fig. 4's uniform panel (HyperX 16x16, uniform traffic: accepted load, average
latency and Jain's index against offered load for Minimal, Valiant, OmniWAR, Polarized, OmniSP and
PolSP) from a sweep file.

The full-size sweep (60 points, about 30 minutes on two cores):

    hxsim sweep configs/hyperx-2d-16.toml --set traffic.pattern=uniform \\
      --set simulation.warmup_cycles=3000 --set simulation.measure_cycles=10000 \\
      --set routing.algorithm=minimal,valiant,omniwar,polarized,surepath-omni,surepath-polarized \\
      --set traffic.load=0.1:1.0:0.1 --jobs 2 -o fig4-uniform.h5
    python3 python/examples/surepath_fig4_uniform.py fig4-uniform.h5 fig4-uniform.pdf

python/tests runs it on a reduced sweep (4x4 switches, 3 loads, short windows). Any sweep with a
`traffic.load` axis and the six routings draws; points of other patterns are left out.
"""
import sys

import hxsim_results as hx

#: The routings of the paper's figure, in its legend's order.
ROUTINGS = ["minimal", "valiant", "omniwar", "polarized", "surepath-omni", "surepath-polarized"]


def main(sweep, out):
    pts = hx.points(sweep)
    if "traffic.pattern" in pts.columns:
        pts = pts[pts["traffic.pattern"] == "uniform"]
    missing = sorted(set(ROUTINGS) - set(pts["routing.algorithm"]))
    if missing:
        sys.exit(f"{sweep}: no uniform points of {', '.join(missing)}")
    # The paper's legend order, whatever order the sweep ran them in.
    order = {r: i for i, r in enumerate(ROUTINGS)}
    pts = pts[pts["routing.algorithm"].isin(ROUTINGS)]
    pts = pts.sort_values(["routing.algorithm", "traffic.load"], key=lambda c: c.map(order) if c.name == "routing.algorithm" else c)
    fig = hx.plot_load_sweep(pts, title="SurePath Fig. 4: HyperX, uniform traffic")
    fig.savefig(out, dpi=300)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

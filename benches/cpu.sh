#!/usr/bin/env bash
# Router speed in CPU time and instructions, which other jobs on a shared machine disturb far less
# than wall time (issue 34's instrument: its targets are ratios measured in one run, or instruction
# counts). On the SurePath paper's 3-D HyperX (configs/hyperx-3d-8.toml: 8x8x8, 8 servers/switch,
# uniform, load 0.6), one thread, for `minimal`, `surepath-polarized` (PolSP), `surepath-omni`
# (OmniSP) and `dal` (DAL), it prints per routing:
# - switch traversals per CPU-second of the simulation loop: the median over ROUNDS rounds, each
#   round running every routing once in turn (A B C D A B C D ...: the machine's speed drifts).
#   CPU time is the child's user + system time from getrusage, less the CPU time of a setup-only
#   run of the same routing (1 + 1 cycles) in the same round, so it is that of the loop; the
#   traversals are the run's own count, hops_per_second x wall_seconds of its --json summary
#   (the summary has no direct count; the product is exact to rounding);
# - its ratio to `minimal`: the median of the per-round ratios;
# - with --cachegrind, instructions per traversal of the simulation loop: valgrind's cachegrind
#   (--cache-sim=no) on one run of CG_WARMUP + CG_MEASURE cycles, less the instructions and
#   traversals of a setup-only run (1 + 1 cycles).
# Then, with `caminos` on PATH, CAMINOS beside hxsim on the matching network
# (/work/shared/caminos/sp_uniform_l1.0.cfg: PolSP on a 4x4x4 HyperX, 4 servers/switch, uniform,
# offered 1.0, 3000 + 3000 link cycles; hxsim with the router matched to it, see that README):
# CPU seconds of each and their ratio. Otherwise one line says CAMINOS is not installed.
#
# Usage:
#   benches/cpu.sh                     # the table: traversals/CPU-s and ratio to minimal
#   benches/cpu.sh --cachegrind        # the same plus instructions per traversal
#   benches/cpu.sh --million CYCLES    # configs/hyperx-3d-32.toml (1M endpoints), CYCLES measured after
#                                      # CYCLES/5 warm-up: CPU-seconds per cycle and peak bytes per endpoint
# Environment: HXSIM (binary; default: a release build of this checkout, built first),
# HXSIM_SMOKE=1 (a run of seconds: 20 + 20 cycles, 2 rounds, no cachegrind, no CAMINOS; its numbers
# mean nothing), ROUNDS (default 5), WARMUP and MEASURE (cycles of the timed runs, default 3000, the
# config's, and 17000: runs of 4-15 s), ROUTINGS (default "minimal surepath-polarized surepath-omni dal"; the first
# is the reference of the ratios), CG_WARMUP and CG_MEASURE (cycles under cachegrind, default 500
# and 1500), PREFETCH (`hxsim run --prefetch` of every run: auto, the default, on or off; `auto`
# decides by the core's L2 size, printed in the first line, so instruction counts of `auto` differ
# between machines: fetching ahead adds about 900-1,000 instructions per traversal), CAMINOS_CFG
# (default /work/shared/caminos/sp_uniform_l1.0.cfg).
# Run time here (shared 2-core machine, 2026-11-28): about 37 s per round for the four routings
# (minimal 3.5 s, PolSP and OmniSP 10 s each, DAL 13 s), so 3 minutes with the defaults;
# --cachegrind adds about 3.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
. configs/common.sh
smoke ROUNDS 2
smoke WARMUP 20
smoke MEASURE 20
if [ -z "${HXSIM:-}" ]; then
  cargo build --release --quiet
  HXSIM=${CARGO_TARGET_DIR:-target}/release/hxsim
fi
export HXSIM
python3 - "$@" <<'PY'
import json, os, resource, shutil, statistics, subprocess, sys, tempfile

hx = os.environ["HXSIM"]
args = sys.argv[1:]
smoke = bool(os.environ.get("HXSIM_SMOKE"))
cfg = "configs/hyperx-3d-8.toml"
prefetch = os.environ.get("PREFETCH", "auto")
names = {"minimal": "Minimal", "surepath-polarized": "PolSP", "surepath-omni": "OmniSP", "dal": "DAL"}

def run(cmd):
    """Run `cmd`; return (stdout, CPU seconds, peak RSS bytes) of that child alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu, after.ru_maxrss * 1024

def traversals(stdout):
    """The run's switch traversals: hops_per_second is traversals per wall second of the loop."""
    d = json.loads(stdout)
    return d, round(d["hops_per_second"] * d["wall_seconds"])

def hxsim(routing, warmup, measure, config=cfg, extra=()):
    return [hx, "run", config, "--threads", "1", "--json", "--quiet", "--no-output",
            "--set", f"routing.algorithm={routing}",
            "--set", f"simulation.warmup_cycles={warmup}",
            "--set", f"simulation.measure_cycles={measure}", "--prefetch", prefetch, *extra]

if args[:1] == ["--million"]:
    cycles = int(args[1]) if len(args) > 1 else 200
    warm = max(cycles // 5, 1)
    big = "configs/hyperx-3d-32.toml"
    # Setup alone (1 + 1 cycles), subtracted to get the cost of a cycle.
    _, cpu0, _ = run(hxsim("minimal", 1, 1, big))
    out, cpu, rss = run(hxsim("minimal", warm, cycles, big))
    d, trav = traversals(out.stdout)
    total = warm + cycles
    per_cycle = (cpu - cpu0) / (total - 2)
    print(f"hyperx-3d-32, {total} cycles: {cpu:.1f} CPU-s (setup {cpu0:.1f}), {per_cycle:.3f} CPU-s/cycle, "
          f"{trav / max(cpu - cpu0, 1e-9):,.0f} traversals/CPU-s, peak {rss / 2**20:.0f} MiB = "
          f"{rss / 1048576:.0f} bytes/endpoint; accepted {d['accepted_load']:.4f}")
    print(f"extrapolated to 10,000 cycles: {cpu0 + per_cycle * 10000:.0f} CPU-s "
          f"({(cpu0 + per_cycle * 10000) / 60:.1f} CPU-min)")
    sys.exit(0)

if args not in ([], ["--cachegrind"]):
    sys.exit(f"usage: benches/cpu.sh [--cachegrind | --million CYCLES] (got {' '.join(args)})")
cachegrind = args == ["--cachegrind"]
routings = os.environ.get("ROUTINGS", " ".join(names)).split()
rounds = int(os.environ.get("ROUNDS", "5"))
warmup, measure = int(os.environ.get("WARMUP", "3000")), int(os.environ.get("MEASURE", "17000"))
try:
    l2 = open("/sys/devices/system/cpu/cpu0/cache/index2/size").read().strip()
except OSError:
    l2 = "unknown"
print(f"{cfg}, one thread, {warmup} + {measure} cycles, {rounds} interleaved rounds, --prefetch {prefetch} "
      f"(L2 {l2}); binary {hx}")

# rate[r][k]: traversals per CPU-second of the loop of routing r in round k.
rate = {r: [] for r in routings}
trav = {}
setup = {r: [] for r in routings}
for k in range(rounds):
    for r in routings:
        _, cpu0, _ = run(hxsim(r, 1, 1))
        out, cpu, _ = run(hxsim(r, warmup, measure))
        _, t = traversals(out.stdout)
        # Same config and seed: the count must not change between rounds.
        if trav.setdefault(r, t) != t:
            sys.exit(f"{r}: {t} traversals in round {k + 1}, {trav[r]} before")
        setup[r].append(cpu0)
        rate[r].append(t / max(cpu - cpu0, 1e-6))
        print(f"  round {k + 1} {r}: {cpu:.2f} CPU-s (setup {cpu0:.2f})", file=sys.stderr)

instr = {}
if cachegrind and smoke:
    print("cachegrind skipped (HXSIM_SMOKE)")
elif cachegrind:
    cg_warm, cg_meas = int(os.environ.get("CG_WARMUP", "500")), int(os.environ.get("CG_MEASURE", "1500"))
    def ir(cmd):
        cg = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                             "--cachegrind-out-file=/dev/null"] + cmd,
                            check=True, capture_output=True, text=True)
        total = next(int(l.split(":")[1].replace(",", "")) for l in cg.stderr.splitlines() if "I   refs" in l)
        return total, traversals(cg.stdout)[1]
    for r in routings:
        i0, t0 = ir(hxsim(r, 1, 1))
        i1, t1 = ir(hxsim(r, cg_warm, cg_meas))
        instr[r] = (i1 - i0) / (t1 - t0)
        print(f"  cachegrind {r}: {i1:,} instructions, {t1:,} traversals; setup {i0:,}, {t0:,}", file=sys.stderr)

ref = routings[0]
head = f"{'routing':20} {'name':7} {'traversals':>11} {'setup_CPU_s':>11} {'traversals/CPU_s':>16} {'ratio':>6} {'ratio_range':>12}"
if instr:
    head += f" {'instr/traversal':>15}"
print(head)
for r in routings:
    ratios = [a / b for a, b in zip(rate[r], rate[ref])]
    line = (f"{r:20} {names.get(r, r):7} {trav[r]:>11} {statistics.median(setup[r]):>11.2f} "
            f"{statistics.median(rate[r]):>16,.0f} {statistics.median(ratios):>6.3f} "
            f"{f'{min(ratios):.2f}-{max(ratios):.2f}':>12}")
    if instr:
        line += f" {instr[r]:>15,.0f}"
    print(line)
if instr:
    print(f"(instructions per traversal: {cg_warm} + {cg_meas} cycles under cachegrind, less a 1 + 1-cycle setup run)")
print("issue 34's targets: ratio to minimal at least 0.6 and at most 3,000 instructions per traversal")

caminos = shutil.which("caminos")
caminos_cfg = os.environ.get("CAMINOS_CFG", "/work/shared/caminos/sp_uniform_l1.0.cfg")
if not caminos:
    print("CAMINOS is not installed (no `caminos` on PATH): no side-by-side run")
elif smoke:
    print("CAMINOS skipped (HXSIM_SMOKE)")
else:
    # The matching hxsim run (/work/shared/caminos/README.md): the same network, traffic and
    # cycles (CAMINOS's 6000 + 6000 base cycles at crossbar speedup 2 are 3000 + 3000 link cycles),
    # with the router matched to CAMINOS's (random allocator, a 21-packet source queue).
    match = hxsim("surepath-polarized", 3000, 3000, cfg,
                  ["--set", "topology.kind=hyperx", "--set", "topology.sides=[4, 4, 4]",
                   "--set", "topology.servers_per_switch=4", "--set", "traffic.pattern=uniform",
                   "--set", "traffic.load=1.0", "--set", "router.allocator=random",
                   "--set", "traffic.source_queue_packets=21"])
    with tempfile.TemporaryDirectory() as tmp:
        _, cpu_c, _ = run([caminos, caminos_cfg, f"--results={tmp}/results"])
    out, cpu_h, _ = run(match)
    d, t = traversals(out.stdout)
    print(f"CAMINOS ({caminos_cfg}): {cpu_c:.2f} CPU-s; hxsim on the same network: {cpu_h:.2f} CPU-s "
          f"({t:,} traversals, accepted {d['accepted_load']:.4f}); hxsim is {cpu_c / cpu_h:.1f}x faster")
PY

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
# Then, with `caminos` (CAMINOS 0.6.3, the SurePath paper's simulator: `cargo install caminos
# --locked`) on PATH, CAMINOS beside hxsim for Minimal and PolSP on this network
# (benches/caminos/*.cfg: the same HyperX, traffic, load and cycles, 1000 + 1000 link cycles; hxsim
# with the router matched to CAMINOS's: random allocator, a 21-packet source queue), three hxsim
# runs each: traversals per CPU-second of each simulator, setup-only runs subtracted, and their
# ratio. CAMINOS's traversals come from its temporal statistics (packets delivered per window
# times average hops plus one); the line also prints that count over the measured cycles and the
# one its per-hop histogram gives, which must agree. Otherwise one line says CAMINOS is not
# installed.
#
# With --stages (alone), no timed runs: instructions per traversal of the simulation loop by router
# stage, per routing (valgrind's callgrind with --dump-instr=yes on a run of CG_WARMUP + CG_MEASURE
# cycles, less a setup-only run). Each instruction counts for the first stage, in the table's order,
# that some function of its inline chain (`addr2line -i` on the binary, which needs its debug info:
# the release build's, not `--profile dist`'s) belongs to, so the release build is measured as it
# runs, inlining and all. Takes 2-3 minutes per routing here.
#
# Usage:
#   benches/cpu.sh                     # the table: traversals/CPU-s and ratio to minimal
#   benches/cpu.sh --cachegrind        # the same plus instructions per traversal
#   benches/cpu.sh --stages            # instructions per traversal by router stage
#   benches/cpu.sh --million CYCLES    # configs/hyperx-3d-32.toml (1M endpoints), CYCLES measured after
#                                      # CYCLES/5 warm-up: CPU-seconds per cycle and peak bytes per endpoint
# Environment: HXSIM (binary; default: a release build of this checkout, built first),
# HXSIM_SMOKE=1 (a run of seconds: 20 + 20 cycles, 2 rounds, no cachegrind, no CAMINOS; its numbers
# mean nothing), ROUNDS (default 5), WARMUP and MEASURE (cycles of the timed runs, default 3000, the
# config's, and 17000: runs of 4-15 s), ROUTINGS (default "minimal surepath-polarized surepath-omni dal"; the first
# is the reference of the ratios), CG_WARMUP and CG_MEASURE (cycles under cachegrind, default 500
# and 1500), PREFETCH (`hxsim run --prefetch` of every run: auto, the default, on or off; `auto`
# decides by the core's L2 size, printed in the first line, so instruction counts of `auto` differ
# between machines: fetching ahead adds about 900-1,000 instructions per traversal), SETS (`--set`s
# for every hxsim run, space-separated, e.g. SETS="router.reroute=output-frees").
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
import json, os, re, resource, shutil, statistics, subprocess, sys, tempfile

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

sets = [a for kv in os.environ.get("SETS", "").split() for a in ("--set", kv)]
routings = os.environ.get("ROUTINGS", " ".join(names)).split()
cg_warm, cg_meas = int(os.environ.get("CG_WARMUP", "500")), int(os.environ.get("CG_MEASURE", "1500"))

def hxsim(routing, warmup, measure, config=cfg, extra=()):
    return [hx, "run", config, "--threads", "1", "--json", "--quiet", "--no-output",
            "--set", f"routing.algorithm={routing}",
            "--set", f"simulation.warmup_cycles={warmup}",
            "--set", f"simulation.measure_cycles={measure}", "--prefetch", prefetch, *sets, *extra]

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

# Router stages by the functions that implement them (substrings of their demangled names), in
# the order they are tried: the cache hints of --prefetch first (some are methods of the cost
# levels); selection and candidate generation before the request step that inlines them; the cost
# levels' upkeep before the steps that call it; the switch step's own code and the engine last
# (every stage runs inside the switch step, whose name names the engine's `Partition` trait).
STAGES = [
    ("fetching ahead (--prefetch)", ["prefetch", "fetch_switch", "fetch_tags", "fetch_entry", "fetch_output"]),
    ("selection", ["select_each", "select_classes", "select_head", "router::select"]),
    ("candidates (routing)", ["candidate_runs", "candidate_classes", "written_classes", "cached_runs",
                              "head_cache", "class_candidates", "fresh_runs", "learning_ranges",
                              "complete_escape", "hyperx_classes", "::advance"]),
    ("cost levels (re-costing, masks)", ["recost", "CostLevels", "port_changed"]),
    ("request step, the rest", ["request_step"]),
    ("grant step", ["grant_step"]),
    ("link stage", ["link_stage"]),
    ("servers", ["server_stage", "network::servers", "deliver_to_server"]),
    ("arrivals, credits in", ["apply_inbox", "NetPartition::apply", "Partition>::deliver"]),
    ("credits out", ["send_due_credits"]),
    ("switch step, the rest", ["Partition>::step"]),
    ("engine (windows, message wheel)", ["^hxsim::engine::", "^<hxsim::engine::"]),
]

def in_stage(pats, chain):
    """Whether a function of `chain` matches one of `pats` (a leading `^`: its name starts so)."""
    return any(f.startswith(p[1:]) if p[0] == "^" else p in f for f in chain for p in pats)

def stage_instructions(cmd):
    """Instructions of `cmd` (an hxsim run) in hxsim's binary, by stage, and its traversals."""
    with tempfile.TemporaryDirectory() as tmp:
        out_file = f"{tmp}/callgrind.out"
        cg = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-strings=no",
                             "--compress-pos=no", f"--callgrind-out-file={out_file}"] + cmd,
                            check=True, capture_output=True, text=True)
        binary, cost, obj, after_call = os.path.realpath(hx), {}, None, False
        for line in open(out_file):
            if line.startswith("ob="):
                obj = os.path.realpath(line[3:].strip())
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line.startswith("0x"):
                if after_call:
                    after_call = False
                elif obj == binary:
                    addr, _, n = line.split()[:3]
                    cost[int(addr, 16)] = cost.get(int(addr, 16), 0) + int(n)
    addrs = sorted(cost)
    lines = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", hx], input="\n".join(map(hex, addrs)),
                           check=True, capture_output=True, text=True).stdout.splitlines()
    by_stage, chain, addr = {}, [], None
    def close():
        if addr is not None:
            st = next((name for name, pats in STAGES if in_stage(pats, chain)), "other")
            by_stage[st] = by_stage.get(st, 0) + cost[addr]
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            close()
            addr, chain, i = int(lines[i], 16), [], i + 1
        else:
            chain.append(lines[i])  # a function name, then its file:line
            i += 2
    close()
    return by_stage, traversals(cg.stdout)[1]

def need(*tools):
    """Exit with a message where a tool this mode runs is not installed."""
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        sys.exit(f"benches/cpu.sh {' '.join(args)} needs {' and '.join(missing)} (e.g. apt-get install valgrind binutils)")

if args == ["--stages"]:
    need("valgrind", "addr2line")
    if smoke:
        cg_warm, cg_meas = 5, 5
    rows = {}
    for r in routings:
        s0, t0 = stage_instructions(hxsim(r, 1, 1))
        s1, t1 = stage_instructions(hxsim(r, cg_warm, cg_meas))
        rows[r] = {st: (s1.get(st, 0) - s0.get(st, 0)) / max(t1 - t0, 1) for st in set(s0) | set(s1)}
        print(f"  callgrind {r}: {sum(s1.values()):,} instructions in hxsim, {t1:,} traversals; setup "
              f"{sum(s0.values()):,}, {t0:,}", file=sys.stderr)
    print(f"{cfg}, one thread, {cg_warm} + {cg_meas} cycles under callgrind less a 1 + 1-cycle setup run, "
          f"--prefetch {prefetch}: instructions per traversal by stage")
    print(f"{'stage':34}" + "".join(f" {names.get(r, r):>8}" for r in routings))
    for st in [name for name, _ in STAGES] + ["other"]:
        print(f"{st:34}" + "".join(f" {rows[r].get(st, 0):>8,.0f}" for r in routings))
    print(f"{'all':34}" + "".join(f" {sum(rows[r].values()):>8,.0f}" for r in routings))
    if any(rows[r].get("other", 0) > 0.5 * sum(rows[r].values()) for r in routings):
        print(f"most instructions are in no stage: has {hx} its debug info (the release profile's, "
              "not --profile dist's)?")
    sys.exit(0)

if args not in ([], ["--cachegrind"]):
    sys.exit(f"usage: benches/cpu.sh [--cachegrind | --stages | --million CYCLES] (got {' '.join(args)})")
cachegrind = args == ["--cachegrind"]
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
    need("valgrind")
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

def caminos_traversals(text, servers, packet_phits, step):
    """Switch traversals of a CAMINOS run from its results file: per temporal window (every
    `step` base cycles, its `statistics_temporal_step`, over the whole run), packets delivered (accepted load is
    phits per server per base cycle of a full step) times (average hops + 1), as CAMINOS counts
    links and hxsim switches. Also the same count over the measured window from its per-hop
    histogram (`total_packet_per_hop_count`), for the windows that make up the measured cycles."""
    def floats(key, after=0):
        m = re.compile(key + r":\s*\[([^\]]*)\]").search(text, after)
        return [float(x) for x in m.group(1).replace(",", " ").split()]
    temporal = text.index("temporal_statistics")
    accepted = floats("accepted_load", temporal)
    hops = floats("average_packet_hops", temporal)
    per_window = [a * step * servers / packet_phits * (h + 1) for a, h in zip(accepted, hops)]
    histogram = floats("total_packet_per_hop_count")
    measured = sum(n * (h + 1) for h, n in enumerate(histogram))
    return per_window, measured

def caminos_side_by_side(label, cam_cfg, routing):
    """CAMINOS on `cam_cfg` beside hxsim's `routing` on the same network, traffic and cycles
    (benches/caminos/README.md: CAMINOS's base cycles at crossbar speedup 2 are half as many link
    cycles), the router matched (random allocator, a 21-packet source queue): traversals per
    CPU-second of each, setup-only runs (1 + 1 cycles) subtracted, and their ratio."""
    text = open(cam_cfg).read()
    get = lambda key: int(re.search(key + r":\s*(\d+)", text).group(1))
    warm, meas, step = get("warmup"), get("measured"), get("statistics_temporal_step")
    servers = get("tasks")
    load = float(re.search(r"load:\s*([0-9.]+)", text).group(1))
    if warm % step or meas % step:
        sys.exit(f"{cam_cfg}: warmup and measured must be multiples of statistics_temporal_step")
    with tempfile.TemporaryDirectory() as tmp:
        setup_cfg = f"{tmp}/setup.cfg"
        open(setup_cfg, "w").write(re.sub(r"measured:\s*\d+", "measured: 2",
                                          re.sub(r"warmup:\s*\d+", "warmup: 2", text)))
        _, cam0, _ = run([caminos, setup_cfg, f"--results={tmp}/setup"])
        _, cam1, _ = run([caminos, cam_cfg, f"--results={tmp}/results"])
        result = open(f"{tmp}/results").read()
    if servers != 4096:
        sys.exit(f"{cam_cfg}: {servers} tasks, not the 4096 servers of {cfg}")
    cam_trav, check, measured = caminos_count_check(result, servers, step, warm, meas)
    cam_rate = cam_trav / max(cam1 - cam0, 1e-6)
    cmd = lambda w, m: hxsim(routing, w, m, cfg, ["--set", f"traffic.load={2 * load}",
                                                   "--set", "router.allocator=random",
                                                   "--set", "traffic.source_queue_packets=21"])
    rates, acc = [], None
    for _ in range(3):
        _, hx0, _ = run(cmd(1, 1))
        out, hx1, _ = run(cmd(warm // 2, meas // 2))
        d, t = traversals(out.stdout)
        rates.append(t / max(hx1 - hx0, 1e-6))
        acc = d["accepted_load"]
    hx_rate = statistics.median(rates)
    cam_acc = 2 * float(re.search(r"accepted_load:\s*([0-9.]+)", result).group(1))
    print(f"{label}: CAMINOS {cam_cfg} {cam1:.1f} CPU-s (setup {cam0:.2f}), {cam_trav:,.0f} traversals "
          f"(measured cycles: {check:,.0f} by its temporal statistics, {measured:,.0f} by its per-hop counts), "
          f"{cam_rate:,.0f} traversals/CPU-s; hxsim {routing} (random allocator, 21-packet source queue, "
          f"{warm // 2} + {meas // 2} cycles, median of 3): {hx_rate:,.0f} traversals/CPU-s, accepted {acc:.4f} "
          f"(CAMINOS {cam_acc:.4f}); "
          f"hxsim/CAMINOS {hx_rate / cam_rate:.0f}x")

def caminos_count_check(result, servers, step, warm, meas):
    """CAMINOS's traversals over the whole run, and over the measured cycles by its temporal
    statistics and by its per-hop histogram, which must agree (within 0.1%: the statistics are
    rounded averages). Packets of 16 phits, as in benches/caminos/."""
    per_window, measured = caminos_traversals(result, servers, 16, step)
    check = sum(per_window[warm // step:(warm + meas) // step])
    if abs(check - measured) > 1e-3 * measured:
        sys.exit(f"CAMINOS's traversals over the measured cycles: {check:,.0f} by its temporal statistics, "
                 f"{measured:,.0f} by its per-hop counts")
    return sum(per_window), check, measured

caminos = shutil.which("caminos")
if smoke:
    # The count of CAMINOS's traversals, on a results file CAMINOS 0.6.3 wrote for
    # benches/caminos/minimal-uniform-8x8x8.cfg (2000 + 2000 base cycles, windows of 1000).
    total, check, measured = caminos_count_check(open("benches/caminos/minimal-uniform-8x8x8.result").read(),
                                                 4096, 1000, 2000, 2000)
    print(f"CAMINOS skipped (HXSIM_SMOKE); its stored results count {total:,.0f} traversals, the measured "
          f"cycles' {check:,.0f} by the temporal statistics and {measured:,.0f} by the per-hop counts")
elif not caminos:
    print("CAMINOS is not installed (no `caminos` on PATH): no side-by-side run")
else:
    # CAMINOS configs of this network (benches/caminos/, from the SurePath paper's composition in
    # /work/shared/caminos/ with 8x8x8 sides, 8 servers per switch, offered 0.3 per base cycle,
    # i.e. the config's 0.6 per link cycle, 2000 + 2000 base cycles).
    for label, cam_cfg, routing in [("Minimal", "benches/caminos/minimal-uniform-8x8x8.cfg", "minimal"),
                                    ("PolSP", "benches/caminos/polsp-uniform-8x8x8.cfg", "surepath-polarized")]:
        if routing in routings:
            caminos_side_by_side(label, cam_cfg, routing)
PY

//! Failures during a run (`[[faults.events]]`): every packet is accounted for, layouts agree bit
//! for bit, a deterministic routing strands what it cannot route instead of hanging, and the
//! network recovers to the throughput of one built with the fault from the start.

use hxsim::config::{parse_str, Config};
use hxsim::engine::Progress;
use hxsim::sim::{run, RunOptions, RunResult};

const BASE: &str = "seed = 7
[topology]
kind = \"hyperx\"
sides = [4, 4]
servers_per_switch = 4
[traffic]
pattern = \"uniform\"
load = 0.5
[output]
sample_cycles = 100
";

fn cfg(sets: &[&str]) -> Config {
    parse_str(BASE, "test", &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("valid test config")
}

fn run_with(c: &Config, threads: usize) -> RunResult {
    let opts = RunOptions { threads, ..RunOptions::default() };
    run(c, &opts, &Progress::default()).expect("the run completes")
}

/// A fixed workload of 800 phits per server (every packet generated is delivered, lost or
/// stranded once the run drains), with `events` and `routing`.
fn drained(routing: &str, events: &str, extra: &[&str]) -> Config {
    let a = format!("routing.algorithm={routing}");
    let e = format!("faults.events={events}");
    let mut sets = vec![
        a.as_str(),
        e.as_str(),
        "traffic.mode=fixed",
        "traffic.workload_phits=800",
        "simulation.warmup_cycles=0",
        "simulation.measure_cycles=100000",
    ];
    sets.extend_from_slice(extra);
    cfg(&sets)
}

#[test]
fn every_packet_is_delivered_lost_or_stranded() {
    let events = "[{cycle=300, links=[[0,0],[5,1]]}, {cycle=900, switches=[10]}, {cycle=1500, random_links=3}]";
    for routing in ["minimal", "surepath-polarized", "polarized", "valiant"] {
        for reconfigure in ["0", "400"] {
            let rc = format!("faults.reconfigure_cycles={reconfigure}");
            let r = run_with(&drained(routing, events, &[&rc]), 1);
            let s = &r.summary;
            assert!(r.complete, "{routing}, {reconfigure}: drains");
            let (lost, stranded) = (s.packets_lost.unwrap(), s.packets_stranded.unwrap());
            assert_eq!(
                s.packets_generated,
                s.packets_delivered + lost + stranded,
                "{routing}, reconfigure {reconfigure}: generated = delivered + lost + stranded"
            );
            assert_eq!(s.failure_events.len(), 3);
            assert_eq!(lost, s.failure_events.iter().map(|e| e.packets_lost).sum::<u64>());
            // Per source and per destination server, every loss once.
            let (by_src, by_dst) = &r.server_losses;
            assert_eq!(by_src.iter().sum::<u64>(), lost + stranded, "{routing}");
            assert_eq!(by_dst.iter().sum::<u64>(), lost + stranded, "{routing}");
            let rebuilt = s.failure_events[0].rebuilt_at;
            assert_eq!(rebuilt, Some(300 + reconfigure.parse::<u64>().unwrap()), "{routing}");
        }
    }
}

#[test]
fn waiting_for_the_rebuild_strands_fewer_packets() {
    // Minimal withdraws a failed link until its rebuild 600 cycles later: a packet whose one
    // minimal hop it was is dropped at once with "drop", and waits for the new tables with "wait".
    let events = "[{cycle=300, links=[[0,0],[5,1],[9,3]]}]";
    let rc = "faults.reconfigure_cycles=600";
    let drop = run_with(&drained("minimal", events, &[rc]), 1).summary;
    let wait = run_with(&drained("minimal", events, &[rc, "faults.stranded=\"wait\""]), 2).summary;
    for s in [&drop, &wait] {
        assert_eq!(s.packets_generated, s.packets_delivered + s.packets_lost.unwrap() + s.packets_stranded.unwrap());
    }
    assert!(
        wait.packets_stranded.unwrap() < drop.packets_stranded.unwrap(),
        "wait strands {:?}, drop {:?}",
        wait.packets_stranded,
        drop.packets_stranded
    );
    let e = parse_str(BASE, "t", &["faults.stranded=\"hold\"".into()]).unwrap_err().to_string();
    assert!(e.contains("faults.stranded"), "{e}");
}

#[test]
fn dor_strands_what_it_cannot_route_and_finishes() {
    // DOR cannot route around a failed link: it is never rebuilt, and the packets whose one port
    // failed are counted as stranded rather than blocking until the watchdog fires.
    let r = run_with(&drained("dor", "[{cycle=200, links=[[0,0]]}]", &[]), 1);
    let s = &r.summary;
    assert!(r.complete);
    assert!(s.packets_stranded.unwrap() > 0, "DOR strands the packets that need the link");
    assert_eq!(s.failure_events[0].rebuilt_at, None);
    assert_eq!(s.packets_generated, s.packets_delivered + s.packets_lost.unwrap() + s.packets_stranded.unwrap());
    // The command says so, and why.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["run", concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml"), "-q", "--no-output"])
        .args(["--set", "routing.algorithm=dor", "--set", "faults.events=[{cycle=2500, links=[[0,0]]}]"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("stranded") && err.contains("dor cannot route around failed links"), "{err}");
    // The summary table has the events' rows.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("failure events") && table.contains("lost at events"), "{table}");
}

#[test]
fn layouts_agree_with_events() {
    let events =
        "faults.events=[{cycle=700, links=[[0,0],[3,2]]}, {cycle=1300, switches=[6]}, {cycle=1700, repair_switches=[6]}]";
    for routing in ["minimal", "surepath-polarized"] {
        let a = format!("routing.algorithm={routing}");
        let c = cfg(&[
            &a,
            events,
            "faults.reconfigure_cycles=250",
            "simulation.warmup_cycles=500",
            "simulation.measure_cycles=1500",
        ]);
        let one = run_with(&c, 1);
        for threads in [2, 3] {
            let other = run_with(&c, threads);
            let key = |r: &RunResult| {
                let mut s = r.summary.clone();
                (s.wall_seconds, s.hops_per_second, s.peak_memory_bytes) = (0.0, 0.0, 0);
                for e in &mut s.failure_events {
                    e.rebuild_seconds = None;
                }
                format!("{:?} {:?} {:?}", serde_json::to_string(&s).unwrap(), r.stats.samples, r.server_accepted)
            };
            assert_eq!(key(&one), key(&other), "{routing}: 1 and {threads} threads");
        }
    }
}

#[test]
fn throughput_returns_to_that_of_the_network_built_with_the_fault() {
    // One link fails at cycle 1000; measured from 3000 on, the accepted load is that of the same
    // network with the link failed from the start, within 2%.
    for routing in ["minimal", "surepath-polarized"] {
        let a = format!("routing.algorithm={routing}");
        let window = ["simulation.warmup_cycles=3000", "simulation.measure_cycles=12000", "traffic.load=0.6"];
        let mut live: Vec<&str> = vec![&a, "faults.events=[{cycle=1000, links=[[0,0]]}]"];
        live.extend(window);
        let mut fixed: Vec<&str> = vec![&a, "faults.links=[[0,0]]"];
        fixed.extend(window);
        let (x, y) = (run_with(&cfg(&live), 1).summary, run_with(&cfg(&fixed), 1).summary);
        let rel = (x.accepted_load - y.accepted_load).abs() / y.accepted_load;
        assert!(rel < 0.02, "{routing}: {} after the event, {} built with the fault", x.accepted_load, y.accepted_load);
        let e = &x.failure_events[0];
        assert!(e.recovery_cycles.is_some_and(|c| c <= 2000), "{routing}: recovers: {e:?}");
    }
}

#[test]
fn a_repaired_network_carries_what_the_fault_free_one_does() {
    // A link and a switch fail at 1000 and are repaired at 2500; measured from 4000 on, the
    // accepted load is the fault-free network's within 2%, and the repaired switch's servers send
    // again.
    for routing in ["minimal", "surepath-polarized"] {
        let a = format!("routing.algorithm={routing}");
        let window = ["simulation.warmup_cycles=4000", "simulation.measure_cycles=10000", "traffic.load=0.6"];
        let mut live: Vec<&str> = vec![
            &a,
            "faults.reconfigure_cycles=200",
            "faults.events=[{cycle=1000, links=[[0,0]], switches=[9]}, {cycle=2500, repair_links=[[0,0]], repair_switches=[9]}]",
        ];
        live.extend(window);
        let mut whole: Vec<&str> = vec![&a];
        whole.extend(window);
        let x = run_with(&cfg(&live), 2);
        let y = run_with(&cfg(&whole), 1).summary;
        let rel = (x.summary.accepted_load - y.accepted_load).abs() / y.accepted_load;
        assert!(rel < 0.02, "{routing}: {} repaired, {} fault-free", x.summary.accepted_load, y.accepted_load);
        // Switch 9's servers are 36..40 (4 per switch).
        assert!(x.server_injected[36..40].iter().all(|&p| p > 0), "{routing}: {:?}", &x.server_injected[36..40]);
        let e = &x.summary.failure_events;
        assert_eq!((e[0].links, e[0].switches, e[1].repaired_links, e[1].repaired_switches), (1, 1, 1, 1));
    }
    let r = run_with(
        &drained(
            "surepath-polarized",
            "[{cycle=200, links=[[0,0]], switches=[9]}, {cycle=600, repair_links=[[0,0]], repair_switches=[9]}]",
            &[],
        ),
        1,
    );
    let s = &r.summary;
    assert_eq!(s.packets_generated, s.packets_delivered + s.packets_lost.unwrap() + s.packets_stranded.unwrap());
}

#[test]
fn a_lifetime_plays_during_the_run() {
    // Nue section 2's lifetime in 4 steps of 2 years, one step every 1,200 cycles: the run starts
    // from the base set and ends with the lifetime's last set (as many failed switches as `hxsim
    // faults` reports for step 4), one event per step that failed something.
    let lifetime = "faults.lifetime={link_rate=0.05, switch_rate=0.02, years=8, steps=4, every_cycles=1200}";
    let c = cfg(&["routing.algorithm=surepath-polarized", lifetime]);
    let r = run_with(&c, 2).summary;
    let topo = hxsim::sim::build_topology(&c).unwrap();
    let l = c.faults.lifetime.as_ref().unwrap();
    let steps = hxsim::topology::faults::lifetime::simulate(&*topo, &Default::default(), l, c.seed, None);
    let last = steps.last().unwrap();
    assert_eq!(r.failure_events.iter().map(|e| e.switches).sum::<u64>(), last.failed_switches as u64);
    for e in &r.failure_events {
        assert_eq!(e.cycle % 1200, 0, "{e:?}");
        assert!(e.links + e.switches > 0);
    }
    assert!(!r.failure_events.is_empty());
    let both = [lifetime, "faults.events=[{cycle=100, links=[[0,0]]}]"];
    let e = hxsim::sim::validate(&cfg(&both), None).unwrap_err().to_string();
    assert!(e.contains("faults.lifetime.every_cycles"), "{e}");
}

#[test]
fn bad_events_are_refused_with_their_key() {
    let err = |sets: &[&str]| hxsim::sim::validate(&cfg(sets), None).unwrap_err().to_string();
    let e = parse_str(BASE, "t", &["faults.events=[{cycle=0, links=[[0,0]]}]".into()]).unwrap_err().to_string();
    assert!(e.contains("faults.events[0].cycle"), "{e}");
    let e = parse_str(BASE, "t", &["faults.events=[{cycle=9, links=[[0,0]]}, {cycle=5, switches=[1]}]".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("faults.events[1].cycle"), "{e}");
    let e = err(&["faults.events=[{cycle=10, links=[[0,99]]}]"]);
    assert!(e.contains("faults.events[0].links[0]"), "{e}");
    let e = err(&["faults.events=[{cycle=99999999, links=[[0,0]]}]"]);
    assert!(e.contains("faults.events[0].cycle"), "{e}");
    let e = err(&["faults.events=[{cycle=10, repair_links=[[0,0]]}]"]);
    assert!(e.contains("faults.events[0].repair_links[0]") && e.contains("alive"), "{e}");
    let e = err(&["faults.events=[{cycle=10, switches=[1]}, {cycle=20, repair_links=[[1,0]]}]"]);
    assert!(e.contains("faults.events[1].repair_links[0]") && e.contains("repair_switches"), "{e}");
    let e = err(&["faults.events=[{cycle=10, repair_switches=[3]}]"]);
    assert!(e.contains("faults.events[0].repair_switches[0]"), "{e}");
    // Failing every port of switch 0 cuts its servers off.
    let e = err(&["faults.events=[{cycle=10, links=[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]}]"]);
    assert!(e.contains("faults.events[0]") && e.contains("splits"), "{e}");
}

#[test]
fn check_deadlock_checks_every_change_of_a_table_routing() {
    // One transition per event, and the exit code says whether all of them (and the network
    // before the events) are deadlock free.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["check-deadlock", concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml"), "--json"])
        .args(["--set", "routing.algorithm=nue", "--set"])
        .arg("faults.events=[{cycle=100, links=[[0,0],[5,1]]}, {cycle=200, switches=[10]}]")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    let t = v["transitions"].as_array().expect("transitions");
    assert_eq!(t.len(), 2);
    let free = |r: &serde_json::Value| r["verdict"] == "acyclic" || r["verdict"] == "duato";
    let all = free(&v) && t.iter().all(|x| free(&x["report"]));
    assert_eq!(out.status.code(), Some(if all { 0 } else { 1 }), "{v}");
}

#[test]
fn retransmission_delivers_what_failures_lose() {
    // Every loss (at an event, or stranded after one) is either sent again by its source or
    // given up; with the same events as `every_packet_is_delivered_lost_or_stranded`, everything
    // generated is delivered but what is given up: the packets to and from switch 10, which fails.
    let events = "[{cycle=300, links=[[0,0],[5,1]]}, {cycle=900, switches=[10]}, {cycle=1500, random_links=3}]";
    for routing in ["minimal", "surepath-polarized", "valiant"] {
        let r =
            run_with(&drained(routing, events, &["faults.reconfigure_cycles=400", "faults.retransmit_cycles=300"]), 1);
        let s = &r.summary;
        assert!(r.complete, "{routing}: drains");
        let (lost, stranded) = (s.packets_lost.unwrap(), s.packets_stranded.unwrap());
        let (again, abandoned) = (s.packets_retransmitted.unwrap(), s.packets_abandoned.unwrap());
        assert!(lost + stranded > 0, "{routing}: the events lose packets");
        assert_eq!(lost + stranded, again + abandoned, "{routing}: each loss is sent again or given up");
        assert_eq!(s.packets_generated, s.packets_delivered + abandoned, "{routing}: the rest is delivered");
        let without = run_with(&drained(routing, events, &["faults.reconfigure_cycles=400"]), 1).summary;
        assert!(s.packets_delivered > without.packets_delivered, "{routing}: more delivered than without");
    }
    // Links only, with SurePath (whose escape always has a route): nothing is given up.
    let r =
        run_with(&drained("surepath-polarized", "[{cycle=300, random_links=6}]", &["faults.retransmit_cycles=200"]), 2);
    let s = &r.summary;
    assert!(s.packets_lost.unwrap() > 0 && s.packets_abandoned == Some(0), "{s:?}");
    assert_eq!(s.packets_generated, s.packets_delivered);
}

#[test]
fn a_packet_is_sent_again_at_most_the_retry_limit() {
    // DOR's one route to some destinations crosses the failed link for good: each of those
    // packets is stranded again every time it is sent, so it is given up after exactly `limit`
    // retransmissions, and (losses) = (limit + 1) x (given up).
    for limit in [1u64, 3] {
        let l = format!("faults.retransmit_limit={limit}");
        let r = run_with(&drained("dor", "[{cycle=200, links=[[0,0]]}]", &["faults.retransmit_cycles=100", &l]), 1);
        let s = &r.summary;
        let losses = s.packets_lost.unwrap() + s.packets_stranded.unwrap();
        let abandoned = s.packets_abandoned.unwrap();
        assert!(abandoned > 0, "{s:?}");
        assert_eq!(losses, (limit + 1) * abandoned, "limit {limit}");
        assert_eq!(s.packets_retransmitted, Some(limit * abandoned));
        assert_eq!(s.packets_generated, s.packets_delivered + abandoned);
    }
}

#[test]
fn a_collective_interrupted_by_a_failure_completes_later() {
    // A ring all-reduce over the 64 servers; three links fail mid-run. With retransmission the
    // collective completes, every message arrives once, and it takes longer than without the
    // failure; the layouts agree.
    let kernel = ["workload.kernel=allreduce-ring", "workload.bytes=65536"];
    for routing in ["minimal", "surepath-polarized"] {
        let a = format!("routing.algorithm={routing}");
        let mut whole: Vec<&str> = vec![&a];
        whole.extend(kernel);
        let clean = run_with(&cfg(&whole), 1).summary;
        // A failure that hits packets of this ring (Minimal strands the ones its VC ladder leaves
        // without a route; SurePath loses those on a failed wire or in a failed link's buffers):
        // whether a packet is there at the event's cycle depends on the run, so the event is the
        // first of a few cycles 10 apart at which the failure loses one.
        let mut hit = None;
        for at in (1500..1700).step_by(10) {
            let mut failing = whole.clone();
            let event = format!("faults.events=[{{cycle={at}, links=[[0,0],[5,1],[10,2]]}}]");
            failing.extend([event.as_str(), "faults.reconfigure_cycles=300", "faults.retransmit_cycles=500"]);
            let c = cfg(&failing);
            let one = run_with(&c, 1);
            if one.summary.packets_retransmitted > Some(0) {
                hit = Some((c, one));
                break;
            }
        }
        let (c, one) =
            hit.unwrap_or_else(|| panic!("{routing}: no failure between cycles 1500 and 1690 lost a packet"));
        let s = &one.summary;
        assert!(one.complete, "{routing}");
        assert_eq!(s.messages_delivered, clean.messages_delivered, "{routing}");
        assert_eq!(s.packets_delivered, s.packets_generated, "{routing}: nothing given up");
        assert_eq!(s.packets_abandoned, Some(0));
        // A resent packet comes at least the timeout late.
        assert!(s.makespan_cycles.unwrap() > clean.makespan_cycles.unwrap(), "{routing}: {s:?}");
        let three = run_with(&c, 3);
        let key = |r: &RunResult| {
            let mut s = r.summary.clone();
            (s.wall_seconds, s.hops_per_second, s.peak_memory_bytes) = (0.0, 0.0, 0);
            s.failure_events.iter_mut().for_each(|e| e.rebuild_seconds = None);
            serde_json::to_string(&s).unwrap()
        };
        assert_eq!(key(&one), key(&three), "{routing}: 1 and 3 threads");
    }
}

#[test]
fn lost_packets_free_their_injection_window() {
    // With an end-to-end window of 2 packets a server whose outstanding packets are lost would
    // wait for their acknowledgements for ever; the loss frees the slot (or the resent packet
    // keeps it), so the fixed workload drains either way.
    let events = "[{cycle=200, links=[[0,0],[5,1],[9,3]]}]";
    let window = ["router.injection_throttle=window", "router.injection_window=2", "faults.reconfigure_cycles=300"];
    for retransmit in [None, Some("faults.retransmit_cycles=200")] {
        let mut extra = window.to_vec();
        extra.extend(retransmit);
        let r = run_with(&drained("minimal", events, &extra), 1);
        let s = &r.summary;
        assert!(r.complete, "{retransmit:?}");
        assert!(s.packets_lost.unwrap() + s.packets_stranded.unwrap() > 0, "{retransmit:?}: {s:?}");
        let gone = match retransmit {
            None => s.packets_lost.unwrap() + s.packets_stranded.unwrap(),
            Some(_) => s.packets_abandoned.unwrap(),
        };
        assert_eq!(s.packets_generated, s.packets_delivered + gone, "{retransmit:?}");
    }
}

#[test]
fn retransmission_is_refused_where_it_cannot_work() {
    let err = |sets: &[&str]| hxsim::sim::validate(&cfg(sets), None).unwrap_err().to_string();
    let ring = "workload.kernel=allreduce-ring";
    let event = "faults.events=[{cycle=500, links=[[0,0]]}]";
    let e = err(&[ring, event]);
    assert!(e.contains("faults.retransmit_cycles") && e.contains("[workload]"), "{e}");
    // Switch 3 runs tasks 12 to 15.
    let e = err(&[ring, "faults.events=[{cycle=500, switches=[3]}]", "faults.retransmit_cycles=500"]);
    assert!(e.contains("faults.events[0]") && e.contains("switch 3"), "{e}");
    let e = err(&[ring, event, "faults.retransmit_cycles=500", "faults.unreachable=\"drop\""]);
    assert!(e.contains("faults.unreachable"), "{e}");
    let e = err(&[event, "faults.retransmit_cycles=10", "link.latency=40"]);
    assert!(e.contains("faults.retransmit_cycles") && e.contains("40"), "{e}");
    let e = parse_str(BASE, "t", &["faults.retransmit_limit=0".into()]).unwrap_err().to_string();
    assert!(e.contains("faults.retransmit_limit"), "{e}");
    let e = parse_str(BASE, "t", &["faults.retransmit_cycles=20000".into()]).unwrap_err().to_string();
    assert!(e.contains("faults.retransmit_cycles") && e.contains("simulation.watchdog_cycles"), "{e}");
    let e = parse_str(BASE, "t", &["faults.retransmit_cycles=0".into()]).unwrap_err().to_string();
    assert!(e.contains("faults.retransmit_cycles"), "{e}");
}

#[test]
fn shapes_fail_during_the_run() {
    // A row segment of 3 switches loses the C(3, 2) = 3 links among them (SurePath section 6's
    // shapes, as faults.shapes places them); a second event's cross of length 3 through the same
    // anchor adds only the links not failed yet: C(3, 2) in dimension 0, the same 3, plus C(3, 2) in
    // dimension 1.
    let events = "faults.events=[{cycle=400, shapes=[{kind=\"row\", length=3}]}, \
                  {cycle=800, shapes=[{kind=\"cross\", length=3}]}]";
    let r = run_with(&cfg(&["routing.algorithm=surepath-polarized", events]), 2).summary;
    let links: Vec<u64> = r.failure_events.iter().map(|e| e.links).collect();
    let (row, cross) = (3, 3 + 3);
    assert_eq!(links, vec![row, cross - row]);
    assert!(r.failure_events.iter().all(|e| e.switches == 0));
    // A HyperZ Z-node fails with its switches (Adda 2023, section 3).
    let hz = parse_str(
        "[topology]\nkind = \"hyperz\"\nsides = [2, 2]\nzones = [2, 2]\nroots = [1, 2]\n\
         [routing]\nalgorithm = \"surepath-minimal\"\n[simulation]\nwarmup_cycles = 300\nmeasure_cycles = 600\n",
        "t",
        &["faults.events=[{cycle=300, shapes=[{kind=\"znode\", at=[1, 1]}]}]".into()],
    )
    .unwrap();
    let z = run_with(&hz, 1).summary;
    let topo = hxsim::sim::build_topology(&hz).unwrap();
    let znode =
        hxsim::topology::faults::ShapeConfig { kind: "znode".into(), at: Some(vec![1, 1]), ..Default::default() };
    let placed = znode.place(&*topo, "faults.shapes[0]").unwrap();
    assert!(!placed.switches.is_empty());
    assert_eq!(z.failure_events[0].switches, placed.switches.len() as u64);
    // Bad shape keys are named inside their event.
    let e = parse_str(BASE, "t", &["faults.events=[{cycle=9, shapes=[{kind=\"ring\"}]}]".into()]).unwrap_err();
    assert!(e.to_string().contains("faults.events[0].shapes[0].kind"), "{e}");
    let e = hxsim::sim::validate(&cfg(&["faults.events=[{cycle=9, shapes=[{kind=\"row\", length=9}]}]"]), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("faults.events[0].shapes[0].length"), "{e}");
}

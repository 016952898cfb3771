//! Tests of the fault model: shape link counts derived from `K_n` formulas (SurePath section 6),
//! nested sequences, the separate fault seed, files, HyperZ shapes, the lifetime model.

use super::*;
use crate::topology::{Fabric, HyperX, HyperZ};
use std::sync::Arc;

/// Links of a complete graph `K_m`.
fn k(m: usize) -> usize {
    m * (m - 1) / 2
}

fn hx(sides: &[usize]) -> Arc<dyn Topology> {
    Arc::new(HyperX::new(sides, &vec![1; sides.len()], sides[0]))
}

fn shape(topo: &dyn Topology, toml: &str) -> Result<FaultSet, ConfigError> {
    let s: ShapeConfig = toml::from_str(toml).unwrap();
    let mut f = s.place(topo, "faults.shapes[0]")?;
    f.normalize(topo);
    Ok(f)
}

#[test]
fn surepath_2d_shapes_remove_120_100_110_links() {
    // SurePath section 6, Fig. 7, on the 16x16 HyperX: Row = K_16, Subplane = K_5^2, Cross = 2 K_11.
    let t = hx(&[16, 16]);
    let row = shape(&*t, "kind = \"row\"").unwrap();
    assert_eq!(row.links.len(), k(16));
    assert_eq!(row.links.len(), 120);
    let sub = shape(&*t, "kind = \"subplane\"").unwrap();
    assert_eq!(sub.links.len(), 2 * 5 * k(5));
    assert_eq!(sub.links.len(), 100);
    let cross = shape(&*t, "kind = \"cross\"").unwrap();
    assert_eq!(cross.links.len(), 2 * k(11));
    assert_eq!(cross.links.len(), 110);
    // The centre keeps a margin of 16 - 11 = 5 links per dimension: 10 of its 30 (the paper: 2/3 gone).
    let net = Fabric::new(t.clone(), &cross);
    assert_eq!((0..30).filter(|&p| net.alive(0, p)).count(), 10);
    assert!(LiveGraph::new(&*t, &cross).servers_connected());
}

#[test]
fn surepath_3d_shapes_remove_28_81_63_links_and_the_star_centre_keeps_3() {
    // SurePath section 6, Fig. 9, on the 8x8x8 HyperX: Row = K_8, Subcube = K_3^3, Star = 3 K_7.
    let t = hx(&[8, 8, 8]);
    assert_eq!(shape(&*t, "kind = \"row\"").unwrap().links.len(), k(8));
    assert_eq!(k(8), 28);
    assert_eq!(shape(&*t, "kind = \"subcube\"").unwrap().links.len(), 3 * 3 * 3 * k(3));
    assert_eq!(3 * 9 * k(3), 81);
    let star = shape(&*t, "kind = \"star\"").unwrap();
    assert_eq!(star.links.len(), 3 * k(7));
    assert_eq!(star.links.len(), 63);
    let net = Fabric::new(t.clone(), &star);
    assert_eq!((0..21).filter(|&p| net.alive(0, p)).count(), 3, "the star's centre keeps 3 links");
    // Placed elsewhere, the centre is the anchor.
    let star = shape(&*t, "kind = \"star\"\nat = [3, 4, 5]").unwrap();
    let net = Fabric::new(t.clone(), &star);
    let c = 3 + 8 * (4 + 8 * 5);
    assert_eq!((0..21).filter(|&p| net.alive(c, p)).count(), 3);
}

#[test]
fn shapes_generalise_to_other_sides_and_dimensions() {
    let t = Arc::new(HyperX::new(&[4, 5, 6], &[1, 1, 1], 2)) as Arc<dyn Topology>;
    assert_eq!(shape(&*t, "kind = \"row\"\ndim = 2").unwrap().links.len(), k(6));
    assert_eq!(shape(&*t, "kind = \"row\"\ndim = 1\nlength = 3").unwrap().links.len(), k(3));
    assert_eq!(shape(&*t, "kind = \"subcube\"\nsize = 2").unwrap().links.len(), 3 * 4 * k(2));
    assert_eq!(shape(&*t, "kind = \"subplane\"\ndims = [1, 2]\nsize = 4").unwrap().links.len(), 2 * 4 * k(4));
    assert_eq!(shape(&*t, "kind = \"cross\"\ndims = [0, 2]\nlength = 3").unwrap().links.len(), 2 * k(3));
    assert_eq!(shape(&*t, "kind = \"star\"\nlength = 4").unwrap().links.len(), 3 * k(4));
    // Segments wrap around the row (a row is a complete graph, so any 3 of its switches are a K_3).
    assert_eq!(shape(&*t, "kind = \"row\"\nat = [3, 0, 0]\nlength = 3").unwrap().links.len(), k(3));
    // Trunked links count one by one.
    let t = Arc::new(HyperX::new(&[4, 4], &[2, 1], 1)) as Arc<dyn Topology>;
    assert_eq!(shape(&*t, "kind = \"row\"").unwrap().links.len(), 2 * k(4));
}

#[test]
fn shapes_that_do_not_fit_name_the_key_and_what_is_allowed() {
    let t = hx(&[8, 8]);
    let e = shape(&*t, "kind = \"cross\"").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].length") && e.contains("11") && e.contains("between 2 and 8"), "{e}");
    let e = shape(&*t, "kind = \"row\"\nat = [8, 0]").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].at") && e.contains("below its side"), "{e}");
    let e = shape(&*t, "kind = \"row\"\ndim = 2").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].dim") && e.contains("below 2"), "{e}");
    let e = shape(&*t, "kind = \"row\"\nsize = 3").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].size") && e.contains("kind, at, dim, length"), "{e}");
    let e = shape(&*t, "kind = \"blob\"").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].kind") && e.contains("subplane"), "{e}");
    let e = shape(&*t, "kind = \"znode\"").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].kind") && e.contains("row, subplane"), "{e}");
    let e = shape(&*hx(&[8]), "kind = \"star\"\nlength = 3").unwrap_err().to_string();
    assert!(e.contains("at least 2 dimensions"), "{e}");
}

#[test]
fn random_sequences_are_nested() {
    // SurePath Figs. 1 and 6 sweep the number of faults along one sequence: the first N faults are
    // the same whatever the total.
    let t = hx(&[8, 8, 8]);
    let long = FaultSet::random_links(&*t, 200, 7).unwrap();
    for n in [0, 1, 10, 80, 199] {
        assert_eq!(FaultSet::random_links(&*t, n, 7).unwrap().links[..], long.links[..n]);
    }
    let long = random_switches(&*t, 100, 7);
    for n in [1, 33, 99] {
        assert_eq!(random_switches(&*t, n, 7)[..], long[..n]);
    }
    // Distinct elements.
    let mut l = FaultSet::random_links(&*t, 2000, 3).unwrap().links;
    l.sort();
    l.dedup();
    assert_eq!(l.len(), 2000);
}

#[test]
fn fault_seed_is_independent_of_the_run_seed() {
    let t = hx(&[4, 4, 4]);
    let mut c = FaultConfig { random_links: 12, random_switches: 2, ..Default::default() };
    // Without faults.seed the run's seed draws the faults (as before faults.seed existed).
    assert_ne!(c.build(&*t, 1).unwrap(), c.build(&*t, 2).unwrap());
    assert_eq!(c.build(&*t, 1).unwrap().links, FaultSet::random_links(&*t, 12, 1).unwrap().links);
    // With it, the run's seed no longer matters, and faults.seed alone changes the set.
    c.seed = Some(9);
    assert_eq!(c.build(&*t, 1).unwrap(), c.build(&*t, 2).unwrap());
    let other = FaultConfig { seed: Some(10), ..c.clone() };
    assert_ne!(c.build(&*t, 1).unwrap(), other.build(&*t, 1).unwrap());
}

#[test]
fn explicit_lists_and_files() {
    let t = hx(&[4, 4]);
    let c = FaultConfig { links: vec![vec![0, 0], vec![1, 0]], switches: vec![5], ..Default::default() };
    let f = c.build(&*t, 1).unwrap();
    // Port 0 of switch 1 leads to switch 0, whose port 0 leads to switch 1: the same link, once.
    assert_eq!(f.links, vec![(0, 0)]);
    assert_eq!(f.switches, vec![5]);
    let net = Fabric::new(t.clone(), &f);
    assert!(!net.switch_alive(5) && net.switch_alive(4));
    assert_eq!(net.failed_links(), 1 + 6, "switch 5's 6 links go down with it");
    assert_eq!(net.failed_switches(), 1);
    assert_eq!(net.live_servers(), 16 * 4 - 4);

    let e = FaultConfig { links: vec![vec![16, 0]], ..Default::default() }.build(&*t, 1).unwrap_err().to_string();
    assert!(e.contains("faults.links[0]") && e.contains("below 16"), "{e}");
    let e = FaultConfig { links: vec![vec![0, 6]], ..Default::default() }.build(&*t, 1).unwrap_err().to_string();
    assert!(e.contains("faults.links[0]") && e.contains("below 6"), "{e}");
    let e = FaultConfig { switches: vec![99], ..Default::default() }.build(&*t, 1).unwrap_err().to_string();
    assert!(e.contains("faults.switches[0]") && e.contains("below 16"), "{e}");

    let j = file::parse(&*t, "f.json", r#"{"links": [[0, 0], [2, 3]], "switches": [7]}"#).unwrap();
    assert_eq!((j.links.len(), j.switches.clone()), (2, vec![7]));
    let c = file::parse(&*t, "f.csv", "kind,switch,port\n# x\nlink,0,0\n\nlink, 2, 3\nswitch,7\n").unwrap();
    assert_eq!(c, j);
    let e = file::parse(&*t, "f.json", "{\"links\": [[0]]}").unwrap_err().to_string();
    assert!(e.contains("faults.file") && e.contains("f.json") && e.contains("JSON object"), "{e}");
    let e = file::parse(&*t, "f.csv", "link,0\n").unwrap_err().to_string();
    assert!(e.contains("faults.file") && e.contains("line 1") && e.contains("link,SWITCH,PORT"), "{e}");
    let e = file::parse(&*t, "f.csv", "link,0,9\n").unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("below 6"), "{e}");
    let e = FaultConfig { file: Some("/nonexistent/f.csv".into()), ..Default::default() }.build(&*t, 1);
    assert!(e.unwrap_err().to_string().contains("faults.file"));
}

#[test]
fn hyperz_znode_and_plane() {
    // HyperZ 4x4 of Z-nodes Z_2(4, 2; 1, 2; 1, 1): level 1 has R_1 = 2 nodes per Z-node, level 2 R_2 = 2.
    let z = HyperZ::new(vec![4, 4], vec![4, 2], vec![1, 2], vec![1, 1], vec![vec![1, 1], vec![1, 1]]).unwrap();
    let t: Arc<dyn Topology> = Arc::new(z.clone());
    let f = shape(&*t, "kind = \"znode\"\nat = [1, 2]").unwrap();
    let per_znode: usize = (1..=2).map(|l| z.nodes_per_znode(l)).sum();
    assert_eq!(f.switches.len(), per_znode);
    // A plane of level 1 is a 4x4 Hamming graph: 2 * 4 * K_4 side links.
    let f = shape(&*t, "kind = \"plane\"\nlevel = 1\nindex = 1").unwrap();
    assert_eq!(f.links.len(), 2 * 4 * k(4));
    assert!(f.links.iter().all(|&(s, _)| z.level(s) == 1 && z.flat(s) == 1));
    let e = shape(&*t, "kind = \"plane\"\nlevel = 3").unwrap_err().to_string();
    assert!(e.contains("faults.shapes[0].level") && e.contains("1..2"), "{e}");
}

#[test]
fn components_count_unreachable_ordered_pairs() {
    // K_3 with 2 servers per switch; cutting switch 0 off leaves parts of 2 and 4 servers:
    // 6^2 - 2^2 - 4^2 = 16 ordered pairs.
    let t: Arc<dyn Topology> = Arc::new(HyperX::new(&[3], &[1], 2));
    let f = FaultSet { links: vec![(0, 0), (0, 1)], switches: vec![] };
    let c = LiveGraph::new(&*t, &f).components();
    assert_eq!(c.unreachable_pairs, 16);
    assert_eq!(c.example_pair(&*t), Some((2, 0)));
    // A failed switch's servers are gone, not unreachable.
    let f = FaultSet { links: vec![], switches: vec![0] };
    let c = LiveGraph::new(&*t, &f).components();
    assert_eq!((c.unreachable_pairs, c.live_servers), (0, 4));
}

#[test]
fn lifetime_accumulates_repairs_critical_failures_and_is_nested() {
    let t = hx(&[4, 4, 4]);
    let l = LifetimeConfig { link_rate: 0.2, switch_rate: 0.05, years: 8.0, steps: 8, step: None, every_cycles: 0 };
    let all = lifetime::simulate(&*t, &FaultSet::default(), &l, 3, None);
    assert_eq!(all.len(), 9);
    assert!(all[0].faults.is_empty());
    for w in all.windows(2) {
        // Failures accumulate: every link and switch failed at one step is failed at the next.
        assert!(w[0].faults.switches.iter().all(|s| w[1].faults.switches.contains(s)));
        let dead_next = LiveGraph::new(&*t, &w[1].faults);
        assert!(w[0].faults.links.iter().all(|&(s, p)| !dead_next.alive(s, p)));
        assert_eq!(w[1].failed_switches, w[0].failed_switches + w[1].new_switches);
        assert!(LiveGraph::new(&*t, &w[1].faults).servers_connected(), "critical failures are repaired");
    }
    let last = all.last().unwrap();
    assert!(last.failed_links > 50 && last.failed_switches > 0, "{last:?}");
    assert!(all.iter().map(|s| s.repaired_links + s.repaired_switches).sum::<usize>() > 0);
    // Stopping early gives the same first steps.
    let part = lifetime::simulate(&*t, &FaultSet::default(), &l, 3, Some(4));
    assert_eq!(part.len(), 5);
    assert_eq!(part[4].faults, all[4].faults);
    // The config's step picks the state.
    let c = FaultConfig {
        lifetime: Some(LifetimeConfig { step: Some(4), ..l.clone() }),
        seed: Some(3),
        ..Default::default()
    };
    assert_eq!(c.build(&*t, 1).unwrap(), all[4].faults);
    // Defaults: Nue section 2.
    let d = LifetimeConfig::default();
    assert_eq!((d.link_rate, d.switch_rate, d.years, d.steps), (0.01, 0.01, 8.0, 8));
}

#[test]
fn fabric_with_switch_faults_matches_bfs_on_the_live_graph() {
    let t = hx(&[4, 4, 4]);
    let c = FaultConfig {
        random_links: 10,
        random_switches: 3,
        shapes: vec![toml::from_str("kind = \"row\"").unwrap()],
        ..Default::default()
    };
    let f = c.build(&*t, 5).unwrap();
    let net = Fabric::new(t.clone(), &f);
    let g = LiveGraph::new(&*t, &f);
    assert_eq!(net.failed_links(), g.failed_links());
    assert_eq!(net.failed_switches(), 3);
    let r = g.reach();
    let d = net.distance_stats();
    assert_eq!(r.diameter, d.diameter);
    assert!((r.average_distance - d.average_distance).abs() < 1e-12);
    for s in 0..64 {
        for p in 0..9 {
            assert_eq!(net.alive(s, p), g.alive(s, p));
        }
    }
}

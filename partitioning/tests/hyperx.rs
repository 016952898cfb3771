//! Partitioning HyperX graphs: validity, balance, analytic block cuts, multilevel vs block.

use partitioning::{partition, quality, Graph, Method, PartitionError, IMBALANCE_TOLERANCE};

fn hyperx(sides: &[usize]) -> Graph {
    Graph::hyperx(sides, 1)
}

/// Asserts that `assign` is a valid assignment of `g` to `parts` nonempty parts.
fn assert_valid(g: &Graph, assign: &[u32], parts: usize) {
    assert_eq!(assign.len(), g.num_vertices());
    let mut count = vec![0usize; parts];
    for &p in assign {
        assert!((p as usize) < parts, "part id {p} >= {parts}");
        count[p as usize] += 1;
    }
    assert!(count.iter().all(|&c| c > 0), "empty part among sizes {count:?}");
}

fn cut(g: &Graph, method: Method, parts: usize) -> u64 {
    let a = partition(g, parts, method, 42).unwrap();
    assert_valid(g, &a, parts);
    quality(g, &a, parts).cut_edges
}

#[test]
fn hyperx_helper_has_expected_size() {
    // 8x8x8: each switch has 3 * 7 = 21 neighbours, so 512 * 21 / 2 = 5376 edges.
    let g = hyperx(&[8, 8, 8]);
    assert_eq!(g.num_vertices(), 512);
    assert_eq!(g.num_edges(), 5376);
    g.validate().unwrap();
}

#[test]
fn every_method_returns_a_valid_assignment() {
    let graphs = [
        hyperx(&[4, 4, 4]),
        hyperx(&[8, 8, 8]),
        hyperx(&[16, 16]),
        hyperx(&[3, 5, 7]),
        hyperx(&[5]),
        // Disconnected: 10 isolated vertices and one edge.
        Graph::from_edges(12, &[(3, 9, 2)]),
    ];
    for g in &graphs {
        let n = g.num_vertices();
        for parts in [1, 2, 3, 4, 7, 8, n] {
            if parts > n {
                continue;
            }
            for m in Method::ALL {
                let a = partition(g, parts, m, 1).unwrap();
                assert_valid(g, &a, parts);
            }
        }
    }
}

#[test]
fn block_is_exactly_balanced_on_8x8x8() {
    let g = hyperx(&[8, 8, 8]);
    for parts in [2, 4, 8] {
        let a = partition(&g, parts, Method::Block, 0).unwrap();
        let q = quality(&g, &a, parts);
        assert_eq!(q.part_weights, vec![512 / parts as u64; parts]);
        assert_eq!(q.imbalance, 1.0);
        // Slabs along dimension 2: every part is a set of whole x2-planes.
        for (v, &p) in a.iter().enumerate() {
            assert_eq!(p as usize, (v / 64) / (8 / parts));
        }
    }
}

#[test]
fn block_cuts_match_analytic_values() {
    // Block cuts only the slowest dimension. Each line along it is a complete graph K_S; split
    // into P groups of S/P switches it loses C(S,2) - P*C(S/P,2) edges, and there are V/S lines.
    //
    // 8x8x8 (64 lines along x2, K8 has 28 edges):
    //   P=2: 28 - 2*C(4,2) = 16 per line -> 64*16 = 1024 (= 64 lines * 4*4 pairs across)
    //   P=4: 28 - 4*C(2,2) = 24 per line -> 1536
    //   P=8: 28 - 0        = 28 per line -> 1792
    let g = hyperx(&[8, 8, 8]);
    assert_eq!(cut(&g, Method::Block, 2), 1024);
    assert_eq!(cut(&g, Method::Block, 4), 1536);
    assert_eq!(cut(&g, Method::Block, 8), 1792);

    // 16x16 (16 lines along x1, K16 has 120 edges):
    //   P=2: 120 - 2*C(8,2)=56 -> 64 per line -> 1024
    //   P=4: 120 - 4*C(4,2)=24 -> 96 per line -> 1536
    //   P=8: 120 - 8*C(2,2)=8  -> 112 per line -> 1792
    let g = hyperx(&[16, 16]);
    assert_eq!(cut(&g, Method::Block, 2), 1024);
    assert_eq!(cut(&g, Method::Block, 4), 1536);
    assert_eq!(cut(&g, Method::Block, 8), 1792);

    // 4x4x4 (16 lines along x2, K4 has 6 edges):
    //   P=2: 6 - 2*1 = 4 per line -> 64
    //   P=4: 6 per line -> 96
    //   P=8: parts are half x2-planes (two x1-rows each): all 96 x2-edges are cut, plus in every
    //        x1-line (16 of them) the K4 is split 2+2, cutting 4 -> 96 + 64 = 160
    let g = hyperx(&[4, 4, 4]);
    assert_eq!(cut(&g, Method::Block, 2), 64);
    assert_eq!(cut(&g, Method::Block, 4), 96);
    assert_eq!(cut(&g, Method::Block, 8), 160);
}

#[test]
fn multilevel_cuts_no_more_than_block_on_hyperx() {
    for sides in [&[4, 4, 4][..], &[8, 8, 8], &[16, 16], &[3, 5, 7]] {
        let g = hyperx(sides);
        for parts in [2, 4, 8] {
            let block = cut(&g, Method::Block, parts);
            let ml = cut(&g, Method::Multilevel, parts);
            assert!(ml <= block, "{sides:?} P={parts}: multilevel cut {ml} > block cut {block}");
        }
    }
}

#[test]
fn multilevel_respects_balance_constraint() {
    for sides in [&[8, 8, 8][..], &[16, 16], &[3, 5, 7]] {
        let g = hyperx(sides);
        let n = g.num_vertices();
        for parts in [2, 3, 4, 8, 16] {
            let a = partition(&g, parts, Method::Multilevel, 9).unwrap();
            let q = quality(&g, &a, parts);
            let max = *q.part_weights.iter().max().unwrap();
            let lim = ((n as f64 / parts as f64) * (1.0 + IMBALANCE_TOLERANCE)).floor() as u64;
            let lim = lim.max(n.div_ceil(parts) as u64);
            assert!(max <= lim, "{sides:?} P={parts}: max part {max} > {lim}");
        }
    }
}

#[test]
fn multilevel_is_deterministic() {
    let g = hyperx(&[8, 8, 8]);
    for parts in [2, 5, 8] {
        let a = partition(&g, parts, Method::Multilevel, 1234).unwrap();
        let b = partition(&g, parts, Method::Multilevel, 1234).unwrap();
        assert_eq!(a, b);
    }
    let g = grid_scrambled(24, 24);
    let a = partition(&g, 6, Method::Multilevel, 7).unwrap();
    let b = partition(&g, 6, Method::Multilevel, 7).unwrap();
    assert_eq!(a, b);
}

/// A `w x h` 2-D mesh whose vertex ids are a fixed pseudo-random permutation of the natural order,
/// so that contiguous id ranges are meaningless and only a real partitioner finds a small cut.
fn grid_scrambled(w: u32, h: u32) -> Graph {
    let n = w * h;
    // Multiplication by an odd constant modulo a power of two >= n, skipping values >= n, is a
    // bijection on 0..n when iterated (cycle walking).
    let m = n.next_power_of_two();
    let perm = |mut x: u32| loop {
        x = (x.wrapping_mul(2_654_435_761) ^ 0x5bd1) & (m - 1);
        if x < n {
            break x;
        }
    };
    let id = |x: u32, y: u32| perm(x + w * y);
    let mut edges = Vec::new();
    for y in 0..h {
        for x in 0..w {
            if x + 1 < w {
                edges.push((id(x, y), id(x + 1, y), 1));
            }
            if y + 1 < h {
                edges.push((id(x, y), id(x, y + 1), 1));
            }
        }
    }
    Graph::from_edges(n as usize, &edges)
}

#[test]
fn multilevel_finds_good_cuts_without_coordinates() {
    // A 24x24 mesh in scrambled order: the best 2-way cut is 24 edges and the best 4-way cut 48
    // (quadrants); block and round-robin on scrambled ids cut about half of the 1104 edges.
    let g = grid_scrambled(24, 24);
    assert_eq!(g.num_edges(), 2 * 24 * 23);
    let mut seen: Vec<u32> = g.adjncy.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 576, "the id scrambling is a bijection");
    for (parts, good) in [(2, 40), (4, 80)] {
        let ml = cut(&g, Method::Multilevel, parts);
        let block = cut(&g, Method::Block, parts);
        assert!(ml <= good, "P={parts}: multilevel cut {ml} > {good}");
        assert!(block > 3 * good, "P={parts}: block cut {block} unexpectedly small");
    }
}

#[test]
fn round_robin_is_modulo() {
    let g = hyperx(&[4, 4]);
    let a = partition(&g, 3, Method::RoundRobin, 0).unwrap();
    assert_eq!(a, (0..16).map(|v| v % 3).collect::<Vec<u32>>());
}

#[test]
fn block_uneven_sizes_differ_by_at_most_one() {
    let g = hyperx(&[3, 5, 7]);
    for parts in 1..=20 {
        let a = partition(&g, parts, Method::Block, 0).unwrap();
        let q = quality(&g, &a, parts);
        let max = *q.part_weights.iter().max().unwrap();
        let min = *q.part_weights.iter().min().unwrap();
        assert!(max - min <= 1, "P={parts}: {:?}", q.part_weights);
        assert!(a.windows(2).all(|w| w[0] <= w[1]), "contiguous ranges");
    }
}

#[test]
fn quality_of_a_split_four_cycle() {
    // 0-1-2-3-0 with latencies 5, 3, 5, 7, split {0,1} | {2,3}: edges 1-2 and 3-0 are cut.
    let g = Graph::from_edges(4, &[(0, 1, 5), (1, 2, 3), (2, 3, 5), (3, 0, 7)]);
    let a = partition(&g, 2, Method::Block, 0).unwrap();
    assert_eq!(a, vec![0, 0, 1, 1]);
    let q = quality(&g, &a, 2);
    assert_eq!(q.cut_edges, 2);
    assert_eq!(q.cut_weight, 2);
    assert_eq!(q.lookahead, Some(3));
    assert_eq!(q.imbalance, 1.0);
    assert_eq!(q.part_weights, vec![2, 2]);
    assert_eq!(q.neighbours_max, 1);
}

#[test]
fn lookahead_with_mixed_latencies() {
    // HyperX 4x4 where links along dimension 1 take 10 cycles and links along dimension 0 take 2.
    let sides = [4usize, 4];
    let mut edges = Vec::new();
    for v in 0..16usize {
        let (x, y) = (v % 4, v / 4);
        for x2 in x + 1..4 {
            edges.push((v as u32, (x2 + 4 * y) as u32, 2));
        }
        for y2 in y + 1..4 {
            edges.push((v as u32, (x + 4 * y2) as u32, 10));
        }
    }
    let g = Graph::from_edges(16, &edges).with_coords(sides.to_vec());
    // Block cuts along dimension 1 only: lookahead 10.
    let a = partition(&g, 2, Method::Block, 0).unwrap();
    assert_eq!(quality(&g, &a, 2).lookahead, Some(10));
    // Round-robin cuts dimension-0 links too: lookahead 2.
    let a = partition(&g, 2, Method::RoundRobin, 0).unwrap();
    assert_eq!(quality(&g, &a, 2).lookahead, Some(2));
    // One part: nothing is cut.
    let a = partition(&g, 1, Method::Multilevel, 0).unwrap();
    assert_eq!(quality(&g, &a, 1).lookahead, None);
}

#[test]
fn errors_are_reported() {
    let g = hyperx(&[2, 2]);
    assert_eq!(partition(&g, 0, Method::Block, 0), Err(PartitionError::ZeroParts));
    let err = partition(&g, 5, Method::Multilevel, 0).unwrap_err();
    assert_eq!(err, PartitionError::TooManyParts { parts: 5, vertices: 4 });
    assert!(err.to_string().contains("5"), "{err}");
    let msg = "spectral".parse::<Method>().unwrap_err().to_string();
    assert!(msg.contains("block") && msg.contains("round-robin") && msg.contains("multilevel"));
}

#[test]
fn weighted_vertices_are_balanced_by_weight() {
    let mut g = hyperx(&[8, 8, 8]);
    g.vwgt = (0..512).map(|v| 1 + (v % 3) as u32).collect();
    let total: u64 = g.vwgt.iter().map(|&w| w as u64).sum();
    for parts in [2, 4, 8] {
        let avg = total as f64 / parts as f64;
        let b = partition(&g, parts, Method::Block, 0).unwrap();
        let qb = quality(&g, &b, parts);
        // Prefix split by weight: every part within one heaviest vertex (3) of the average.
        for &w in &qb.part_weights {
            assert!((w as f64 - avg).abs() <= 3.0, "{:?}", qb.part_weights);
        }
        let m = partition(&g, parts, Method::Multilevel, 3).unwrap();
        assert_valid(&g, &m, parts);
        let qm = quality(&g, &m, parts);
        let lim = ((avg * (1.0 + IMBALANCE_TOLERANCE)).floor() as u64).max(total.div_ceil(parts as u64) + 2);
        assert!(qm.part_weights.iter().all(|&w| w <= lim), "{:?}", qm.part_weights);
        assert!(qm.cut_weight <= qb.cut_weight, "P={parts}: {} > {}", qm.cut_weight, qb.cut_weight);
    }
}

#[test]
fn trunked_links_are_minimised_as_weight() {
    // Two 4-cliques joined by a single link, and one internal pair of each clique trunked 5 times:
    // the best bisection cuts only the bridge.
    let mut edges = Vec::new();
    for base in [0u32, 4] {
        for a in 0..4 {
            for b in a + 1..4 {
                edges.push((base + a, base + b, 1));
            }
        }
        for _ in 0..4 {
            edges.push((base, base + 1, 1));
        }
    }
    edges.push((3, 4, 3));
    let g = Graph::from_edges(8, &edges);
    let a = partition(&g, 2, Method::Multilevel, 0).unwrap();
    let q = quality(&g, &a, 2);
    assert_eq!((q.cut_edges, q.cut_weight, q.lookahead), (1, 1, Some(3)));
}

#[test]
fn multilevel_never_worse_than_block_across_seeds() {
    for sides in [&[4, 4, 4][..], &[3, 5, 7], &[6, 6]] {
        let g = hyperx(sides);
        for parts in 2..=8 {
            let block = cut(&g, Method::Block, parts);
            for seed in 0..8 {
                let a = partition(&g, parts, Method::Multilevel, seed).unwrap();
                assert_valid(&g, &a, parts);
                let ml = quality(&g, &a, parts).cut_edges;
                assert!(ml <= block, "{sides:?} P={parts} seed={seed}: {ml} > {block}");
            }
        }
    }
}

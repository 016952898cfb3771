//! Partitions a HyperX graph with every method and prints quality and run time.
//!
//! ```text
//! cargo run --release -p partitioning --example hyperx_partition -- 32x32x32 2 16
//! ```

use partitioning::{partition, quality, Graph, Method};
use std::time::Instant;

fn hyperx(sides: &[usize]) -> Graph {
    Graph::hyperx(sides, 1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sides: Vec<usize> =
        args.first().map(|s| s.split('x').map(|x| x.parse().expect("side")).collect()).unwrap_or_else(|| vec![8, 8, 8]);
    let parts: Vec<usize> =
        if args.len() > 1 { args[1..].iter().map(|p| p.parse().expect("parts")).collect() } else { vec![2, 4, 8] };
    let t = Instant::now();
    let g = hyperx(&sides);
    println!("HyperX {sides:?}: {} vertices, {} edges (built in {:.2?})", g.num_vertices(), g.num_edges(), t.elapsed());
    for &p in &parts {
        for m in Method::ALL {
            let t = Instant::now();
            let a = partition(&g, p, m, 1).expect("partition");
            let dt = t.elapsed();
            let q = quality(&g, &a, p);
            println!(
                "P={p:<4} {m:<12} cut={:<8} imbalance={:.4} lookahead={:?} neighbours_max={} time={dt:.2?}",
                q.cut_edges, q.imbalance, q.lookahead, q.neighbours_max
            );
        }
    }
}

//! Criterion bench of the router kernel: simulated cycles of the SurePath paper's 3-D HyperX
//! (8x8x8, 8 servers per switch) with minimal routing under uniform traffic, below and at
//! saturation, plus the small quickstart network. Reports time per run; `benches/e2e.sh` reports
//! `hops_per_second` end to end.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hxsim::config;
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions};

fn bench_kernel(c: &mut Criterion) {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut g = c.benchmark_group("router_kernel");
    g.sample_size(10);
    for (name, file, load, cycles) in [
        ("hyperx-3d-8/uniform/0.6", "configs/hyperx-3d-8.toml", 0.6, 400u64),
        ("hyperx-3d-8/uniform/1.0", "configs/hyperx-3d-8.toml", 1.0, 400),
        ("quickstart/uniform/0.5", "configs/quickstart.toml", 0.5, 2000),
    ] {
        let sets = vec![
            format!("traffic.load={load}"),
            "simulation.warmup_cycles=0".to_string(),
            format!("simulation.measure_cycles={cycles}"),
        ];
        let cfg = config::load(std::path::Path::new(&format!("{root}/{file}")), &sets).expect("bench config");
        g.throughput(Throughput::Elements(cycles));
        g.bench_function(name, |b| {
            b.iter(|| {
                sim::run(&cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default())
                    .expect("bench run")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_kernel);
criterion_main!(benches);

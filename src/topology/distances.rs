//! Exact distances on a faulty HyperX without all-pairs tables: the closed form (Hamming distance)
//! plus a sparse list of the pairs it gets wrong.
//!
//! **Why it is exact.** In a HyperX (Ahn et al., SC09, section 3.1) every dimension is a complete
//! graph, so the fault-free shortest paths from `a` to `b` at Hamming distance `h` are exactly the
//! `h!` orders in which the `h` differing coordinates are set to `b`'s values, one hop each: their
//! switches are the `2^h` "corners" `x_S` (`b`'s coordinates on the dimensions in `S`, `a`'s
//! elsewhere) and their links `x_S -> x_{S+d}`. Faults only remove links (a failed switch removes
//! all of its links), so `d_f(a,b) >= h`, and `d_f(a,b) = h` exactly when one of these monotone
//! paths through the subset lattice is entirely alive, which [`SparseDistances::geodesic_alive`]
//! decides with no memory: `h` link checks where the path in dimension order is alive, `h` more
//! for its reverse (no link in common), and only where both are cut, the lattice's at most
//! `h 2^(h-1)` (12 on a 3-D network).
//!
//! Pairs where it fails (*exceptions*) have every geodesic cut by a failed link `(u, v)`, so they
//! lie in the set of pairs for which `(u, v)` is on a geodesic: `a_d = u_d`, `b_d = v_d` in the
//! link's dimension `d` and, in every other dimension `e`, `a_e = u_e` or `b_e = u_e`. Enumerating
//! those `prod_e (2 S_e - 1)` pairs per failed link direction and testing each finds all
//! exceptions (`O(faults x S^(L-1))` work). A failed link seeds the same pairs from either end,
//! reversed, with the same answer, so it seeds them once and each exception found is recorded both
//! ways: 61 million tests for 1% of the links of a 32x32x32.
//! Their exact distances follow from `d_f(a,b) = 1 + min over live neighbours y of d_f(y,b)`,
//! where `d_f(y,b)` is the Hamming distance unless `(y,b)` is itself an exception: a Bellman-Ford
//! relaxation over the exceptions of one destination, whose boundary values are exact. Pairs in
//! different connected components are unreachable (one labelling of the components).
//!
//! Memory: one bit per (switch, neighbour switch) for failed links, one bit per switch that has
//! any, one `u32` component label per switch, and 5 bytes per exception plus a `u32` offset per
//! destination. Lookups allocate nothing, hash nothing and lock nothing: a component check, then a
//! binary search in the destination's exception list (the lattice test builds the lists and checks
//! lookups in debug builds).
//!
//! Debug builds compare every pair against plain BFS on networks of up to [`DEBUG_CHECK_SWITCHES`]
//! switches.

use super::exceptions::ExceptionLists;
use super::fabric::UNREACHABLE;
use super::{HyperX, PortId, SwitchId};
use rayon::prelude::*;

/// Networks up to this size are checked pair by pair against BFS when built in debug builds.
pub const DEBUG_CHECK_SWITCHES: usize = 1024;
/// Most dimensions the lattice test handles (its `2^L` corners live in a `u64` mask).
pub const MAX_DIMS: usize = 6;

/// Distances of a faulty HyperX: Hamming distance plus exceptions (see the module doc).
pub struct SparseDistances {
    hx: HyperX,
    /// First slot of each dimension in a switch's neighbour-switch slots (`sum_{e<d} (S_e - 1)`).
    slot_base: Vec<u32>,
    /// Slots per switch (`sum_d (S_d - 1)`).
    slots: usize,
    /// Bit `x * slots + slot`: every trunk of the link from `x` to that neighbour switch failed.
    cut: Vec<u64>,
    /// Bit `x`: switch `x` has a cut link.
    touched: Vec<u64>,
    /// Component labels and per-destination exception lists (see [`ExceptionLists`]).
    lists: ExceptionLists,
}

#[inline]
fn bit(v: &[u64], i: usize) -> bool {
    v[i >> 6] >> (i & 63) & 1 != 0
}

impl SparseDistances {
    /// Build from the HyperX and a port-liveness predicate; `None` when the network has more than
    /// [`MAX_DIMS`] dimensions. A switch pair's link must be alive from both ends or from neither
    /// (as failed links and switches leave it): the distances are those of an undirected graph.
    pub fn new(hx: &HyperX, alive: impl Fn(SwitchId, PortId) -> bool + Sync) -> Option<Self> {
        let l = hx.dims();
        if l > MAX_DIMS {
            return None;
        }
        let n = hx.sides().iter().product::<usize>();
        let mut slot_base = Vec::with_capacity(l);
        let mut slots = 0usize;
        for d in 0..l {
            slot_base.push(slots as u32);
            slots += hx.side(d) - 1;
        }
        let mut cut = vec![0u64; (n * slots).div_ceil(64)];
        let mut touched = vec![0u64; n.div_ceil(64)];
        for x in 0..n {
            for (d, &base) in slot_base.iter().enumerate() {
                let xd = hx.coord(x as SwitchId, d);
                for v in 0..hx.side(d) {
                    if v == xd {
                        continue;
                    }
                    if !(0..hx.trunk(d)).any(|k| alive(x as SwitchId, hx.port_to(x as SwitchId, d, v, k))) {
                        let rank = if v < xd { v } else { v - 1 };
                        let i = x * slots + base as usize + rank;
                        cut[i >> 6] |= 1 << (i & 63);
                        touched[x >> 6] |= 1 << (x & 63);
                    }
                }
            }
        }
        let mut sd = SparseDistances {
            hx: hx.clone(),
            slot_base,
            slots,
            cut,
            touched,
            lists: ExceptionLists { start: vec![0; n + 1], ..Default::default() },
        };
        sd.label_components();
        sd.find_exceptions();
        Some(sd)
    }

    /// Whether the link from `x` to the switch with coordinate `v` in dimension `d` is alive.
    #[inline(always)]
    fn link_alive(&self, x: SwitchId, d: usize, v: usize) -> bool {
        // Most switches have no cut link: no coordinate to look up for them.
        !bit(&self.touched, x as usize) || self.link_alive_at(x, d, self.hx.coord(x, d), v)
    }

    /// [`SparseDistances::link_alive`] where `x`'s coordinate in dimension `d` is known (`xd`).
    #[inline(always)]
    fn link_alive_at(&self, x: SwitchId, d: usize, xd: usize, v: usize) -> bool {
        if !bit(&self.touched, x as usize) {
            return true;
        }
        let rank = if v < xd { v } else { v - 1 };
        !bit(&self.cut, x as usize * self.slots + self.slot_base[d] as usize + rank)
    }

    /// Calls `f(y)` for every live neighbour switch of `x` (once per switch, whatever the trunks).
    fn for_each_live_neighbour(&self, x: SwitchId, mut f: impl FnMut(SwitchId)) {
        let h = &self.hx;
        for d in 0..h.dims() {
            let xd = h.coord(x, d);
            for v in 0..h.side(d) {
                if v != xd && self.link_alive(x, d, v) {
                    f(h.with_coord(x, d, v));
                }
            }
        }
    }

    /// Whether some shortest path of the fault-free HyperX from `a` to `b` is entirely alive, i.e.
    /// `d_f(a,b) = hamming(a,b)` (module doc).
    #[inline]
    pub fn geodesic_alive(&self, a: SwitchId, b: SwitchId) -> bool {
        let h = &self.hx;
        let (mut ca, mut cb) = ([0usize; MAX_DIMS], [0usize; MAX_DIMS]);
        for d in 0..h.dims() {
            (ca[d], cb[d]) = (h.coord(a, d), h.coord(b, d));
        }
        self.geodesic_alive_at(a, &ca, &cb)
    }

    /// [`SparseDistances::geodesic_alive`] from `a` and both switches' coordinates (`ca`, `cb`:
    /// their first [`HyperX::dims`] entries), so that no link check looks a coordinate up.
    #[inline(always)]
    fn geodesic_alive_at(&self, a: SwitchId, ca: &[usize; MAX_DIMS], cb: &[usize; MAX_DIMS]) -> bool {
        let h = &self.hx;
        // Differing dimensions: (dimension, a's coordinate, b's, id offset from a to b in it). A
        // corner of the lattice has a's coordinate in every dimension it has not set yet.
        let mut dims = [(0usize, 0usize, 0usize, 0i64); MAX_DIMS];
        let mut k = 0;
        for d in 0..h.dims() {
            if ca[d] != cb[d] {
                dims[k] = (d, ca[d], cb[d], (cb[d] as i64 - ca[d] as i64) * h.stride(d) as i64);
                k += 1;
            }
        }
        match k {
            0 => return true,
            1 => return self.link_alive_at(a, dims[0].0, dims[0].1, dims[0].2),
            _ => {}
        }
        // First two geodesics with no link in common: the one that sets the coordinates in
        // dimension order, and the reverse order. With sparse faults one is nearly always alive, in
        // k link checks each instead of the lattice's 2^k - 1 or more; and where a failed link cuts
        // one, the other avoids it. (Finding the exceptions of 1% of a 32x32x32's links makes 61
        // million tests, each of a pair with a failed link on some geodesic: most of a faulty
        // million-endpoint HyperX's setup, which every MPI rank repeats.)
        if self.path_alive(a, dims[..k].iter()) || self.path_alive(a, dims[..k].iter().rev()) {
            return true;
        }
        if k == 2 {
            // Those were its only two geodesics.
            return false;
        }
        let mut id = [0 as SwitchId; 1 << MAX_DIMS];
        id[0] = a;
        let mut reach: u64 = 1;
        for m in 1usize..(1 << k) {
            let low = m.trailing_zeros() as usize;
            id[m] = (id[m & (m - 1)] as i64 + dims[low].3) as SwitchId;
            let mut rest = m;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let prev = m ^ (1 << i);
                let (d, xd, y, _) = dims[i];
                if reach >> prev & 1 != 0 && self.link_alive_at(id[prev], d, xd, y) {
                    reach |= 1 << m;
                    break;
                }
            }
        }
        reach >> ((1usize << k) - 1) & 1 != 0
    }

    /// Whether the path from `x` that takes `hops` in turn (dimension, coordinate left, coordinate
    /// reached, id offset) is alive.
    #[inline(always)]
    fn path_alive<'h>(&self, mut x: SwitchId, hops: impl Iterator<Item = &'h (usize, usize, usize, i64)>) -> bool {
        for &(d, xd, y, step) in hops {
            if !self.link_alive_at(x, d, xd, y) {
                return false;
            }
            x = (x as i64 + step) as SwitchId;
        }
        true
    }

    /// When `a != b` are connected by a live shortest path of the fault-free network, calls `f`
    /// with every live port of `a` (`alive`) that brings a packet one hop closer to `b`, in
    /// increasing port order, and returns true; otherwise returns false and calls nothing. Such
    /// hops set one differing coordinate to `b`'s value and reach a switch that keeps a live
    /// shortest path to `b`.
    #[inline]
    pub fn minimal_ports(
        &self,
        a: SwitchId,
        b: SwitchId,
        alive: impl Fn(PortId) -> bool,
        f: &mut impl FnMut(PortId),
    ) -> bool {
        if a == b
            || (self.lists.split && self.lists.comp[a as usize] != self.lists.comp[b as usize])
            || self.exception(a, b).is_some()
        {
            return false;
        }
        let h = &self.hx;
        for d in 0..h.dims() {
            let (x, v) = (h.coord(a, d), h.coord(b, d));
            if x == v || !self.link_alive(a, d, v) || self.exception(h.with_coord(a, d, v), b).is_some() {
                continue;
            }
            for k in 0..h.trunk(d) {
                let p = h.port_to(a, d, v, k);
                if alive(p) {
                    f(p);
                }
            }
        }
        true
    }

    /// The HyperX these distances are of.
    #[inline]
    pub fn hyperx(&self) -> &HyperX {
        &self.hx
    }

    /// Exact distance from `a` to `b` over live links ([`UNREACHABLE`] if disconnected).
    #[inline]
    pub fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        if a == b {
            return 0;
        }
        if self.lists.split && self.lists.comp[a as usize] != self.lists.comp[b as usize] {
            return UNREACHABLE;
        }
        // The exception lists are complete (every pair whose geodesics are all cut), so a pair not
        // listed is at its Hamming distance: one binary search in a list of about one entry per
        // destination at 1% link faults, instead of the lattice test.
        match self.exception(a, b) {
            Some(d) => d as u32,
            None => {
                debug_assert!(
                    self.geodesic_alive(a, b),
                    "pair ({a}, {b}) has no live geodesic but is not an exception"
                );
                self.hx.hamming(a, b)
            }
        }
    }

    /// The stored distance of exception `(a, b)`.
    #[inline]
    fn exception(&self, a: SwitchId, b: SwitchId) -> Option<u8> {
        self.lists.exception(a, b)
    }

    /// The exceptions of destination `b`: sources (sorted) and their exact distances to `b`. Every
    /// other source of `b`'s component is at its Hamming distance from `b`.
    #[inline]
    pub fn exceptions_to(&self, b: SwitchId) -> (&[SwitchId], &[u8]) {
        self.lists.exceptions_to(b)
    }

    /// Whether `a` and `b` are in the same connected component (so [`SparseDistances::distance`]
    /// is finite).
    #[inline]
    pub fn same_component(&self, a: SwitchId, b: SwitchId) -> bool {
        self.lists.same_component(a, b)
    }

    /// Number of pairs whose distance differs from the Hamming distance.
    pub fn exceptions(&self) -> usize {
        self.lists.src.len()
    }

    /// Whether every switch reaches every other.
    pub fn connected(&self) -> bool {
        !self.lists.split
    }

    /// Bytes held (for reports).
    pub fn bytes(&self) -> usize {
        8 * (self.cut.len() + self.touched.len()) + self.lists.bytes() + 4 * self.slot_base.len()
    }

    /// Ordered pairs of live switches at each distance, self pairs included, where `dead` lists
    /// the failed switches (sorted, no repeats; their links are all cut, so each is a component of
    /// its own). `None` if the live switches are split.
    ///
    /// Pairs at Hamming distance `j` are `n x e_j(S_0 - 1, ..., S_{L-1} - 1)` (`e_j` the elementary
    /// symmetric polynomial); pairs with a failed end are `2 x |dead| x e_j` less the dead-dead pairs
    /// counted twice; exceptions then move pairs from their Hamming distance to their exact one
    /// (they never involve a failed switch, which is in no live pair's component).
    pub fn histogram(&self, dead: &[SwitchId]) -> Option<Vec<u64>> {
        let h = &self.hx;
        let n = self.lists.comp.len() as u64;
        if self.lists.split {
            let mut is_dead = vec![false; self.lists.comp.len()];
            for &x in dead {
                is_dead[x as usize] = true;
            }
            let mut live = (0..self.lists.comp.len()).filter(|&x| !is_dead[x]);
            let first = live.next()?;
            if live.any(|x| self.lists.comp[x] != self.lists.comp[first]) {
                return None;
            }
        }
        let mut e = vec![1u64];
        for d in 0..h.dims() {
            let m = h.side(d) as u64 - 1;
            let mut next = vec![0u64; e.len() + 1];
            for (j, &c) in e.iter().enumerate() {
                next[j] += c;
                next[j + 1] += c * m;
            }
            e = next;
        }
        let nd = dead.len() as u64;
        let mut hist: Vec<u64> = e.iter().map(|&c| c * (n - 2 * nd)).collect();
        for &x in dead {
            for &y in dead {
                hist[h.hamming(x, y) as usize] += 1;
            }
        }
        for b in 0..self.lists.comp.len() {
            for i in self.lists.start[b] as usize..self.lists.start[b + 1] as usize {
                let (a, d) = (self.lists.src[i], self.lists.dist[i] as usize);
                hist[h.hamming(a, b as SwitchId) as usize] -= 1;
                if hist.len() <= d {
                    hist.resize(d + 1, 0);
                }
                hist[d] += 1;
            }
        }
        while hist.last() == Some(&0) {
            hist.pop();
        }
        Some(hist)
    }

    fn label_components(&mut self) {
        let n = self.hx.sides().iter().product::<usize>();
        let mut comp = vec![u32::MAX; n];
        let mut queue = Vec::new();
        let mut c = 0;
        for r in 0..n {
            if comp[r] != u32::MAX {
                continue;
            }
            comp[r] = c;
            queue.push(r as SwitchId);
            while let Some(x) = queue.pop() {
                self.for_each_live_neighbour(x, |y| {
                    if comp[y as usize] == u32::MAX {
                        comp[y as usize] = c;
                        queue.push(y);
                    }
                });
            }
            c += 1;
        }
        self.lists.split = c > 1;
        self.lists.comp = comp;
    }

    /// Every pair whose geodesics are all cut, with its exact distance (module doc).
    fn find_exceptions(&mut self) {
        let h = &self.hx;
        let n = self.lists.comp.len();
        let l = h.dims();
        let this = &*self;
        // Every cut link direction (u -> v in dimension d) seeds the pairs it lies on a geodesic of.
        let cut_links = (0..n as SwitchId).filter(|&u| bit(&this.touched, u as usize)).flat_map(|u| {
            (0..l).flat_map(move |d| {
                let ud = h.coord(u, d);
                (0..h.side(d)).filter(move |&v| v != ud && !this.link_alive(u, d, v)).map(move |v| (u, d, v))
            })
        });
        // A link is cut both ways (`new`), so the pairs the direction v -> u seeds are those of
        // u -> v reversed, with the same answer: each link seeds once, from its lower end, and
        // each exception is recorded both ways (half the tests).
        debug_assert!(
            cut_links.clone().all(|(u, d, v)| !this.link_alive(h.with_coord(u, d, v), d, h.coord(u, d))),
            "a link cut one way only"
        );
        let cut_links: Vec<(SwitchId, usize, usize)> =
            cut_links.filter(|&(u, d, v)| u < h.with_coord(u, d, v)).collect();
        let mut pairs: Vec<(SwitchId, SwitchId)> = cut_links
            .par_iter()
            .flat_map_iter(|&(u, d, v)| {
                let mut out = Vec::new();
                // Per other dimension e, choice c in 0..2S_e-1: c < S_e is (a_e = u_e, b_e = c);
                // otherwise b_e = u_e and a_e is the (c - S_e)-th value other than u_e.
                let others: Vec<usize> = (0..l).filter(|&e| e != d).collect();
                let mut choice = vec![0usize; others.len()];
                let mut cu = [0usize; MAX_DIMS];
                for (e, c) in cu.iter_mut().enumerate().take(l) {
                    *c = h.coord(u, e);
                }
                loop {
                    let (mut ca, mut cb) = (cu, cu);
                    cb[d] = v;
                    for (i, &e) in others.iter().enumerate() {
                        let (ue, s, c) = (cu[e], h.side(e), choice[i]);
                        if c < s {
                            cb[e] = c;
                        } else {
                            let r = c - s;
                            ca[e] = if r < ue { r } else { r + 1 };
                        }
                    }
                    let (a, b) = (h.switch_at(&ca[..l]), h.switch_at(&cb[..l]));
                    if a != b
                        && (!this.lists.split || this.lists.comp[a as usize] == this.lists.comp[b as usize])
                        && !this.geodesic_alive_at(a, &ca, &cb)
                    {
                        out.push((b, a));
                        out.push((a, b));
                    }
                    // Next choice (mixed radix).
                    let mut i = 0;
                    while i < others.len() {
                        choice[i] += 1;
                        if choice[i] < 2 * h.side(others[i]) - 1 {
                            break;
                        }
                        choice[i] = 0;
                        i += 1;
                    }
                    if i == others.len() {
                        break;
                    }
                }
                out
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut start = vec![0u32; n + 1];
        for &(b, _) in &pairs {
            start[b as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let src: Vec<SwitchId> = pairs.iter().map(|p| p.1).collect();
        self.lists.start = start;
        self.lists.src = src;
        let this = &*self;
        // Exact distances, one destination at a time: Bellman-Ford over its exceptions.
        let per_dest: Vec<Vec<u8>> = (0..n)
            .into_par_iter()
            .filter(|&b| this.lists.start[b + 1] > this.lists.start[b])
            .map(|b| this.relax(b as SwitchId))
            .collect();
        self.lists.dist = per_dest.concat();
    }

    /// Exact distances to `b` of its exceptions, in the order of `src`.
    fn relax(&self, b: SwitchId) -> Vec<u8> {
        let (lo, hi) = (self.lists.start[b as usize] as usize, self.lists.start[b as usize + 1] as usize);
        let srcs = &self.lists.src[lo..hi];
        // For each exception: best value from non-exception neighbours, and its exception neighbours.
        let mut best = vec![u32::MAX; srcs.len()];
        let mut links: Vec<Vec<u32>> = vec![Vec::new(); srcs.len()];
        for (i, &a) in srcs.iter().enumerate() {
            self.for_each_live_neighbour(a, |y| {
                if y == b || self.geodesic_alive(y, b) {
                    best[i] = best[i].min(1 + self.hx.hamming(y, b));
                } else {
                    let j = srcs.binary_search(&y);
                    debug_assert!(j.is_ok(), "switch {y} has no live geodesic to {b} but is no exception");
                    if let Ok(j) = j {
                        links[i].push(j as u32);
                    }
                }
            });
        }
        loop {
            let mut changed = false;
            for i in 0..srcs.len() {
                for &j in &links[i] {
                    let v = best[j as usize].saturating_add(1);
                    if v < best[i] {
                        best[i] = v;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        best.into_iter().map(|d| d.min(254) as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Fabric, FaultSet, Topology};
    use std::sync::Arc;

    /// Every pair against plain BFS, on networks with few and many faults, trunks, and a switch whose
    /// links all failed (the network is then split).
    #[test]
    fn sparse_distances_equal_bfs() {
        let cases: &[(&[usize], &[usize], usize, u64)] = &[
            (&[4, 4], &[1, 1], 3, 5),
            (&[4, 4], &[1, 1], 20, 1),
            (&[5, 3], &[2, 1], 12, 2),
            (&[3, 3, 3], &[1, 1, 1], 16, 2),
            (&[4, 4, 4], &[1, 1, 1], 60, 7),
            (&[3, 4, 2, 3], &[1, 1, 1, 1], 30, 4),
        ];
        for &(sides, trunks, faults, seed) in cases {
            let h = HyperX::new(sides, trunks, 1);
            let topo: Arc<dyn Topology> = Arc::new(h.clone());
            let mut f = FaultSet::random_links(&*topo, faults, seed).unwrap();
            // Isolate switch 1 too.
            for p in 0..topo.switch_ports(1) as PortId {
                let (o, q) = topo.neighbour(1, p).unwrap();
                let l = if (1, p) < (o, q) { (1, p) } else { (o, q) };
                if !f.links.contains(&l) {
                    f.links.push(l);
                }
            }
            let net = Fabric::new(topo.clone(), &f);
            let sd = net.sparse_distances().expect("a faulty HyperX has sparse distances");
            assert!(!sd.connected());
            for b in 0..topo.num_switches() as SwitchId {
                let bfs = net.bfs(b);
                for a in 0..topo.num_switches() as SwitchId {
                    assert_eq!(sd.distance(a, b), bfs[a as usize], "{sides:?} {faults} faults: {a} -> {b}");
                }
            }
        }
    }

    /// The geodesic test (two disjoint paths first, then the lattice) against BFS: a live geodesic
    /// exactly where the faulty distance is the Hamming distance; on connected networks too, where
    /// the exception search skips the component check.
    #[test]
    fn geodesic_alive_iff_bfs_distance_is_hamming() {
        let cases: &[(&[usize], &[usize], usize, u64)] = &[
            (&[5, 5], &[1, 1], 10, 3),
            (&[4, 3], &[2, 1], 8, 1),
            (&[4, 4, 4], &[1, 1, 1], 40, 9),
            (&[4, 4, 4], &[1, 1, 1], 120, 4),
            (&[3, 3, 2, 3], &[1, 1, 1, 1], 25, 6),
        ];
        let mut connected = 0;
        for &(sides, trunks, faults, seed) in cases {
            let h = HyperX::new(sides, trunks, 1);
            let topo: Arc<dyn Topology> = Arc::new(h.clone());
            let net = Fabric::new(topo.clone(), &FaultSet::random_links(&*topo, faults, seed).unwrap());
            let sd = net.sparse_distances().unwrap();
            let mut cut = 0;
            for b in 0..topo.num_switches() as SwitchId {
                let bfs = net.bfs(b);
                for a in 0..topo.num_switches() as SwitchId {
                    let hamming = (0..h.dims()).filter(|&d| h.coord(a, d) != h.coord(b, d)).count();
                    let expected = bfs[a as usize] as usize == hamming;
                    cut += !expected as usize;
                    assert_eq!(sd.geodesic_alive(a, b), expected, "{sides:?} {faults} faults: {a} -> {b}");
                    assert_eq!(sd.distance(a, b), bfs[a as usize], "{sides:?} {faults} faults: {a} -> {b}");
                }
            }
            assert!(cut > 0, "{sides:?} {faults} faults: no pair has every geodesic cut; the case tests nothing");
            connected += sd.connected() as usize;
        }
        assert!(connected > 0, "no case is connected: the search's path for connected networks is untested");
    }

    #[test]
    fn histogram_counts_every_pair() {
        let topo: Arc<dyn Topology> = Arc::new(HyperX::new(&[4, 4, 4], &[1, 1, 1], 2));
        let net = Fabric::new(topo.clone(), &FaultSet::random_links(&*topo, 40, 3).unwrap());
        let sd = net.sparse_distances().unwrap();
        assert!(sd.exceptions() > 40);
        let mut want = vec![0u64; 8];
        for b in 0..64 {
            for d in net.bfs(b) {
                want[d as usize] += 1;
            }
        }
        while want.last() == Some(&0) {
            want.pop();
        }
        assert_eq!(sd.histogram(&[]).unwrap(), want);
    }

    /// With failed switches (isolated, so the network is split) the histogram counts the live pairs
    /// only, as BFS between live switches does.
    #[test]
    fn histogram_skips_failed_switches() {
        let topo: Arc<dyn Topology> = Arc::new(HyperX::new(&[4, 4, 3], &[1, 1, 1], 2));
        let mut faults = FaultSet::random_links(&*topo, 12, 5).unwrap();
        faults.switches = vec![3, 17, 40];
        let net = Fabric::new(topo.clone(), &faults);
        let sd = net.sparse_distances().unwrap();
        let mut want = vec![0u64; 10];
        for b in (0..48).filter(|b| !faults.switches.contains(b)) {
            for (a, d) in net.bfs(b).into_iter().enumerate() {
                if !faults.switches.contains(&(a as SwitchId)) {
                    want[d as usize] += 1;
                }
            }
        }
        while want.last() == Some(&0) {
            want.pop();
        }
        assert_eq!(sd.histogram(&faults.switches).unwrap(), want);
        assert_eq!(sd.histogram(&[]), None, "counting the failed switches as live, the network is split");
    }
}

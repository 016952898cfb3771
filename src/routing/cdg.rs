//! A channel dependency graph (CDG) kept acyclic while dependencies are added and removed: a
//! topological order of the channels maintained online (Pearce and Kelly, "A dynamic topological
//! sort algorithm for directed acyclic graphs", JEA 2006). Nue (one graph per layer, rebuilt for
//! each) and LASH (one per virtual layer) add the dependencies of their routes through it.
//!
//! Channels are `switch * p + port` (`p` ports per switch); the dependency of channel `a` on port
//! `q` of its far end, `(w -> x) -> (x -> y)`, has index `a * p + q`. The caller passes the wiring
//! as `head` (the far switch of each channel, `u32::MAX` if none) and `back` (the far end's port
//! that leads back), as [`wiring`] builds them.

use crate::topology::{Fabric, PortId, SwitchId};

/// The wiring the graph reads, over the live links of `net` with `p` ports per switch: `head`, the
/// far switch of each channel (`u32::MAX` if the port is dead or unwired), and `back`, the far
/// end's port that leads back.
pub(super) fn wiring(net: &Fabric, p: usize) -> (Vec<u32>, Vec<PortId>) {
    let n = net.num_switches();
    let (mut head, mut back) = (vec![u32::MAX; n * p], vec![0; n * p]);
    for s in 0..n as SwitchId {
        for q in 0..net.switch_ports(s) as PortId {
            if let Some((o, r)) = net.neighbour(s, q) {
                head[s as usize * p + q as usize] = o;
                back[s as usize * p + q as usize] = r;
            }
        }
    }
    (head, back)
}

/// The dependencies in use of a CDG, with the order that keeps it acyclic (see the module docs).
pub(super) struct AcyclicCdg {
    p: usize,
    /// Routes using each dependency (0: not in the graph).
    count: Vec<u32>,
    /// The dependencies in the graph as bits, `words` per channel (bit `q` of channel `a`: `count`
    /// of `a`'s dependency on port `q` is not 0): the forward search, most of a build's time,
    /// visits a channel's dependencies without reading the counts of all its ports.
    out: Vec<u64>,
    /// The same by the channel depended on, for the backward search: bit `r` of channel `b` (out
    /// of switch `x`): the channel into `x` through its port `r` depends on `b`.
    inb: Vec<u64>,
    words: usize,
    /// Per dependency, the value of `removals` when adding it last closed a cycle (0: never; empty
    /// when not kept). The graph only loses dependencies when one's count falls to 0, so until
    /// then the cycle is still there: a dependency tried again (Nue's destinations try most of
    /// theirs many times) is refused without a search.
    refused: Vec<u32>,
    /// Dependencies removed from the graph so far, plus 1 (the generation of `refused`).
    removals: u32,
    /// Topological position and search mark of each channel, side by side: the searches read
    /// both of every channel they reach.
    node: Vec<Node>,
    epoch: u32,
    stack: Vec<u32>,
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    pool: Vec<u32>,
}

/// A channel of the [`AcyclicCdg`]: its topological position, and the search (epoch) that last
/// reached it.
#[derive(Clone, Copy)]
struct Node {
    ord: u32,
    mark: u32,
}

impl AcyclicCdg {
    /// An empty graph of `channels` channels of `p` ports each; `keep_refusals`: remember refused
    /// dependencies (4 more bytes per dependency), for callers that retry them without removals
    /// in between.
    pub(super) fn new(channels: usize, p: usize, keep_refusals: bool) -> Self {
        let words = p.div_ceil(64);
        AcyclicCdg {
            p,
            count: vec![0; channels * p],
            out: vec![0; channels * words],
            inb: vec![0; channels * words],
            words,
            refused: if keep_refusals { vec![0; channels * p] } else { Vec::new() },
            removals: 1,
            node: (0..channels as u32).map(|ord| Node { ord, mark: 0 }).collect(),
            epoch: 0,
            stack: Vec::new(),
            fwd: Vec::new(),
            bwd: Vec::new(),
            pool: Vec::new(),
        }
    }

    /// Remove every dependency.
    pub(super) fn reset(&mut self) {
        self.count.fill(0);
        self.out.fill(0);
        self.inb.fill(0);
        self.removed();
        for (i, o) in self.node.iter_mut().enumerate() {
            o.ord = i as u32;
        }
    }

    /// The index of the dependency of channel `a` on port `out_port` of its far end.
    #[inline]
    pub(super) fn edge(&self, a: u32, out_port: PortId) -> u32 {
        (a as usize * self.p + out_port as usize) as u32
    }

    /// One use less of dependency `e` (in use).
    pub(super) fn remove(&mut self, head: &[u32], back: &[PortId], e: u32) {
        self.count[e as usize] -= 1;
        if self.count[e as usize] == 0 {
            self.set_bits(head, back, e as usize, false);
            self.removed();
        }
    }

    /// A dependency left the graph: the cycles that refused others may be gone.
    fn removed(&mut self) {
        self.removals = self.removals.wrapping_add(1);
        if self.removals == 0 {
            self.refused.fill(0);
            self.removals = 1;
        }
    }

    /// Set (or clear) the bits of dependency `e` (channel `a = e / p` on to port `e % p` of its
    /// far end) in `out` (of `a`) and `inb` (of the channel it continues on).
    #[inline]
    fn set_bits(&mut self, head: &[u32], back: &[PortId], e: usize, on: bool) {
        let (a, q) = (e / self.p, e % self.p);
        let b = head[a] as usize * self.p + q;
        let r = back[a] as usize;
        for (w, bit) in
            [(&mut self.out[a * self.words + q / 64], q % 64), (&mut self.inb[b * self.words + r / 64], r % 64)]
        {
            if on {
                *w |= 1 << bit;
            } else {
                *w &= !(1 << bit);
            }
        }
    }

    /// Add (one more use of) the dependency `a -> b` unless it closes a cycle; whether it was added.
    pub(super) fn add(&mut self, head: &[u32], back: &[PortId], a: u32, b: u32) -> bool {
        let e = self.edge(a, (b as usize % self.p) as PortId) as usize;
        if self.count[e] > 0 {
            self.count[e] += 1;
            return true;
        }
        if self.refused.get(e) == Some(&self.removals) {
            return false;
        }
        let (lb, ub) = (self.node[b as usize].ord, self.node[a as usize].ord);
        if ub < lb {
            self.count[e] = 1;
            self.set_bits(head, back, e, true);
            return true;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Marks from 2^32 searches ago would read as this one's.
            self.node.iter_mut().for_each(|o| o.mark = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        let (p, words) = (self.p, self.words);
        // Forward from b among channels ordered before a: reaching a means a cycle.
        self.fwd.clear();
        self.stack.clear();
        self.stack.push(b);
        self.node[b as usize].mark = epoch;
        while let Some(v) = self.stack.pop() {
            self.fwd.push(v);
            let x = head[v as usize];
            for k in 0..words {
                let mut bits = self.out[v as usize * words + k];
                while bits != 0 {
                    let q = k * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let w = (x as usize * p + q) as u32;
                    if w == a {
                        if let Some(r) = self.refused.get_mut(e) {
                            *r = self.removals;
                        }
                        return false;
                    }
                    let o = &mut self.node[w as usize];
                    if o.mark != epoch && o.ord < ub {
                        o.mark = epoch;
                        self.stack.push(w);
                    }
                }
            }
        }
        // Backward from a among channels ordered after b.
        self.bwd.clear();
        self.stack.push(a);
        self.node[a as usize].mark = epoch;
        while let Some(v) = self.stack.pop() {
            self.bwd.push(v);
            let x = v as usize / p;
            for k in 0..words {
                let mut bits = self.inb[v as usize * words + k];
                while bits != 0 {
                    let q = k * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let u = (head[x * p + q] as usize * p + back[x * p + q] as usize) as u32;
                    let o = &mut self.node[u as usize];
                    if o.mark != epoch && o.ord > lb {
                        o.mark = epoch;
                        self.stack.push(u);
                    }
                }
            }
        }
        // Reorder: the backward set, then the forward set, into the positions they held.
        let node = &self.node;
        self.fwd.sort_unstable_by_key(|&v| node[v as usize].ord);
        self.bwd.sort_unstable_by_key(|&v| node[v as usize].ord);
        // The positions in increasing order: the merge of the two sorted sets' positions.
        self.pool.clear();
        let (mut i, mut j) = (0, 0);
        while i < self.bwd.len() || j < self.fwd.len() {
            let ob = self.bwd.get(i).map_or(u32::MAX, |&v| node[v as usize].ord);
            let of = self.fwd.get(j).map_or(u32::MAX, |&v| node[v as usize].ord);
            if ob < of {
                self.pool.push(ob);
                i += 1;
            } else {
                self.pool.push(of);
                j += 1;
            }
        }
        for (i, &v) in self.bwd.iter().chain(self.fwd.iter()).enumerate() {
            self.node[v as usize].ord = self.pool[i];
        }
        self.count[e] = 1;
        self.set_bits(head, back, e, true);
        true
    }

    /// Routes using dependency `e` (0: not in the graph).
    #[cfg(test)]
    pub(super) fn uses(&self, e: usize) -> u32 {
        self.count[e]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{below, stream, Purpose};

    const NONE: u32 = u32::MAX;

    /// The online topological order refuses exactly the dependencies that close a cycle, on
    /// random multigraphs with random additions and removals (so that refusals kept from before a
    /// removal must be dropped), checked against a plain search over the dependencies in use; and
    /// its order stays topological.
    #[test]
    fn cdg_refuses_exactly_the_dependencies_that_close_a_cycle() {
        let mut rng = stream(5, 0, Purpose::Router);
        let (mut refusals, mut removals) = (0, 0);
        for case in 0..40 {
            let (n, p) = (4 + case % 5, 2 + case % 4);
            // Wire the ports in random pairs between distinct switches (some stay unwired).
            let mut head = vec![NONE; n * p];
            let mut back: Vec<PortId> = vec![0; n * p];
            for _ in 0..n * p {
                let (i, j) = (below(&mut rng, (n * p) as u64) as usize, below(&mut rng, (n * p) as u64) as usize);
                if i / p != j / p && head[i] == NONE && head[j] == NONE {
                    (head[i], back[i]) = ((j / p) as u32, (j % p) as PortId);
                    (head[j], back[j]) = ((i / p) as u32, (i % p) as PortId);
                }
            }
            let mut cdg = AcyclicCdg::new(n * p, p, true);
            let mut uses: Vec<u32> = vec![0; n * p * p];
            // Whether channel `to` is reachable from `from` over the dependencies in use.
            let reaches = |uses: &[u32], from: usize, to: usize| {
                let (mut seen, mut stack) = (vec![false; n * p], vec![from]);
                while let Some(v) = stack.pop() {
                    if v == to {
                        return true;
                    }
                    if !std::mem::replace(&mut seen[v], true) {
                        stack.extend((0..p).filter(|&q| uses[v * p + q] > 0).map(|q| head[v] as usize * p + q));
                    }
                }
                false
            };
            for _ in 0..600 {
                let a = below(&mut rng, (n * p) as u64) as usize;
                if head[a] == NONE {
                    continue;
                }
                let q = below(&mut rng, p as u64) as usize;
                let b = head[a] as usize * p + q;
                if head[b] == NONE {
                    continue;
                }
                let e = a * p + q;
                if uses[e] > 0 && below(&mut rng, 3) == 0 {
                    cdg.remove(&head, &back, e as u32);
                    uses[e] -= 1;
                    removals += 1;
                    continue;
                }
                let cycle = uses[e] == 0 && reaches(&uses, b, a);
                assert_eq!(cdg.add(&head, &back, a as u32, b as u32), !cycle, "case {case}: {a} -> {b}");
                if cycle {
                    refusals += 1;
                } else {
                    uses[e] += 1;
                }
                for (d, _) in uses.iter().enumerate().filter(|(_, &u)| u > 0) {
                    let (from, to) = (d / p, head[d / p] as usize * p + d % p);
                    assert!(cdg.node[from].ord < cdg.node[to].ord, "case {case}: order of {from} -> {to}");
                }
            }
        }
        assert!(refusals > 500 && removals > 500, "the cases refuse ({refusals}) and remove ({removals})");
    }
}

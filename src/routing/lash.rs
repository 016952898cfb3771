//! LASH: layered shortest path routing (Skeie, Lysne, Theiss, "Layered Shortest Path (LASH)
//! Routing in Irregular System Area Networks", IPDPS 2002), as compared in the Nue paper (Domke,
//! section 4 and Fig. 7b, where LASH exceeds 8 VCs beyond the 3-D torus(7,7,7)).
//!
//! **Paths.** Every pair of switches communicates over one minimal path. LASH leaves the choice
//! among minimal paths open; here it is the path of `sp` ([`super::table`]): at switch `x` towards
//! `t` the minimal port picked by a hash of `(x, t)`, so LASH and `sp` route identically and differ
//! only in their VCs.
//!
//! **Layers** (section 3 of the paper). The virtual channels split the network into virtual
//! layers, each with an acyclic channel dependency graph (CDG). The source-destination pairs are
//! taken in order (by source switch, then destination); each is assigned to the first layer in
//! which adding its path's dependencies keeps that layer's CDG acyclic, and a new layer is opened
//! when none does. A packet travels its whole path in its pair's layer (VC), so the CDG of all
//! channels is acyclic. The acyclicity test is incremental: every layer keeps a topological order
//! of its channels (Pearce and Kelly's dynamic topological sort), so a new dependency `a -> b`
//! with `a` before `b` costs nothing and otherwise only the channels between the two are searched.
//!
//! **VCs.** As DFSSSP ([`super::dfsssp`]): `routing.vcs = 0` uses the layers needed; more VCs are
//! spread over the layers with the most routes per VC; fewer is a config error (exit 2) naming
//! `routing.vcs` and the number needed. `routing.vc_policy` must stay at its default.
//!
//! **Cost.** Tables as DFSSSP's: 2 bytes per (switch, destination) and one byte per pair. The
//! builder keeps, per layer, a count per dependency (4 bytes per channel and port), an order per
//! channel, and the dependencies in use as bit sets (forward and backward) for its searches.

use super::dfsssp::{own_vc_policy, too_many, LayeredTables, Routes, MAX_LAYERS, NO_PORT};
use super::table::hashed_minimal_port;
use super::Routing;
use super::RoutingParams;
use crate::config::ConfigError;
use crate::rng::mix64;
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;
use std::time::Instant;

/// The minimal paths of `sp`: at `x` towards `t`, the minimal port a hash of `(x, t)` picks.
pub fn sp_routes(net: &Fabric) -> Routes {
    let mut r = Routes::new(net);
    let n = r.n;
    for t in 0..r.e() {
        let dst = r.ends[t];
        for at in 0..n as SwitchId {
            if at != dst && net.switch_alive(at) {
                let hash = mix64(((at as u64) << 32) | dst as u64);
                r.next[t * n + at as usize] = hashed_minimal_port(net, at, dst, hash).unwrap_or(NO_PORT);
            }
        }
    }
    r
}

/// One virtual layer: the routes per dependency and a topological order of the channels.
struct Layer {
    cnt: Vec<u32>,
    ord: Vec<u32>,
    /// The dependencies in use as bits, `words` per channel: bit `q` of channel `a` when `a`'s
    /// dependency on port `q` of its far end is in use (`cnt` not 0), so that the forward search
    /// visits the dependencies in use without reading the counts of every port.
    out: Vec<u64>,
    /// The same by the channel depended on: bit `q` of channel `b` (out of switch `v`) when the
    /// channel entering `v` through its port `q` depends on `b` (the backward search).
    inb: Vec<u64>,
}

impl Layer {
    fn new(nch: usize, p: usize, words: usize) -> Self {
        Layer {
            cnt: vec![0; nch * p],
            ord: (0..nch as u32).collect(),
            out: vec![0; nch * words],
            inb: vec![0; nch * words],
        }
    }
}

/// The layers and the scratch space of the incremental acyclicity test.
struct Layers<'a> {
    r: &'a Routes,
    /// `rev[v * p + q]`: the channel entering `v` through its port `q` (`u32::MAX` if none).
    rev: Vec<u32>,
    /// `entry[c]`: the port through which channel `c` enters its far end (`rev`'s inverse).
    entry: Vec<u16>,
    /// Words of a channel's dependency bits ([`Layer::out`]).
    words: usize,
    layers: Vec<Layer>,
    stamp: Vec<u32>,
    generation: u32,
    fwd: Vec<u32>,
    back: Vec<u32>,
    stack: Vec<u32>,
    pool: Vec<u32>,
}

impl<'a> Layers<'a> {
    fn new(net: &Fabric, r: &'a Routes) -> Self {
        let (n, p) = (r.n, r.p);
        let mut rev = vec![u32::MAX; n * p];
        let mut entry = vec![0u16; n * p];
        for v in 0..n as SwitchId {
            for q in 0..net.switch_ports(v) as u16 {
                if let Some((u, pu)) = net.neighbour(v, q) {
                    rev[v as usize * p + q as usize] = (u as usize * p + pu as usize) as u32;
                    entry[u as usize * p + pu as usize] = q;
                }
            }
        }
        Layers {
            r,
            rev,
            entry,
            words: p.div_ceil(64),
            layers: Vec::new(),
            stamp: vec![0; n * p],
            generation: 0,
            fwd: Vec::new(),
            back: Vec::new(),
            stack: Vec::new(),
            pool: Vec::new(),
        }
    }

    /// Add the dependency `x -> y` (not yet in layer `l`) to the order of layer `l` if that keeps
    /// it acyclic (Pearce and Kelly): false, with nothing changed, if `y` reaches `x`.
    fn order(&mut self, l: usize, x: u32, y: u32) -> bool {
        let p = self.r.p;
        let layer = &mut self.layers[l];
        let (ox, oy) = (layer.ord[x as usize], layer.ord[y as usize]);
        if ox < oy {
            return true;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Stamps from 2^32 searches ago would read as this one's.
            self.stamp.fill(0);
            self.generation = 1;
        }
        let g = self.generation;
        // Forward from y over channels ordered before x.
        self.fwd.clear();
        self.stack.clear();
        self.stack.push(y);
        self.stamp[y as usize] = g;
        let words = self.words;
        while let Some(a) = self.stack.pop() {
            self.fwd.push(a);
            let far = self.r.far[a as usize] as usize;
            for k in 0..words {
                let mut bits = layer.out[a as usize * words + k];
                while bits != 0 {
                    let q = k * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let b = (far * p + q) as u32;
                    if b == x {
                        return false;
                    }
                    if self.stamp[b as usize] != g && layer.ord[b as usize] < ox {
                        self.stamp[b as usize] = g;
                        self.stack.push(b);
                    }
                }
            }
        }
        // Backward from x over channels ordered after y.
        self.back.clear();
        self.stack.push(x);
        self.stamp[x as usize] = g;
        while let Some(a) = self.stack.pop() {
            self.back.push(a);
            let v = a as usize / p;
            for k in 0..words {
                let mut bits = layer.inb[a as usize * words + k];
                while bits != 0 {
                    let q = k * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let c1 = self.rev[v * p + q];
                    if self.stamp[c1 as usize] != g && layer.ord[c1 as usize] > oy {
                        self.stamp[c1 as usize] = g;
                        self.stack.push(c1);
                    }
                }
            }
        }
        // Reorder: the backward set, then the forward set, into the positions they held.
        let ord = &mut layer.ord;
        self.back.sort_unstable_by_key(|&a| ord[a as usize]);
        self.fwd.sort_unstable_by_key(|&a| ord[a as usize]);
        // The positions in increasing order: the merge of the two sorted sets' positions.
        self.pool.clear();
        let (mut i, mut j) = (0, 0);
        while i < self.back.len() || j < self.fwd.len() {
            let ob = self.back.get(i).map_or(u32::MAX, |&a| ord[a as usize]);
            let of = self.fwd.get(j).map_or(u32::MAX, |&a| ord[a as usize]);
            if ob < of {
                self.pool.push(ob);
                i += 1;
            } else {
                self.pool.push(of);
                j += 1;
            }
        }
        for (i, &a) in self.back.iter().chain(self.fwd.iter()).enumerate() {
            ord[a as usize] = self.pool[i];
        }
        true
    }

    /// Use dependency `d` (channel `d / p` on to port `d % p` of its far end) once more in layer
    /// `l` (`add`), or once less, keeping the dependency bits.
    fn count(&mut self, l: usize, d: usize, add: bool) {
        let (p, words) = (self.r.p, self.words);
        let layer = &mut self.layers[l];
        let was = layer.cnt[d];
        layer.cnt[d] = if add { was + 1 } else { was - 1 };
        if (was == 0) != (layer.cnt[d] == 0) {
            let (a, q) = (d / p, d % p);
            let b = self.r.dep_target(d);
            let r = self.entry[a] as usize;
            for (w, bit) in [(&mut layer.out[a * words + q / 64], q % 64), (&mut layer.inb[b * words + r / 64], r % 64)]
            {
                *w ^= 1 << bit;
            }
        }
    }

    /// Add the path with channels `chs` to layer `l` if its CDG stays acyclic.
    fn try_add(&mut self, l: usize, chs: &[u32]) -> bool {
        let p = self.r.p;
        for i in 0..chs.len().saturating_sub(1) {
            let d = chs[i] as usize * p + chs[i + 1] as usize % p;
            if self.layers[l].cnt[d] == 0 && !self.order(l, chs[i], chs[i + 1]) {
                for j in 0..i {
                    self.count(l, chs[j] as usize * p + chs[j + 1] as usize % p, false);
                }
                return false;
            }
            self.count(l, d, true);
        }
        true
    }
}

/// LASH's layers: the layer of every pair (`u8::MAX` for unrouted pairs) and the number of layers
/// (`Err` with the count reached if more than the builders compute).
pub fn assign_layers(net: &Fabric, r: &Routes) -> Result<(Vec<u8>, usize), usize> {
    let e = r.e();
    let nch = r.n * r.p;
    let mut ls = Layers::new(net, r);
    let mut layer_of = vec![u8::MAX; e * e];
    let mut chs: Vec<u32> = Vec::new();
    // Pair ids index the route table as well as `layer_of`, so the loop runs over ids.
    #[allow(clippy::needless_range_loop)]
    for pid in 0..e * e {
        if !r.routed(pid) {
            continue;
        }
        chs.clear();
        r.channels(pid, |c| chs.push(c));
        let mut l = 0;
        loop {
            if l == ls.layers.len() {
                if l >= MAX_LAYERS {
                    return Err(l + 1);
                }
                ls.layers.push(Layer::new(nch, r.p, ls.words));
            }
            if ls.try_add(l, &chs) {
                layer_of[pid] = l as u8;
                break;
            }
            l += 1;
        }
    }
    let layers = ls.layers.len();
    Ok((layer_of, layers))
}

/// LASH over `net` with `configured` VCs (0: the layers needed).
pub fn lash(net: &Fabric, configured: usize) -> Result<LayeredTables, ConfigError> {
    let start = Instant::now();
    let routes = sp_routes(net);
    let (layer_of, layers) = assign_layers(net, &routes).map_err(|l| too_many("lash", l))?;
    LayeredTables::new("lash", routes, &layer_of, layers, configured, start)
}

/// `routing.algorithm = "lash"`: reads `routing.vcs` (0: the layers needed) and refuses any
/// `routing.vc_policy` but the default.
pub fn build(cfg: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    own_vc_policy(cfg, "lash", "one VC per virtual layer")?;
    Ok(Box::new(lash(&net, cfg.vcs.unwrap_or(0))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the dependencies counted in `cnt` (channel `d / p` on to port `d % p` of its far
    /// end) form a cycle: a plain depth-first search.
    fn cyclic(r: &Routes, cnt: &[u32]) -> bool {
        let (nch, p) = (r.n * r.p, r.p);
        let mut colour = vec![0u8; nch];
        for root in 0..nch {
            if colour[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            colour[root] = 1;
            while let Some(&mut (c, ref mut q)) = stack.last_mut() {
                if *q == p {
                    colour[c] = 2;
                    stack.pop();
                    continue;
                }
                let d = c * p + *q;
                *q += 1;
                if cnt[d] == 0 {
                    continue;
                }
                let w = r.dep_target(d);
                match colour[w] {
                    1 => return true,
                    0 => {
                        colour[w] = 1;
                        stack.push((w, 0));
                    }
                    _ => {}
                }
            }
        }
        false
    }

    /// Every pair's path is accepted by a layer exactly when its dependencies keep that layer's
    /// CDG acyclic (checked by a plain search on every try, refusals with their roll-back
    /// included), and the dependency bits follow the counts: on a faulty torus whose pairs need
    /// several layers.
    #[test]
    fn layers_accept_a_path_exactly_when_their_cdg_stays_acyclic() {
        let cfg = crate::routing::tests::topology_config(
            "kind = \"torus\"\nsides = [4, 4, 3]\nservers_per_switch = 1",
            &["faults.random_links=4"],
        );
        let net = crate::sim::build_network(&cfg).unwrap();
        let r = sp_routes(&net);
        let (nch, p) = (r.n * r.p, r.p);
        let mut ls = Layers::new(&net, &r);
        let (mut chs, mut refusals) = (Vec::new(), 0);
        for pid in (0..r.e() * r.e()).filter(|&pid| r.routed(pid)) {
            chs.clear();
            r.channels(pid, |c| chs.push(c));
            for l in 0.. {
                if l == ls.layers.len() {
                    ls.layers.push(Layer::new(nch, p, ls.words));
                }
                let mut with = ls.layers[l].cnt.clone();
                for w in chs.windows(2) {
                    with[w[0] as usize * p + w[1] as usize % p] += 1;
                }
                let before = ls.layers[l].cnt.clone();
                let accepted = ls.try_add(l, &chs);
                assert_eq!(accepted, !cyclic(&r, &with), "pair {pid}, layer {l}");
                assert_eq!(ls.layers[l].cnt, if accepted { with } else { before }, "pair {pid}, layer {l}");
                for (d, &c) in ls.layers[l].cnt.iter().enumerate() {
                    let (a, q) = (d / p, d % p);
                    assert_eq!(ls.layers[l].out[a * ls.words + q / 64] >> (q % 64) & 1 == 1, c > 0, "bit of {d}");
                }
                if accepted {
                    break;
                }
                refusals += 1;
            }
        }
        assert!(ls.layers.len() > 1 && refusals > 50, "{} layers, {refusals} refusals", ls.layers.len());
    }
}

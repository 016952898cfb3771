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
//! builder keeps, per layer, a count per dependency (4 bytes per channel and port) and an order per
//! channel.

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
}

/// The layers and the scratch space of the incremental acyclicity test.
struct Layers<'a> {
    r: &'a Routes,
    /// `rev[v * p + q]`: the channel entering `v` through its port `q` (`u32::MAX` if none).
    rev: Vec<u32>,
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
        for v in 0..n as SwitchId {
            for q in 0..net.switch_ports(v) as u16 {
                if let Some((u, pu)) = net.neighbour(v, q) {
                    rev[v as usize * p + q as usize] = (u as usize * p + pu as usize) as u32;
                }
            }
        }
        Layers {
            r,
            rev,
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
        self.generation += 1;
        let g = self.generation;
        // Forward from y over channels ordered before x.
        self.fwd.clear();
        self.stack.clear();
        self.stack.push(y);
        self.stamp[y as usize] = g;
        while let Some(a) = self.stack.pop() {
            self.fwd.push(a);
            for q in 0..p {
                let d = a as usize * p + q;
                if layer.cnt[d] == 0 {
                    continue;
                }
                let b = self.r.dep_target(d) as u32;
                if b == x {
                    return false;
                }
                if self.stamp[b as usize] != g && layer.ord[b as usize] < ox {
                    self.stamp[b as usize] = g;
                    self.stack.push(b);
                }
            }
        }
        // Backward from x over channels ordered after y.
        self.back.clear();
        self.stack.push(x);
        self.stamp[x as usize] = g;
        while let Some(a) = self.stack.pop() {
            self.back.push(a);
            let (v, p2) = (a as usize / p, a as usize % p);
            for q in 0..p {
                let c1 = self.rev[v * p + q];
                if c1 == u32::MAX || layer.cnt[c1 as usize * p + p2] == 0 {
                    continue;
                }
                if self.stamp[c1 as usize] != g && layer.ord[c1 as usize] > oy {
                    self.stamp[c1 as usize] = g;
                    self.stack.push(c1);
                }
            }
        }
        // Reorder: the backward set, then the forward set, into the positions they held.
        let ord = &mut layer.ord;
        self.back.sort_unstable_by_key(|&a| ord[a as usize]);
        self.fwd.sort_unstable_by_key(|&a| ord[a as usize]);
        self.pool.clear();
        self.pool.extend(self.back.iter().chain(self.fwd.iter()).map(|&a| ord[a as usize]));
        self.pool.sort_unstable();
        for (i, &a) in self.back.iter().chain(self.fwd.iter()).enumerate() {
            ord[a as usize] = self.pool[i];
        }
        true
    }

    /// Add the path with channels `chs` to layer `l` if its CDG stays acyclic.
    fn try_add(&mut self, l: usize, chs: &[u32]) -> bool {
        let p = self.r.p;
        for i in 0..chs.len().saturating_sub(1) {
            let d = chs[i] as usize * p + chs[i + 1] as usize % p;
            if self.layers[l].cnt[d] == 0 && !self.order(l, chs[i], chs[i + 1]) {
                for j in 0..i {
                    self.layers[l].cnt[chs[j] as usize * p + chs[j + 1] as usize % p] -= 1;
                }
                return false;
            }
            self.layers[l].cnt[d] += 1;
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
                ls.layers.push(Layer { cnt: vec![0; nch * r.p], ord: (0..nch as u32).collect() });
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

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
//! with `a` before `b` costs nothing and otherwise only the channels between the two are searched
//! (`AcyclicCdg` of `cdg.rs`).
//!
//! **VCs.** As DFSSSP ([`super::dfsssp`]): `routing.vcs = 0` uses the layers needed; more VCs are
//! spread over the layers with the most routes per VC; fewer is a config error (exit 2) naming
//! `routing.vcs` and the number needed. `routing.vc_policy` must stay at its default.
//!
//! **Cost.** Tables as DFSSSP's: 2 bytes per (switch, destination) and one byte per pair. The
//! builder keeps, per layer, a count per dependency (4 bytes per channel and port), an order per
//! channel, and the dependencies in use as bit sets (forward and backward) for its searches
//! (`cdg.rs`, shared with Nue).

use super::cdg::{wiring, AcyclicCdg};
use super::dfsssp::{own_vc_policy, too_many, LayeredTables, Routes, MAX_LAYERS, NO_PORT};
use super::table::hashed_minimal_port;
use super::Routing;
use super::RoutingParams;
use crate::error::ConfigError;
use crate::rng::mix64;
use crate::topology::{Fabric, PortId, SwitchId};
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

/// The layers: per virtual layer the dependencies of its routes, kept acyclic
/// ([`AcyclicCdg`]).
struct Layers<'a> {
    r: &'a Routes,
    /// `back[c]`: the port through which channel `c` enters its far end (`r.far[c]`).
    back: Vec<PortId>,
    layers: Vec<AcyclicCdg>,
}

impl<'a> Layers<'a> {
    fn new(net: &Fabric, r: &'a Routes) -> Self {
        // The far ends are `r.far` already (the same builder's).
        let (_, back) = wiring(net, r.p);
        Layers { r, back, layers: Vec::new() }
    }

    /// Open a new layer.
    fn open(&mut self) {
        // LASH retries a dependency only in another layer or after a roll-back removed some:
        // keeping refusals would not pay for their memory.
        self.layers.push(AcyclicCdg::new(self.r.n * self.r.p, self.r.p, false));
    }

    /// Add the path with channels `chs` to layer `l` if its CDG stays acyclic (nothing changes
    /// if not).
    fn try_add(&mut self, l: usize, chs: &[u32]) -> bool {
        let (far, back, layer) = (&self.r.far, &self.back, &mut self.layers[l]);
        for i in 0..chs.len().saturating_sub(1) {
            if !layer.add(far, back, chs[i], chs[i + 1]) {
                for j in 0..i {
                    let e = layer.edge(chs[j], (chs[j + 1] as usize % self.r.p) as PortId);
                    layer.remove(far, back, e);
                }
                return false;
            }
        }
        true
    }
}

/// LASH's layers: the layer of every pair (`u8::MAX` for unrouted pairs) and the number of layers
/// (`Err` with the count reached if more than the builders compute).
pub fn assign_layers(net: &Fabric, r: &Routes) -> Result<(Vec<u8>, usize), usize> {
    let e = r.e();
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
                ls.open();
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
    /// included): on a faulty torus whose pairs need several layers.
    #[test]
    fn layers_accept_a_path_exactly_when_their_cdg_stays_acyclic() {
        let cfg = crate::routing::tests::topology_config(
            "kind = \"torus\"\nsides = [4, 4, 3]\nservers_per_switch = 1",
            &["faults.random_links=4"],
        );
        let net = crate::sim::build_network(&cfg).unwrap();
        let r = sp_routes(&net);
        let p = r.p;
        let mut ls = Layers::new(&net, &r);
        let (mut chs, mut refusals) = (Vec::new(), 0);
        for pid in (0..r.e() * r.e()).filter(|&pid| r.routed(pid)) {
            chs.clear();
            r.channels(pid, |c| chs.push(c));
            for l in 0.. {
                if l == ls.layers.len() {
                    ls.open();
                }
                let counts = |ls: &Layers| (0..r.n * p * p).map(|d| ls.layers[l].uses(d)).collect::<Vec<_>>();
                let before = counts(&ls);
                let mut with = before.clone();
                for w in chs.windows(2) {
                    with[w[0] as usize * p + w[1] as usize % p] += 1;
                }
                let accepted = ls.try_add(l, &chs);
                assert_eq!(accepted, !cyclic(&r, &with), "pair {pid}, layer {l}");
                assert_eq!(counts(&ls), if accepted { with } else { before }, "pair {pid}, layer {l}");
                if accepted {
                    break;
                }
                refusals += 1;
            }
        }
        assert!(ls.layers.len() > 1 && refusals > 50, "{} layers, {refusals} refusals", ls.layers.len());
    }
}

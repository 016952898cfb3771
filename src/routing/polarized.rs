//! Polarized routes (SurePath paper, section 3.1.2 and Table 1; Camarero, Martinez and Beivide,
//! "Polarized routing", HOTI 2021).
//!
//! For a packet from switch `s` to switch `t` at switch `c`, the weight `mu(c) = d(c,s) - d(c,t)`
//! never decreases along the route. A hop to neighbour `c'` changes the distances by
//! `(ds, dt) = (d(c',s) - d(c,s), d(c',t) - d(c,t))`, each in `{-1, 0, +1}`, and `mu` by
//! `dmu = ds - dt`. Of the nine combinations, Table 1 allows exactly five:
//!
//! | move                | (ds, dt)  | dmu |
//! |---------------------|-----------|-----|
//! | depart s, approach t | (+1, -1) | 2   |
//! | depart s, revolve t  | (+1,  0) | 1   |
//! | revolve s, approach t| ( 0, -1) | 1   |
//! | depart s, depart t   | (+1, +1) | 0   |
//! | approach s and t     | (-1, -1) | 0   |
//!
//! The two `dmu = 0` moves are filtered by the header bit `d(c,s) < d(c,t)` (section 3.1.2): while
//! the packet is closer to its source it may only depart both (`(+1,+1)`), otherwise it may only
//! approach both (`(-1,-1)`). Since `mu` stays put in such moves, `d(c,s)` grows (or `d(c,t)`
//! shrinks) strictly, so routes are finite. Penalties depend on `dmu` relative to the best
//! candidate: the highest `dmu` among the candidates gets 0 phits, one less 64, two less 80.
//!
//! Distances come from [`Fabric::distance`] (exact over the live links when links have failed), so the routes
//! adapt to faults. On a fault-free HyperX they are Hamming distances, updated per dimension; on a
//! faulty one too, corrected for the neighbours listed among the source's or destination's
//! distance exceptions (`PolarizedRoutes::faulty_hyperx_hops`).
//!
//! **Polarized** (`routing.algorithm = "polarized"`) uses these routes with the ladder, one VC per
//! hop (or another `routing.vc_policy`). On a fault-free HyperX, SurePath section 3.1.2 bounds
//! polarized routes by twice the diameter, and the ladder has `2 x diameter` steps (`hxsim
//! check-deadlock` finds exactly 6 hops on 3x3x3 and 4x4x4).
//!
//! With failed links two things break, and standalone Polarized handles them with a table (the
//! SurePath paper does not use Polarized without its escape on faulty networks; PolSP instead takes
//! forced escape hops, see [`super::surepath`]):
//! - *dead ends*: a switch where no move is allowed (e.g. every neighbour closer to `t` is also
//!   closer to `s` while the packet is still nearer its source). Polarized then drops every move
//!   into a switch from which no polarized route reaches `t` ("corners");
//! - *longer routes*: routes can exceed twice the (faulty) diameter (9 hops at diameter 4 on a
//!   3x3x3 with 8 failed links). The ladder is then sized by the longest route that remains.
//!
//! Both come from one pass per pair `(s, t)`: allowed moves strictly increase `(mu, d(c,s))` while
//! `mu < 0` and `(mu, -d(c,t))` after, so they form a DAG, and a memoised depth-first search finds
//! its dead switches and longest path. That is O(switches^2) searches of O(links) each, so it is
//! only done for faulty networks of at most [`MAX_FAULTY_SWITCHES`] switches.

use super::deadlock::FxSet;
use super::vc::VcPolicy;
use super::{network_diameter, push_run, Candidate, CandidateRun, RouteState, Routing, RoutingParams};
use crate::config::ConfigError;
use crate::topology::distances::{SparseDistances, DEBUG_CHECK_SWITCHES};
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, PortId, SwitchId};
use rayon::prelude::*;
use std::sync::Arc;

/// Penalties by how far below the best candidate's `dmu` a candidate is (0, 1, 2).
pub const PENALTIES: [u32; 3] = [0, 64, 80];
/// Largest faulty network for which standalone Polarized computes its dead ends.
pub const MAX_FAULTY_SWITCHES: usize = 1024;
/// Most exceptions a source or destination may have for the faulty-HyperX fast path of
/// [`PolarizedRoutes::hops`], which scans both lists once per hop; longer lists (next to a large
/// fault shape) take the per-neighbour path.
const FAST_EXCEPTIONS: usize = 32;

/// Table 1: the weight change of a move `(ds, dt)` for a packet with `a = d(c,s)` and `b = d(c,t)`,
/// or `None` if Polarized does not allow it.
#[inline]
pub fn allowed(a: u32, b: u32, ds: i32, dt: i32) -> Option<i32> {
    let dmu = ds - dt;
    if dmu > 0 || (dmu == 0 && ((a < b && ds == 1) || (a >= b && dt == -1))) {
        Some(dmu)
    } else {
        None
    }
}

/// Dead-end keys and longest route from one source, or a pair with no polarized route at all.
type DeadEnds = Result<(Vec<u64>, usize), (SwitchId, SwitchId)>;

/// The Polarized route set.
pub struct PolarizedRoutes {
    net: Arc<Fabric>,
    /// Dead ends `(s * n + t) * n + c` to avoid (only when built with [`PolarizedRoutes::pruned`]).
    corners: Option<FxSet<u64>>,
    /// Longest route once dead ends are avoided (pruned routes only).
    longest: usize,
}

impl PolarizedRoutes {
    /// Polarized routes over `net`, exactly as the paper defines them.
    pub fn new(net: Arc<Fabric>) -> Self {
        PolarizedRoutes { net, corners: None, longest: 0 }
    }

    /// Polarized routes that avoid dead ends, with their longest route; on a fault-free HyperX there
    /// are none and this is [`PolarizedRoutes::new`]. Errors name the pair Polarized cannot route.
    pub fn pruned(net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let mut r = PolarizedRoutes::new(net.clone());
        if net.fault_free_hyperx().is_some() {
            return Ok(r);
        }
        let n = net.num_switches();
        if n > MAX_FAULTY_SWITCHES {
            return Err(ConfigError::value(
                "routing.algorithm",
                "\"polarized\"",
                format!(
                    "on faulty networks of at most {MAX_FAULTY_SWITCHES} switches (this one has {n}); \
                     use \"surepath-polarized\", whose escape subnetwork needs no dead-end table"
                ),
            ));
        }
        let per_src: Vec<DeadEnds> = (0..n as SwitchId).into_par_iter().map(|s| r.dead_ends_from(s)).collect();
        let mut corners = FxSet::default();
        for x in per_src {
            let (dead, longest) = x.map_err(|(s, t)| {
                ConfigError::value(
                    "faults.random_links",
                    net.failed_links(),
                    format!("failures that leave a polarized route from switch {s} to switch {t} (there is none)"),
                )
            })?;
            corners.extend(dead);
            r.longest = r.longest.max(longest);
        }
        r.corners = Some(corners);
        Ok(r)
    }

    /// Dead ends (as keys) and longest route for every destination from `s`, or the first pair
    /// without any polarized route.
    fn dead_ends_from(&self, s: SwitchId) -> DeadEnds {
        let n = self.net.num_switches();
        let mut dead = Vec::new();
        let mut longest = 0;
        // memo[c]: None = unvisited, Some(None) = dead end, Some(Some(l)) = longest route to t.
        let mut memo: Vec<Option<Option<u16>>> = vec![None; n];
        if !self.net.switch_alive(s) {
            return Ok((dead, longest));
        }
        for t in 0..n as SwitchId {
            // No packet starts at or goes to a failed switch.
            if t == s || !self.net.switch_alive(t) {
                continue;
            }
            memo.iter_mut().for_each(|m| *m = None);
            let st = RouteState { src: s, dst: t, ..Default::default() };
            let Some(l) = self.longest_from(s, &st, &mut memo) else { return Err((s, t)) };
            longest = longest.max(l as usize);
            let base = (s as u64 * n as u64 + t as u64) * n as u64;
            dead.extend(memo.iter().enumerate().filter(|(_, m)| **m == Some(None)).map(|(c, _)| base + c as u64));
        }
        Ok((dead, longest))
    }

    fn longest_from(&self, c: SwitchId, st: &RouteState, memo: &mut Vec<Option<Option<u16>>>) -> Option<u16> {
        if c == st.dst {
            return Some(0);
        }
        if let Some(m) = memo[c as usize] {
            return m;
        }
        let mut next = Vec::new();
        self.hops(c, st, |p, _| next.push(p));
        let mut best = None;
        for p in next {
            let y = self.net.neighbour(c, p).expect("hops are on live ports").0;
            if let Some(l) = self.longest_from(y, st, memo) {
                best = Some(best.unwrap_or(0).max(l + 1));
            }
        }
        memo[c as usize] = Some(best);
        best
    }

    /// Longest route: `2 x diameter` (SurePath section 3.1.2), or the longest pruned route.
    pub fn max_hops(&self) -> usize {
        if self.corners.is_some() {
            self.longest
        } else {
            2 * network_diameter(&self.net) as usize
        }
    }

    #[inline]
    fn is_corner(&self, st: &RouteState, y: SwitchId) -> bool {
        self.corners.as_ref().is_some_and(|set| {
            let n = self.net.num_switches() as u64;
            set.contains(&((st.src as u64 * n + st.dst as u64) * n + y as u64))
        })
    }

    /// Calls `f(port, dmu)` for every hop Polarized allows a packet in state `st` at `at`.
    #[inline]
    pub fn hops(&self, at: SwitchId, st: &RouteState, mut f: impl FnMut(PortId, i32)) {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        if let Some(h) = net.fault_free_hyperx() {
            let (a, b) = (h.hamming(at, s), h.hamming(at, t));
            for d in 0..h.dims() {
                let (x, xs, xt) = (h.coord(at, d), h.coord(s, d), h.coord(t, d));
                // A move to coordinate `v` depends only on whether `v` is the source's or the
                // target's coordinate: the four outcomes, indexed `(v == xs) | (v == xt) << 1`.
                let class = |eq_s: bool, eq_t: bool| {
                    allowed(a, b, !eq_s as i32 - (x != xs) as i32, !eq_t as i32 - (x != xt) as i32)
                };
                let moves = [class(false, false), class(true, false), class(false, true), class(true, true)];
                // Ports of dimension `d` are consecutive: every other coordinate in increasing
                // order, each with its trunks (`HyperX::port_to`).
                let k = h.trunk(d) as PortId;
                let mut port = h.dim_base(d) as PortId;
                for v in 0..h.side(d) {
                    if v == x {
                        continue;
                    }
                    if let Some(dmu) = moves[(v == xs) as usize | ((v == xt) as usize) << 1] {
                        for p in port..port + k {
                            f(p, dmu);
                        }
                    }
                    port += k;
                }
            }
            return;
        }
        if let Some(sd) = net.sparse_distances() {
            if cfg!(debug_assertions) && net.num_switches() <= DEBUG_CHECK_SWITCHES {
                // Debug builds: the fast path offers exactly the hops of the per-neighbour one.
                let mut fast = Vec::new();
                if self.faulty_hyperx_hops(sd, at, st, &mut |p, m| fast.push((p, m))) {
                    let mut slow = Vec::new();
                    self.sparse_hops(sd, at, st, &mut |p, m| slow.push((p, m)));
                    assert_eq!(fast, slow, "polarized hops at {at} from {s} to {t}");
                    fast.into_iter().for_each(|(p, m)| f(p, m));
                    return;
                }
            } else if self.faulty_hyperx_hops(sd, at, st, &mut f) {
                return;
            }
            self.sparse_hops(sd, at, st, &mut f);
            return;
        }
        let (a, b) = (net.distance(at, s), net.distance(at, t));
        for p in 0..net.switch_ports(at) as PortId {
            if let Some((y, _)) = net.neighbour(at, p) {
                let (ys, yt) = (net.distance(y, s), net.distance(y, t));
                if ys == UNREACHABLE || yt == UNREACHABLE {
                    continue;
                }
                if let Some(dmu) = allowed(a, b, ys as i32 - a as i32, yt as i32 - b as i32) {
                    if !self.is_corner(st, y) {
                        f(p, dmu);
                    }
                }
            }
        }
    }

    /// [`PolarizedRoutes::hops`] on a faulty HyperX, one neighbour at a time: the same ports in the
    /// same order as the generic port scan, but neighbours come from coordinates (no virtual
    /// call, no port decoding) and each neighbour switch's distances are read once for all its
    /// trunks.
    fn sparse_hops(&self, sd: &SparseDistances, at: SwitchId, st: &RouteState, f: &mut impl FnMut(PortId, i32)) {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        let (a, b) = (sd.distance(at, s), sd.distance(at, t));
        sd.hyperx().for_each_neighbour(at, |y, ports| {
            let mut dists = None;
            for p in ports.filter(|&p| net.alive(at, p)) {
                let (ys, yt) = *dists.get_or_insert_with(|| (sd.distance(y, s), sd.distance(y, t)));
                if ys == UNREACHABLE || yt == UNREACHABLE {
                    continue;
                }
                if let Some(dmu) = allowed(a, b, ys as i32 - a as i32, yt as i32 - b as i32) {
                    if !self.is_corner(st, y) {
                        f(p, dmu);
                    }
                }
            }
        });
    }

    /// [`PolarizedRoutes::sparse_hops`] without a distance lookup per neighbour, or false (having
    /// called nothing) when it does not apply. A neighbour `y` of `at` reached by a live link is in
    /// `at`'s component, so when `s` and `t` are too, `d(y,s)` is the Hamming distance unless
    /// `(y, s)` is one of `s`'s few exceptions ([`SparseDistances::exceptions_to`]): the
    /// fault-free per-dimension update of the Hamming distances, corrected for the neighbours
    /// found in the exception lists (scanned once per hop) and with dead ports skipped.
    #[inline]
    fn faulty_hyperx_hops(
        &self,
        sd: &SparseDistances,
        at: SwitchId,
        st: &RouteState,
        f: &mut impl FnMut(PortId, i32),
    ) -> bool {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        if !sd.same_component(at, s) || !sd.same_component(at, t) {
            return false;
        }
        let ((ls, ds), (lt, dt)) = (sd.exceptions_to(s), sd.exceptions_to(t));
        if ls.len() > FAST_EXCEPTIONS || lt.len() > FAST_EXCEPTIONS {
            return false;
        }
        let h = sd.hyperx();
        // Neighbours of `at` among the exceptions: (switch, its exact distance to `s` or `t`).
        let mut near_s = [(0 as SwitchId, 0u32); FAST_EXCEPTIONS];
        let mut near_t = [(0 as SwitchId, 0u32); FAST_EXCEPTIONS];
        let (mut ns, mut nt) = (0, 0);
        for (&y, &dy) in ls.iter().zip(ds) {
            if h.hamming(y, at) == 1 {
                near_s[ns] = (y, dy as u32);
                ns += 1;
            }
        }
        for (&y, &dy) in lt.iter().zip(dt) {
            if h.hamming(y, at) == 1 {
                near_t[nt] = (y, dy as u32);
                nt += 1;
            }
        }
        let (a, b) = (sd.distance(at, s), sd.distance(at, t));
        let (ha, hb) = (h.hamming(at, s), h.hamming(at, t));
        for d in 0..h.dims() {
            let (x, xs, xt) = (h.coord(at, d), h.coord(s, d), h.coord(t, d));
            // Hamming distances of the neighbours in dimension `d` without their coordinate there.
            let (bs, bt) = (ha - (x != xs) as u32, hb - (x != xt) as u32);
            // Ports of dimension `d` are consecutive: every other coordinate in increasing order,
            // each with its trunks (`HyperX::port_to`).
            let k = h.trunk(d) as PortId;
            let mut port = h.dim_base(d) as PortId;
            for v in 0..h.side(d) {
                if v == x {
                    continue;
                }
                let first = port;
                port += k;
                let (mut ys, mut yt) = (bs + (v != xs) as u32, bt + (v != xt) as u32);
                if ns + nt > 0 {
                    let y = h.with_coord(at, d, v);
                    if let Some(e) = near_s[..ns].iter().find(|e| e.0 == y) {
                        ys = e.1;
                    }
                    if let Some(e) = near_t[..nt].iter().find(|e| e.0 == y) {
                        yt = e.1;
                    }
                }
                let Some(dmu) = allowed(a, b, ys as i32 - a as i32, yt as i32 - b as i32) else { continue };
                if self.corners.is_some() && self.is_corner(st, h.with_coord(at, d, v)) {
                    continue;
                }
                for p in first..first + k {
                    if net.alive(at, p) {
                        f(p, dmu);
                    }
                }
            }
        }
        true
    }

    /// Pushes the allowed hops as candidates, on the VCs `vcs(port)` gives, with the penalties of
    /// section 3.1.2 (relative to the best `dmu` offered).
    #[inline]
    pub fn candidates(
        &self,
        at: SwitchId,
        st: &RouteState,
        out: &mut Vec<Candidate>,
        mut vcs: impl FnMut(PortId) -> std::ops::Range<u8>,
    ) {
        let start = out.len();
        self.hops(at, st, |port, dmu| {
            for vc in vcs(port) {
                // The weight change is kept in `penalty` until the best one is known.
                out.push(Candidate { port, vc, penalty: dmu as u32, escape: false });
            }
        });
        let best = out[start..].iter().map(|c| c.penalty).max().unwrap_or(0);
        for c in &mut out[start..] {
            c.penalty = PENALTIES[(best - c.penalty) as usize];
        }
    }

    /// [`PolarizedRoutes::candidates`] as runs ([`Routing::candidate_runs`]): one run per allowed
    /// hop, on the VCs `vcs(port)` gives.
    #[inline]
    pub fn candidate_runs(
        &self,
        at: SwitchId,
        st: &RouteState,
        out: &mut Vec<CandidateRun>,
        mut vcs: impl FnMut(PortId) -> std::ops::Range<u8>,
    ) {
        let start = out.len();
        // As in `candidates`: the weight change stays in `penalty` until the best one is known,
        // and hops with no VC offer no candidate (nor a best weight).
        self.hops(at, st, |port, dmu| push_run(out, port, vcs(port), dmu as u32, false));
        let best = out[start..].iter().map(|c| c.penalty).max().unwrap_or(0);
        for c in &mut out[start..] {
            c.penalty = PENALTIES[(best - c.penalty) as usize];
        }
    }
}

/// Polarized routing with the ladder (or another `routing.vc_policy`).
pub struct Polarized {
    routes: PolarizedRoutes,
    net: Arc<Fabric>,
    policy: VcPolicy,
}

impl Polarized {
    /// Polarized over `net`.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let routes = PolarizedRoutes::pruned(net.clone())?;
        let diam = network_diameter(&net) as usize;
        let why = if net.is_faulty() {
            format!("polarized routes on this faulty network (diameter {diam}) are up to {} hops", routes.max_hops())
        } else {
            format!("polarized routes are up to 2 x diameter {diam} = {} hops", 2 * diam)
        };
        let policy = VcPolicy::from_params(params, 2 * net.topology().diameter() as usize, routes.max_hops(), &why)?;
        Ok(Polarized { routes, net, policy })
    }
}

impl Routing for Polarized {
    fn name(&self) -> &'static str {
        "polarized"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.routes.candidates(at, st, out, |port| self.policy.vcs_for(&self.net, at, st, port));
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        self.routes.candidate_runs(at, st, out, |port| self.policy.vcs_for(&self.net, at, st, port));
        true
    }
    fn cache_candidates(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FaultSet, HyperX, Topology};

    /// A faulty HyperX: `links` random link faults under `seed` and switch `dead` failed.
    fn faulty(sides: &[usize], trunks: &[usize], links: usize, seed: u64, dead: SwitchId) -> Arc<Fabric> {
        let h: Arc<dyn Topology> = Arc::new(HyperX::new(sides, trunks, 1));
        let mut f = FaultSet::random_links(&*h, links, seed).unwrap();
        f.switches.push(dead);
        Arc::new(Fabric::new(h, &f))
    }

    /// The fast path of the faulty HyperX, where it applies, and the per-neighbour path offer
    /// exactly Table 1's hops under BFS distances over the live links, for every (s, c, t).
    #[test]
    fn faulty_hyperx_hops_match_bfs_reference() {
        for (sides, trunks, links, seed) in
            [(&[4usize, 4, 4][..], &[1usize, 1, 1][..], 30, 3), (&[3, 4, 3], &[2, 1, 1], 24, 5)]
        {
            let net = faulty(sides, trunks, links, seed, 5);
            let sd = net.sparse_distances().unwrap();
            let h = sd.hyperx();
            let routes = PolarizedRoutes::new(net.clone());
            let n = net.num_switches() as SwitchId;
            let bfs: Vec<Vec<u32>> = (0..n).map(|b| net.bfs(b)).collect();
            let (mut fast_used, mut fast_corrected) = (0, 0);
            for s in (0..n).filter(|&s| net.switch_alive(s)) {
                for t in (0..n).filter(|&t| t != s && net.switch_alive(t)) {
                    let st = RouteState { src: s, dst: t, ..Default::default() };
                    for c in (0..n).filter(|&c| c != t && bfs[s as usize][c as usize] != UNREACHABLE) {
                        let (ds, dt) = (&bfs[s as usize], &bfs[t as usize]);
                        let mut want = Vec::new();
                        for p in 0..net.switch_ports(c) as PortId {
                            if let Some((y, _)) = net.neighbour(c, p) {
                                let (ys, yt) = (ds[y as usize], dt[y as usize]);
                                if ys == UNREACHABLE || yt == UNREACHABLE {
                                    continue;
                                }
                                let (a, b) = (ds[c as usize], dt[c as usize]);
                                if let Some(m) = allowed(a, b, ys as i32 - a as i32, yt as i32 - b as i32) {
                                    want.push((p, m));
                                }
                            }
                        }
                        let mut got = Vec::new();
                        routes.hops(c, &st, |p, m| got.push((p, m)));
                        assert_eq!(got, want, "{sides:?}: hops at {c} from {s} to {t}");
                        let mut slow = Vec::new();
                        routes.sparse_hops(sd, c, &st, &mut |p, m| slow.push((p, m)));
                        assert_eq!(slow, want, "{sides:?}: per-neighbour hops at {c} from {s} to {t}");
                        let mut fast = Vec::new();
                        if routes.faulty_hyperx_hops(sd, c, &st, &mut |p, m| fast.push((p, m))) {
                            assert_eq!(fast, want, "{sides:?}: fast hops at {c} from {s} to {t}");
                            fast_used += 1;
                            // Hops where some neighbour is off its Hamming distance (an exception).
                            let off =
                                |y: SwitchId| ds[y as usize] != h.hamming(y, s) || dt[y as usize] != h.hamming(y, t);
                            fast_corrected += (0..net.switch_ports(c) as PortId)
                                .any(|p| net.neighbour(c, p).is_some_and(|(y, _)| off(y)))
                                as usize;
                        } else {
                            assert!(fast.is_empty());
                        }
                    }
                }
            }
            assert!(
                fast_used > 0 && fast_corrected > 0,
                "{sides:?}: fast path {fast_used}, corrected {fast_corrected}"
            );
        }
    }
}

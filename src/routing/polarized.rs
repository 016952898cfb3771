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
//! With failed links two things break, and standalone Polarized handles them itself (the SurePath
//! paper does not use Polarized without its escape on faulty networks; PolSP instead takes forced
//! escape hops, see [`super::surepath`]):
//! - *dead ends*: a switch where no move is allowed (e.g. every neighbour closer to `t` is also
//!   closer to `s` while the packet is still nearer its source). Polarized then drops every move
//!   into a switch from which no polarized route reaches `t` ("corners");
//! - *longer routes*: routes can exceed twice the (faulty) diameter (9 hops at diameter 4 on a
//!   3x3x3 with 8 failed links). The ladder is then sized by the longest route that remains.
//!
//! Allowed moves strictly increase `(mu, d(c,s))` while `mu < 0` and `(mu, -d(c,t))` after, so they
//! form a DAG. On faulty networks of at most [`CORNER_TABLE_SWITCHES`] switches, one memoised
//! depth-first search per pair `(s, t)` finds its dead switches and the longest path, all up front
//! (`Corners::Table`). That is O(switches^2) searches, out of reach on larger networks, which
//! decide corners per candidate instead (`Corners::OnDemand`), exactly, from three facts:
//! - *A switch nearer `t` than `s` (`d(c,s) >= d(c,t)`) is never a corner*: every move that
//!   approaches `t` is allowed there and keeps it so, down a shortest path to `t`.
//! - *A pair has corners only if it has a switch with no allowed move at all* (follow moves from a
//!   corner: they end at one). Nearer `s` (`a = d(c,s) < b = d(c,t)`), the allowed moves are those
//!   departing `s`, and those keeping `d(c,s)` that approach `t`. So such a switch is a *peak* of
//!   `d(., s)` (no neighbour farther from `s`) with no same-level neighbour nearer `t`.
//! - *On a faulty HyperX, peaks are few and known.* A switch `p` at its Hamming distance `h` from
//!   `s` reaches a switch at distance `h + 1` over any live link in a dimension where it agrees
//!   with `s` (faults never shorten distances). So a peak is an exception of `s`
//!   ([`SparseDistances::exceptions_to`]), a switch with a dimension whose links all failed, or an
//!   antipode of `s` (`h` = dimensions), which is nearer `s` than `t` only if it is an exception of
//!   `t`. `PeakIndex` lists the first two kinds per source; a pair's check reads its source's
//!   list and its destination's exceptions, a few switches at 1% link faults.
//!
//! Pairs that may have a dead end then search, per candidate, for an allowed route out of the
//! region nearer `s` (memoised within one routing decision). The ladder of these larger networks
//! is sized by a bound, since their longest route would need the search per pair: while `a < b`,
//! each move raises `2a - b` by at least 1 from `-d(s,t)` to at most `D - 2` (`D` the diameter),
//! and after, each raises `a - 2b` from at least `-D` to `d(t,s) <= D`, so routes have at most
//! `4D - 1` hops ([`bounded_route_hops`]). A pair without any route shows at run time (the packet
//! finds no candidate at its source), not up front.

use super::deadlock::{FxMap, FxSet};
use super::vc::VcPolicy;
use super::{
    network_diameter, push_classes, push_run, Candidate, CandidateRun, PortClass, RouteState, Routing, RoutingParams,
};
use crate::error::ConfigError;
use crate::topology::distances::{SparseDistances, DEBUG_CHECK_SWITCHES};
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, HyperX, HyperZ, PortId, SwitchId};
use rayon::prelude::*;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// Penalties by how far below the best candidate's `dmu` a candidate is (0, 1, 2).
pub const PENALTIES: [u32; 3] = [0, 64, 80];
/// Largest faulty network for which standalone Polarized tabulates its dead ends and longest route
/// up front (`Corners::Table`); larger ones decide corners per candidate (`Corners::OnDemand`).
pub const CORNER_TABLE_SWITCHES: usize = 1024;
/// Most exceptions a source or destination may have for the faulty-HyperX fast path of
/// [`PolarizedRoutes::hops`], which scans both lists once per hop; longer lists (next to a large
/// fault shape) take the per-neighbour path.
const FAST_EXCEPTIONS: usize = 32;

/// The exceptions to a route's source and target: for each, the switches whose distance to it is
/// not the closed form's, and their exact distances ([`SparseDistances::exceptions_to`]).
type SourceTargetExceptions<'a> = [(&'a [SwitchId], &'a [u8]); 2];

/// The exceptions to `st`'s source and target where the closed-form hop loops of a faulty HyperX
/// (`faulty_hyperx_hops`, `faulty_hyperx_classes`) apply at `at`: `at`, the source and the
/// target in one component, and at most [`FAST_EXCEPTIONS`] exceptions each. `None` elsewhere.
#[inline]
fn few_exceptions<'a>(sd: &'a SparseDistances, at: SwitchId, st: &RouteState) -> Option<SourceTargetExceptions<'a>> {
    let (s, t) = (st.src, st.dst);
    if !sd.same_component(at, s) || !sd.same_component(at, t) {
        return None;
    }
    let lists = [sd.exceptions_to(s), sd.exceptions_to(t)];
    lists.iter().all(|l| l.0.len() <= FAST_EXCEPTIONS).then_some(lists)
}

/// Most of `at`'s neighbours among a route's exceptions that the closed-form hop loops of a faulty
/// HyperX correct; more (next to a fault shape) send the hops and classes to the per-neighbour
/// paths.
const NEAR: usize = 8;

/// "Not an exception": the closed form's distance holds.
const NONE: u32 = u32::MAX;

/// What one pass over a route's exception lists ([`few_exceptions`]) tells the hop loops at `at`:
/// `at`'s exact distances to the source and the target, and its neighbours among their exceptions
/// with their exact distances to each ([`NONE`] where that one is not an exception).
struct NearExceptions {
    a: u32,
    b: u32,
    near: [(SwitchId, u32, u32); NEAR],
    n: usize,
}

impl NearExceptions {
    /// Nothing found yet at a switch whose Hamming distances to the source and target are `ha`
    /// and `hb`.
    #[inline(always)]
    fn new(ha: u32, hb: u32) -> Self {
        NearExceptions { a: ha, b: hb, near: [(0, NONE, NONE); NEAR], n: 0 }
    }

    /// The pass over `lists` at `at` on HyperX `h`: `false` where more than [`NEAR`] neighbours
    /// are exceptions. Filled in place and always inlined: returned by value, the copies cost
    /// both callers about 100 instructions a call.
    #[inline(always)]
    fn scan(&mut self, h: &HyperX, at: SwitchId, [(ls, ds), (lt, dt)]: SourceTargetExceptions) -> bool {
        let e = self;
        for (&y, &dy) in ls.iter().zip(ds) {
            match h.hamming(y, at) {
                0 => e.a = dy as u32,
                1 if e.n == NEAR => return false,
                1 => {
                    e.near[e.n] = (y, dy as u32, NONE);
                    e.n += 1;
                }
                _ => {}
            }
        }
        let of_s = e.n;
        for (&y, &dy) in lt.iter().zip(dt) {
            match h.hamming(y, at) {
                0 => e.b = dy as u32,
                1 => match e.near[..of_s].iter_mut().find(|x| x.0 == y) {
                    Some(x) => x.2 = dy as u32,
                    None if e.n == NEAR => return false,
                    None => {
                        e.near[e.n] = (y, NONE, dy as u32);
                        e.n += 1;
                    }
                },
                _ => {}
            }
        }
        true
    }

    /// The neighbours found, each with its exact distances to the source and the target.
    #[inline]
    fn neighbours(&self) -> &[(SwitchId, u32, u32)] {
        &self.near[..self.n]
    }
}

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

/// How Polarized routes avoid dead ends (see the module doc).
enum Corners {
    /// None avoided: the routes exactly as the paper defines them (fault-free networks, where
    /// there are none, and PolSP, whose escape takes over at a dead end).
    None,
    /// Every dead end `(s * n + t) * n + c`, found up front, and one bit per pair `s * n + t`
    /// that has any: most pairs have none, and their hops then look nothing up in the set.
    Table(FxSet<u64>, Vec<u64>),
    /// Decided per candidate, with the peaks of each source.
    OnDemand(PeakIndex),
}

/// Moves are filtered against nothing (the raw moves a search explores).
static NO_CORNERS: Corners = Corners::None;

/// Per source `s`, the switches that may be peaks of `d(., s)` other than its antipodes: its
/// exceptions and the switches with a dimension whose links all failed, kept where they are peaks
/// (see the module doc). `None` on networks without sparse distances (not a HyperX), where every
/// pair is searched.
struct PeakIndex {
    /// The first entry of each source in the list (`n + 1` offsets), and the list: each source's
    /// peaks, sorted.
    lists: Option<(Vec<u32>, Vec<SwitchId>)>,
}

impl PeakIndex {
    /// The peaks of every source of `net` (HyperX with sparse distances), in parallel.
    fn new(routes: &PolarizedRoutes) -> Self {
        let net = &*routes.net;
        let Some(sd) = net.sparse_distances() else { return PeakIndex { lists: None } };
        let h = sd.hyperx();
        let n = net.num_switches();
        // Switches with a dimension whose links (all trunks, to every other coordinate) failed:
        // (switch, mask of such dimensions).
        let walled: Vec<(SwitchId, u32)> = (0..n as SwitchId)
            .filter(|&p| net.switch_alive(p))
            .filter_map(|p| {
                let mut linked = 0u32;
                h.for_each_neighbour(p, |_, ports| {
                    if routes.linked(p, ports.clone()) {
                        linked |= 1 << h.port_dim(ports.start);
                    }
                });
                let mask = ((1u32 << h.dims()) - 1) & !linked;
                (mask != 0).then_some((p, mask))
            })
            .collect();
        let per_src: Vec<Vec<SwitchId>> = (0..n as SwitchId)
            .into_par_iter()
            .map(|s| {
                if !net.switch_alive(s) {
                    return Vec::new();
                }
                let mut cands: Vec<SwitchId> = sd.exceptions_to(s).0.to_vec();
                for &(p, mask) in &walled {
                    // Below the antipode, `p` has no farther neighbour only if every dimension in
                    // which it agrees with `s` is walled.
                    let agree = (0..h.dims()).filter(|&d| h.coord(p, d) == h.coord(s, d)).fold(0, |m, d| m | 1 << d);
                    if agree != 0 && agree & !mask == 0 {
                        cands.push(p);
                    }
                }
                cands.sort_unstable();
                cands.dedup();
                cands.retain(|&p| {
                    p != s
                        && net.switch_alive(p)
                        && sd.same_component(p, s)
                        && routes.is_peak(sd, p, s, sd.distance(p, s))
                });
                cands
            })
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        let mut list = Vec::new();
        for l in per_src {
            start.push(list.len() as u32);
            list.extend(l);
        }
        start.push(list.len() as u32);
        PeakIndex { lists: Some((start, list)) }
    }
}

/// The dead-end filter of one routing decision for the pair `(st.src, st.dst)`: which allowed
/// moves a packet may take ([`Filter::keep`]).
struct Filter<'a> {
    routes: &'a PolarizedRoutes,
    corners: &'a Corners,
    st: &'a RouteState,
    /// With [`Corners::OnDemand`]: whether the pair may have a dead end, once asked.
    pair: Cell<Option<bool>>,
    /// With [`Corners::OnDemand`]: the switches searched in this decision, and whether a route to
    /// `t` leads from each. Hashed, but only for the pairs that may have a dead end, which are few
    /// (see the module doc).
    searched: RefCell<FxMap<SwitchId, bool>>,
}

impl<'a> Filter<'a> {
    fn new(routes: &'a PolarizedRoutes, corners: &'a Corners, st: &'a RouteState) -> Self {
        Filter { routes, corners, st, pair: Cell::new(None), searched: RefCell::new(FxMap::default()) }
    }

    /// The `dmu` of the move from a switch at distances `(a, b)` from the source and the
    /// destination into its neighbour `y()` at `(ys, yt)`, if Polarized allows it (section 3.1)
    /// and, with `filtered` (the filter has corners; read once by callers, as `f` may touch the
    /// filter's cells), the filter keeps it. `y` is computed only when the filter asks.
    #[inline]
    fn offered(
        &self,
        filtered: bool,
        (a, b): (u32, u32),
        (ys, yt): (u32, u32),
        y: impl FnOnce() -> SwitchId,
    ) -> Option<i32> {
        if ys == UNREACHABLE || yt == UNREACHABLE {
            return None;
        }
        let dmu = allowed(a, b, ys as i32 - a as i32, yt as i32 - b as i32)?;
        (!filtered || self.keep(y(), ys, yt)).then_some(dmu)
    }

    /// Whether an allowed move into `y`, at distances `ys = d(y,s)` and `yt = d(y,t)`, is kept:
    /// `y` is not a corner.
    #[inline]
    fn keep(&self, y: SwitchId, ys: u32, yt: u32) -> bool {
        match self.corners {
            Corners::None => true,
            Corners::Table(set, pairs) => {
                let n = self.routes.net.num_switches() as u64;
                let pair = self.st.src as u64 * n + self.st.dst as u64;
                pairs[(pair >> 6) as usize] >> (pair & 63) & 1 == 0 || !set.contains(&(pair * n + y as u64))
            }
            Corners::OnDemand(peaks) => ys >= yt || !self.pair_may_dead_end(peaks) || self.reaches_t(y),
        }
    }

    fn pair_may_dead_end(&self, peaks: &PeakIndex) -> bool {
        if let Some(v) = self.pair.get() {
            return v;
        }
        let v = match (&peaks.lists, self.routes.net.sparse_distances()) {
            (Some((start, list)), Some(sd)) => {
                let (s, t) = (self.st.src, self.st.dst);
                let own = &list[start[s as usize] as usize..start[s as usize + 1] as usize];
                own.iter().any(|&p| self.routes.dead_end(sd, p, s, t, true))
                    || sd.exceptions_to(t).0.iter().any(|&p| self.routes.dead_end(sd, p, s, t, false))
            }
            _ => true,
        };
        self.pair.set(Some(v));
        v
    }

    /// Whether some polarized route leads from `c` to `t` (a memoised depth-first search over the
    /// raw allowed moves, which form a DAG; it stops at the first switch nearer `t` than `s`).
    fn reaches_t(&self, c: SwitchId) -> bool {
        let (s, t) = (self.st.src, self.st.dst);
        let net = &*self.routes.net;
        if c == t || net.distance(c, s) >= net.distance(c, t) {
            return true;
        }
        if let Some(&ok) = self.searched.borrow().get(&c) {
            return ok;
        }
        let mut next = Vec::new();
        let raw = Filter::new(self.routes, &NO_CORNERS, self.st);
        self.routes.hops_with(c, self.st, &raw, |p, _| next.push(p));
        let ok = next.into_iter().any(|p| self.reaches_t(net.neighbour(c, p).expect("hops are on live ports").0));
        self.searched.borrow_mut().insert(c, ok);
        ok
    }
}

/// The most hops of a polarized route on a network of diameter `diameter`, faults or not (the
/// module doc's bound, `4D - 1`; SurePath section 3.1.2's `2D` holds on a fault-free HyperX).
pub fn bounded_route_hops(diameter: usize) -> usize {
    (4 * diameter).saturating_sub(1)
}

/// The Polarized route set.
pub struct PolarizedRoutes {
    net: Arc<Fabric>,
    corners: Corners,
    /// Longest route once dead ends are avoided (pruned routes only).
    longest: usize,
    /// On a faulty HyperX of at most 128 switch ports with sparse distances: per switch, its
    /// failed ports as a mask ([`PolarizedRoutes::faulty_hyperx_classes`]); else empty.
    dead_ports: Vec<u128>,
}

impl PolarizedRoutes {
    /// Polarized routes over `net`, exactly as the paper defines them.
    pub fn new(net: Arc<Fabric>) -> Self {
        let dead_ports = if net.is_faulty() && net.sparse_distances().is_some() && net.max_switch_ports() <= 128 {
            (0..net.num_switches() as SwitchId)
                .map(|s| {
                    (0..net.switch_ports(s) as PortId).filter(|&p| !net.alive(s, p)).fold(0, |m, p| m | 1u128 << p)
                })
                .collect()
        } else {
            Vec::new()
        };
        PolarizedRoutes { net, corners: Corners::None, longest: 0, dead_ports }
    }

    /// Polarized routes that avoid dead ends, with their longest route (or its bound on faulty
    /// networks above [`CORNER_TABLE_SWITCHES`] switches); on a fault-free HyperX there are none and
    /// this is [`PolarizedRoutes::new`]. Errors name the pair Polarized cannot route.
    pub fn pruned(net: Arc<Fabric>) -> Result<Self, ConfigError> {
        if net.fault_free_hyperx().is_some() {
            return Ok(PolarizedRoutes::new(net));
        }
        if net.num_switches() > CORNER_TABLE_SWITCHES {
            Ok(Self::on_demand(net))
        } else {
            Self::tabulated(net)
        }
    }

    /// Dead ends decided per candidate ([`Corners::OnDemand`]) and the ladder sized by
    /// [`bounded_route_hops`], whatever the network's size.
    fn on_demand(net: Arc<Fabric>) -> Self {
        let mut r = PolarizedRoutes::new(net.clone());
        r.corners = Corners::OnDemand(PeakIndex::new(&r));
        r.longest = bounded_route_hops(network_diameter(&net) as usize);
        r
    }

    /// Every dead end and the longest route found up front ([`Corners::Table`]).
    fn tabulated(net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let mut r = PolarizedRoutes::new(net.clone());
        let n = net.num_switches();
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
        let mut pairs = vec![0u64; (n * n).div_ceil(64)];
        for &key in &corners {
            let pair = key / n as u64;
            pairs[(pair >> 6) as usize] |= 1 << (pair & 63);
        }
        r.corners = Corners::Table(corners, pairs);
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

    /// What the routes read of `st`, with `hops` ([`Routing::analysis_state`]): the source and the
    /// destination.
    pub fn analysis_state(&self, st: &RouteState) -> RouteState {
        RouteState { src: st.src, dst: st.dst, hops: st.hops, ..Default::default() }
    }

    /// Longest route: `2 x diameter` (SurePath section 3.1.2), or that of the pruned routes (exact
    /// up to [`CORNER_TABLE_SWITCHES`] switches, [`bounded_route_hops`] above).
    pub fn max_hops(&self) -> usize {
        match self.corners {
            Corners::None => 2 * network_diameter(&self.net) as usize,
            _ => self.longest,
        }
    }

    /// Whether a live link joins `p` to the neighbour switch behind `ports` (its trunks).
    fn linked(&self, p: SwitchId, mut ports: std::ops::Range<PortId>) -> bool {
        ports.any(|q| self.net.alive(p, q))
    }

    /// Whether `p` has a neighbour switch `y` joined by a live link with `pred(y)`.
    fn any_linked_neighbour(&self, h: &HyperX, p: SwitchId, mut pred: impl FnMut(SwitchId) -> bool) -> bool {
        let mut found = false;
        h.for_each_neighbour(p, |y, ports| {
            found = found || (self.linked(p, ports) && pred(y));
        });
        found
    }

    /// Whether `p`, at distance `a` from `s`, has no live neighbour farther from `s` (a peak of
    /// `d(., s)`).
    fn is_peak(&self, sd: &SparseDistances, p: SwitchId, s: SwitchId, a: u32) -> bool {
        !self.any_linked_neighbour(sd.hyperx(), p, |y| sd.distance(y, s) == a + 1)
    }

    /// Whether `p` is a switch without any allowed move for a packet from `s` to `t` while it is
    /// nearer `s`: a peak of `d(., s)` (known to be when `known_peak`) with no live neighbour at
    /// the same distance from `s` and nearer `t`.
    fn dead_end(&self, sd: &SparseDistances, p: SwitchId, s: SwitchId, t: SwitchId, known_peak: bool) -> bool {
        if p == t || !self.net.switch_alive(p) || !sd.same_component(p, s) || !sd.same_component(p, t) {
            return false;
        }
        let (a, b) = (sd.distance(p, s), sd.distance(p, t));
        if a >= b || (!known_peak && !self.is_peak(sd, p, s, a)) {
            return false;
        }
        let h = sd.hyperx();
        let level_approach = |y: SwitchId| sd.distance(y, s) == a && sd.distance(y, t) + 1 == b;
        if b == h.hamming(p, t) {
            // Only neighbours at Hamming distance `b - 1` from `t` can be at distance `b - 1`: `p`
            // with one of its differing coordinates set to `t`'s.
            (0..h.dims()).all(|d| {
                let v = h.coord(t, d);
                if v == h.coord(p, d) {
                    return true;
                }
                let first = h.port_to(p, d, v, 0);
                !self.linked(p, first..first + h.trunk(d) as PortId) || !level_approach(h.with_coord(p, d, v))
            })
        } else {
            !self.any_linked_neighbour(h, p, level_approach)
        }
    }

    /// Calls `f(port, dmu)` for every hop Polarized allows a packet in state `st` at `at`.
    #[inline]
    pub fn hops(&self, at: SwitchId, st: &RouteState, f: impl FnMut(PortId, i32)) {
        self.hops_with(at, st, &Filter::new(self, &self.corners, st), f);
    }

    /// [`PolarizedRoutes::hops`] with the dead-end filter `filter`.
    #[inline]
    fn hops_with(&self, at: SwitchId, st: &RouteState, filter: &Filter, mut f: impl FnMut(PortId, i32)) {
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
                for (v, ports) in h.dim_ports(at, d) {
                    if let Some(dmu) = moves[(v == xs) as usize | ((v == xt) as usize) << 1] {
                        ports.for_each(|p| f(p, dmu));
                    }
                }
            }
            return;
        }
        // The HyperZ path reads distances to level-1 switches (packets' ends; standalone Polarized's
        // tables also ask about other switches, which take the scan).
        if let Some(h) =
            net.fault_free_hyperz().filter(|h| h.side_links_at_every_level() && h.level(s) == 1 && h.level(t) == 1)
        {
            if cfg!(debug_assertions) && net.num_switches() <= DEBUG_CHECK_SWITCHES {
                // Debug builds: the HyperZ path offers exactly the hops of the generic port scan.
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                self.hyperz_hops(h, at, st, filter, &mut |p, m| fast.push((p, m)));
                self.scan_hops(at, st, filter, &mut |p, m| slow.push((p, m)));
                assert_eq!(fast, slow, "polarized hops at {at} from {s} to {t} on a HyperZ");
            }
            self.hyperz_hops(h, at, st, filter, &mut f);
            return;
        }
        if let Some(sd) = net.sparse_distances() {
            if cfg!(debug_assertions) && net.num_switches() <= DEBUG_CHECK_SWITCHES {
                // Debug builds: the fast path offers exactly the hops of the per-neighbour one.
                let mut fast = Vec::new();
                if self.faulty_hyperx_hops(sd, at, st, filter, &mut |p, m| fast.push((p, m))) {
                    let mut slow = Vec::new();
                    self.sparse_hops(sd, at, st, filter, &mut |p, m| slow.push((p, m)));
                    assert_eq!(fast, slow, "polarized hops at {at} from {s} to {t}");
                    fast.into_iter().for_each(|(p, m)| f(p, m));
                    return;
                }
            } else if self.faulty_hyperx_hops(sd, at, st, filter, &mut f) {
                return;
            }
            self.sparse_hops(sd, at, st, filter, &mut f);
            return;
        }
        self.scan_hops(at, st, filter, &mut f);
    }

    /// [`PolarizedRoutes::hops_with`] on any network: every live port, with two distance queries
    /// per neighbour.
    fn scan_hops(&self, at: SwitchId, st: &RouteState, filter: &Filter, f: &mut impl FnMut(PortId, i32)) {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        let (a, b) = (net.distance(at, s), net.distance(at, t));
        let filtered = !matches!(filter.corners, Corners::None);
        for p in 0..net.switch_ports(at) as PortId {
            if let Some((y, _)) = net.neighbour(at, p) {
                let (ys, yt) = (net.distance(y, s), net.distance(y, t));
                if let Some(dmu) = filter.offered(filtered, (a, b), (ys, yt), || y) {
                    f(p, dmu);
                }
            }
        }
    }

    /// [`PolarizedRoutes::scan_hops`] on a fault-free HyperZ with side links at every level: the
    /// same ports in the same order (down, up, side) without a virtual call or a distance query per
    /// neighbour. The switch graph is the Cartesian product of the Z-node's graph, which is
    /// bipartite by level, and the Hamming graph ([`HyperZ::switch_distance`]), so a tree hop
    /// changes a distance to a level-1 switch by exactly one: down by one for the hops
    /// [`HyperZ::for_each_minimal_port`] names (every parent while the zone does not hold it, else
    /// the child whose zone does), up by one for the others; a side hop in dimension `k` changes
    /// only the Hamming term of coordinate `k`.
    fn hyperz_hops(&self, h: &HyperZ, at: SwitchId, st: &RouteState, filter: &Filter, f: &mut impl FnMut(PortId, i32)) {
        let (s, t) = (st.src, st.dst);
        let (a, b) = (h.switch_distance(at, s), h.switch_distance(at, t));
        let filtered = !matches!(filter.corners, Corners::None);
        let level = h.level(at);
        let ups = h.up_ports(at);
        let g = h.internal_links();
        // Per end (s, t): whether the zone of `at` holds it, and the first port to its child if so.
        let towards = |e: SwitchId| {
            let server = h.first_server(e);
            let holds = h.ancestor_contains(at, server);
            (holds, h.down_port_to(at, server).map(|r| r.start))
        };
        let ((hs, cs), (ht, ct)) = (towards(s), towards(t));
        let step = |closer: bool, d: u32| if closer { d - 1 } else { d + 1 };
        let y = |p: PortId| h.neighbour(at, p).expect("HyperZ ports are wired").0;
        // Down ports `0..ups.start` in groups of g_i, one group per child.
        let width = g[level - 1] as PortId;
        let mut p = 0;
        while p < ups.start {
            let (ys, yt) = (step(cs == Some(p), a), step(ct == Some(p), b));
            if let Some(dmu) = filter.offered(filtered, (a, b), (ys, yt), || y(p)) {
                (p..p + width).for_each(|q| f(q, dmu));
            }
            p += width;
        }
        // Up ports: every parent is one hop closer to an end the zone does not hold.
        let (ys, yt) = (step(!hs, a), step(!ht, b));
        if ups.start < ups.end {
            let width = g[level] as PortId;
            let mut p = ups.start;
            while p < ups.end {
                if let Some(dmu) = filter.offered(filtered, (a, b), (ys, yt), || y(p)) {
                    (p..p + width).for_each(|q| f(q, dmu));
                }
                p += width;
            }
        }
        let (za, zs, zt) = (h.znode(at), h.znode(s), h.znode(t));
        for k in 0..h.dims() {
            let (x, xs, xt) = (h.coord(za, k), h.coord(zs, k), h.coord(zt, k));
            // Distances of the side neighbours in dimension `k` without their coordinate there.
            let (bs, bt) = (a - (x != xs) as u32, b - (x != xt) as u32);
            for v in (0..h.sides()[k]).filter(|&v| v != x) {
                let (ys, yt) = (bs + (v != xs) as u32, bt + (v != xt) as u32);
                if let Some(dmu) = filter
                    .offered(filtered, (a, b), (ys, yt), || h.switch_at(level, h.with_coord(za, k, v), h.flat(at)))
                {
                    h.side_ports(at, k, v).for_each(|q| f(q, dmu));
                }
            }
        }
    }

    /// [`PolarizedRoutes::hops`] on a faulty HyperX, one neighbour at a time: the same ports in the
    /// same order as the generic port scan, but neighbours come from coordinates (no virtual
    /// call, no port decoding) and each neighbour switch's distances are read once for all its
    /// trunks.
    fn sparse_hops(
        &self,
        sd: &SparseDistances,
        at: SwitchId,
        st: &RouteState,
        filter: &Filter,
        f: &mut impl FnMut(PortId, i32),
    ) {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        let (a, b) = (sd.distance(at, s), sd.distance(at, t));
        let filtered = !matches!(filter.corners, Corners::None);
        sd.hyperx().for_each_neighbour(at, |y, ports| {
            let mut dists = None;
            for p in ports.filter(|&p| net.alive(at, p)) {
                let (ys, yt) = *dists.get_or_insert_with(|| (sd.distance(y, s), sd.distance(y, t)));
                if let Some(dmu) = filter.offered(filtered, (a, b), (ys, yt), || y) {
                    f(p, dmu);
                }
            }
        });
    }

    /// [`PolarizedRoutes::sparse_hops`] without a distance lookup per neighbour, or false (having
    /// called nothing) when it does not apply. A neighbour `y` of `at` reached by a live link is in
    /// `at`'s component, so when `s` and `t` are too, `d(y,s)` is the Hamming distance unless
    /// `(y, s)` is one of `s`'s few exceptions ([`SparseDistances::exceptions_to`]): the
    /// fault-free per-dimension update of the Hamming distances, corrected for the neighbours
    /// found in the exception lists (scanned once per hop, [`NearExceptions`]; more than [`NEAR`]
    /// of them take the per-neighbour path) and with dead ports skipped.
    #[inline]
    fn faulty_hyperx_hops(
        &self,
        sd: &SparseDistances,
        at: SwitchId,
        st: &RouteState,
        filter: &Filter,
        f: &mut impl FnMut(PortId, i32),
    ) -> bool {
        let net = &*self.net;
        let (s, t) = (st.src, st.dst);
        let Some(lists) = few_exceptions(sd, at, st) else { return false };
        let h = sd.hyperx();
        let (ha, hb) = (h.hamming(at, s), h.hamming(at, t));
        let mut near = NearExceptions::new(ha, hb);
        if !near.scan(h, at, lists) {
            return false;
        }
        let (a, b) = (near.a, near.b);
        // Read once: `f` may touch the filter's cells, so the compiler would reload it per hop.
        let filtered = !matches!(filter.corners, Corners::None);
        for d in 0..h.dims() {
            let (x, xs, xt) = (h.coord(at, d), h.coord(s, d), h.coord(t, d));
            // Hamming distances of the neighbours in dimension `d` without their coordinate there.
            let (bs, bt) = (ha - (x != xs) as u32, hb - (x != xt) as u32);
            for (v, ports) in h.dim_ports(at, d) {
                let (mut ys, mut yt) = (bs + (v != xs) as u32, bt + (v != xt) as u32);
                if near.n > 0 {
                    let y = h.with_coord(at, d, v);
                    if let Some(&(_, es, et)) = near.neighbours().iter().find(|e| e.0 == y) {
                        (ys, yt) = (if es == NONE { ys } else { es }, if et == NONE { yt } else { et });
                    }
                }
                let Some(dmu) = filter.offered(filtered, (a, b), (ys, yt), || h.with_coord(at, d, v)) else {
                    continue;
                };
                for p in ports.filter(|&p| net.alive(at, p)) {
                    f(p, dmu);
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

    /// [`PolarizedRoutes::candidate_runs`] on the VCs `vcs` as classes of ports, on a fault-free
    /// HyperX of at most 64 ports (`false` elsewhere, with `out` unchanged): per dimension the
    /// four classes of the HyperX path of [`PolarizedRoutes::hops`] as port masks, gathered by
    /// weight change, then one class per penalty.
    pub fn hyperx_classes(
        &self,
        at: SwitchId,
        st: &RouteState,
        out: &mut Vec<PortClass>,
        vcs: std::ops::Range<u8>,
    ) -> bool {
        let Some(h) = self.net.fault_free_hyperx() else { return false };
        // The three switches' coordinates, read once.
        let (ca, cs, ct) = (h.coords_of(at), h.coords_of(st.src), h.coords_of(st.dst));
        let (a, b) = (HyperX::differing(ca, cs), HyperX::differing(ca, ct));
        // Ports by weight change: 0, 1 or 2 (`allowed` offers no other).
        let mut by_dmu = [0u64; 3];
        for (d, ((&x, &xs), &xt)) in ca.iter().zip(cs).zip(ct).enumerate() {
            let (x, xs, xt) = (x as usize, xs as usize, xt as usize);
            let Some(masks) = h.coordinate_class_masks_at(x, d, xs, xt) else { return false };
            for (i, &m) in masks.iter().enumerate() {
                let (eq_s, eq_t) = (i & 1 != 0, i & 2 != 0);
                if m != 0 {
                    if let Some(dmu) = allowed(a, b, !eq_s as i32 - (x != xs) as i32, !eq_t as i32 - (x != xt) as i32) {
                        by_dmu[dmu as usize] |= m;
                    }
                }
            }
        }
        let Some(best) = (0..3).rev().find(|&k| by_dmu[k] != 0) else { return true };
        push_classes(out, &by_dmu, |dmu| PENALTIES[best - dmu], vcs, false);
        true
    }

    /// The allowed hops on a faulty HyperX (sparse distances, at most 128 ports, no dead-end
    /// filter) as classes on the VCs `vcs`, as [`PolarizedRoutes::hyperx_classes`] writes them on a
    /// fault-free one: per dimension the four coordinate classes, each a weight change from the
    /// closed-form distances of the faulty hop loop (`faulty_hyperx_hops`), the neighbours among the
    /// source's and target's exceptions moved to the class of their exact distances, less the
    /// failed ports. `false` (with `out` unchanged) where that hop loop does not apply, as where more
    /// than 8 (`NEAR`) of `at`'s neighbours are exceptions (the caller then gathers them hop by hop).
    pub fn faulty_hyperx_classes(
        &self,
        at: SwitchId,
        st: &RouteState,
        out: &mut Vec<PortClass>,
        vcs: std::ops::Range<u8>,
    ) -> bool {
        if self.dead_ports.is_empty() || !matches!(self.corners, Corners::None) {
            return false;
        }
        let Some(sd) = self.net.sparse_distances() else { return false };
        let (s, t) = (st.src, st.dst);
        let Some(lists) = few_exceptions(sd, at, st) else { return false };
        let h = sd.hyperx();
        let (ha, hb) = (h.hamming(at, s), h.hamming(at, t));
        let mut near = NearExceptions::new(ha, hb);
        if !near.scan(h, at, lists) {
            return false;
        }
        let (a, b) = (near.a, near.b);
        // Ports by weight change 0, 1 or 2, and those with another (possible only through a
        // failed link, where `at`'s own distance is not the closed form's), for neighbours at
        // distances `ys` and `yt` from `s` and `t`.
        let (mut by_dmu, mut other) = ([0u128; 3], 0u128);
        let put = |by_dmu: &mut [u128; 3], other: &mut u128, mask: u128, ys: u32, yt: u32| match allowed(
            a,
            b,
            ys as i32 - a as i32,
            yt as i32 - b as i32,
        ) {
            Some(dmu @ 0..=2) => by_dmu[dmu as usize] |= mask,
            Some(_) => *other |= mask,
            None => {}
        };
        for d in 0..h.dims() {
            let (x, xs, xt) = (h.coord(at, d), h.coord(s, d), h.coord(t, d));
            let (bs, bt) = (ha - (x != xs) as u32, hb - (x != xt) as u32);
            let Some(masks) = h.coordinate_class_masks_wide(at, d, xs, xt) else { return false };
            for (i, &m) in masks.iter().enumerate() {
                let (eq_s, eq_t) = (i & 1 != 0, i & 2 != 0);
                if m != 0 {
                    put(&mut by_dmu, &mut other, m, bs + !eq_s as u32, bt + !eq_t as u32);
                }
            }
        }
        // Neighbours whose distance to `s` or `t` is not the closed form's: their ports move to
        // the class of their exact distances, as the hop loop's.
        for &(y, ys, yt) in near.neighbours() {
            let ys = if ys == NONE { h.hamming(y, s) } else { ys };
            let yt = if yt == NONE { h.hamming(y, t) } else { yt };
            let ports = h.ports_to_neighbour(at, y);
            by_dmu.iter_mut().for_each(|m| *m &= !ports);
            other &= !ports;
            put(&mut by_dmu, &mut other, ports, ys, yt);
        }
        let alive = !self.dead_ports[at as usize];
        if other & alive != 0 {
            // The hop loop's penalties for those (relative to the best weight change) decide.
            return false;
        }
        by_dmu.iter_mut().for_each(|m| *m &= alive);
        let Some(best) = (0..3).rev().find(|&k| by_dmu[k] != 0) else { return true };
        push_classes(out, &by_dmu, |dmu| PENALTIES[best - dmu], vcs, false);
        true
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
        let why = if matches!(routes.corners, Corners::OnDemand(_)) {
            format!(
                "polarized routes on this faulty network (diameter {diam}) are at most 4 x {diam} - 1 = {} hops \
                 (a bound: the exact longest route is searched up front only up to {CORNER_TABLE_SWITCHES} switches)",
                routes.max_hops()
            )
        } else if net.is_faulty() {
            format!("polarized routes on this faulty network (diameter {diam}) are up to {} hops", routes.max_hops())
        } else if routes.max_hops() == 2 * diam {
            format!("polarized routes are up to 2 x diameter {diam} = {} hops", 2 * diam)
        } else {
            // Longer than twice the diameter where the polarized weight climbs away first (a
            // dragonfly's or an RRG's corners): the message gives the bound the ladder uses.
            format!("polarized routes on this network (diameter {diam}) are up to {} hops", routes.max_hops())
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
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        self.policy.analysis_state(st, self.routes.analysis_state(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::fixtures::{class_ports, faulty_hyperx_cases};
    use crate::topology::{FaultSet, HyperX, Topology};

    /// On a faulty HyperX (with a failed switch, and trunks), the classes of
    /// `faulty_hyperx_classes`, where it writes them, are exactly the runs of `candidate_runs`
    /// (ports, penalties), for every (s, c, t); and it writes them for nine in ten at least.
    #[test]
    fn faulty_hyperx_classes_match_the_runs() {
        for (sides, net) in faulty_hyperx_cases() {
            let routes = PolarizedRoutes::new(net.clone());
            let n = net.num_switches() as SwitchId;
            let (mut written, mut asked) = (0, 0);
            for s in (0..n).filter(|&s| net.switch_alive(s)) {
                for t in (0..n).filter(|&t| t != s && net.switch_alive(t)) {
                    let st = RouteState { src: s, dst: t, ..Default::default() };
                    for c in (0..n).filter(|&c| c != t && net.switch_alive(c)) {
                        asked += 1;
                        let mut classes = Vec::new();
                        if !routes.faulty_hyperx_classes(c, &st, &mut classes, 0..2) {
                            assert!(classes.is_empty());
                            continue;
                        }
                        written += 1;
                        let mut runs = Vec::new();
                        routes.candidate_runs(c, &st, &mut runs, |_| 0..2);
                        let mut want: Vec<(PortId, u32)> = runs.iter().map(|r| (r.port, r.penalty)).collect();
                        want.sort_unstable();
                        assert_eq!(class_ports(&classes), want, "{sides:?} at {c} from {s} to {t}");
                    }
                }
            }
            assert!(written * 10 > asked * 9, "{sides:?}: classes for {written} of {asked}");
        }
    }

    /// A switch with more than [`NEAR`] (8) neighbours among the exceptions declines, leaving its
    /// classes and hops to the per-neighbour paths. On an 11x3 HyperX whose target `t` = (0, 0) lost its 10 links of dimension 0,
    /// every other switch of `t`'s row is 3 hops from it (across, along the row, back), not 1: a
    /// switch of that row has 9 neighbours among `t`'s exceptions, and one off the row has one
    /// (the switch of the row beside it), whose classes are written as the runs give them.
    #[test]
    fn many_neighbours_among_the_exceptions_decline() {
        let h = HyperX::new(&[11, 3], &[1, 1], 1);
        let t = h.switch_at(&[0, 0]);
        let faults = FaultSet { links: (0..10).map(|p| (t, p as PortId)).collect(), switches: vec![] };
        let net = Arc::new(Fabric::new(Arc::new(h.clone()), &faults));
        let sd = net.sparse_distances().unwrap();
        let routes = PolarizedRoutes::new(net.clone());
        let st = RouteState { src: h.switch_at(&[5, 2]), dst: t, ..Default::default() };
        let in_row = h.switch_at(&[1, 0]);
        // The row's 9 switches beside `in_row` exceed NEAR.
        const { assert!(NEAR < 9) };
        assert_eq!(sd.distance(in_row, t), 3);
        assert_eq!(sd.exceptions_to(t).0.len(), 10);
        let mut classes = Vec::new();
        assert!(!routes.faulty_hyperx_classes(in_row, &st, &mut classes, 0..2));
        assert!(classes.is_empty());
        // The hop loop declines there too, and the per-neighbour path gives the hops.
        let filter = Filter::new(&routes, &routes.corners, &st);
        let mut fast = Vec::new();
        assert!(!routes.faulty_hyperx_hops(sd, in_row, &st, &filter, &mut |p, m| fast.push((p, m))));
        assert!(fast.is_empty());
        let (mut hops, mut slow) = (Vec::new(), Vec::new());
        routes.hops(in_row, &st, |p, m| hops.push((p, m)));
        routes.sparse_hops(sd, in_row, &st, &filter, &mut |p, m| slow.push((p, m)));
        assert!(!hops.is_empty());
        assert_eq!(hops, slow);
        let off_row = h.switch_at(&[1, 1]);
        assert!(routes.faulty_hyperx_classes(off_row, &st, &mut classes, 0..2));
        let mut runs = Vec::new();
        routes.candidate_runs(off_row, &st, &mut runs, |_| 0..2);
        let mut want: Vec<(PortId, u32)> = runs.iter().map(|r| (r.port, r.penalty)).collect();
        want.sort_unstable();
        assert_eq!(class_ports(&classes), want);
    }

    /// The fast path of the faulty HyperX, where it applies, and the per-neighbour path offer
    /// exactly Table 1's hops under BFS distances over the live links, for every (s, c, t).
    #[test]
    fn faulty_hyperx_hops_match_bfs_reference() {
        for (sides, net) in faulty_hyperx_cases() {
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
                        let filter = Filter::new(&routes, &routes.corners, &st);
                        routes.sparse_hops(sd, c, &st, &filter, &mut |p, m| slow.push((p, m)));
                        assert_eq!(slow, want, "{sides:?}: per-neighbour hops at {c} from {s} to {t}");
                        let mut fast = Vec::new();
                        if routes.faulty_hyperx_hops(sd, c, &st, &filter, &mut |p, m| fast.push((p, m))) {
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

    /// Every switch a pruned route from `s` to `t` visits, with the table's filter.
    fn visited(table: &PolarizedRoutes, net: &Fabric, st: &RouteState) -> Vec<SwitchId> {
        let mut seen = vec![st.src];
        let mut i = 0;
        while i < seen.len() {
            let c = seen[i];
            i += 1;
            if c == st.dst {
                continue;
            }
            table.hops(c, st, |p, _| {
                let y = net.neighbour(c, p).unwrap().0;
                if !seen.contains(&y) {
                    seen.push(y);
                }
            });
        }
        seen
    }

    /// Corners decided per candidate (as on networks above [`CORNER_TABLE_SWITCHES`] switches)
    /// give exactly the hops of the table of every dead end, at every switch of every pruned route
    /// of every pair, on faulty networks that have dead ends (random link faults, a failed switch,
    /// a switch with a whole dimension failed); and the table's longest route is within
    /// [`bounded_route_hops`].
    #[test]
    fn corners_on_demand_match_the_table() {
        let (mut corners, mut flagged, mut clean) = (0, 0, 0);
        for (sides, links, seed, walled) in [
            (&[3usize, 3, 3][..], 8, 1, false),
            (&[3, 3, 3], 16, 2, false),
            (&[4, 4], 8, 1, true),
            (&[4, 3, 3], 10, 4, true),
        ] {
            let h = HyperX::new(sides, &vec![1; sides.len()], 1);
            let topo: Arc<dyn Topology> = Arc::new(h.clone());
            let mut f = FaultSet::random_links(&*topo, links, seed).unwrap();
            f.switches.push(sides.iter().product::<usize>() as SwitchId - 1);
            if walled {
                // Switch 1 loses every link of dimension 0.
                f.links.extend((0..sides[0]).filter(|&v| v != h.coord(1, 0)).map(|v| (1, h.port_to(1, 0, v, 0))));
            }
            let net = Arc::new(Fabric::new(topo, &f));
            let table = PolarizedRoutes::tabulated(net.clone()).expect("a polarized route for every pair");
            let lazy = PolarizedRoutes::on_demand(net.clone());
            let Corners::Table(set, _) = &table.corners else { unreachable!() };
            corners += set.len();
            assert!(table.max_hops() <= lazy.max_hops(), "{sides:?}: longest route above the bound");
            let n = net.num_switches() as SwitchId;
            for s in (0..n).filter(|&s| net.switch_alive(s)) {
                for t in (0..n).filter(|&t| t != s && net.switch_alive(t)) {
                    let st = RouteState { src: s, dst: t, ..Default::default() };
                    let Corners::OnDemand(peaks) = &lazy.corners else { unreachable!() };
                    if Filter::new(&lazy, &lazy.corners, &st).pair_may_dead_end(peaks) {
                        flagged += 1;
                    } else {
                        clean += 1;
                    }
                    for c in visited(&table, &net, &st) {
                        let (mut want, mut got) = (Vec::new(), Vec::new());
                        table.hops(c, &st, |p, m| want.push((p, m)));
                        lazy.hops(c, &st, |p, m| got.push((p, m)));
                        assert_eq!(got, want, "{sides:?}: hops at {c} from {s} to {t}");
                    }
                }
            }
        }
        assert!(corners > 0 && flagged > 0 && clean > 0, "corners {corners}, pairs flagged {flagged}, clean {clean}");
    }

    /// The fault-free HyperZ path offers exactly Table 1's hops under BFS distances, in port order,
    /// for every (s, c, t) of HyperZ with g > 1 and h = 3 and of a fat tree.
    #[test]
    fn hyperz_hops_match_bfs_reference() {
        use crate::topology::HyperZ;
        for (sides, zones, roots, g) in [
            (&[3usize, 2][..], &[2usize, 2][..], &[1usize, 2][..], &[1usize, 2][..]),
            (&[2], &[2, 3, 2], &[1, 2, 2], &[1, 2, 2]),
            (&[], &[4, 4, 4], &[1, 4, 16], &[1, 1, 1]),
        ] {
            let q = vec![vec![1; sides.len()]; zones.len()];
            let hz = HyperZ::new(sides.to_vec(), zones.to_vec(), roots.to_vec(), g.to_vec(), q).unwrap();
            let net = Arc::new(Fabric::new(Arc::new(hz.clone()), &FaultSet::default()));
            let routes = PolarizedRoutes::new(net.clone());
            // Standalone Polarized's tables ask about every switch pair, leaves or not (debug builds
            // compare the HyperZ path with the scan wherever it applies).
            assert!(PolarizedRoutes::pruned(net.clone()).unwrap().max_hops() > 0);
            let n = net.num_switches() as SwitchId;
            let bfs: Vec<Vec<u32>> = (0..n).map(|b| net.bfs(b)).collect();
            let leaves: Vec<SwitchId> = (0..n).filter(|&x| hz.level(x) == 1).collect();
            for &s in &leaves {
                for &t in leaves.iter().filter(|&&t| t != s) {
                    let st = RouteState { src: s, dst: t, ..Default::default() };
                    let filter = Filter::new(&routes, &routes.corners, &st);
                    for c in (0..n).filter(|&c| c != t) {
                        let (ds, dt) = (&bfs[s as usize], &bfs[t as usize]);
                        let (a, b) = (ds[c as usize], dt[c as usize]);
                        let want: Vec<(PortId, i32)> = (0..net.switch_ports(c) as PortId)
                            .filter_map(|p| {
                                let y = net.neighbour(c, p).unwrap().0;
                                let (ys, yt) = (ds[y as usize] as i32, dt[y as usize] as i32);
                                allowed(a, b, ys - a as i32, yt - b as i32).map(|m| (p, m))
                            })
                            .collect();
                        let mut got = Vec::new();
                        routes.hyperz_hops(&hz, c, &st, &filter, &mut |p, m| got.push((p, m)));
                        assert_eq!(got, want, "{} at {c} from {s} to {t}", hz.name());
                    }
                }
            }
        }
    }
}

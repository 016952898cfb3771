//! A routing on a network that has lost links or switches since the routing was built: what
//! switches route with after a failure event ([`crate::topology::faults::events`]).
//!
//! Until the routing has been rebuilt (`faults.reconfigure_cycles` after the event), switches keep
//! the routing they had and see the failed ports as unavailable: its candidates on failed ports
//! are withdrawn, so adaptive routings route around them, and a packet left with none (a
//! deterministic routing whose one port failed) is stranded, which the router counts and drops.
//! After the rebuild the routing is the new one, built on the network with the failures; only the
//! packets still heading for a switch that has failed since they were generated need this
//! wrapper then, and they get no candidate either.
//!
//! Routings that cannot be built on a faulty network (the registry's `fault_tolerant` is false:
//! DOR, Minimal on a torus, ...) are never rebuilt: they keep their tables with the failed ports
//! withdrawn for the rest of the run.

use super::{Candidate, CandidateRun, RouteState, Routing, TableReport};
use crate::rng::Rng;
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;

/// `inner` on `net`, a network with more failures than the one `inner` was built on (or the same,
/// with `withdraw_failed` false): see the module docs.
pub struct Degraded {
    inner: Arc<dyn Routing>,
    net: Arc<Fabric>,
    withdraw_failed: bool,
}

impl Degraded {
    /// `inner` on `net`; with `withdraw_failed`, its candidates on ports that have failed in `net`
    /// are withdrawn (an `inner` built before the failure), else only packets to failed switches
    /// get no candidate (an `inner` built on `net`).
    pub fn new(inner: Arc<dyn Routing>, net: Arc<Fabric>, withdraw_failed: bool) -> Self {
        Degraded { inner, net, withdraw_failed }
    }
}

/// Keep the items of `v` from `from` on that satisfy `keep`, in order (the earlier ones untouched).
fn retain_from<T: Copy>(v: &mut Vec<T>, from: usize, keep: impl Fn(&T) -> bool) {
    let mut w = from;
    for r in from..v.len() {
        if keep(&v[r]) {
            v[w] = v[r];
            w += 1;
        }
    }
    v.truncate(w);
}

impl Routing for Degraded {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn vcs(&self) -> usize {
        self.inner.vcs()
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        self.inner.init(st, rng)
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if !self.net.switch_alive(st.dst) {
            return;
        }
        let from = out.len();
        self.inner.candidates(at, st, out);
        if self.withdraw_failed {
            retain_from(out, from, |c| self.net.alive(at, c.port));
        }
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        if !self.net.switch_alive(st.dst) {
            return true;
        }
        let from = out.len();
        if !self.inner.candidate_runs(at, st, out) {
            return false;
        }
        if self.withdraw_failed {
            retain_from(out, from, |r| self.net.alive(at, r.port));
        }
        true
    }
    fn cache_candidates(&self) -> bool {
        self.inner.cache_candidates()
    }
    fn keep_costs(&self) -> bool {
        self.inner.keep_costs()
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, next: SwitchId, c: &Candidate) {
        self.inner.advance(st, at, next, c)
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        self.inner.init_choices(st, f)
    }
    fn escape_based(&self) -> bool {
        self.inner.escape_based()
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        self.inner.escape_subfunction(at, dst, out)
    }
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        self.inner.analysis_state(st)
    }
    fn tables(&self) -> Option<TableReport> {
        self.inner.tables()
    }
}

/// The routes packets can take across a rebuild, for the deadlock analysis
/// ([`super::deadlock::check`] on the network after the failure): a packet routes with `old`
/// (the routing before the failure, failed ports withdrawn: a [`Degraded`]) and, at any switch,
/// may switch to `new` (the routing rebuilt on the failed network) for the rest of its route, as
/// every packet in the network does at the rebuild; packets generated after it use `new` from the
/// start. The channel dependency graph of all these routes is that of the old routes, the new ones
/// and every mix of an old prefix with a new suffix: acyclic, it shows the change deadlock free.
///
/// Which routing a packet follows is a bit of its state ([`SWITCHED`] in `dim_mask`, which table
/// routings do not read) and which routing offered a candidate a bit of its penalty (which the
/// analysis does not read), so that a channel both offer is explored both ways. For routings
/// without an escape subnetwork (table routings: the acyclic CDG is their argument).
pub struct Transition {
    old: Arc<dyn Routing>,
    new: Arc<dyn Routing>,
}

/// The bit of `RouteState::dim_mask` a [`Transition`] marks packets that follow the new routing
/// with.
pub const SWITCHED: u16 = 1 << 15;
/// The bit of `Candidate::penalty` a [`Transition`] marks the new routing's candidates with.
const FROM_NEW: u32 = 1 << 31;

impl Transition {
    /// The transition from `old` to `new` (see the type's docs).
    pub fn new(old: Arc<dyn Routing>, new: Arc<dyn Routing>) -> Self {
        Transition { old, new }
    }
    fn inner(st: &RouteState) -> RouteState {
        RouteState { dim_mask: st.dim_mask & !SWITCHED, ..*st }
    }
}

impl Routing for Transition {
    fn name(&self) -> &'static str {
        self.new.name()
    }
    fn vcs(&self) -> usize {
        self.old.vcs().max(self.new.vcs())
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let s = Self::inner(st);
        if st.dim_mask & SWITCHED == 0 {
            self.old.candidates(at, &s, out);
        }
        let from = out.len();
        self.new.candidates(at, &s, out);
        for c in &mut out[from..] {
            c.penalty |= FROM_NEW;
        }
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, next: SwitchId, c: &Candidate) {
        let switched = st.dim_mask & SWITCHED != 0 || c.penalty & FROM_NEW != 0;
        let mut s = Self::inner(st);
        let plain = Candidate { penalty: c.penalty & !FROM_NEW, ..*c };
        if switched {
            self.new.advance(&mut s, at, next, &plain);
            s.dim_mask |= SWITCHED;
        } else {
            self.old.advance(&mut s, at, next, &plain);
        }
        *st = s;
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        self.old.init_choices(st, f);
        self.new.init_choices(st, &mut |s| f(RouteState { dim_mask: s.dim_mask | SWITCHED, ..s }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{faults::FaultSet, hyperx::HyperX};

    #[test]
    fn a_transition_to_the_same_routing_has_the_routings_dependencies() {
        // Old and new the same tables: every mix of their routes is one of their routes, so the
        // transition's graph is the routing's own (the same channels and dependencies).
        let cfg = crate::config::parse_str(
            "[topology]\nkind = \"hyperx\"\nsides = [4, 4]\nservers_per_switch = 1\n[routing]\nalgorithm = \"dfsssp\"\n",
            "test",
            &["faults.links=[[0,0]]".into()],
        )
        .unwrap();
        let net = crate::sim::build_network(&cfg).unwrap();
        let r: Arc<dyn Routing> = Arc::from(crate::routing::build(&cfg.routing_params(), net.clone()).unwrap());
        let alone = crate::routing::deadlock::check(&net, &*r);
        let t = Transition::new(Arc::new(Degraded::new(r.clone(), net.clone(), true)), r);
        let across = crate::routing::deadlock::check(&net, &t);
        assert!(alone.deadlock_free() && across.deadlock_free());
        assert_eq!((across.channels_used, across.dependencies), (alone.channels_used, alone.dependencies));
    }

    #[test]
    fn failed_ports_and_dead_destinations_are_withdrawn() {
        // Minimal on a 4x4 HyperX built fault-free; then switch 0's port 0 (to switch 1) and
        // switch 5 fail. From switch 0 to switch 1 the one minimal port is gone; to switch 5 the
        // destination is.
        let topo: Arc<dyn crate::topology::Topology> = Arc::new(HyperX::new(&[4, 4], &[1, 1], 1));
        let before = Arc::new(Fabric::new(topo.clone(), &FaultSet::default()));
        let cfg = crate::config::parse_str(
            "[topology]\nkind = \"hyperx\"\nsides = [4, 4]\nservers_per_switch = 1\n[routing]\nalgorithm = \"minimal\"\n",
            "test",
            &[],
        )
        .unwrap();
        let inner: Arc<dyn Routing> = Arc::from(crate::routing::build(&cfg.routing_params(), before).unwrap());
        let (n1, _) = topo.neighbour(0, 0).unwrap();
        let after = Arc::new(Fabric::new(topo.clone(), &FaultSet { links: vec![(0, 0)], switches: vec![5] }));
        let st = |dst| RouteState { src: 0, dst, ..RouteState::default() };
        let mut full = Vec::new();
        inner.candidates(0, &st(n1), &mut full);
        assert!(!full.is_empty() && full.iter().all(|c| c.port == 0), "one minimal port to the neighbour: {full:?}");
        let d = Degraded::new(inner.clone(), after.clone(), true);
        let mut got = vec![Candidate { port: 9, vc: 0, penalty: 0, escape: false }];
        d.candidates(0, &st(n1), &mut got);
        assert_eq!(got.len(), 1, "the failed port is withdrawn, what was there before is kept");
        let mut runs = Vec::new();
        assert!(!d.candidate_runs(0, &st(5), &mut runs) || runs.is_empty());
        let mut to_dead = Vec::new();
        d.candidates(0, &st(5), &mut to_dead);
        assert!(to_dead.is_empty(), "no candidate towards a failed switch");
        // Without withdrawal (a routing built on the new network), live ports stay.
        let kept = Degraded::new(inner, after, false);
        let mut c = Vec::new();
        kept.candidates(0, &st(n1), &mut c);
        assert_eq!(c, full);
    }
}

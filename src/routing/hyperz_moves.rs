//! What the HyperZ routings share (Adda 2023, section 4.1, Table 1; SPEC §5.1-§5.3): the moves at a
//! switch (Up, Down, Side(k), the ODim side), the per-hop [`Rule`] each routing file implements, and
//! the VC schemes of SPEC §5.3 applied on top of any rule by [`HyperZRouting`].
//!
//! **State.** Every rule here is a function of `(at, src, dst)` alone, so no header field is used:
//! - "LCL reached" (SPEC §5.1) is [`HyperZ::ancestor_contains`] at `at` for the destination. The
//!   router only knows the destination *switch* `st.dst`, a level-1 switch, whose zone holds exactly
//!   its own processors; so any of its processors (we take its first) gives the same ancestor test,
//!   the same down port and the same LCL for switch pairs. `up_phase` (SPEC §5.2, `phase == UP and
//!   i < L*`) is then "the zone of `at` does not hold the destination": a packet only rises before
//!   it, side hops keep the flat address and Down keeps the zone holding it, so once true it stays
//!   true, which is exactly what SPEC's phase bit records.
//! - The side hops already taken (scheme B's VC) are `|O(src, dst)| - |O(at, dst)|`: every side hop
//!   of these routings clears one offset dimension and none unaligns one.
//!
//! **Idle and shortest queue** (SPEC §5.1-§5.2). Routing never reads buffers; the router picks,
//! among candidates with room, the lowest `Q + P` with `Q` the port's occupancy in whole packets
//! times the packet length (0 exactly when the port is not sending, its output VC is empty and the
//! downstream VC buffer is empty: SPEC's "idle"), ties at random. So "take an idle preferred port,
//! else the shortest queue among the fallback ports" becomes: preferred moves penalty 0, fallback
//! moves [`FALLBACK_PENALTY`] (1 phit, below one packet's `Q` step). An idle preferred port then
//! always wins, a preferred port with an equal queue wins the tie, and otherwise the shortest queue
//! wins. Where the fallback is the ODim side alone (CLIOD; ALIOD at level 1 once the LCL is
//! reached) the other offset dimensions get [`idle_only_penalty`] instead (a packet less one
//! phit), so they win when idle against a busy ODim port and otherwise only on a queue shorter by
//! a whole packet. Where ALIOD's fallback is Up or Down plus the ODim side, every offset dimension
//! stays at 0: a busy non-ODim side still competes by its queue, where the paper would leave it
//! out (the approximation there is "idle first, then shortest queue over every permitted move").
//!
//! **VC schemes** (SPEC §5.3, `routing.vc_policy`):
//! - `hyperz-a` (also the default, `ladder`): for rules with a cyclic CDG on one VC (CLIOD, ALIOD),
//!   VC 0 is the escape: only the move ODim would make from here ([`odim_moves`]), at
//!   [`ESCAPE_PENALTY`]; VCs `1..vcs` carry every move of the rule. The escape wins only when its
//!   VC is emptier. Duato's condition holds (SPEC §5.3 proof: escape channels ranked Up(l) <
//!   Side(k) < Down(l)), which `hxsim check-deadlock` verifies. Default 2 VCs. Rules that are
//!   deadlock free on one VC (ODim, Deter, NCA, D-mod-K) use every VC for every move (an acyclic
//!   CDG stays acyclic when its channels are copied per VC), with the same default VC count so that
//!   comparisons give every routing the same buffers.
//! - `hyperz-b`: VC = side hops already taken, `d_eff + 1` VCs (`d_eff`: dimensions with `s_k >= 2`);
//!   static and acyclic: within a VC only up*-then-down* turns, side hops lead to the next VC.
//! - `none`: every move on every VC (default 1 VC): CLIOD and ALIOD then have cyclic CDGs (SPEC §5.3),
//!   kept for `hxsim check-deadlock`.
//!
//! **Faults.** On a faulty network every rule runs through [`super::hyperz_faults`]: its moves are
//! kept where their link is alive and the route can still be completed, with up then down detours
//! inside a Z-node and DAL-style side deroutes where the rule has none (Adda 2023, section 5.4), on
//! scheme B extended by the deroutes. Side links are needed at every level (as without faults).

use super::hyperz_faults::{self, Detours, Mode, Step};
use super::{runs_of, Candidate, CandidateRun, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ, PortId, SwitchId, View};
use std::sync::Arc;

/// The routings built here (they need a HyperZ or fat tree).
pub const NAMES: [&str; 6] = ["odim", "cliod", "aliod", "deter", "nca", "dmodk"];

/// Penalty of a fallback move: below one packet of queue (`Q` steps by the packet length), so it
/// only breaks ties in favour of the preferred moves (see the module doc).
pub const FALLBACK_PENALTY: u32 = 1;
/// Penalty of a move the paper takes only when its port is idle, against a fallback at penalty 0:
/// one phit less than a packet, the step of the router's `Q`. An idle port (`Q = 0`) then beats a
/// fallback port holding a packet; at equal queues the fallback wins.
pub fn idle_only_penalty(params: &RoutingParams) -> u32 {
    params.packet_phits.saturating_sub(1)
}

/// Penalty of scheme A's escape move (VC 0): above the adaptive moves' penalties but below one
/// packet of queue, so on equal queues the adaptive VC wins, and otherwise the emptier VC does.
/// SPEC §5.3 suggests taking VC 0 only when the adaptive VC has no room; that leaves VC 0 idle
/// until then, and on the 1024-processor h = 2 design under transpose traffic it cost CLIOD about
/// 3% of saturation throughput against ODim, which spreads over both VCs (0.581 vs 0.597, where
/// ODim on one VC gives 0.586). Duato's condition does not depend on when the escape is chosen.
pub const ESCAPE_PENALTY: u32 = 2;

/// One move of a rule: a topology port and its penalty, before a VC is assigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// Topology port.
    pub port: PortId,
    /// Penalty in phits.
    pub penalty: u32,
}

/// A packet at switch `at` heading for level-1 switch `dst` (SPEC §5.1 definitions).
#[derive(Debug, Clone, Copy)]
pub struct Here {
    /// Switch.
    pub at: SwitchId,
    /// Level of `at`, `1..=h`.
    pub level: usize,
    /// A processor of the destination switch (its first): stands for the destination in the ancestor
    /// and down-port tests.
    pub dst_server: u32,
    /// Z-node of `at`.
    pub za: u32,
    /// Z-node of the destination.
    pub zb: u32,
    /// SPEC §5.2 `up_phase`: the LCL is not reached yet (the zone of `at` does not hold the destination).
    pub up_phase: bool,
    /// `min O`, the dimension ODim corrects (`None` when the Z-nodes are equal).
    pub odim: Option<usize>,
}

impl Here {
    /// Where a packet for `dst` stands at `at`.
    #[inline]
    pub fn new(hz: &HyperZ, at: SwitchId, dst: SwitchId) -> Self {
        debug_assert_eq!(hz.level(dst), 1, "HyperZ routings route to level-1 (server) switches");
        let dst_server = hz.first_server(dst);
        let (za, zb) = (hz.znode(at), hz.znode(dst));
        Here {
            at,
            level: hz.level(at),
            dst_server,
            za,
            zb,
            up_phase: !hz.ancestor_contains(at, dst_server),
            odim: hz.first_offset_dim(za, zb),
        }
    }

    /// Every offset dimension `k in O` (ascending).
    #[inline]
    pub fn offsets<'a>(&self, hz: &'a HyperZ) -> impl Iterator<Item = usize> + 'a {
        let (za, zb) = (self.za, self.zb);
        (self.odim.unwrap_or(hz.dims())..hz.dims()).filter(move |&k| hz.coord(za, k) != hz.coord(zb, k))
    }

    /// Up: every up port (SPEC §5.1: every parent lies on a minimal path while `up_phase`).
    #[inline]
    pub fn up(&self, hz: &HyperZ, penalty: u32, out: &mut Vec<Move>) {
        out.extend(hz.up_ports(self.at).map(|port| Move { port, penalty }));
    }

    /// Down: the `g_i` parallel ports to the unique child whose zone holds the destination.
    #[inline]
    pub fn down(&self, hz: &HyperZ, penalty: u32, out: &mut Vec<Move>) {
        if let Some(r) = hz.down_port_to(self.at, self.dst_server) {
            out.extend(r.map(|port| Move { port, penalty }));
        }
    }

    /// Side(k): the `q_ik` parallel ports to the Z-node with coordinate `k` set to the destination's.
    #[inline]
    pub fn side(&self, hz: &HyperZ, k: usize, penalty: u32, out: &mut Vec<Move>) {
        out.extend(hz.side_ports(self.at, k, hz.coord(self.zb, k)).map(|port| Move { port, penalty }));
    }

    /// Side(k) for every `k in O`.
    #[inline]
    pub fn sides(&self, hz: &HyperZ, penalty: u32, out: &mut Vec<Move>) {
        for k in self.offsets(hz) {
            self.side(hz, k, penalty, out);
        }
    }

    /// "An idle Side(k), `k in O`, else the ODim side" (SPEC §5.2 CLIOD step 2, ALIOD steps 2 and 5):
    /// the ODim side at 0 and the other offset dimensions at [`idle_only_penalty`], so one of those
    /// wins when it is idle and the ODim port is not, or when its queue is shorter by a whole packet.
    #[inline]
    pub fn idle_sides_else_odim(&self, hz: &HyperZ, idle_only: u32, out: &mut Vec<Move>) {
        let first = self.odim;
        for k in self.offsets(hz) {
            self.side(hz, k, if Some(k) == first { 0 } else { idle_only }, out);
        }
    }
}

/// The move ODim makes from `at` towards `dst` (SPEC §5.2 ODim): Up on any up port while the LCL is
/// not reached, else the ODim side (`min O`), else Down. Also scheme A's escape subfunction.
#[inline]
pub fn odim_moves(hz: &HyperZ, here: &Here, out: &mut Vec<Move>) {
    if here.up_phase {
        here.up(hz, 0, out);
    } else if let Some(k) = here.odim {
        here.side(hz, k, 0, out);
    } else {
        here.down(hz, 0, out);
    }
}

/// The per-hop rule of one HyperZ routing (SPEC §5.2), without VCs.
pub trait Rule: Send + Sync + 'static {
    /// Whether the rule's channel dependency graph is acyclic on one VC (SPEC §5.3: ODim and Deter),
    /// so scheme A needs no escape VC.
    const ACYCLIC: bool;
    /// The moves at `here` (`st` for the packet's source and destination).
    fn moves(&self, hz: &HyperZ, here: &Here, st: &RouteState, out: &mut Vec<Move>);
}

/// How VCs are assigned (SPEC §5.3; see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Every move on every VC.
    Any,
    /// Scheme A: VC 0 = the ODim escape, VCs `1..` adaptive.
    Escape,
    /// Scheme B: VC = side hops taken.
    SideHops,
}

/// A HyperZ routing: a [`Rule`] with a VC [`Scheme`], and its detours on a faulty network.
pub struct HyperZRouting<R: Rule> {
    name: &'static str,
    rule: R,
    hz: HyperZ,
    scheme: Scheme,
    vcs: u8,
    /// The fault-tolerant moves, on a faulty network ([`super::hyperz_faults`]).
    detours: Option<Detours>,
}

/// The HyperZ (or fat tree) under `net`, or a config error naming `routing`: these routings need a
/// HyperZ view and side links at every level.
pub fn hyperz<'a>(net: &'a Fabric, routing: &str) -> Result<&'a HyperZ, ConfigError> {
    let View::HyperZ(hz) = net.topology().view() else {
        return Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{routing}\" on {}", net.topology().name()),
            "topology.kind = \"hyperz\" or \"fattree\": the routing runs on those only",
        ));
    };
    if !hz.side_links_at_every_level() {
        return Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{routing}\" on a HyperZ with some q_ik = 0"),
            "topology.side_links >= 1 at every level: SPEC §5.2 takes side hops at the level the LCL is \
             reached, whichever it is",
        ));
    }
    Ok(hz)
}

/// Build routing `name` from `rule` over `net` with the VC scheme of `routing.vc_policy`;
/// `default_vcs` is scheme A's VC count when `routing.vcs = 0` (at least 2 for escape-based rules).
/// On a faulty network the rule gets its detours ([`super::hyperz_faults`]) and, where the HyperZ
/// has GHC dimensions, scheme B extended by the deroutes (the default `"ladder"` selects it there).
pub fn build<R: Rule>(
    params: &RoutingParams,
    net: Arc<Fabric>,
    name: &'static str,
    rule: R,
    default_vcs: usize,
) -> Result<Box<dyn Routing>, ConfigError> {
    let hz = hyperz(&net, name)?.clone();
    let policy = params.vc_policy.as_str();
    let d_eff = hz.sides().iter().filter(|&&s| s >= 2).count();
    let faulty = net.is_faulty();
    // Deroutes a packet may take on a faulty network: routing.max_deroutes, by default 1.
    let budget = match params.max_deroutes {
        _ if !faulty || d_eff == 0 => 0,
        Some(m) if m > 8 => return Err(ConfigError::value("routing.max_deroutes", m, format!("at most 8 for {name}"))),
        Some(m) => m,
        None => 1,
    };
    let steps = d_eff + 1 + budget;
    let (scheme, vcs) = match policy {
        "ladder" | "hyperz-b" if faulty && d_eff > 0 => (Scheme::SideHops, scheme_b_vcs(params, name, steps, budget)?),
        "hyperz-a" if faulty && d_eff > 0 => {
            return Err(ConfigError::value(
                "routing.vc_policy",
                "\"hyperz-a\"",
                format!(
                "\"hyperz-b\" (or the default \"ladder\", which selects it) for {name} on a faulty HyperZ: scheme A's \
                     escape is ODim, one route per pair, which a failed link cuts; scheme B with one VC per side hop \
                     ({steps} VCs here) carries the detours (SPEC §5.3)"
            ),
            ))
        }
        "ladder" | "hyperz-a" if faulty => (Scheme::Any, params.vcs_or(default_vcs)),
        "ladder" | "hyperz-a" if !R::ACYCLIC => {
            let vcs = params.vcs_or(default_vcs);
            if vcs < 2 {
                return Err(ConfigError::value(
                    "routing.vcs",
                    vcs,
                    format!("at least 2 for {name} with scheme A (VC 0 escape, VC 1.. adaptive; SPEC §5.3)"),
                ));
            }
            (Scheme::Escape, vcs)
        }
        "ladder" | "hyperz-a" => (Scheme::Any, params.vcs_or(default_vcs)),
        "hyperz-b" => (Scheme::SideHops, scheme_b_vcs(params, name, steps, 0)?),
        "none" => (Scheme::Any, params.vcs_or(1)),
        other => {
            return Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{other}\""),
                format!(
                    "for {name}: \"hyperz-a\" (SPEC §5.3 scheme A, also the default \"ladder\"), \"hyperz-b\" \
                     (scheme B) or \"none\""
                ),
            ))
        }
    };
    if vcs > 64 {
        return Err(ConfigError::value("routing.vcs", vcs, "at most 64"));
    }
    let detours = if faulty {
        let d = Detours::new(net.clone(), budget as u8);
        d.check(&hz, name, &params.faults)?;
        Some(d)
    } else {
        None
    };
    Ok(Box::new(HyperZRouting { name, rule, hz, scheme, vcs: vcs as u8, detours }))
}

/// Scheme B's VC count: `steps` (side hops taken run `0..steps`, `budget` of them deroutes), which
/// `routing.vcs` must equal when set.
fn scheme_b_vcs(params: &RoutingParams, name: &str, steps: usize, budget: usize) -> Result<usize, ConfigError> {
    let vcs = params.vcs_or(steps);
    if vcs != steps {
        let deroutes =
            if budget > 0 { format!(", {budget} of them deroutes (routing.max_deroutes)") } else { String::new() };
        return Err(ConfigError::value(
            "routing.vcs",
            vcs,
            format!(
                "{steps} (or 0) for {name} on scheme B: VC = side hops taken, 0..={}{deroutes} (SPEC §5.3 scheme B)",
                steps - 1
            ),
        ));
    }
    Ok(vcs)
}

impl<R: Rule> HyperZRouting<R> {
    /// The candidates on a faulty network (see [`super::hyperz_faults`]): the rule's moves whose
    /// link is alive and whose next state can still reach the destination, else every such Up, Down
    /// and minimal Side move, else every such deroute.
    fn faulty_candidates(&self, d: &Detours, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let hz = &self.hz;
        let here = Here::new(hz, at, st.dst);
        let m = Mode::of(st);
        let vcs = match self.scheme {
            Scheme::SideHops => m.sides..m.sides + 1,
            _ => 0..self.vcs,
        };
        let push = |out: &mut Vec<Candidate>, port: PortId, penalty: u32| {
            for vc in vcs.clone() {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        };
        MOVES.with_borrow_mut(|moves| {
            moves.clear();
            self.rule.moves(hz, &here, st, moves);
            d.with_search(|search| {
                let mut any = false;
                for mv in moves.iter() {
                    if !d.net().alive(at, mv.port) {
                        continue;
                    }
                    let step = hyperz_faults::step_of(hz, at, mv.port, here.zb);
                    if (step == Step::Up && m.descending) || (step == Step::Deroute && m.deroutes >= d.budget()) {
                        continue;
                    }
                    let next = hz.neighbour(at, mv.port).expect("HyperZ ports are wired").0;
                    if search.reaches(hz, next, m.after(step), st.dst) {
                        push(out, mv.port, mv.penalty);
                        any = true;
                    }
                }
                for tier in 2..4 {
                    if any {
                        break;
                    }
                    d.groups(hz, &here, m, tier..tier + 1, |step, ports| {
                        if d.live(at, ports.clone()) {
                            let next = hz.neighbour(at, ports.start).expect("HyperZ ports are wired").0;
                            if search.reaches(hz, next, m.after(step), st.dst) {
                                for p in ports.filter(|&p| d.net().alive(at, p)) {
                                    push(out, p, 0);
                                }
                                any = true;
                            }
                        }
                        false
                    });
                }
            });
        });
    }

    /// The HyperZ it routes on.
    pub fn hyperz(&self) -> &HyperZ {
        &self.hz
    }
    /// Its VC scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }
}

thread_local! {
    static MOVES: std::cell::RefCell<Vec<Move>> = const { std::cell::RefCell::new(Vec::new()) };
    static CANDIDATES: std::cell::RefCell<Vec<Candidate>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `f` with the moves `rule` makes for a packet in state `st` at `at` on the fault-free
/// HyperZ `hz` (the rule alone: no VC, no detour), through a per-thread buffer (no allocation).
/// What a composition that brings its own escape (SurePath's, [`super::surepath`]) reads.
#[inline]
pub fn with_moves<R: Rule, T>(rule: &R, hz: &HyperZ, at: SwitchId, st: &RouteState, f: impl FnOnce(&[Move]) -> T) -> T {
    MOVES.with_borrow_mut(|moves| {
        moves.clear();
        rule.moves(hz, &Here::new(hz, at, st.dst), st, moves);
        f(moves)
    })
}

impl<R: Rule> Routing for HyperZRouting<R> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn vcs(&self) -> usize {
        self.vcs as usize
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if let Some(d) = &self.detours {
            self.faulty_candidates(d, at, st, out);
            return;
        }
        let hz = &self.hz;
        let here = Here::new(hz, at, st.dst);
        MOVES.with_borrow_mut(|moves| {
            moves.clear();
            self.rule.moves(hz, &here, st, moves);
            match self.scheme {
                Scheme::Any => {
                    for m in moves.iter() {
                        for vc in 0..self.vcs {
                            out.push(Candidate { port: m.port, vc, penalty: m.penalty, escape: false });
                        }
                    }
                }
                Scheme::SideHops => {
                    let taken = hz.offset_count(hz.znode(st.src), here.zb) - hz.offset_count(here.za, here.zb);
                    let vc = taken as u8;
                    out.extend(moves.iter().map(|m| Candidate { port: m.port, vc, penalty: m.penalty, escape: false }));
                }
                Scheme::Escape => {
                    for m in moves.iter() {
                        for vc in 1..self.vcs {
                            out.push(Candidate { port: m.port, vc, penalty: m.penalty, escape: false });
                        }
                    }
                    moves.clear();
                    odim_moves(hz, &here, moves);
                    out.extend(moves.iter().map(|m| Candidate {
                        port: m.port,
                        vc: 0,
                        penalty: ESCAPE_PENALTY,
                        escape: true,
                    }));
                }
            }
        });
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        // On a faulty network candidates cost a feasibility search: written as runs, so that the
        // router keeps a waiting head's (`cache_candidates`) instead of searching every cycle.
        let Some(d) = &self.detours else { return false };
        CANDIDATES.with_borrow_mut(|cands| {
            cands.clear();
            self.faulty_candidates(d, at, st, cands);
            runs_of(cands, out);
        });
        true
    }
    fn cache_candidates(&self) -> bool {
        self.detours.is_some()
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if self.detours.is_some() {
            hyperz_faults::advance(&self.hz, st, at, c.port);
        }
    }
    fn escape_based(&self) -> bool {
        self.scheme == Scheme::Escape
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        if self.scheme != Scheme::Escape {
            return;
        }
        let mut moves = Vec::new();
        odim_moves(&self.hz, &Here::new(&self.hz, at, dst), &mut moves);
        out.extend(moves.iter().map(|m| Candidate { port: m.port, vc: 0, penalty: ESCAPE_PENALTY, escape: true }));
    }
}

/// D-mod-K's up port at `here` (SPEC §5.2 Deter: `floor(dst / prod_{j<=i} w_j g_j) mod (w_{i+1} g_{i+1})`)
/// with `dst` the destination's level-1 switch index (the global processor id divided by `z_1`): the
/// router knows the destination switch, not the processor, so D-mod-K spreads destinations leaf by
/// leaf. Since `w_1 g_1 = 1` the formula is unchanged otherwise.
#[inline]
pub fn dmodk_up(hz: &HyperZ, here: &Here, dst: SwitchId) -> Option<PortId> {
    let ups = hz.up_ports(here.at);
    let n = (ups.end - ups.start) as u64;
    if n == 0 {
        return None;
    }
    Some(ups.start + (dst as u64 / dmodk_divisor(hz, here.level) % n) as PortId)
}

/// D-mod-K's down port at `here`: of the `g_i` parallel links to the child, the one a packet for the
/// same destination rising from that child would have taken (its up port's parallel index), so that
/// every destination has a single route down.
#[inline]
pub fn dmodk_down(hz: &HyperZ, here: &Here, dst: SwitchId) -> Option<PortId> {
    let r = hz.down_port_to(here.at, here.dst_server)?;
    let i = here.level;
    let g = (r.end - r.start) as u64;
    let up_below = (hz.roots()[i - 1] / hz.roots()[i - 2]) as u64 * g; // w_i g_i
    Some(r.start + (dst as u64 / dmodk_divisor(hz, i - 1) % up_below % g) as PortId)
}

/// `prod_{j=2}^{i} w_j g_j` (`w_1 g_1 = 1`).
#[inline]
fn dmodk_divisor(hz: &HyperZ, i: usize) -> u64 {
    let (r, g) = (hz.roots(), hz.internal_links());
    (2..=i).map(|j| (r[j - 1] / r[j - 2] * g[j - 1]) as u64).product()
}

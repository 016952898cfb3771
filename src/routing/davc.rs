//! DAVC: Dynamic Assignment of Virtual Channels (DAVC paper, sections 4 and 5), as a VC policy any
//! routing can use (`routing.vc_policy = "davc-n" | "davc-p" | "davc-np"`).
//!
//! A channel is `<n, p, v>`: node, port and VC. The allocation functions keep every route an
//! increasing sequence in a strict order (`<_2` or `<_3`, with the VC the most significant
//! component), so the channel dependency graph is acyclic whatever the routing (Theorems 4.4, 4.5,
//! Lemma 4.6 for routes with loops). Each is one comparison per hop:
//!
//! - F_N (Algorithm 1): raise the VC when the outbound node id is `<=` the current node id.
//! - F_P (Algorithm 2): raise the VC when the outbound port id is `<=` the inbound port id.
//! - F_NP (Algorithm 3): raise the VC when the outbound port id is `<` the inbound one, or equal
//!   and the outbound node id is `<=` the current one.
//!
//! As in the paper's example (section 5), the inbound port of a switch is the port of the previous
//! switch the packet left through (Definition 3.4), so ports are compared as numbered on the
//! switch that owns them. Injection is on VC 0. The paper's Fig. 3 applies the rule to the first
//! switch-to-switch hop too (against the injection channel); here that hop always takes VC 0
//! instead: injection links are dedicated and no channel depends on them (section 6.1), so only the
//! order among switch-to-switch channels matters, and it is kept from the second hop on. A route
//! of `L` switch-to-switch hops therefore needs at most `L` VCs (the `l - 2` of section 6.1, with
//! `l` counting the injection and consumption hops).

use super::RouteState;
use crate::topology::{PortId, SwitchId};

/// One of the three DAVC allocation functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Davc {
    /// Node-id order, F_N.
    N,
    /// Port-id order, F_P.
    P,
    /// Node-and-port order, F_NP.
    Np,
}

impl Davc {
    /// From `davc-n`, `davc-p`, `davc-np`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "davc-n" => Some(Davc::N),
            "davc-p" => Some(Davc::P),
            "davc-np" => Some(Davc::Np),
            _ => None,
        }
    }

    /// Whether the hop from `at` through `port` to `next` needs a VC transition, for a packet that
    /// entered `at` through port `inbound` of the previous switch.
    #[inline]
    pub fn transition(self, at: SwitchId, inbound: PortId, port: PortId, next: SwitchId) -> bool {
        match self {
            Davc::N => next <= at,
            Davc::P => port <= inbound,
            Davc::Np => port < inbound || (port == inbound && next <= at),
        }
    }

    /// The VC of the next channel for a packet in state `st` at `at` leaving through `port` to
    /// `next` (`st.vc` is the VC it holds, `st.last_port` the inbound port).
    #[inline]
    pub fn next_vc(self, st: &RouteState, at: SwitchId, port: PortId, next: SwitchId) -> u32 {
        if st.hops == 0 {
            return 0;
        }
        st.vc as u32 + self.transition(at, st.last_port, port, next) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DAVC paper Fig. 3: node 3 -> switch 7 (port 0) -> switch 6 (port 2 of 7) -> switch 9 (port 2
    /// of 6) -> node 4. F_N uses VCs 0, 1, 1; F_P uses 0, 0, 1; F_NP uses 0, 0, 0. The first channel
    /// is the injection link (node 3, port 0), so at switch 7 the inbound port is 0.
    #[test]
    fn figure3_example() {
        let path: [(SwitchId, PortId, SwitchId); 3] = [(3, 0, 7), (7, 2, 6), (6, 2, 9)];
        let run = |f: Davc| {
            let mut vcs = vec![0u32];
            let mut vc = 0u32;
            for w in path.windows(2) {
                let (_, inbound, at) = w[0];
                let (_, port, next) = w[1];
                vc += f.transition(at, inbound, port, next) as u32;
                vcs.push(vc);
            }
            vcs
        };
        assert_eq!(run(Davc::N), vec![0, 1, 1]);
        assert_eq!(run(Davc::P), vec![0, 0, 1]);
        assert_eq!(run(Davc::Np), vec![0, 0, 0]);
    }

    #[test]
    fn first_hop_is_on_vc0_and_later_hops_follow_the_order() {
        let mut st = RouteState::default();
        assert_eq!(Davc::N.next_vc(&st, 5, 3, 2), 0);
        st.hops = 1;
        st.vc = 2;
        st.last_port = 4;
        assert_eq!(Davc::N.next_vc(&st, 5, 3, 2), 3); // 2 <= 5
        assert_eq!(Davc::N.next_vc(&st, 5, 3, 9), 2);
        assert_eq!(Davc::P.next_vc(&st, 5, 4, 9), 3); // 4 <= 4
        assert_eq!(Davc::P.next_vc(&st, 5, 5, 2), 2);
        assert_eq!(Davc::Np.next_vc(&st, 5, 4, 9), 2); // equal port, higher node
        assert_eq!(Davc::Np.next_vc(&st, 5, 4, 1), 3); // equal port, lower node
        assert_eq!(Davc::Np.next_vc(&st, 5, 3, 9), 3); // lower port
    }
}

//! ALIOD, "Any Level Idle Offset Dimension" routing on HyperZ (Adda 2023, section 4.1 and Table 1;
//! SPEC §5.2 ALIOD, the table made explicit). At switch `(a, i, X)`:
//! 1. if the Z-nodes are equal: Up (any up port) while the LCL is not reached, else Down;
//! 2. else an idle Side(k), `k` any offset dimension, at the current level (random among the idle);
//! 3. else, while the LCL is not reached: the shortest queue among every Up port and the ODim side;
//! 4. else, above level 1: the shortest queue among the Down ports and the ODim side;
//! 5. else (level 1, LCL reached): the ODim side.
//!
//! As router penalties (see [`super::hyperz_moves`] on idle ports): in rules 3-4 every Side(k),
//! `k in O`, at 0 and the Up or Down ports at [`FALLBACK_PENALTY`], so an idle side hop beats every
//! Up or Down port and otherwise the shortest queue wins (a busy non-ODim side can win on a shorter
//! queue too, where the paper would only weigh the ODim side); in rule 5, CLIOD's step 2 (the ODim
//! side at 0, the others at [`idle_only_penalty`]), which keeps ALIOD and CLIOD equal at `h = 1`.
//!
//! ALIOD never rises above `L*` and never moves in an aligned dimension, so it is minimal; side hops
//! happen at any level `1..=L*`, going up or down. At `h = 1` it equals CLIOD. Cyclic on one VC (SPEC
//! §5.3): VC scheme A by default (the paper's argument, "when no idle dimension is found, the message
//! will use ... ODim, which is known to be deadlock free", made Duato-exact), scheme B selectable.
//!
//! **With faults** (section 5.4: "ALIOD is more tolerant to faults than DAL"): the moves above where
//! their link is alive and the route can still be completed; where none can, up then down within the
//! Z-node to a level whose side link in an offset dimension works ("additional rerouting in the up
//! and then down directions within the Z-node is required to locate the level of non-faulty
//! links"), with up ports chosen so that the down path avoids failed links (the recoil of Adda and
//! Peratikou 2017); where all of an offset dimension's links fail, a DAL deroute through another
//! Z-node of that dimension. Scheme B with one more VC per deroute. See [`super::hyperz_faults`].

use super::hyperz_moves::{self, idle_only_penalty, Here, Move, Rule, FALLBACK_PENALTY};
use super::{RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ};
use std::sync::Arc;

/// ALIOD's per-hop rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Aliod {
    /// Penalty of a non-ODim side hop in rule 5 ([`idle_only_penalty`]).
    pub idle_only: u32,
}

impl Rule for Aliod {
    const ACYCLIC: bool = false;
    #[inline]
    fn moves(&self, hz: &HyperZ, here: &Here, _st: &RouteState, out: &mut Vec<Move>) {
        if here.odim.is_none() {
            if here.up_phase {
                here.up(hz, 0, out);
            } else {
                here.down(hz, 0, out);
            }
            return;
        }
        if here.up_phase {
            here.sides(hz, 0, out);
            here.up(hz, FALLBACK_PENALTY, out);
        } else if here.level > 1 {
            here.sides(hz, 0, out);
            here.down(hz, FALLBACK_PENALTY, out);
        } else {
            here.idle_sides_else_odim(hz, self.idle_only, out);
        }
    }
}

/// `routing.algorithm = "aliod"` over `net` (a HyperZ or fat tree, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "aliod", Aliod { idle_only: idle_only_penalty(params) }, 2)
}

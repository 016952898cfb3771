//! VC policies that routings share.
//!
//! The *ladder* (SurePath section 3.1.2 and Table 4; Gunther / Merlin-Schweitzer hop-count
//! schemes): the i-th group of VCs is used by a packet that has already crossed i switch-to-switch
//! links. With `vcs` VCs and routes of at most `steps` hops, each step gets `vcs / steps` VCs
//! (Minimal on 2n VCs: two per step; Valiant, OmniWAR and Polarized on 2n VCs: one per step). Since
//! the VC index strictly grows along every route, the channel dependency graph is acyclic.

use crate::config::ConfigError;

/// Hop-count ladder.
#[derive(Debug, Clone, Copy)]
pub struct Ladder {
    /// VCs per step.
    pub per_step: usize,
    /// Longest route, in switch-to-switch hops.
    pub steps: usize,
}

impl Ladder {
    /// A ladder over `vcs` VCs for routes of at most `steps` hops; `why` explains the route length in
    /// the error (e.g. "Valiant routes are up to 2 x diameter 3 = 6 hops").
    pub fn new(vcs: usize, steps: usize, why: &str) -> Result<Self, ConfigError> {
        let steps = steps.max(1);
        if vcs < steps {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                format!("the ladder needs at least one VC per hop: {why}, so at least {steps} VCs"),
            ));
        }
        Ok(Ladder { per_step: vcs / steps, steps })
    }

    /// The VCs a packet that has taken `hops` hops may request for its next hop.
    #[inline]
    pub fn vcs_for_hop(&self, hops: u16) -> std::ops::Range<u8> {
        let h = (hops as usize).min(self.steps - 1);
        let lo = h * self.per_step;
        lo as u8..(lo + self.per_step) as u8
    }

    /// Total VCs the ladder spans.
    pub fn used_vcs(&self) -> usize {
        self.per_step * self.steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surepath_table4_vc_usage() {
        // Minimal on a 3-D HyperX with 2n = 6 VCs: 2 VCs for each of the 3 steps.
        let l = Ladder::new(6, 3, "").unwrap();
        assert_eq!(l.vcs_for_hop(0), 0..2);
        assert_eq!(l.vcs_for_hop(2), 4..6);
        // Valiant with 2n = 6 VCs and routes of up to 6 hops: one per step.
        let l = Ladder::new(6, 6, "").unwrap();
        assert_eq!(l.vcs_for_hop(5), 5..6);
        assert!(Ladder::new(3, 6, "x").is_err());
    }
}

//! The dynamic state of a [`NetPartition`] for checkpoints (see `crate::checkpoint`): everything a
//! run changes (buffers, packets, credits, random streams, counters, pending messages), and none
//! of what [`NetPartition::new`] derives from the config (topology tables, latencies), which a
//! resumed run rebuilds. Serialized by reference when saving, so a checkpoint does not copy the
//! partition first.

use super::packet::Slab;
use super::{InPort, InVc, Msg, NetPartition, OutPort, OutVc, Server};
use crate::engine::{Cycle, Envelope};
use crate::metrics::Stats;
use crate::rng::Rng;
use crate::topology::SwitchId;
use serde::{Deserialize, Serialize};

/// Declares the state twice with the same fields in the same order (bincode is positional): a
/// borrowing struct to save and an owning one to load.
macro_rules! state {
    ($($(#[$doc:meta])* $f:ident: $t:ty,)*) => {
        #[derive(Serialize)]
        struct StateRef<'a> {
            $($f: &'a $t,)*
        }

        /// The dynamic state of one partition, as read from a checkpoint; see [`NetPartition::restore`].
        #[derive(Deserialize)]
        pub struct PartitionState {
            $($(#[$doc])* $f: $t,)*
        }

        impl NetPartition {
            /// Write this partition's dynamic state with `serializer` (bincode in checkpoints). Only
            /// valid after the engine stopped the run at a window end (then the pending messages
            /// are parked here).
            pub fn save_state<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                StateRef { $($f: &self.$f,)* }.serialize(serializer)
            }

            /// Replace this partition's dynamic state with `st`, read from a checkpoint of a
            /// partition with the same switches (built by [`NetPartition::new`] from the same
            /// config); the parked messages are scheduled when the engine starts.
            pub fn restore(&mut self, st: PartitionState) -> Result<(), String> {
                if st.switches != self.switches {
                    return Err("the checkpoint's partitioning differs from this run's".into());
                }
                // Arrays sized by the network must match: a mismatch means a different model.
                if st.inbuf.len() != self.inbuf.len() || st.servers.len() != self.servers.len()
                    || st.rng_router.len() != self.rng_router.len() || st.outvc.len() != self.outvc.len()
                {
                    return Err("the checkpoint's network differs from this run's".into());
                }
                $(self.$f = st.$f;)*
                // Cached candidates belong to the heads this partition held before.
                self.run_cache_vc.fill(super::NO_VC);
                Ok(())
            }
        }
    };
}

state! {
    switches: Vec<SwitchId>,
    slab: Slab,
    inp: Vec<InPort>,
    inbuf: Vec<InVc>,
    in_mask: Vec<u64>,
    outp: Vec<OutPort>,
    outvc: Vec<OutVc>,
    out_mask: Vec<u64>,
    servers: Vec<Server>,
    next_gen: Vec<Cycle>,
    next_gen_min: Vec<Cycle>,
    server_ready: Vec<Cycle>,
    inject_at: Vec<Cycle>,
    rng_traffic: Vec<Rng>,
    rng_router: Vec<Rng>,
    stats: Stats,
    link_phits: Vec<u64>,
    server_injected: Vec<u64>,
    server_accepted: Vec<u64>,
    in_flight: i64,
    last_progress: Cycle,
    undrained_servers: u64,
    failure: Option<String>,
    parked: Option<(Cycle, Vec<Envelope<Msg>>)>,
}

impl NetPartition {
    /// The cycle the run resumes at, once parked by the engine (see [`NetPartition::save_state`]).
    pub fn resume_at(&self) -> Option<Cycle> {
        self.parked.as_ref().map(|p| p.0)
    }
}

//! How the partitions of one process reach those of other processes.

use super::{Envelope, Status};

/// Moves boundary messages between processes (ranks) once per window and reduces the [`Status`]
/// over them. One instance per process; only the thread that called [`super::run_with`] (which runs
/// local partition 0) calls it, between two barriers of the local partitions.
pub trait Transport<M> {
    /// Number of processes taking part, `R >= 1`.
    fn ranks(&self) -> usize;
    /// This process's rank, `0..R`.
    fn rank(&self) -> usize;
    /// One exchange round, called by every rank at the end of every window (collective).
    ///
    /// `outbound[q]` holds this rank's messages for the partitions of rank `q` (the entry of this
    /// rank is empty); the transport sends them and leaves every entry empty (capacity kept, to
    /// avoid reallocating every window). Messages from the other ranks for this rank's partitions
    /// are appended to `inbound`, in any order (deliveries commute). Returns [`Status::reduce`] of
    /// `local` over all ranks: every rank must get the same value.
    fn exchange(&mut self, outbound: &mut [Vec<Envelope<M>>], inbound: &mut Vec<Envelope<M>>, local: Status) -> Status;
}

/// The transport of a single process: nobody else to talk to.
#[derive(Debug, Default, Clone, Copy)]
pub struct Local;

impl<M> Transport<M> for Local {
    fn ranks(&self) -> usize {
        1
    }
    fn rank(&self) -> usize {
        0
    }
    fn exchange(
        &mut self,
        outbound: &mut [Vec<Envelope<M>>],
        _inbound: &mut Vec<Envelope<M>>,
        local: Status,
    ) -> Status {
        debug_assert!(outbound.iter().all(Vec::is_empty), "a single process has no other rank to send to");
        local
    }
}

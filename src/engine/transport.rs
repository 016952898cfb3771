//! How the partitions of one process reach those of other processes.

use super::{Cycle, Envelope, Status};

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
    /// Called by the same thread right after the window ending at `end` was exchanged (after the
    /// local partitions' [`super::Partition::end_window`] for it), before any partition starts the
    /// next window. Every rank sees the same sequence of `end`s, so an implementation may make
    /// collective calls of its own here. Default: nothing.
    fn window_end(&mut self, _end: Cycle) {}
}

/// A transport that also calls `hook(end)` at every window end (see [`Transport::window_end`]):
/// how a driver runs collectives of its own (e.g. streaming statistics to rank 0) in step with the
/// windows, on the one thread that may talk to the other ranks, without the engine knowing what
/// they carry.
#[derive(Debug)]
pub struct Observed<X, F> {
    /// The transport that moves the messages.
    pub inner: X,
    /// Called after the inner transport's own `window_end`.
    pub hook: F,
}

impl<M, X: Transport<M>, F: FnMut(Cycle)> Transport<M> for Observed<X, F> {
    fn ranks(&self) -> usize {
        self.inner.ranks()
    }
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn exchange(&mut self, outbound: &mut [Vec<Envelope<M>>], inbound: &mut Vec<Envelope<M>>, local: Status) -> Status {
        self.inner.exchange(outbound, inbound, local)
    }
    fn window_end(&mut self, end: Cycle) {
        self.inner.window_end(end);
        (self.hook)(end);
    }
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

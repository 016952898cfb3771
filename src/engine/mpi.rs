//! The MPI world and transport (rsmpi), compiled with the cargo feature `mpi`.
//!
//! Per window, every rank packs the messages for each neighbouring rank into one byte buffer
//! (bincode, one `(cycle, lp, msg)` record after the other), posts a non-blocking send to every
//! neighbour, then receives one buffer from every neighbour (matched probe for the size, then a
//! receive into a reused buffer). Empty buffers are sent too: they tell the neighbour that nothing
//! crossed, so no rank ever waits for a message that is not coming. The window's status is then
//! reduced over all ranks with one all-gather of six words per rank, folded with
//! [`Status::reduce`] in rank order: one collective covers the sum, minimum, maximum and flags, and
//! every rank computes the identical result.

use super::{Envelope, LaunchError, Status, Transport};
use mpi::point_to_point::Status as MpiStatus;
use mpi::request::{multiple_scope, RequestCollection};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Tag of the per-window boundary messages.
const TAG: mpi::Tag = 17;
/// Words per rank in the status all-gather.
const STATUS_WORDS: usize = 6;

fn wire() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// An initialised MPI world. Dropping it finalises MPI.
pub(crate) struct MpiWorld {
    // Field order matters: the communicator handle must not outlive the universe.
    comm: SimpleCommunicator,
    _universe: mpi::environment::Universe,
    rank: usize,
    size: usize,
}

impl MpiWorld {
    /// Initialise MPI (threads may exist, but only the calling thread makes MPI calls) and check
    /// that the world has the size `var` announced.
    pub(crate) fn init(var: &'static str, expected: usize) -> Result<Self, LaunchError> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| LaunchError::Init("MPI was already initialised in this process".into()))?;
        if provided == Threading::Single {
            return Err(LaunchError::Init(
                "the MPI library supports only MPI_THREAD_SINGLE, but hxsim runs partitions on threads and \
                 needs MPI_THREAD_FUNNELED"
                    .into(),
            ));
        }
        let comm = universe.world();
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        if size != expected {
            return Err(LaunchError::SizeMismatch { var, expected, actual: size });
        }
        Ok(MpiWorld { comm, _universe: universe, rank, size })
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn gather_to_root(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.comm.process_at_rank(0);
        let len = mine.len() as u64;
        if self.rank != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut lens = vec![0u64; self.size];
        root.gather_into_root(&len, &mut lens[..]);
        let counts: Vec<mpi::Count> = lens
            .iter()
            .map(|&l| mpi::Count::try_from(l).expect("a rank's result exceeds 2 GiB; MPI counts are 32-bit"))
            .collect();
        let displs: Vec<mpi::Count> = counts
            .iter()
            .scan(0 as mpi::Count, |acc, &c| {
                let d = *acc;
                *acc = acc.checked_add(c).expect("gathered results exceed 2 GiB; MPI counts are 32-bit");
                Some(d)
            })
            .collect();
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = mpi::datatype::PartitionMut::new(&mut buf[..], counts, &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        let mut out = Vec::with_capacity(self.size);
        let mut at = 0;
        for &l in &lens {
            out.push(buf[at..at + l as usize].to_vec());
            at += l as usize;
        }
        Some(out)
    }

    pub(crate) fn min_all(&self, x: u64) -> u64 {
        let mut out = 0u64;
        self.comm.all_reduce_into(&x, &mut out, mpi::collective::SystemOperation::min());
        out
    }

    pub(crate) fn sum_to_root(&self, words: &[u64]) -> Option<Vec<u64>> {
        let root = self.comm.process_at_rank(0);
        let sum = mpi::collective::SystemOperation::sum();
        if self.rank != 0 {
            root.reduce_into(words, sum);
            return None;
        }
        let mut out = vec![0u64; words.len()];
        root.reduce_into_root(words, &mut out[..], sum);
        Some(out)
    }

    /// The transport of this rank, exchanging with `neighbours` (other ranks, any order).
    pub(crate) fn transport(&self, neighbours: &[usize]) -> MpiTransport<'_> {
        let mut nb: Vec<usize> = neighbours.iter().copied().filter(|&q| q != self.rank).collect();
        nb.sort_unstable();
        nb.dedup();
        assert!(nb.iter().all(|&q| q < self.size), "neighbour rank beyond the world");
        let mut is_neighbour = vec![false; self.size];
        for &q in &nb {
            is_neighbour[q] = true;
        }
        MpiTransport {
            comm: &self.comm,
            rank: self.rank,
            size: self.size,
            send: vec![Vec::new(); nb.len()],
            neighbours: nb,
            is_neighbour,
            recv: Vec::new(),
            all: vec![0; STATUS_WORDS * self.size],
        }
    }
}

/// Boundary exchange over MPI point-to-point messages with the neighbouring ranks.
pub(crate) struct MpiTransport<'w> {
    comm: &'w SimpleCommunicator,
    rank: usize,
    size: usize,
    neighbours: Vec<usize>,
    is_neighbour: Vec<bool>,
    /// One send buffer per neighbour, reused every window.
    send: Vec<Vec<u8>>,
    recv: Vec<u8>,
    all: Vec<u64>,
}

fn status_words(s: &Status) -> [u64; STATUS_WORDS] {
    [s.in_flight as u64, s.last_progress, s.drained as u64, s.next_activity, s.stop as u64, s.failed as u64]
}

fn status_from(w: &[u64]) -> Status {
    Status {
        in_flight: w[0] as i64,
        last_progress: w[1],
        drained: w[2] != 0,
        next_activity: w[3],
        stop: w[4] != 0,
        failed: w[5] != 0,
    }
}

impl<M: Serialize + DeserializeOwned> Transport<M> for MpiTransport<'_> {
    fn ranks(&self) -> usize {
        self.size
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn exchange(&mut self, outbound: &mut [Vec<Envelope<M>>], inbound: &mut Vec<Envelope<M>>, local: Status) -> Status {
        let MpiTransport { comm, neighbours, is_neighbour, send, recv, all, .. } = self;
        for (q, ob) in outbound.iter().enumerate() {
            // Messages only travel along links, and neighbours are the ranks linked to this one.
            assert!(ob.is_empty() || is_neighbour[q], "{} messages for rank {q}, which is not a neighbour", ob.len());
        }
        for (buf, &q) in send.iter_mut().zip(neighbours.iter()) {
            buf.clear();
            for e in outbound[q].drain(..) {
                bincode::serde::encode_into_std_write(&e, buf, wire()).expect("encoding a boundary message");
            }
        }
        multiple_scope(neighbours.len(), |scope, sends: &mut RequestCollection<'_, [u8]>| {
            for (buf, &q) in send.iter().zip(neighbours.iter()) {
                sends.add(comm.process_at_rank(q as i32).immediate_send_with_tag(scope, &buf[..], TAG));
            }
            for &q in neighbours.iter() {
                let (msg, st): (mpi::point_to_point::Message, MpiStatus) =
                    comm.process_at_rank(q as i32).matched_probe_with_tag(TAG);
                let len = st.count(u8::equivalent_datatype()) as usize;
                recv.resize(len, 0);
                msg.matched_receive_into(&mut recv[..]);
                let mut at = 0;
                while at < len {
                    let (e, used): (Envelope<M>, usize) =
                        bincode::serde::decode_from_slice(&recv[at..], wire()).expect("decoding a boundary message");
                    inbound.push(e);
                    at += used;
                }
            }
            let mut done = Vec::with_capacity(neighbours.len());
            sends.wait_all(&mut done);
        });
        comm.all_gather_into(&status_words(&local)[..], &mut all[..]);
        Status::reduce(all.chunks_exact(STATUS_WORDS).map(status_from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_round_trip() {
        let s = Status {
            in_flight: -5,
            last_progress: 77,
            drained: true,
            next_activity: u64::MAX,
            stop: false,
            failed: true,
        };
        assert_eq!(status_from(&status_words(&s)), s);
    }
}

//! Source queues: the packets a server has generated and not yet injected, 8 bytes each where they
//! can be.
//!
//! Past saturation a server's source queue grows by the difference between the offered and the
//! accepted load, up to `traffic.source_queue_packets`, wherever the network's buffers push back
//! to the servers' ports: on `configs/hyperx-3d-8.toml` with bit complement at load 1.0 (`minimal`
//! accepts 0.118) the queues hold most of the packets, and the run's peak RSS fell from 53.4 to
//! 30.4 MB with this module. A packet that has only been generated is its destination and its
//! creation cycle: its source is the server, its route state is the one
//! [`crate::routing::Routing::init`] leaves untouched for most routings, and it is ready from the
//! cycle it was made. So a queue keeps such a packet as an [`Entry`] of two `u32`s (the
//! destination, and the creation cycle as an offset from its chunk's base) and makes the packet
//! again when the server injects it, exactly as it was. Packets that carry more (a route state
//! that `init` drew, a workload's receive, a packet sent again after a loss) stay in the
//! partition's slab and the entry holds their index.
//!
//! Entries live in 64-byte chunks of six, linked head to tail, from a pool shared by the
//! partition's servers with a free list; a server holds the first and last chunk of its queue. A
//! queue is a deque because a packet sent again goes before the others (`network/failures.rs`).

use super::packet::NIL;

/// Entries per chunk: a 16-byte header and six 8-byte entries fill a cache line.
const CHUNK: u8 = 6;

/// The tag of an entry whose packet is in the slab (its low bits are the slab index); server ids
/// and slab indices stay below it.
const IN_SLAB: u32 = 1 << 31;

/// One queued packet, as stored: `a` is the destination server (`b` its creation cycle less the
/// chunk's base), or [`IN_SLAB`] with the packet's slab index (`b` unused).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    a: u32,
    b: u32,
}

/// A queued packet as the partition sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Generated at `created` for server `dst`, with the route state `init` gives every packet.
    Plain { dst: u32, created: u64 },
    /// In the partition's slab at this index.
    Slab(u32),
}

/// Six entries, the live ones at `lo..hi`, and the next chunk of the queue.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Chunk {
    next: u32,
    lo: u8,
    hi: u8,
    /// Creation cycle that the plain entries' `b` count from.
    base: u64,
    e: [Entry; CHUNK as usize],
}

const _: () = assert!(std::mem::size_of::<Chunk>() == 64);

/// One server's queue: its first and last chunk in the [`SourcePool`] ([`NIL`] when empty).
#[derive(Debug, Clone, Copy)]
pub struct SourceQueue {
    head: u32,
    tail: u32,
}

impl Default for SourceQueue {
    fn default() -> Self {
        SourceQueue { head: NIL, tail: NIL }
    }
}

impl SourceQueue {
    /// Whether empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The chunks of a partition's source queues, with a free list; it grows to the most chunks in use
/// at once and allocates nothing after that.
#[derive(Default)]
pub struct SourcePool {
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    /// Entries stored, over every queue.
    len: usize,
}

impl SourcePool {
    /// Bytes per entry at most when a queue is full of plain entries: a chunk per six, and a
    /// partial chunk at each end (see [`SourcePool::queue_bytes`]).
    pub const CHUNK_BYTES: usize = std::mem::size_of::<Chunk>();

    /// Bytes a queue of `n` entries takes at most: its chunks, the first and last of them possibly
    /// holding one entry each.
    pub fn queue_bytes(n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            (n.saturating_sub(2).div_ceil(CHUNK as u64) + 2).min(n) * Self::CHUNK_BYTES as u64
        }
    }

    /// Whether a packet for server `dst` can be kept as a plain entry (ids below [`IN_SLAB`]).
    #[inline]
    pub fn plain_fits(dst: u32) -> bool {
        dst < IN_SLAB
    }

    /// Entries stored over every queue.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Whether no queue holds anything.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn alloc(&mut self, base: u64, lo: u8) -> u32 {
        let c = Chunk { next: NIL, lo, hi: lo, base, e: [Entry::default(); CHUNK as usize] };
        if let Some(i) = self.free.pop() {
            self.chunks[i as usize] = c;
            i
        } else {
            self.chunks.push(c);
            (self.chunks.len() - 1) as u32
        }
    }

    /// Append `x` to `q`.
    #[inline]
    pub fn push_back(&mut self, q: &mut SourceQueue, x: Queued) {
        let (a, created) = match x {
            Queued::Plain { dst, created } => {
                debug_assert!(Self::plain_fits(dst));
                (dst, Some(created))
            }
            Queued::Slab(i) => {
                debug_assert!(i < IN_SLAB, "slab index {i} too large for a source queue");
                (IN_SLAB | i, None)
            }
        };
        // A plain entry goes into the tail chunk if there is room and its creation cycle is within
        // 2^32 of the chunk's base; otherwise into a new chunk based at it.
        let fits = |c: &Chunk| c.hi < CHUNK && created.is_none_or(|t| t >= c.base && t - c.base <= u32::MAX as u64);
        if q.tail == NIL || !fits(&self.chunks[q.tail as usize]) {
            let c = self.alloc(created.unwrap_or(0), 0);
            if q.tail == NIL {
                q.head = c;
            } else {
                self.chunks[q.tail as usize].next = c;
            }
            q.tail = c;
        }
        let c = &mut self.chunks[q.tail as usize];
        c.e[c.hi as usize] = Entry { a, b: created.map_or(0, |t| (t - c.base) as u32) };
        c.hi += 1;
        self.len += 1;
    }

    /// Put the packet at slab index `i` before the head of `q` (a packet sent again; not for the
    /// hot path).
    pub fn push_front_slab(&mut self, q: &mut SourceQueue, i: u32) {
        debug_assert!(i < IN_SLAB, "slab index {i} too large for a source queue");
        if q.head == NIL || self.chunks[q.head as usize].lo == 0 {
            let c = self.alloc(0, CHUNK);
            self.chunks[c as usize].next = q.head;
            if q.head == NIL {
                q.tail = c;
            }
            q.head = c;
        }
        let c = &mut self.chunks[q.head as usize];
        c.lo -= 1;
        c.e[c.lo as usize] = Entry { a: IN_SLAB | i, b: 0 };
        self.len += 1;
    }

    #[inline]
    fn decode(c: &Chunk, e: Entry) -> Queued {
        if e.a & IN_SLAB != 0 {
            Queued::Slab(e.a & !IN_SLAB)
        } else {
            Queued::Plain { dst: e.a, created: c.base + e.b as u64 }
        }
    }

    /// The head of `q`, if any.
    #[inline]
    pub fn front(&self, q: &SourceQueue) -> Option<Queued> {
        (q.head != NIL).then(|| {
            let c = &self.chunks[q.head as usize];
            Self::decode(c, c.e[c.lo as usize])
        })
    }

    /// Remove and return the head of `q`, which must not be empty.
    #[inline]
    pub fn pop_front(&mut self, q: &mut SourceQueue) -> Queued {
        debug_assert!(q.head != NIL);
        let h = q.head;
        let c = &mut self.chunks[h as usize];
        let x = Self::decode(c, c.e[c.lo as usize]);
        c.lo += 1;
        if c.lo == c.hi {
            q.head = c.next;
            if q.head == NIL {
                q.tail = NIL;
            }
            self.free.push(h);
        }
        self.len -= 1;
        x
    }

    /// The entries of `q`, head first (not for the hot path).
    pub fn iter<'a>(&'a self, q: &SourceQueue) -> impl Iterator<Item = Queued> + 'a {
        let mut ci = q.head;
        let mut k = 0u8;
        std::iter::from_fn(move || {
            while ci != NIL {
                let c = &self.chunks[ci as usize];
                let at = c.lo + k;
                if at < c.hi {
                    k += 1;
                    return Some(Self::decode(c, c.e[at as usize]));
                }
                ci = c.next;
                k = 0;
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The pool against a `VecDeque` per queue, over a long pseudo-random mix of appends (plain,
    /// with creation cycles that jump by more than 2^32 now and then, and slab ones), pushes to the
    /// front and pops on three queues.
    #[test]
    fn queues_match_a_deque_model() {
        let mut pool = SourcePool::default();
        let mut qs = [SourceQueue::default(); 3];
        let mut model: [VecDeque<Queued>; 3] = Default::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut now = 0u64;
        let mut high = 0usize;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = (x % 3) as usize;
            now += if x.is_multiple_of(97) { 1 << 33 } else { x % 5 };
            match (x >> 8) % 8 {
                0..=3 => {
                    let e = Queued::Plain { dst: (x >> 20) as u32 & 0x7fff_ffff, created: now };
                    pool.push_back(&mut qs[k], e);
                    model[k].push_back(e);
                }
                4 => {
                    pool.push_back(&mut qs[k], Queued::Slab(step));
                    model[k].push_back(Queued::Slab(step));
                }
                5 => {
                    pool.push_front_slab(&mut qs[k], step);
                    model[k].push_front(Queued::Slab(step));
                }
                _ => {
                    assert_eq!(pool.front(&qs[k]), model[k].front().copied());
                    if !model[k].is_empty() {
                        assert_eq!(pool.pop_front(&mut qs[k]), model[k].pop_front().unwrap());
                    }
                }
            }
            assert_eq!(qs[k].is_empty(), model[k].is_empty());
            assert_eq!(pool.len(), model.iter().map(|m| m.len()).sum::<usize>());
            high = high.max(model[k].len());
            if step.is_multiple_of(1000) {
                for (q, m) in qs.iter().zip(&model) {
                    assert!(pool.iter(q).eq(m.iter().copied()));
                }
            }
        }
        assert!(high > 20, "the queues grew past a few chunks ({high} entries)");
        for (q, m) in qs.iter_mut().zip(model.iter_mut()) {
            while let Some(e) = m.pop_front() {
                assert_eq!(pool.pop_front(q), e);
            }
            assert!(q.is_empty() && pool.front(q).is_none());
        }
        assert!(pool.is_empty());
        assert_eq!(pool.free.len(), pool.chunks.len(), "every chunk is free again");
    }

    /// The bound of a queue's bytes holds for queues filled from the front and the back.
    #[test]
    fn a_queue_takes_at_most_its_bound() {
        for n in 0..40u64 {
            for front in 0..=n {
                let mut pool = SourcePool::default();
                let mut q = SourceQueue::default();
                for i in 0..n - front {
                    pool.push_back(&mut q, Queued::Plain { dst: 1, created: i });
                }
                for i in 0..front {
                    pool.push_front_slab(&mut q, i as u32);
                }
                let used = (pool.chunks.len() - pool.free.len()) as u64 * SourcePool::CHUNK_BYTES as u64;
                assert!(used <= SourcePool::queue_bytes(n), "{n} entries, {front} at the front: {used} bytes");
            }
        }
    }
}

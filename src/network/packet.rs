//! Packets, the partition's packet slab, and intrusive FIFO queues threaded through it.
//!
//! Packets never move in memory inside a partition: buffers are linked lists of slab indices, so a
//! VC buffer costs 8 bytes (its head and tail) whatever its capacity, and the hot path allocates
//! nothing once the slab has grown to the number of packets in flight.

use crate::routing::RouteState;
use serde::{Deserialize, Serialize};

/// "No packet".
pub const NIL: u32 = u32::MAX;

/// A packet (all its phits travel together; head and tail times are derived exactly).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Packet {
    /// Source server.
    pub src: u32,
    /// Destination server.
    pub dst: u32,
    /// Cycle it was generated at its source server.
    pub created: u64,
    /// Cycle its head is present in the buffer it sits in.
    pub ready_at: u64,
    /// Routing state.
    pub route: RouteState,
}

/// Growable pool of packets with a free list. Queue links live in `next`, a dense array beside the
/// packets, so appending to a queue touches a small, hot array rather than a cold packet.
#[derive(Default, Serialize, Deserialize)]
pub struct Slab {
    items: Vec<Packet>,
    next: Vec<u32>,
    free: Vec<u32>,
}

impl Slab {
    /// Store `p`, returning its index.
    #[inline]
    pub fn insert(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = p;
            i
        } else {
            self.items.push(p);
            self.next.push(NIL);
            (self.items.len() - 1) as u32
        }
    }
    /// Release index `i`, returning the packet.
    #[inline]
    pub fn remove(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.items[i as usize]
    }
    /// The packet at `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.items[i as usize]
    }
    /// The packet at `i`, mutably.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.items[i as usize]
    }
    /// The packet after `i` in its queue ([`NIL`] at the tail).
    #[inline]
    pub fn next_of(&self, i: u32) -> u32 {
        self.next[i as usize]
    }
    /// Packets stored.
    pub fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }
    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// FIFO of slab indices: its head and tail only. A queue's length is not kept (the router needs
/// only emptiness, and a VC record is read for every head it looks at, so four bytes per VC are
/// worth more as cache); [`Queue::len`] walks the list, for the cold paths that report it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Queue {
    head: u32,
    tail: u32,
}

impl Default for Queue {
    fn default() -> Self {
        Queue { head: NIL, tail: NIL }
    }
}

impl Queue {
    /// Append packet `i`.
    #[inline]
    pub fn push(&mut self, slab: &mut Slab, i: u32) {
        slab.next[i as usize] = NIL;
        if self.tail == NIL {
            self.head = i;
        } else {
            slab.next[self.tail as usize] = i;
        }
        self.tail = i;
    }
    /// Remove the head.
    #[inline]
    pub fn pop(&mut self, slab: &Slab) -> u32 {
        let i = self.head;
        debug_assert!(i != NIL);
        self.head = slab.next[i as usize];
        if self.head == NIL {
            self.tail = NIL;
        }
        i
    }
    /// The head, or [`NIL`].
    #[inline]
    pub fn front(&self) -> u32 {
        self.head
    }
    /// Number of packets, by walking the list (not for the hot path).
    pub fn len(&self, slab: &Slab) -> u32 {
        let (mut n, mut i) = (0, self.head);
        while i != NIL {
            n += 1;
            i = slab.next[i as usize];
        }
        n
    }
    /// Whether empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(src: u32) -> Packet {
        Packet { src, dst: 0, created: 0, ready_at: 0, route: RouteState::default() }
    }

    #[test]
    fn queues_are_fifo_and_slab_reuses_slots() {
        let mut slab = Slab::default();
        let mut q = Queue::default();
        for s in 0..5 {
            let i = slab.insert(pkt(s));
            q.push(&mut slab, i);
        }
        let a = q.pop(&slab);
        assert_eq!(slab.remove(a).src, 0);
        let b = q.pop(&slab);
        assert_eq!(slab.get(b).src, 1);
        let c = slab.insert(pkt(9));
        assert_eq!(c, a, "freed slot reused");
        q.push(&mut slab, c);
        assert_eq!(q.len(&slab), 4);
        let order: Vec<u32> = (0..4).map(|_| slab.get(q.pop(&slab)).src).collect();
        assert_eq!(order, vec![2, 3, 4, 9]);
        assert!(q.is_empty());
    }
}

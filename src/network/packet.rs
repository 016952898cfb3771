//! Packets, the partition's packet slab, and intrusive FIFO queues threaded through it.
//!
//! Packets never move in memory inside a partition: buffers are linked lists of slab indices, so a
//! VC buffer costs 4 bytes (its head; the head's link entry holds the tail) whatever its capacity,
//! and the hot path allocates nothing once the slab has grown to the number of packets in flight.

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
    /// With a workload ([`crate::workload`]): the receive this packet's message is for, by its
    /// index in the destination task's program; 0 otherwise. (It fits the slot's padding.)
    pub op: u32,
    /// Times its source has sent it again after a loss (`faults.retransmit_cycles`, see
    /// `network/failures.rs`). (It fits the slot's padding too.)
    pub retries: u8,
}

/// Growable pool of packets with a free list. A packet and its queue links share one cache-line
/// slot (`Slot`): a queue operation touches the packets it links, which the router reads anyway
/// (a head is read to route it; a packet appended has just been written), so one line per packet
/// serves both, where a separate link array and unaligned 48-byte packets cost up to three.
#[derive(Default)]
pub struct Slab {
    items: Vec<Slot>,
    free: Vec<u32>,
}

/// A packet with its queue links, aligned to a 64-byte cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    pkt: Packet,
    link: Link,
}

// A packet and its links fit one line.
const _: () = assert!(std::mem::size_of::<Slot>() == 64);

impl Slab {
    /// Bytes a stored packet takes: its slot (the packet, its links and padding to a line).
    pub const ENTRY_BYTES: usize = std::mem::size_of::<Slot>();

    /// Store `p`, returning its index.
    #[inline]
    pub fn insert(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize].pkt = p;
            i
        } else {
            self.items.push(Slot { pkt: p, link: Link { next: NIL, tail: NIL } });
            (self.items.len() - 1) as u32
        }
    }
    /// Release index `i`, returning the packet.
    #[inline]
    pub fn remove(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.items[i as usize].pkt
    }
    /// The packet at `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.items[i as usize].pkt
    }
    /// The packet at `i`, mutably.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.items[i as usize].pkt
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

/// A packet's queue links: the packet after it, and (read only while it is its queue's head) the
/// queue's tail.
#[derive(Debug, Clone, Copy)]
struct Link {
    next: u32,
    tail: u32,
}

/// FIFO of slab indices with only its head stored: the head's link entry holds the tail. A VC
/// record is read for every head the router looks at, and there are `2 x vcs` of them per router
/// port, so a 4-byte queue (against 8 for head and tail) is what brings a million-endpoint network
/// under 1,000 bytes per endpoint (docs/performance.md, "Scale"). The head, which the router reads far more often
/// than it appends, stays in the record (a circular list with only its tail stored costs a read of
/// the tail's links per head looked at: 10% more CPU time on the million-endpoint network); appending
/// and removing touch the links of the head and of the tail or next packet. A queue's length is not
/// kept either (the router needs only emptiness); [`Queue::len`] walks the list, for the cold paths
/// that report it.
#[derive(Debug, Clone, Copy)]
pub struct Queue {
    head: u32,
}

impl Default for Queue {
    fn default() -> Self {
        Queue { head: NIL }
    }
}

impl Queue {
    /// Append packet `i`.
    #[inline]
    pub fn push(&mut self, slab: &mut Slab, i: u32) {
        slab.items[i as usize].link.next = NIL;
        if self.head == NIL {
            self.head = i;
            slab.items[i as usize].link.tail = i;
        } else {
            let h = self.head as usize;
            let t = slab.items[h].link.tail;
            slab.items[t as usize].link.next = i;
            slab.items[h].link.tail = i;
        }
    }
    /// Put packet `i` before the head (a packet its source sends again, see
    /// `network/failures.rs`; not for the hot path).
    pub fn push_front(&mut self, slab: &mut Slab, i: u32) {
        let tail = if self.head == NIL { i } else { slab.items[self.head as usize].link.tail };
        slab.items[i as usize].link = Link { next: self.head, tail };
        self.head = i;
    }
    /// Remove the head.
    #[inline]
    pub fn pop(&mut self, slab: &mut Slab) -> u32 {
        let h = self.head;
        debug_assert!(h != NIL);
        let l = slab.items[h as usize].link;
        if l.next != NIL {
            slab.items[l.next as usize].link.tail = l.tail;
        }
        self.head = l.next;
        h
    }
    /// Remove every packet, freeing its slot in `slab`, into `out`, head first (a failure dropping
    /// a buffer); returns how many there were.
    pub fn take_all(&mut self, slab: &mut Slab, out: &mut Vec<Packet>) -> u64 {
        let mut n = 0;
        while !self.is_empty() {
            let i = self.pop(slab);
            out.push(slab.remove(i));
            n += 1;
        }
        n
    }
    /// The head, or [`NIL`].
    #[inline]
    pub fn front(&self) -> u32 {
        self.head
    }
    /// The packets from head to tail (not for the hot path).
    pub fn iter<'a>(&self, slab: &'a Slab) -> impl Iterator<Item = u32> + 'a {
        let mut i = self.head;
        std::iter::from_fn(move || {
            let cur = i;
            if cur != NIL {
                i = slab.items[cur as usize].link.next;
            }
            (cur != NIL).then_some(cur)
        })
    }
    /// Number of packets, by walking the list (not for the hot path).
    pub fn len(&self, slab: &Slab) -> u32 {
        self.iter(slab).count() as u32
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
        Packet { src, dst: 0, created: 0, ready_at: 0, route: RouteState::default(), op: 0, retries: 0 }
    }

    /// The sources of the next `n` packets popped.
    fn pop_sources(q: &mut Queue, slab: &mut Slab, n: usize) -> Vec<u32> {
        (0..n)
            .map(|_| {
                let i = q.pop(slab);
                slab.get(i).src
            })
            .collect()
    }

    #[test]
    fn queues_are_fifo_and_slab_reuses_slots() {
        let mut slab = Slab::default();
        let mut q = Queue::default();
        for s in 0..5 {
            let i = slab.insert(pkt(s));
            q.push(&mut slab, i);
        }
        let a = q.pop(&mut slab);
        assert_eq!(slab.remove(a).src, 0);
        let b = q.pop(&mut slab);
        assert_eq!(slab.get(b).src, 1);
        let c = slab.insert(pkt(9));
        assert_eq!(c, a, "freed slot reused");
        q.push(&mut slab, c);
        assert_eq!(q.len(&slab), 4);
        let listed: Vec<u32> = q.iter(&slab).map(|i| slab.get(i).src).collect();
        assert_eq!(listed, vec![2, 3, 4, 9]);
        let order = pop_sources(&mut q, &mut slab, 4);
        assert_eq!(order, vec![2, 3, 4, 9]);
        assert!(q.is_empty());
        assert_eq!(q.front(), NIL);
        // One packet: it is the head and the tail, and popping it empties the queue.
        let d = slab.insert(pkt(7));
        q.push(&mut slab, d);
        assert_eq!(q.front(), d);
        assert_eq!(q.pop(&mut slab), d);
        assert!(q.is_empty() && q.len(&slab) == 0);
        // Before the head, into an empty queue and a non-empty one; appending still goes last.
        let (e, f, g) = (slab.insert(pkt(20)), slab.insert(pkt(21)), slab.insert(pkt(22)));
        q.push_front(&mut slab, e);
        q.push(&mut slab, f);
        q.push_front(&mut slab, g);
        let listed: Vec<u32> = q.iter(&slab).map(|i| slab.get(i).src).collect();
        assert_eq!(listed, vec![22, 20, 21]);
        let h = slab.insert(pkt(23));
        q.push(&mut slab, h);
        let order = pop_sources(&mut q, &mut slab, 4);
        assert_eq!(order, vec![22, 20, 21, 23]);
    }
}

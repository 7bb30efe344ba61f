//! The allocator of a sender's buffer pool (seed 004 §3.1): a ring of small blocks
//! that only the sender allocates from, so no lock. On shared memory one pool serves
//! every receiver of the sender's host (each [`super::send::Link`] to them holds the
//! same [`Pool`]); toward another node one pool per connection.
//!
//! Allocation is in ring order, like one connection's was: the head moves on by the
//! units a postbox's blocks take (and by the tail of the ring a large block skips).
//! Each postbox records the range of the allocation count its blocks took; the ranges
//! of all postboxes, whichever receiver they went to, tile the count without gaps, so
//! a range freed by an ack is marked at its first unit with its length, and the tail
//! moves over marked ranges in one step each. Receivers acknowledge in their own
//! queue's order, not in the pool's: a range freed ahead of the tail waits there
//! until the ranges before it are freed (a receiver slow to take its messages holds
//! back the pool's reuse for the others: backpressure, never loss).
//!
//! The words are atomics with relaxed ordering: the fabric is used by one thread at a
//! time (`&mut`), and atomics keep the sharing sound without a lock or a cost (they
//! compile to plain loads and stores).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// A sender's pool of `units` small blocks. See the module docs.
#[derive(Debug)]
pub struct Pool {
    units: u32,
    /// Allocation count: units handed out (skips included) since the pool was made.
    head: AtomicU64,
    /// Units before it are free again.
    tail: AtomicU64,
    /// Per unit: the length of a freed range starting there, 0 if none.
    freed: Box<[AtomicU32]>,
    /// An allocation failed since [`Pool::take_starved`] last looked.
    starved: AtomicBool,
}

impl Pool {
    pub fn new(units: u32) -> Pool {
        Pool {
            units,
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            freed: (0..units).map(|_| AtomicU32::new(0)).collect(),
            starved: AtomicBool::new(false),
        }
    }

    pub fn units(&self) -> u32 {
        self.units
    }

    /// The allocation count.
    #[inline]
    pub fn head(&self) -> u64 {
        self.head.load(Relaxed)
    }

    /// Units allocated and not yet free again (as of the ranges freed so far).
    pub fn held(&self) -> u64 {
        self.advance();
        self.head() - self.tail.load(Relaxed)
    }

    /// Moves the tail over the freed ranges at it.
    fn advance(&self) -> u64 {
        let total = self.units as u64;
        let head = self.head();
        let mut tail = self.tail.load(Relaxed);
        while tail < head {
            let m = &self.freed[(tail % total) as usize];
            let n = m.load(Relaxed);
            if n == 0 {
                break;
            }
            m.store(0, Relaxed);
            tail += n as u64;
        }
        self.tail.store(tail, Relaxed);
        tail
    }

    /// `units` contiguous small blocks (never across the ring's end): the index of
    /// the first, and the allocation count before it (the start of the range the
    /// caller frees later, the skipped tail of the ring included). None while the
    /// pool is full.
    pub fn alloc(&self, units: u32) -> Option<(u32, u64)> {
        let total = self.units as u64;
        let units = units as u64;
        let tail = self.advance();
        let head = self.head();
        let pos = head % total;
        let skip = if pos + units > total { total - pos } else { 0 };
        if head - tail + skip + units > total {
            self.starved.store(true, Relaxed);
            return None;
        }
        self.head.store(head + skip + units, Relaxed);
        Some((((head + skip) % total) as u32, head))
    }

    /// Frees the allocation counts `lo..hi` (a postbox's range; empty: nothing).
    #[inline]
    pub fn free(&self, lo: u64, hi: u64) {
        if hi > lo {
            let len = (hi - lo).min(u32::MAX as u64) as u32;
            self.freed[(lo % self.units as u64) as usize].store(len, Relaxed);
        }
    }

    /// Whether an allocation failed since the last call: the fabric then takes back
    /// what every receiver sharing the pool has acknowledged (a sender idle toward
    /// one receiver does not read that receiver's acks by itself).
    pub fn take_starved(&self) -> bool {
        self.starved.swap(false, Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_freed_out_of_order_free_the_ring_in_order() {
        let p = Pool::new(8);
        let (a, la) = p.alloc(2).unwrap();
        let (b, lb) = p.alloc(2).unwrap();
        let (c, lc) = p.alloc(4).unwrap();
        assert_eq!((a, b, c), (0, 2, 4));
        assert_eq!((la, lb, lc), (0, 2, 4));
        assert_eq!(p.alloc(1), None);
        assert!(p.take_starved());
        assert!(!p.take_starved());
        // Freed ahead of the tail: nothing comes back yet.
        p.free(lb, lc);
        assert_eq!(p.held(), 8);
        assert_eq!(p.alloc(1), None);
        p.free(la, lb);
        assert_eq!(p.held(), 4);
        let (d, ld) = p.alloc(3).unwrap();
        assert_eq!((d, ld), (0, 8));
        assert_eq!(p.head(), 11);
        p.free(lc, 8);
        assert_eq!(p.held(), 3);
        let (e, le) = p.alloc(4).unwrap();
        assert_eq!((e, le), (3, 11));
        assert_eq!(p.alloc(2), None);
        p.free(le, 15);
        assert_eq!(p.held(), 7, "freed ahead of the tail");
        p.free(ld, le);
        assert_eq!(p.held(), 0);
        p.free(3, 3);
        assert_eq!(p.held(), 0);
        // Two units do not fit at the ring's end (unit 7): it is skipped, and the skip
        // belongs to the range that starts at the old head.
        let (f, lf) = p.alloc(2).unwrap();
        assert_eq!((f, lf, p.head()), (0, 15, 18));
        assert_eq!(p.held(), 3);
        p.free(lf, p.head());
        assert_eq!(p.held(), 0);
    }
}

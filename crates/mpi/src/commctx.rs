//! Context ids for new communicators, agreed collectively.
//!
//! Every process keeps a [`ContextPool`]: which ids it uses. Creating a communicator
//! (dup, split, create) is collective over the parent: the members OR their
//! used-id bitmaps together (an allreduce on the parent's collective context), and
//! each takes the lowest id free on all of them. Because the same ranks see the
//! same bitmap, they pick the same id, whatever other communicators each of them
//! created or freed before and in whatever order. Sibling communicators from one
//! split share an id; they have no member in common, so their traffic cannot meet.
//!
//! Ids are even: a communicator's point-to-point traffic uses `ctx`, its
//! collectives `ctx + 1`. MPI_COMM_WORLD has 0, MPI_COMM_SELF 2; new ones start at
//! [`FIRST`]. This module never sends anything itself except through the given
//! [`Pt2Pt`].

use crate::coll::{allreduce, CollError, Pt2Pt, ReduceOp};

/// The first context id handed out.
pub const FIRST: u32 = 4;
/// How many communicators a process can have alive at once (besides WORLD and SELF).
pub const CAPACITY: usize = 4096;
const BYTES: usize = CAPACITY / 8;

/// The context ids this process uses.
#[derive(Debug, Clone)]
pub struct ContextPool {
    used: Vec<u8>,
}

impl Default for ContextPool {
    fn default() -> Self {
        ContextPool::new()
    }
}

impl ContextPool {
    pub fn new() -> ContextPool {
        ContextPool {
            used: vec![0; BYTES],
        }
    }

    /// The id of slot `i`.
    fn id(i: usize) -> u32 {
        FIRST + 2 * i as u32
    }

    fn slot(ctx: u32) -> Option<usize> {
        let i = (ctx.checked_sub(FIRST)? / 2) as usize;
        (ctx % 2 == 0 && i < CAPACITY).then_some(i)
    }

    /// Agrees with the other members of `parent` (its collective context) on an id
    /// free on all of them, and marks it used here. Collective over `parent`.
    /// Fails on every member alike when no id is free on all.
    pub fn allocate(&mut self, parent: &mut dyn Pt2Pt) -> Result<u32, CollError> {
        let mut agreed = vec![0u8; BYTES];
        let mut or = |input: &[u8], inout: &mut [u8]| {
            for (o, i) in inout.iter_mut().zip(input) {
                *o |= *i;
            }
        };
        let mut op = ReduceOp {
            op: &mut or,
            commutative: true,
        };
        allreduce(parent, &self.used, &mut agreed, &mut op)?;
        let i = self.choose(&agreed).ok_or_else(|| {
            CollError::Args(format!(
                "no context id free on all members ({CAPACITY} in use)"
            ))
        })?;
        Ok(Self::id(i))
    }

    /// Marks the lowest slot free in `agreed` (the OR of the members' bitmaps) as
    /// used here.
    fn choose(&mut self, agreed: &[u8]) -> Option<usize> {
        let (byte, b) = agreed.iter().enumerate().find(|(_, &b)| b != 0xff)?;
        let i = byte * 8 + b.trailing_ones() as usize;
        self.used[i / 8] |= 1 << (i % 8);
        Some(i)
    }

    /// This process's used-id bitmap (for an agreement this module does not run
    /// itself: intercommunicator creation ORs two groups' bitmaps).
    pub fn bitmap(&self) -> &[u8] {
        &self.used
    }

    /// Takes the lowest id free in `agreed` (an OR of members' [`bitmap`]s), marking
    /// it used here; None when none is free.
    ///
    /// [`bitmap`]: ContextPool::bitmap
    pub fn take_free(&mut self, agreed: &[u8]) -> Option<u32> {
        if agreed.len() != BYTES {
            return None;
        }
        self.choose(agreed).map(Self::id)
    }

    /// Marks `ctx` used here without agreement (an id learned from elsewhere).
    pub fn reserve(&mut self, ctx: u32) -> bool {
        match Self::slot(ctx) {
            Some(i) => {
                self.used[i / 8] |= 1 << (i % 8);
                true
            }
            None => false,
        }
    }

    /// Gives `ctx` back (MPI_Comm_free). Unknown ids are ignored.
    pub fn release(&mut self, ctx: u32) {
        if let Some(i) = Self::slot(ctx) {
            self.used[i / 8] &= !(1 << (i % 8));
        }
    }

    pub fn is_used(&self, ctx: u32) -> bool {
        Self::slot(ctx).is_some_and(|i| self.used[i / 8] & (1 << (i % 8)) != 0)
    }

    /// How many ids are in use here.
    pub fn in_use(&self) -> usize {
        self.used.iter().map(|b| b.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::testing::Threads;

    #[test]
    fn members_agree_whatever_they_did_before() {
        let ids = Threads::run(5, false, |p| {
            let mut pool = ContextPool::new();
            // Each rank already uses different ids.
            for k in 0..p.rank() {
                pool.reserve(FIRST + 2 * (k as u32) * 3);
            }
            let a = pool.allocate(p).unwrap();
            let b = pool.allocate(p).unwrap();
            pool.release(a);
            let c = pool.allocate(p).unwrap();
            (a, b, c)
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "{ids:?}");
        let (a, b, c) = ids[0];
        assert_ne!(a, b);
        assert_eq!(a, c, "a released id is reused");
        assert_eq!(a % 2, 0);
        assert!(a >= FIRST);
    }

    #[test]
    fn exhaustion_is_an_error_everywhere() {
        let r = Threads::run(3, false, |p| {
            let mut pool = ContextPool::new();
            for _ in 0..CAPACITY {
                pool.allocate(p).unwrap();
            }
            pool.allocate(p).is_err()
        });
        assert_eq!(r, vec![true; 3]);
        assert!(!ContextPool::new().reserve(3));
    }
}

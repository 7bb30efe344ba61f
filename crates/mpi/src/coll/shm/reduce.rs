//! Reduce and allreduce through the segment, chunk by chunk (a slot each).
//!
//! A small chunk goes *direct*: every rank writes it (into its line when it fits),
//! and every rank that needs the result combines all of them. A chunk of at least
//! `split_min` bytes is *split*: in a first step every rank writes its chunk; each
//! rank then combines its `1/n` part of everyone's (element-aligned) into its slot
//! of a second step, and the ranks that need the result copy the parts (a
//! reduce-scatter and an allgather inside the segment): each rank combines `1/n` of
//! the data instead of all of it. Either way every part is combined in rank order,
//! `d0 op (d1 op (… op d(n-1)))`, so non-commutative ops stay right and every rank
//! gets the same bits.
//!
//! MPI_Reduce whose data of all ranks (ranks × the message) is at most
//! `reduce_solo_max` bytes (set for jobs with more ranks than cores) takes neither the split nor the one-copy way (`direct_reduce.rs`): every
//! chunk goes direct, combined by the root alone. The other ranks then write their
//! chunk and return without waiting for anyone (a slot is claimed at most `depth`
//! steps back), where both other ways make every rank wait twice for all the others;
//! with more ranks than cores each such wait costs a turn of every rank through
//! the cores, more than the root's combining of the whole buffer.

use super::{Area, ShmColl, INLINE};
use crate::coll::{CollError, ReduceOp};

impl ShmColl {
    /// MPI_Reduce of every rank's `send` into `recv` at `root` (`recv` as long as
    /// `send` there, unused elsewhere); `elem` bytes per element.
    pub fn reduce(
        &mut self,
        root: usize,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.me == root {
            super::super::check_len("reduce", recv.len(), send.len())?;
        }
        if send.len().saturating_mul(self.g.n) <= self.reduce_solo_max {
            return self.reduce_to(Some(root), send, recv, elem, op, usize::MAX);
        }
        // The cheap test first: a division costs more than the rest of the test.
        if self.one_copy(send.len()) && elem > 0 && send.len() % elem == 0 {
            return self.reduce_direct(root, send, recv, elem, op);
        }
        self.reduce_to(Some(root), send, recv, elem, op, self.split_min)
    }

    /// MPI_Allreduce: every rank's `send` reduced into every `recv`.
    pub fn allreduce(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        super::super::check_len("allreduce", recv.len(), send.len())?;
        self.reduce_to(None, send, recv, elem, op, self.split_min)
    }

    /// Chunks of at least `split_min` bytes are split among the ranks.
    fn reduce_to(
        &mut self,
        root: Option<usize>,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
        split_min: usize,
    ) -> Result<(), CollError> {
        let reads = root.is_none_or(|r| r == self.me);
        // One chunk that fits a line (the common small call): one direct step, as the
        // loop below would take (it fits a slot; split only above INLINE), without
        // its divisions.
        if send.len() <= INLINE && self.g.n > 1 && elem > 0 && send.len() % elem == 0 {
            self.direct(root.is_some() && reads, send, reads.then_some(recv), op);
            return Ok(());
        }
        if elem == 0 || send.len() % elem != 0 {
            return Err(CollError::Args(format!(
                "{} bytes are not whole elements of {elem}",
                send.len()
            )));
        }
        let chunk = (self.g.slot / elem) * elem;
        if chunk == 0 {
            return Err(CollError::Args(format!(
                "elements of {elem} bytes do not fit a slot of {}",
                self.g.slot
            )));
        }
        if self.g.n == 1 {
            recv.copy_from_slice(send);
            return Ok(());
        }
        let mut off = 0;
        loop {
            let c = chunk.min(send.len() - off);
            let mine = &send[off..off + c];
            // Where this rank needs the result: nowhere on a reduce's other ranks.
            let out = if reads {
                Some(&mut recv[off..off + c])
            } else {
                None
            };
            if c >= split_min && c > INLINE {
                self.split(mine, out, elem, op);
            } else {
                self.direct(root.is_some() && reads, mine, out, op);
            }
            off += c;
            if off >= send.len() {
                return Ok(());
            }
        }
    }

    /// One chunk, direct: `acc` is None on a rank that only contributes; `root` says
    /// that this reading rank is a reduction's root (its data never leaves it).
    fn direct(&mut self, root: bool, mine: &[u8], acc: Option<&mut [u8]>, op: &mut ReduceOp) {
        let (n, me, c) = (self.g.n, self.me, mine.len());
        let a = Area::of(c);
        let s = self.next();
        if !root {
            self.claim(s, a);
            self.write(s, a, 0, mine);
        }
        self.post(s);
        let Some(acc) = acc else {
            return;
        };
        self.wait_all(s);
        let last = n - 1;
        acc.copy_from_slice(if last == me {
            mine
        } else {
            self.read(last, s, a, 0, c)
        });
        for q in (0..last).rev() {
            let d = if q == me {
                mine
            } else {
                self.read(q, s, a, 0, c)
            };
            op.apply(d, acc);
        }
    }

    /// One chunk, split among the ranks (two steps); `out` is where this rank needs
    /// the result (every rank, or the root).
    fn split(&mut self, mine: &[u8], out: Option<&mut [u8]>, elem: usize, op: &mut ReduceOp) {
        let (n, me, c) = (self.g.n, self.me, mine.len());
        let e = c / elem;
        let part = |p: usize| (e * p / n * elem, e * (p + 1) / n * elem);
        let s1 = self.next();
        self.claim(s1, Area::Slot);
        self.write(s1, Area::Slot, 0, mine);
        self.post(s1);
        self.wait_all(s1);
        // Every rank has posted s1, so the claim of s1 + 1 is free (depth ≥ 2).
        let s2 = self.next();
        self.claim(s2, Area::Slot);
        let (lo, hi) = part(me);
        let acc = self.area_mut(s2, Area::Slot, lo, hi - lo);
        let from = |q: usize| -> &[u8] {
            if q == me {
                &mine[lo..hi]
            } else {
                self.read(q, s1, Area::Slot, lo, hi - lo)
            }
        };
        acc.copy_from_slice(from(n - 1));
        for q in (0..n - 1).rev() {
            op.apply(from(q), acc);
        }
        self.post(s2);
        let Some(out) = out else {
            return;
        };
        for k in 0..n {
            // Starting with the next rank's part spreads the readers over the parts.
            let q = (me + k) % n;
            let (lo, hi) = part(q);
            if q != me {
                self.wait(q, s2);
            }
            out[lo..hi].copy_from_slice(self.read(q, s2, Area::Slot, lo, hi - lo));
        }
        self.all_at = self.all_at.max(s2);
    }
}

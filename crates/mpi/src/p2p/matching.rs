//! The two queues of each context: receives posted and not yet matched, in posting
//! order, and messages arrived and not yet matched, in arrival order. Matching takes
//! the earliest entry that fits, which is MPI's non-overtaking rule: the fabric
//! announces each source's messages in send order, so among one source's messages
//! the earliest arrived is the earliest sent; among posted receives the earliest
//! posted wins. Holds only keys: the requests and messages live in their slabs.

use std::cell::Cell;
use std::collections::VecDeque;

use super::accepts;
use super::fabric::Rank;
use super::hash::IntMap;
use super::request::UserBuf;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Posted {
    pub(crate) req: u64,
    pub(crate) src: Option<Rank>,
    pub(crate) tag: Option<i32>,
    /// The receive's buffer, kept here too so a match needs no look in the slab.
    pub(crate) buf: UserBuf,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiting {
    pub(crate) msg: u64,
    pub(crate) src: Rank,
    pub(crate) tag: i32,
}

#[derive(Default)]
struct Queues {
    posted: VecDeque<Posted>,
    unexpected: VecDeque<Waiting>,
}

/// The queues of every context that has had any, in a vector (contexts are never
/// dropped), found through `index`; `last` remembers the context looked up last, so a
/// run of messages in one communicator hashes nothing.
pub(crate) struct Matching {
    index: IntMap<u32, u32>,
    queues: Vec<Queues>,
    /// (context, its index in `queues`) of the last lookup; `u32::MAX` index: none.
    last: Cell<(u32, u32)>,
}

/// Removes entry `i` of `q`: the front (the common case, matching in order) without
/// moving the rest.
#[inline]
fn remove_at<T>(q: &mut VecDeque<T>, i: usize) -> Option<T> {
    if i == 0 {
        q.pop_front()
    } else {
        q.remove(i)
    }
}

impl Default for Matching {
    fn default() -> Self {
        Matching {
            index: IntMap::default(),
            queues: Vec::new(),
            last: Cell::new((0, u32::MAX)),
        }
    }
}

impl Matching {
    /// The index of `ctx`'s queues, if it has any.
    #[inline]
    fn find(&self, ctx: u32) -> Option<usize> {
        let (c, i) = self.last.get();
        if c == ctx && i != u32::MAX {
            return Some(i as usize);
        }
        let i = *self.index.get(&ctx)?;
        self.last.set((ctx, i));
        Some(i as usize)
    }

    #[inline]
    fn get(&self, ctx: u32) -> Option<&Queues> {
        let i = self.find(ctx)?;
        self.queues.get(i)
    }

    #[inline]
    fn get_mut(&mut self, ctx: u32) -> Option<&mut Queues> {
        let i = self.find(ctx)?;
        self.queues.get_mut(i)
    }

    /// `ctx`'s queues, made on first use. Always inlined: with `irecv_layout`'s
    /// caller of `match_or_post` beside `irecv`'s the compiler stopped inlining it
    /// into `irecv` (27 instructions more per `MPI_Irecv`; callgrind).
    #[inline(always)]
    fn entry(&mut self, ctx: u32) -> &mut Queues {
        let i = match self.find(ctx) {
            Some(i) => i,
            None => {
                let i = self.queues.len();
                self.queues.push(Queues::default());
                self.index.insert(ctx, i as u32);
                self.last.set((ctx, i as u32));
                i
            }
        };
        &mut self.queues[i]
    }

    #[cfg(test)]
    pub(crate) fn post(&mut self, ctx: u32, p: Posted) {
        self.entry(ctx).posted.push_back(p);
    }

    /// A receive (`src`, `tag`) just made: the earliest unexpected message it matches
    /// (removed), or, when there is none, the receive is posted (`None`) — one lookup
    /// of the context for both. `post` is called only when nothing matched, and may
    /// refuse (`false`: not posted, the caller completes the receive otherwise).
    #[inline]
    pub(crate) fn match_or_post(
        &mut self,
        ctx: u32,
        p: Posted,
        may_post: impl FnOnce() -> bool,
    ) -> Option<u64> {
        let q = self.entry(ctx);
        if !q.unexpected.is_empty() {
            if let Some(i) = q
                .unexpected
                .iter()
                .position(|w| accepts(p.src, p.tag, w.src, w.tag))
            {
                return remove_at(&mut q.unexpected, i).map(|w| w.msg);
            }
        }
        if may_post() {
            q.posted.push_back(p);
        }
        None
    }

    /// Removes and returns the earliest posted receive accepting (`src`, `tag`).
    /// Always inlined: the claim of every arrival calls it.
    #[inline(always)]
    pub(crate) fn take_posted(&mut self, ctx: u32, src: Rank, tag: i32) -> Option<Posted> {
        self.take_posted_if(ctx, src, tag, |_| true)
    }

    /// As [`Matching::take_posted`], but the earliest accepting receive stays posted
    /// (and `None` is returned) unless `ok` takes it.
    #[inline(always)]
    pub(crate) fn take_posted_if(
        &mut self,
        ctx: u32,
        src: Rank,
        tag: i32,
        ok: impl Fn(&Posted) -> bool,
    ) -> Option<Posted> {
        let q = &mut self.get_mut(ctx)?.posted;
        // The front first: receives are mostly matched in the order they were posted.
        if let Some(p) = q.front().filter(|p| accepts(p.src, p.tag, src, tag)) {
            return if ok(p) { q.pop_front() } else { None };
        }
        let i = q.iter().position(|p| accepts(p.src, p.tag, src, tag))?;
        if !ok(&q[i]) {
            return None;
        }
        remove_at(q, i)
    }

    /// Removes posted receive `req` (a cancel); whether it was there.
    pub(crate) fn remove_posted(&mut self, ctx: u32, req: u64) -> bool {
        let Some(q) = self.get_mut(ctx) else {
            return false;
        };
        match q.posted.iter().position(|p| p.req == req) {
            Some(i) => remove_at(&mut q.posted, i).is_some(),
            None => false,
        }
    }

    /// Whether a receive (`src`, `tag`) in `ctx` may take the next message from `src`
    /// straight from the fabric: no receive is posted in `ctx` (an earlier one could
    /// match it first) and no message already here would match this receive first.
    pub(crate) fn direct_ok(&self, ctx: u32, src: Rank, tag: Option<i32>) -> bool {
        self.get(ctx).is_none_or(|q| {
            q.posted.is_empty()
                && !q
                    .unexpected
                    .iter()
                    .any(|w| accepts(Some(src), tag, w.src, w.tag))
        })
    }

    pub(crate) fn push_unexpected(&mut self, ctx: u32, w: Waiting) {
        self.entry(ctx).unexpected.push_back(w);
    }

    /// The earliest unexpected message a receive (`src`, `tag`) would match.
    pub(crate) fn find_unexpected(
        &self,
        ctx: u32,
        src: Option<Rank>,
        tag: Option<i32>,
    ) -> Option<u64> {
        let q = &self.get(ctx)?.unexpected;
        q.iter()
            .find(|w| accepts(src, tag, w.src, w.tag))
            .map(|w| w.msg)
    }

    /// Removes and returns the earliest unexpected message a receive would match.
    pub(crate) fn take_unexpected(
        &mut self,
        ctx: u32,
        src: Option<Rank>,
        tag: Option<i32>,
    ) -> Option<u64> {
        let q = &mut self.get_mut(ctx)?.unexpected;
        let i = q.iter().position(|w| accepts(src, tag, w.src, w.tag))?;
        remove_at(q, i).map(|w| w.msg)
    }

    /// Removes unexpected message `msg` (its peer was lost); whether it was there.
    pub(crate) fn remove_unexpected(&mut self, ctx: u32, msg: u64) -> bool {
        let Some(q) = self.get_mut(ctx) else {
            return false;
        };
        match q.unexpected.iter().position(|w| w.msg == msg) {
            Some(i) => remove_at(&mut q.unexpected, i).is_some(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_BUF: UserBuf = UserBuf::flat(std::ptr::null_mut(), 0);

    fn req(p: Option<Posted>) -> Option<u64> {
        p.map(|p| p.req)
    }

    #[test]
    fn earliest_posted_wins_and_any_matches() {
        let mut m = Matching::default();
        m.post(
            0,
            Posted {
                req: 1,
                src: Some(2),
                tag: Some(5),
                buf: NO_BUF,
            },
        );
        m.post(
            0,
            Posted {
                req: 2,
                src: None,
                tag: None,
                buf: NO_BUF,
            },
        );
        m.post(
            0,
            Posted {
                req: 3,
                src: Some(1),
                tag: None,
                buf: NO_BUF,
            },
        );
        assert_eq!(req(m.take_posted(0, 1, 9)), Some(2));
        assert_eq!(req(m.take_posted(0, 1, 9)), Some(3));
        assert_eq!(req(m.take_posted(0, 2, 4)), None);
        assert_eq!(req(m.take_posted(1, 2, 5)), None, "contexts are apart");
        assert_eq!(req(m.take_posted(0, 2, 5)), Some(1));
    }

    #[test]
    fn earliest_unexpected_wins() {
        let mut m = Matching::default();
        m.push_unexpected(
            3,
            Waiting {
                msg: 10,
                src: 0,
                tag: 1,
            },
        );
        m.push_unexpected(
            3,
            Waiting {
                msg: 11,
                src: 1,
                tag: 2,
            },
        );
        m.push_unexpected(
            3,
            Waiting {
                msg: 12,
                src: 0,
                tag: 2,
            },
        );
        assert_eq!(m.find_unexpected(3, None, Some(2)), Some(11));
        assert_eq!(m.take_unexpected(3, Some(0), None), Some(10));
        assert_eq!(m.take_unexpected(3, Some(0), None), Some(12));
        assert!(m.remove_unexpected(3, 11));
        assert_eq!(m.take_unexpected(3, None, None), None);
    }
}

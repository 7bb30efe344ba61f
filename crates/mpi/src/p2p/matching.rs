//! The two queues of each context: receives posted and not yet matched, in posting
//! order, and messages arrived and not yet matched, in arrival order. Matching takes
//! the earliest entry that fits, which is MPI's non-overtaking rule: the fabric
//! announces each source's messages in send order, so among one source's messages
//! the earliest arrived is the earliest sent; among posted receives the earliest
//! posted wins. Holds only keys: the requests and messages live in their slabs.

use std::collections::VecDeque;

use super::accepts;
use super::fabric::Rank;
use super::hash::IntMap;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Posted {
    pub(crate) req: u64,
    pub(crate) src: Option<Rank>,
    pub(crate) tag: Option<i32>,
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

#[derive(Default)]
pub(crate) struct Matching {
    ctxs: IntMap<u32, Queues>,
}

impl Matching {
    pub(crate) fn post(&mut self, ctx: u32, p: Posted) {
        self.ctxs.entry(ctx).or_default().posted.push_back(p);
    }

    /// Removes and returns the earliest posted receive accepting (`src`, `tag`).
    pub(crate) fn take_posted(&mut self, ctx: u32, src: Rank, tag: i32) -> Option<u64> {
        let q = &mut self.ctxs.get_mut(&ctx)?.posted;
        let i = q.iter().position(|p| accepts(p.src, p.tag, src, tag))?;
        q.remove(i).map(|p| p.req)
    }

    /// Removes posted receive `req` (a cancel); whether it was there.
    pub(crate) fn remove_posted(&mut self, ctx: u32, req: u64) -> bool {
        let Some(q) = self.ctxs.get_mut(&ctx) else {
            return false;
        };
        match q.posted.iter().position(|p| p.req == req) {
            Some(i) => q.posted.remove(i).is_some(),
            None => false,
        }
    }

    /// Whether a receive (`src`, `tag`) in `ctx` may take the next message from `src`
    /// straight from the fabric: no receive is posted in `ctx` (an earlier one could
    /// match it first) and no message already here would match this receive first.
    pub(crate) fn direct_ok(&self, ctx: u32, src: Rank, tag: Option<i32>) -> bool {
        self.ctxs.get(&ctx).is_none_or(|q| {
            q.posted.is_empty()
                && !q
                    .unexpected
                    .iter()
                    .any(|w| accepts(Some(src), tag, w.src, w.tag))
        })
    }

    pub(crate) fn push_unexpected(&mut self, ctx: u32, w: Waiting) {
        self.ctxs.entry(ctx).or_default().unexpected.push_back(w);
    }

    /// The earliest unexpected message a receive (`src`, `tag`) would match.
    pub(crate) fn find_unexpected(
        &self,
        ctx: u32,
        src: Option<Rank>,
        tag: Option<i32>,
    ) -> Option<u64> {
        let q = &self.ctxs.get(&ctx)?.unexpected;
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
        let q = &mut self.ctxs.get_mut(&ctx)?.unexpected;
        let i = q.iter().position(|w| accepts(src, tag, w.src, w.tag))?;
        q.remove(i).map(|w| w.msg)
    }

    /// Removes unexpected message `msg` (its peer was lost); whether it was there.
    pub(crate) fn remove_unexpected(&mut self, ctx: u32, msg: u64) -> bool {
        let Some(q) = self.ctxs.get_mut(&ctx) else {
            return false;
        };
        match q.unexpected.iter().position(|w| w.msg == msg) {
            Some(i) => q.unexpected.remove(i).is_some(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_posted_wins_and_any_matches() {
        let mut m = Matching::default();
        m.post(
            0,
            Posted {
                req: 1,
                src: Some(2),
                tag: Some(5),
            },
        );
        m.post(
            0,
            Posted {
                req: 2,
                src: None,
                tag: None,
            },
        );
        m.post(
            0,
            Posted {
                req: 3,
                src: Some(1),
                tag: None,
            },
        );
        assert_eq!(m.take_posted(0, 1, 9), Some(2));
        assert_eq!(m.take_posted(0, 1, 9), Some(3));
        assert_eq!(m.take_posted(0, 2, 4), None);
        assert_eq!(m.take_posted(1, 2, 5), None, "contexts are apart");
        assert_eq!(m.take_posted(0, 2, 5), Some(1));
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

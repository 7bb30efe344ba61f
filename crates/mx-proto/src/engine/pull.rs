//! The receive side of large messages: the pull of a matched rendezvous in blocks,
//! missing ranges re-requested on a timer, and the sender's answer to a pull.
//!
//! Must never sequence a frame: pulls and replies are unsequenced, idempotent.

use super::*;

/// Receive-side state of a large message being pulled.
#[derive(Debug, Default)]
pub(super) struct Pull {
    pub(super) sender_handle: u32,
    /// Next byte not yet requested.
    pub(super) next: usize,
    /// Ranges received, sorted and merged.
    pub(super) have: Vec<(usize, usize)>,
    pub(super) received: usize,
    /// Last time a reply brought new bytes, or the receive got room in its peer's window
    /// after waiting for it with no block asked: the request timeout counts from here.
    pub(super) last_progress: u64,
    /// Requested but incomplete blocks, oldest first.
    pub(super) blocks: VecDeque<Block>,
    /// In the peer's queue of receives waiting for room in its window.
    pub(super) queued: bool,
}

/// One requested block of a pull.
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    pub(super) start: usize,
    pub(super) end: usize,
    /// When it was last asked for.
    pub(super) sent: u64,
    /// How many times it was asked again.
    pub(super) tries: u8,
    /// Newer blocks answered in full since it was last asked: at [`PASSED`] it lost a
    /// frame (fewer may be frames reordered on the way).
    pub(super) passed: u8,
}

/// Newer blocks that must pass a block still missing bytes before it is asked again
/// without waiting for its timeout (TCP's three duplicate acknowledgements).
const PASSED: u8 = 3;

impl Pull {
    /// Records a range; returns the bytes that were new.
    pub(super) fn add(&mut self, start: usize, end: usize) -> usize {
        let mut new = end - start;
        for &(a, b) in &self.have {
            let (lo, hi) = (a.max(start), b.min(end));
            if lo < hi {
                new -= hi - lo;
            }
        }
        if new == 0 {
            return 0;
        }
        // Merged in place: replies nearly always extend the last range, and a reply must
        // not cost an allocation.
        let at = self.have.partition_point(|&(a, _)| a < start);
        self.have.insert(at, (start, end));
        let mut w = 0;
        for i in 1..self.have.len() {
            let (a, b) = self.have[i];
            if a <= self.have[w].1 {
                self.have[w].1 = self.have[w].1.max(b);
            } else {
                w += 1;
                self.have[w] = (a, b);
            }
        }
        self.have.truncate(w + 1);
        self.received += new;
        new
    }
    /// Waiting for room in the peer's window with no block asked: nothing of this
    /// receive is the peer's to answer, so its request timeout does not run (the
    /// receives holding the window have theirs running).
    pub(super) fn only_waiting(&self) -> bool {
        self.queued && self.blocks.is_empty()
    }
    pub(super) fn covers(have: &[(usize, usize)], start: usize, end: usize) -> bool {
        have.iter().any(|&(a, b)| a <= start && b >= end)
    }
}

/// The ranges of `[start, end)` not in `have` (sorted, merged).
pub(super) fn pull_gaps(
    have: &[(usize, usize)],
    start: usize,
    end: usize,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = start;
    let mut i = 0;
    std::iter::from_fn(move || {
        while at < end {
            match have.get(i) {
                Some(&(_, b)) if b <= at => i += 1,
                Some(&(a, b)) if a <= at => {
                    at = b;
                    i += 1;
                }
                Some(&(a, _)) if a < end => {
                    let gap = (at, a);
                    at = a;
                    return Some(gap);
                }
                _ => {
                    let gap = (at, end);
                    at = end;
                    return Some(gap);
                }
            }
        }
        None
    })
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    pub(super) fn start_pull(&mut self, now: u64, h: u32, sender_handle: u32) {
        let r = &mut self.reqs[Request(h).index()];
        let room = r.recv.as_ref().map_or(0, |b| b.len());
        r.xfer_len = r.msg_len.min(room);
        r.pull = Some(Box::new(Pull {
            sender_handle,
            last_progress: now,
            ..Default::default()
        }));
        if r.xfer_len == 0 {
            self.finish_pull(h);
            return;
        }
        self.request_blocks(now, h, false);
    }

    /// Requests the receive's next blocks while its peer's window has room; without
    /// room, queues the receive behind the others waiting for that peer (at the `front`
    /// when it was already first in line).
    pub(super) fn request_blocks(&mut self, now: u64, h: u32, front: bool) {
        let block = self.cfg.pull_block.max(1);
        let resend = self.cfg.resend_ns;
        let r = &mut self.reqs[Request(h).index()];
        let total = r.xfer_len;
        let Some(pull) = r.pull.as_mut() else { return };
        let flow = &mut self.peers[r.peer as usize].flow;
        while pull.next < total {
            if !flow.has_room() {
                if !pull.queued {
                    pull.queued = true;
                    if front {
                        flow.waiting.push_front(h);
                    } else {
                        flow.waiting.push_back(h);
                    }
                }
                break;
            }
            let start = pull.next;
            let end = (start + block).min(total);
            pull.next = end;
            pull.blocks.push_back(Block {
                start,
                end,
                sent: now,
                tries: 0,
                passed: 0,
            });
            flow.sent();
            self.txq.push_back(Tx::Pull {
                req: h,
                offset: start,
                len: end - start,
            });
        }
        let due = pull
            .blocks
            .iter()
            .map(|b| flow.due(b.sent, b.tries, resend))
            .min();
        if let Some(due) = due {
            self.arm_req(h, due);
        }
    }

    /// Gives room freed in `peer`'s window to the receives waiting for it, oldest
    /// first.
    pub(super) fn grant(&mut self, now: u64, peer: u16) {
        loop {
            let flow = &mut self.peers[peer as usize].flow;
            if !flow.has_room() {
                return;
            }
            let Some(h) = flow.waiting.pop_front() else {
                return;
            };
            let Some(pull) = self.req_mut(h).and_then(|r| r.pull.as_mut()) else {
                continue; // ended while it waited
            };
            // Its clock starts again when it first asks: it waited for the others'
            // blocks, not for this one's (session 24: a receive queued behind seven
            // others of 1 MiB timed out under load while every block was answered).
            if pull.blocks.is_empty() {
                pull.last_progress = now;
            }
            pull.queued = false;
            self.request_blocks(now, h, true);
        }
    }

    /// A pulling receive ends before its last block came: its blocks leave the peer's
    /// window and it leaves the queue.
    pub(super) fn abandon_pull(&mut self, h: u32) {
        let Some(r) = self.req_mut(h) else { return };
        let peer = r.peer as usize;
        let Some(pull) = r.pull.as_mut() else { return };
        let n = pull.blocks.len() as u32;
        pull.blocks.clear();
        let queued = std::mem::take(&mut pull.queued);
        let flow = &mut self.peers[peer].flow;
        flow.done(n);
        if queued {
            flow.waiting.retain(|&w| w != h);
        }
    }

    pub(super) fn on_pull_reply(
        &mut self,
        now: u64,
        peer: u16,
        h: u32,
        offset: usize,
        data: &[u8],
    ) {
        let Some(r) = self.req_mut(h) else {
            self.stats.stale_frames += 1;
            return;
        };
        if r.kind != ReqKind::Recv || r.peer != peer || r.pull.is_none() {
            self.stats.stale_frames += 1;
            return;
        }
        let end = offset + data.len();
        if end > r.xfer_len {
            self.stats.bad_frames += 1;
            return;
        }
        let pull = r.pull.as_mut().expect("checked");
        if pull.add(offset, end) == 0 {
            self.stats.duplicates += 1;
            return;
        }
        pull.last_progress = now;
        if let Some(buf) = r.recv.as_mut() {
            buf.write_at(offset, data);
        }
        // Borrowed again by field: the request and its peer's window at once.
        let r = &mut self.reqs[Request(h).index()];
        let pull = r.pull.as_mut().expect("checked");
        let Pull { have, blocks, .. } = &mut **pull;
        let flow = &mut self.peers[peer as usize].flow;
        // A block answered in full leaves the window; asked once, it times the round trip.
        // The sender answers pulls in order: an older block still missing bytes when a
        // newer one is whole lost a frame, and is asked again now, not at its timeout.
        let mut newest_whole: Option<(usize, u64)> = None;
        for (i, b) in blocks.iter().enumerate() {
            if Pull::covers(have, b.start, b.end) {
                flow.answered(
                    now,
                    b.sent,
                    (b.tries == 0).then(|| now.saturating_sub(b.sent)),
                );
                newest_whole = Some((i, b.sent));
            }
        }
        let progressed = newest_whole.is_some();
        let mut again = 0;
        if let Some((i, sent)) = newest_whole {
            for b in blocks.iter_mut().take(i) {
                let before = b.sent < sent || (b.sent == sent && b.tries == 0);
                if !before || Pull::covers(have, b.start, b.end) {
                    continue;
                }
                b.passed += 1;
                if b.passed < PASSED {
                    continue;
                }
                b.sent = now;
                b.tries = b.tries.saturating_add(1);
                b.passed = 0;
                for (a, e) in pull_gaps(have, b.start, b.end) {
                    again += 1;
                    self.txq.push_back(Tx::Pull {
                        req: h,
                        offset: a,
                        len: e - a,
                    });
                }
            }
            blocks.retain(|b| !Pull::covers(have, b.start, b.end));
        }
        if again > 0 {
            flow.lost(now);
            self.stats.pull_rerequests += again;
        }
        let done = pull.received >= r.xfer_len;
        if done {
            self.finish_pull(h);
        } else if progressed {
            self.request_blocks(now, h, true);
        }
        if progressed {
            self.grant(now, peer);
        }
    }

    pub(super) fn finish_pull(&mut self, h: u32) {
        let r = &mut self.reqs[Request(h).index()];
        let (peer, handle, xfer) = (
            r.peer,
            r.pull.as_ref().map_or(NO_HANDLE, |p| p.sender_handle),
            r.xfer_len,
        );
        r.pull = None;
        self.queue_notify(peer, handle, xfer);
        self.finish_recv(h);
    }
}

#[cfg(test)]
mod tests {
    use super::Pull;

    /// Ranges arriving in any order, overlapping or repeated, merge into the set of bytes
    /// seen, and `add` counts only the new ones.
    #[test]
    pub(super) fn pull_ranges_merge() {
        let mut p = Pull::default();
        assert_eq!(p.add(10, 20), 10);
        assert_eq!(p.add(30, 40), 10);
        assert_eq!(p.add(0, 5), 5);
        assert_eq!(p.have, vec![(0, 5), (10, 20), (30, 40)]);
        assert_eq!(p.add(15, 35), 10);
        assert_eq!(p.have, vec![(0, 5), (10, 40)]);
        assert_eq!(p.add(10, 40), 0);
        assert_eq!(p.add(5, 10), 5);
        assert_eq!(p.have, vec![(0, 40)]);
        assert_eq!(p.received, 40);
        assert!(Pull::covers(&p.have, 3, 40));
        let gaps = |p: &Pull, a, b| super::pull_gaps(&p.have, a, b).collect::<Vec<_>>();
        assert_eq!(gaps(&p, 0, 50), vec![(40, 50)]);
        let mut q = Pull::default();
        q.add(10, 20);
        q.add(30, 40);
        assert_eq!(gaps(&q, 0, 50), vec![(0, 10), (20, 30), (40, 50)]);
        assert_eq!(gaps(&q, 12, 35), vec![(20, 30)]);
        assert_eq!(gaps(&q, 10, 20), vec![]);
    }
}

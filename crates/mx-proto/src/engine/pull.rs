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
    /// Last time a reply brought new bytes.
    pub(super) last_progress: u64,
    /// Requested but incomplete blocks: (start, end, last request time).
    pub(super) blocks: VecDeque<(usize, usize, u64)>,
}

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
    pub(super) fn covers(have: &[(usize, usize)], start: usize, end: usize) -> bool {
        have.iter().any(|&(a, b)| a <= start && b >= end)
    }
    pub(super) fn gaps(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut at = start;
        for &(a, b) in &self.have {
            if b <= at || a >= end {
                continue;
            }
            if a > at {
                out.push((at, a));
            }
            at = at.max(b);
        }
        if at < end {
            out.push((at, end));
        }
        out
    }
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
        self.request_blocks(now, h);
    }

    /// Keeps `pull_window` blocks requested.
    pub(super) fn request_blocks(&mut self, now: u64, h: u32) {
        let block = self.cfg.pull_block.max(1);
        let r = &mut self.reqs[Request(h).index()];
        let total = r.xfer_len;
        let Some(pull) = r.pull.as_mut() else { return };
        while pull.blocks.len() < self.cfg.pull_window.max(1) && pull.next < total {
            let start = pull.next;
            let end = (start + block).min(total);
            pull.next = end;
            pull.blocks.push_back((start, end, now));
            self.txq.push_back(Tx::Pull {
                req: h,
                offset: start,
                len: end - start,
            });
        }
        self.arm_req(h, now + self.cfg.resend_ns);
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
        let pull = r.pull.as_mut().expect("checked");
        let before = pull.blocks.len();
        let Pull { have, blocks, .. } = &mut **pull;
        blocks.retain(|&(a, b, _)| !Pull::covers(have, a, b));
        let done = pull.received >= r.xfer_len;
        let progressed = pull.blocks.len() < before;
        if done {
            self.finish_pull(h);
        } else if progressed {
            self.request_blocks(now, h);
        }
    }

    pub(super) fn finish_pull(&mut self, h: u32) {
        let r = &mut self.reqs[Request(h).index()];
        let (peer, handle) = (
            r.peer,
            r.pull.as_ref().map_or(NO_HANDLE, |p| p.sender_handle),
        );
        r.pull = None;
        self.queue_notify(peer, handle);
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
        assert_eq!(p.gaps(0, 50), vec![(40, 50)]);
    }
}

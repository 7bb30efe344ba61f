//! Time: the next deadline and what happens when it passes (delayed acks, resends,
//! connect retries, pull re-requests, timeouts).

use super::*;

impl<L: Clone + PartialEq> Engine<L> {
    // ---------------------------------------------------------------- time

    /// The earliest time `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.cfg.reliable_transport {
            return None;
        }
        let mut t: Option<u64> = None;
        let mut at = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        for p in &self.peers {
            if let Some(d) = p.ack_deadline {
                at(d);
            }
            if let Some(u) = p
                .unacked
                .iter()
                .filter(|u| !u.queued)
                .map(|u| u.last_sent)
                .min()
            {
                at(u + self.cfg.resend_ns);
            }
        }
        for r in &self.reqs {
            if r.state != ReqState::Active {
                continue;
            }
            match r.kind {
                ReqKind::Connect => at(r.last_try + self.cfg.resend_ns),
                ReqKind::Recv => {
                    if let Some(p) = &r.pull {
                        if let Some(b) = p.blocks.iter().map(|b| b.2).min() {
                            at(b + self.cfg.resend_ns);
                        }
                    }
                }
                ReqKind::Send => {}
            }
        }
        t
    }

    /// Does what is due at `now`: delayed acks, resends, pull re-requests, timeouts.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.cfg.reliable_transport {
            return;
        }
        let resend = self.cfg.resend_ns;
        for pi in 0..self.peers.len() {
            let p = &mut self.peers[pi];
            if p.ack_deadline.is_some_and(|d| d <= now) {
                p.ack_deadline = None;
                self.queue_ack(pi as u16);
            }
            let p = &mut self.peers[pi];
            let dead = p
                .unacked
                .iter()
                .any(|u| u.first_sent > 0 && now >= u.first_sent + self.cfg.request_timeout_ns);
            if dead {
                p.unreachable = true;
                self.fail_peer(pi as u16, Code::Unreachable, false);
                continue;
            }
            let p = &mut self.peers[pi];
            for u in p.unacked.iter_mut() {
                if !u.queued && u.first_sent > 0 && now >= u.last_sent + resend {
                    u.queued = true;
                    self.txq.push_back(Tx::Seq {
                        peer: pi as u16,
                        seq: u.seq,
                    });
                }
            }
        }
        for i in 0..self.reqs.len() {
            let r = &mut self.reqs[i];
            if r.state != ReqState::Active {
                continue;
            }
            let h = Request::new(i, r.gen).raw();
            match r.kind {
                ReqKind::Connect if now >= r.last_try + resend => {
                    if now >= r.started + self.cfg.connect_timeout_ns {
                        self.complete(h, Code::Unreachable);
                    } else {
                        r.last_try = now;
                        self.txq.push_back(Tx::Connect { req: h });
                    }
                }
                ReqKind::Recv => {
                    let Some(pull) = r.pull.as_mut() else {
                        continue;
                    };
                    if now >= pull.last_progress + self.cfg.request_timeout_ns {
                        self.complete(h, Code::Unreachable);
                        continue;
                    }
                    let mut due = Vec::new();
                    for b in pull.blocks.iter_mut() {
                        if now >= b.2 + resend {
                            b.2 = now;
                            due.push((b.0, b.1));
                        }
                    }
                    let again: Vec<(usize, usize)> =
                        due.iter().flat_map(|&(a, b)| pull.gaps(a, b)).collect();
                    for (a, b) in again {
                        self.stats.pull_rerequests += 1;
                        self.txq.push_back(Tx::Pull {
                            req: h,
                            offset: a,
                            len: b - a,
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

//! Turning fabric events into matches and completions: arrivals meet posted
//! receives or join the unexpected queue, data arrivals complete receives or fill
//! eager buffers, send events complete sends; a lost peer fails what depends on it,
//! a fatal fabric error fails everything. Must never allocate per event in steady
//! state (the event list is reused) nor call the fabric once it is poisoned.

use super::engine::{copy_out, failed, Engine, Target};
use super::fabric::{Claim, Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
use super::matching::{Matching, Posted, Waiting};
use super::request::{recv_status, Phase, Request};
use super::slab::Slab;
use super::unexpected::{Msg, MsgData};
use super::{P2pError, Status};

/// The posted receives, offered each new message the fabric has whole (see
/// [`Fabric::progress_claiming`]): what `arrived` would do for a message that meets a
/// posted receive, without the event, the take, or a second look at the postbox.
struct Claimer<'a> {
    matching: &'a mut Matching,
    reqs: &'a mut Slab<Request>,
    lost: &'a [(Rank, String)],
    /// The receive claimed last: its key, the message's source, tag and length, and
    /// the receive's capacity (its status is made only once the copy is done).
    cur: Option<(u64, Rank, i32, usize, usize)>,
}

impl Claim for Claimer<'_> {
    #[inline]
    fn claim(&mut self, src: Rank, env: &Envelope) -> Option<(*mut u8, usize)> {
        // A lost rank's late messages are dropped by `arrived`.
        if !self.lost.is_empty() && self.lost.iter().any(|(r, _)| *r == src) {
            return None;
        }
        let Posted {
            req: key, buf: ub, ..
        } = self
            .matching
            // A layout receive is not written through a plain pointer: it stays
            // posted, the message is announced, and `arrived` finds it first again
            // and takes the data through the layout.
            .take_posted_if(env.ctx, src, env.tag, |p| p.buf.lay().is_none())?;
        self.cur = Some((key, src, env.tag, env.len, ub.cap));
        Some((ub.ptr, ub.cap))
    }

    #[inline]
    fn claimed(&mut self, ok: bool) {
        let Some((key, src, tag, len, cap)) = self.cur.take() else {
            return;
        };
        // The common case, a posted receive not freed: its phase is overwritten in
        // place, with neither a move of the old phase out nor its drop call.
        if ok {
            if let Some(req) = self.reqs.get_mut(key) {
                if !req.freed && matches!(req.phase, Phase::Posted { .. }) {
                    // SAFETY: `req.phase` is a valid place, and a `Posted` phase owns
                    // nothing, so writing over it without dropping it leaks nothing.
                    unsafe {
                        std::ptr::write(
                            &mut req.phase,
                            Phase::Done(recv_status(src, tag, len, cap)),
                        )
                    };
                    return;
                }
            }
        }
        let mut st = recv_status(src, tag, len, cap);
        if !ok {
            st.len = 0;
            st.error = Some(P2pError::PeerLost {
                rank: st.source,
                why: "its channel broke while a message was copied".into(),
            });
        }
        complete_in(self.reqs, key, st);
    }
}

/// Request `key` is complete with `status`; a freed one goes at once.
#[inline]
pub(crate) fn complete_in(reqs: &mut Slab<Request>, key: u64, status: Status) {
    let Some(req) = reqs.get_mut(key) else {
        return;
    };
    if req.freed {
        reqs.remove(key);
        return;
    }
    let old = std::mem::replace(&mut req.phase, Phase::Done(status));
    // A posted receive's phase (the common case: a claimed arrival) owns nothing;
    // forgetting it keeps the drop glue of `Phase` off the path of every message.
    if matches!(old, Phase::Posted { .. }) {
        std::mem::forget(old);
    } else {
        drop(old);
    }
}

impl<F: Fabric> Engine<F> {
    /// Polls the fabric once and handles what it reported. `Ok(true)` when anything
    /// moved. A fatal fabric error is returned once and poisons the engine.
    pub fn progress(&mut self) -> Result<bool, P2pError> {
        self.check_usable()?;
        // `events` is empty between calls; an empty poll touches nothing else. New
        // messages that meet a posted receive land in it during the poll.
        let mut claim = Claimer {
            matching: &mut self.matching,
            reqs: &mut self.reqs,
            lost: &self.lost,
            cur: None,
        };
        let r = self.fabric.progress_claiming(&mut self.events, &mut claim);
        let mut moved = !self.events.is_empty();
        if moved {
            let mut events = std::mem::take(&mut self.events);
            for ev in events.drain(..) {
                self.handle(ev);
            }
            self.events = events;
        }
        if !self.colls.is_empty() {
            moved |= self.advance_colls();
        }
        match r {
            Ok(m) => Ok(moved || m),
            Err(FabricError::PeerLost { rank, why }) => {
                self.peer_lost(rank, why);
                moved = true;
                Ok(moved)
            }
            Err(e) => {
                self.poison(e.clone());
                Err(P2pError::Fabric(e))
            }
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Arrived { token, env } => self.arrived(token, env),
            Event::Received { token } => self.received(token),
            Event::SendDone { send } => self.send_event(send, true),
            Event::SyncMatched { send } => self.send_event(send, false),
            Event::PeerLost { rank, why } => self.peer_lost(rank, why),
        }
    }

    fn arrived(&mut self, token: MsgToken, env: Envelope) {
        if self.lost.iter().any(|(r, _)| *r == token.src) {
            return;
        }
        if env.ctx == super::cancel::CTRL_CTX {
            self.ctrl_arrived(token, env);
            return;
        }
        if let Some(p) = self.matching.take_posted(env.ctx, token.src, env.tag) {
            let key = p.req;
            let status = recv_status(token.src, env.tag, env.len, p.buf.cap);
            self.take_into(key, token, status);
            return;
        }
        let mut data = MsgData::Untaken;
        if env.len <= self.eager_limit && !env.sync {
            let mut buf = self.pool.get(env.len);
            // SAFETY: `buf` is the engine's own buffer of `env.len` bytes; it stays
            // allocated (moved with its message, never shrunk or returned to the pool)
            // until the fabric reports the data in, or the peer lost.
            match unsafe { self.fabric.take(token, buf.as_mut_ptr(), env.len) } {
                Ok(true) => data = MsgData::Full(buf),
                Ok(false) => data = MsgData::Filling(buf),
                // The message cannot be had: nothing to match it with.
                Err(_) => {
                    self.pool.put(buf);
                    return;
                }
            }
        }
        let filling = matches!(data, MsgData::Filling(_));
        let m = self.msgs.insert(Msg {
            token,
            env,
            data,
            queued: true,
            claimed: None,
            retract: None,
        });
        if filling {
            self.takes.insert(token, Target::Msg(m));
        }
        self.matching.push_unexpected(
            env.ctx,
            Waiting {
                msg: m,
                src: token.src,
                tag: env.tag,
            },
        );
    }

    fn received(&mut self, token: MsgToken) {
        match self.takes.remove(&token) {
            Some(Target::Req(key)) => {
                let status = match self.reqs.get(key).map(|r| &r.phase) {
                    Some(Phase::Receiving { status, .. }) => status.clone(),
                    _ => return,
                };
                self.complete(key, status);
            }
            Some(Target::Msg(m)) => {
                let Some(msg) = self.msgs.get_mut(m) else {
                    return;
                };
                let data = match std::mem::replace(&mut msg.data, MsgData::Untaken) {
                    MsgData::Filling(d) => d,
                    other => {
                        msg.data = other;
                        return;
                    }
                };
                let retract = msg.retract.take().map(|c| (msg.token, c));
                let Some(key) = msg.claimed else {
                    msg.data = MsgData::Full(data);
                    if let Some((token, cookie)) = retract {
                        self.retract_settle(token, cookie);
                    }
                    return;
                };
                self.msgs.remove(m);
                if let Some((token, cookie)) = retract {
                    // Matched meanwhile: too late.
                    self.retract_settle(token, cookie);
                }
                let Some(req) = self.reqs.get(key) else {
                    self.pool.put(data);
                    return;
                };
                let status = match &req.phase {
                    Phase::Receiving { status, .. } => status.clone(),
                    _ => recv_status(token.src, 0, data.len(), req.buf.cap),
                };
                copy_out(&data, req.buf);
                self.pool.put(data);
                self.complete(key, status);
            }
            Some(Target::Ctrl) => self.ctrl_received(token),
            None => {}
        }
    }

    fn send_event(&mut self, send: SendId, done_event: bool) {
        let Some(&key) = self.sends.get(&send) else {
            if done_event {
                self.ctrl.out.remove(&send);
            }
            return;
        };
        let Some(req) = self.reqs.get_mut(key) else {
            self.sends.remove(&send);
            return;
        };
        let Phase::Send {
            done,
            await_sync,
            cancel,
            status,
            ..
        } = &mut req.phase
        else {
            return;
        };
        if done_event {
            *done = true;
        } else {
            *await_sync = false;
        }
        if super::cancel::send_complete(*done, *await_sync, *cancel) {
            let status = status.clone();
            self.sends.remove(&send);
            self.complete(key, status);
        }
    }

    /// Fails what depends on `rank` (see the engine's module docs).
    pub(crate) fn peer_lost(&mut self, rank: Rank, why: String) {
        if self.lost.iter().any(|(r, _)| *r == rank) {
            return;
        }
        self.lost.push((rank, why.clone()));
        let err = P2pError::PeerLost { rank, why };
        let mut keys = std::mem::take(&mut self.scratch);

        // Requests: sends to it, receives that could only or might get its messages,
        // receives whose data was coming from it straight through the fabric.
        keys.clear();
        self.reqs.keys_where(&mut keys, |r| match &r.phase {
            Phase::Send { dest, .. } => *dest == rank,
            Phase::Posted { src, .. } => src.is_none_or(|s| s == rank),
            Phase::Receiving { token, .. } => token.src == rank,
            // A schedule fails through its own requests.
            Phase::Done(_) | Phase::Coll(_) => false,
        });
        for &key in &keys {
            let Some(req) = self.reqs.get(key) else {
                continue;
            };
            let status = match &req.phase {
                Phase::Send { id, status, .. } => {
                    self.sends.remove(id);
                    Status {
                        error: Some(err.clone()),
                        ..status.clone()
                    }
                }
                Phase::Posted { ctx, src, tag } => {
                    let (ctx, src, tag) = (*ctx, *src, *tag);
                    self.matching.remove_posted(ctx, key);
                    failed(src, tag, err.clone())
                }
                Phase::Receiving { token, status } => {
                    // Data going into an eager buffer: handled with the message below.
                    if !matches!(self.takes.get(token), Some(Target::Req(_))) {
                        continue;
                    }
                    self.takes.remove(token);
                    Status {
                        len: 0,
                        error: Some(err.clone()),
                        ..status.clone()
                    }
                }
                Phase::Done(_) | Phase::Coll(_) => continue,
            };
            self.complete(key, status);
        }

        // Its messages whose data is not here: out of the queues; a receive waiting
        // for one fails; an improbed one fails its imrecv later.
        keys.clear();
        self.msgs.keys_where(&mut keys, |m| {
            m.token.src == rank && matches!(m.data, MsgData::Untaken | MsgData::Filling(_))
        });
        for &m in &keys {
            let Some(msg) = self.msgs.get_mut(m) else {
                continue;
            };
            self.takes.remove(&msg.token);
            if let MsgData::Filling(buf) = std::mem::replace(&mut msg.data, MsgData::Lost) {
                // The fabric was told to write here; never reuse it.
                std::mem::forget(buf);
            }
            let (queued, claimed, ctx) = (msg.queued, msg.claimed, msg.env.ctx);
            if let Some(key) = claimed {
                self.msgs.remove(m);
                if let Some(Phase::Receiving { status, .. }) = self.reqs.get(key).map(|r| &r.phase)
                {
                    let s = Status {
                        len: 0,
                        error: Some(err.clone()),
                        ..status.clone()
                    };
                    self.complete(key, s);
                }
            } else if queued {
                self.matching.remove_unexpected(ctx, m);
                self.msgs.remove(m);
            }
        }
        self.takes.retain(|t, _| t.src != rank);
        keys.clear();
        self.scratch = keys;
    }

    /// A fatal fabric error: every pending request completes with it.
    fn poison(&mut self, e: FabricError) {
        let err = P2pError::Fabric(e.clone());
        self.poisoned = Some(e);
        let mut keys = std::mem::take(&mut self.scratch);
        keys.clear();
        self.reqs.keys_where(&mut keys, |r| !r.is_done());
        for &key in &keys {
            let status = match self.reqs.get(key).map(|r| &r.phase) {
                Some(Phase::Send { status, .. }) => Status {
                    error: Some(err.clone()),
                    ..status.clone()
                },
                Some(Phase::Receiving { status, .. }) => Status {
                    len: 0,
                    error: Some(err.clone()),
                    ..status.clone()
                },
                Some(Phase::Posted { src, tag, .. }) => failed(*src, *tag, err.clone()),
                // The fabric is not called again: the schedule's memory is free.
                Some(Phase::Coll(_)) => failed(None, None, err.clone()),
                _ => continue,
            };
            self.complete(key, status);
        }
        self.sends.clear();
        self.takes.clear();
        keys.clear();
        self.scratch = keys;
    }
}

//! Cancelling a send (MPI_Cancel on a send request): a retraction the sender asks of
//! the receiver, which alone knows whether a receive has matched the message.
//!
//! The protocol, two control messages in a context no communicator has
//! ([`CTRL_CTX`]), sent through the fabric like any message and so ordered after the
//! message they name:
//! * **ASK** (sender → receiver): `seq` (the message's number among the sender's
//!   messages to this receiver: its `MsgToken::seq` there) and a cookie (the asking
//!   request's key).
//! * **ANSWER** (receiver → sender): the cookie and whether the message was removed.
//!
//! The receiver removes the message if it is still in its unexpected queue, whole
//! (an eager copy: the copy is dropped) or not yet taken (a rendezvous or synchronous
//! envelope: it is taken into an empty buffer, so the fabric releases its sender and
//! drops the data). A message already matched, taken out by `improbe`, or delivered
//! straight into a posted receive is "too late": it is received normally. One still
//! being copied in is settled when its data is in. As the ASK comes after the
//! message, the receiver has always seen the message (or consumed it) by then.
//!
//! The sender's request completes only after the ANSWER, and, if the message was
//! removed, once the fabric has let go of the send buffer (`SendDone`); its status
//! then says `cancelled`. A send already complete (the fabric wrote it whole inside
//! `isend`) can be cancelled too: its request goes back to waiting for the answer.
//! A lost peer fails a pending ask as it fails any send to it.

use super::engine::{Engine, Target};
use super::fabric::{Envelope, Fabric, MsgToken, Rank, SendId};
use super::hash::IntMap;
use super::request::{Cancel, Phase, Request, UserBuf, NOT_SENT};
use super::unexpected::MsgData;
use super::{P2pError, ReqId, Status};

/// The context of the protocol's messages: above every communicator's (small ids,
/// `commctx`) and below the C layer's reserved `u32::MAX - 1` and `u32::MAX`.
pub(crate) const CTRL_CTX: u32 = 0xffff_ff00;

const ASK: i32 = 1;
const ANSWER: i32 = 2;
/// Two little-endian u64 words.
const LEN: usize = 16;

type Buf = Box<[u8; LEN]>;

/// The protocol's buffers the fabric may still read or write.
#[derive(Default)]
pub(crate) struct CtrlBufs {
    /// Sent, until `SendDone`.
    pub(crate) out: IntMap<SendId, Buf>,
    /// Being received, until `Received`.
    pub(crate) inn: IntMap<MsgToken, (Buf, Envelope)>,
}

/// Whether a send may complete: its buffer is free, a synchronous send was matched
/// (unless the message was retracted), and no retraction is awaiting its answer.
#[inline]
pub(crate) fn send_complete(done: bool, await_sync: bool, cancel: Cancel) -> bool {
    match cancel {
        Cancel::No => done && !await_sync,
        Cancel::Asked => false,
        Cancel::Cancelled => done,
    }
}

fn words(b: &[u8; LEN]) -> (u64, u64) {
    let mut a = [0u8; 8];
    let mut c = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    c.copy_from_slice(&b[8..]);
    (u64::from_le_bytes(a), u64::from_le_bytes(c))
}

impl<F: Fabric> Engine<F> {
    /// The number of the last message the fabric accepted for `dest` (what
    /// [`Engine::cancel_sent`] needs for a send that left no request).
    pub fn last_sent(&self, dest: Rank) -> u64 {
        self.sent
            .get(dest as usize)
            .and_then(|n| n.checked_sub(1))
            .unwrap_or(NOT_SENT)
    }

    /// A request that asks `dest` to retract message `seq` (from
    /// [`Engine::last_sent`] right after a send that completed without a request)
    /// and completes with its answer: `status` (the send's), `cancelled` if removed.
    pub fn cancel_sent(&mut self, dest: Rank, seq: u64, status: Status) -> Result<ReqId, P2pError> {
        self.check_usable()?;
        if dest >= self.size || seq == NOT_SENT {
            return Err(P2pError::UnknownRequest);
        }
        let mut req = Request::new(Phase::Done(status), UserBuf::flat(std::ptr::null_mut(), 0));
        req.seq = seq;
        let key = self.reqs.insert(req);
        self.cancel_send(key);
        Ok(ReqId(key))
    }

    /// Asks the receiver of send request `key` to retract its message (once: a
    /// second cancel of the same send does nothing).
    pub(crate) fn cancel_send(&mut self, key: u64) {
        let Some(req) = self.reqs.get_mut(key) else {
            return;
        };
        let seq = std::mem::replace(&mut req.seq, NOT_SENT);
        let dest = match &mut req.phase {
            Phase::Send { dest, cancel, .. } => {
                *cancel = Cancel::Asked;
                *dest
            }
            // Complete here already: back to waiting, for the answer alone.
            Phase::Done(st) if st.error.is_none() && !st.cancelled => {
                let dest = st.source;
                let status = std::mem::replace(
                    st,
                    Status {
                        source: 0,
                        tag: 0,
                        len: 0,
                        cancelled: false,
                        error: None,
                    },
                );
                req.phase = Phase::Send {
                    // No fabric send: `sends` never names this request.
                    id: SendId(u64::MAX),
                    dest,
                    done: true,
                    await_sync: false,
                    cancel: Cancel::Asked,
                    status,
                };
                dest
            }
            _ => return,
        };
        if let Err(e) = self.ctrl_send(dest, ASK, seq, key) {
            // The ask cannot go: the send stands as it is, with the error if it has
            // none yet (a lost peer fails it anyway).
            self.answer(dest, key, false, Some(e));
        }
    }

    /// Sends a control message `(a, b)` to `dest`.
    fn ctrl_send(&mut self, dest: Rank, tag: i32, a: u64, b: u64) -> Result<(), P2pError> {
        let mut buf: Buf = Box::new([0; LEN]);
        buf[..8].copy_from_slice(&a.to_le_bytes());
        buf[8..].copy_from_slice(&b.to_le_bytes());
        let env = Envelope {
            ctx: CTRL_CTX,
            tag,
            len: LEN,
            sync: false,
        };
        // SAFETY: `buf` is boxed and kept in `ctrl.out` until `SendDone`, or dropped
        // here when every byte has left it inside the call.
        let r = unsafe { self.fabric.send_eager(dest, env, buf.as_ptr()) }?;
        if let Some(n) = self.sent.get_mut(dest as usize) {
            *n += 1;
        }
        if let Some(id) = r {
            self.ctrl.out.insert(id, buf);
        }
        Ok(())
    }

    /// A control message was announced: its 16 bytes are taken now.
    pub(crate) fn ctrl_arrived(&mut self, token: MsgToken, env: Envelope) {
        if env.len != LEN {
            // Not ours to understand: drop it (a message of a peer is never trusted).
            let _ = unsafe_take_nothing(&mut self.fabric, token);
            return;
        }
        let mut buf: Buf = Box::new([0; LEN]);
        // SAFETY: `buf` is boxed and kept in `ctrl.inn` until `Received` (or dropped
        // here when the take completed inside the call).
        match unsafe { self.fabric.take(token, buf.as_mut_ptr(), LEN) } {
            Ok(true) => self.ctrl_handle(token.src, env.tag, &buf),
            Ok(false) => {
                self.ctrl.inn.insert(token, (buf, env));
                self.takes.insert(token, Target::Ctrl);
            }
            Err(_) => {}
        }
    }

    /// A control message's data is in.
    pub(crate) fn ctrl_received(&mut self, token: MsgToken) {
        if let Some((buf, env)) = self.ctrl.inn.remove(&token) {
            self.ctrl_handle(token.src, env.tag, &buf);
        }
    }

    fn ctrl_handle(&mut self, src: Rank, tag: i32, buf: &[u8; LEN]) {
        let (a, b) = words(buf);
        match tag {
            ASK => {
                self.retract_settle(MsgToken { src, seq: a }, b);
            }
            ANSWER => self.answer(src, a, b == 1, None),
            _ => {}
        }
    }

    /// Answers ask `cookie` for message `token`: removed if no receive has it yet.
    /// A message still being copied in is settled once its data is in.
    pub(crate) fn retract_settle(&mut self, token: MsgToken, cookie: u64) {
        let Some(removed) = self.retract(token, cookie) else {
            return;
        };
        // A failure to answer is the peer's loss, reported by the fabric.
        let _ = self.ctrl_send(token.src, ANSWER, cookie, u64::from(removed));
    }

    /// Removes message `token` if no receive has it yet; whether it did, or `None`
    /// when the answer waits for its data (`Msg::retract`).
    fn retract(&mut self, token: MsgToken, cookie: u64) -> Option<bool> {
        let mut keys = std::mem::take(&mut self.scratch);
        keys.clear();
        self.msgs.keys_where(&mut keys, |m| m.token == token);
        let m = keys.first().copied();
        keys.clear();
        self.scratch = keys;
        let Some(m) = m else {
            return Some(false);
        };
        let Some(msg) = self.msgs.get_mut(m) else {
            return Some(false);
        };
        if !msg.queued || msg.claimed.is_some() {
            return Some(false);
        }
        if matches!(msg.data, MsgData::Filling(_)) {
            msg.retract = Some(cookie);
            return None;
        }
        let ctx = msg.env.ctx;
        self.matching.remove_unexpected(ctx, m);
        match self.msgs.remove(m).map(|msg| msg.data) {
            Some(MsgData::Full(data)) => self.pool.put(data),
            Some(MsgData::Untaken) => {
                let _ = unsafe_take_nothing(&mut self.fabric, token);
            }
            _ => {}
        }
        Some(true)
    }

    /// The receiver's answer to ask `key` (or, with `err`, the ask's failure).
    fn answer(&mut self, from: Rank, key: u64, removed: bool, err: Option<P2pError>) {
        let Some(req) = self.reqs.get_mut(key) else {
            return;
        };
        let Phase::Send {
            id,
            dest,
            done,
            await_sync,
            cancel,
            status,
        } = &mut req.phase
        else {
            return;
        };
        if *dest != from || *cancel != Cancel::Asked {
            return;
        }
        if removed {
            *cancel = Cancel::Cancelled;
            status.cancelled = true;
            status.len = 0;
        } else {
            *cancel = Cancel::No;
            if status.error.is_none() {
                status.error = err;
            }
        }
        if send_complete(*done, *await_sync, *cancel) {
            let (id, status) = (*id, status.clone());
            self.sends.remove(&id);
            self.complete(key, status);
        }
    }
}

/// Takes message `token` into an empty buffer: the fabric drops its data and lets
/// its sender go (a retracted rendezvous or synchronous message, a malformed control
/// message).
fn unsafe_take_nothing<F: Fabric>(f: &mut F, token: MsgToken) -> Result<bool, P2pError> {
    // SAFETY: a capacity of 0: nothing is ever written (a dangling pointer is what
    // the fabric's contract allows for an empty buffer).
    Ok(unsafe { f.take(token, std::ptr::NonNull::dangling().as_ptr(), 0) }?)
}

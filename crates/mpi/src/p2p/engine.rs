//! The engine's public calls. One engine per process; every call takes `&mut self`
//! (MPI_THREAD_SERIALIZED at most is the caller's business).
//!
//! Decisions the standard leaves open, fixed here:
//! * A send is cancelled by asking its receiver to retract the message, which it does
//!   if no receive has matched it yet (`super::cancel`); the send completes once the
//!   receiver has answered, `cancelled` or not. An unmatched receive is cancelled.
//! * Errors of one request (truncation, a lost peer) are in its [`Status::error`];
//!   `test`/`wait` return `Err` only for an unknown request.
//! * A lost peer (`Event::PeerLost`) fails every pending send to it, every receive
//!   matched to one of its messages, and every pending receive naming it — and every
//!   pending `ANY_SOURCE` receive too, and any later `ANY_SOURCE` receive or probe that
//!   finds nothing already here: without ULFM the job is broken, and a receive that
//!   could be waiting for the dead rank must not hang. Messages of the lost rank
//!   whose data is already here can still be received.
//! * A synchronous message is never taken before a receive matches it, even when it
//!   is short (taking is what tells the sender "matched"); the fabric keeps
//!   announcing later messages meanwhile, as it does for rendezvous.
//! * A fatal fabric error (anything but a lost peer) poisons the engine: every
//!   pending request completes with it and the fabric is not called again.
//!
//! What the engine assumes of a fabric beyond `fabric.rs`: it touches a buffer only
//! inside its own method calls, and not at all for a peer once it has reported that
//! peer lost. (Both make the safe API in [`super::api`] sound.)

use myrix_rsm::spin::SpinWait;

use super::fabric::{Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
use super::hash::IntMap;
use super::matching::{Matching, Posted};
use super::request::{recv_status, Cancel, Phase, Request, UserBuf};
use super::slab::Slab;
use super::unexpected::{Msg, MsgData, Pool};
use super::{MsgHandle, P2pError, ReqId, SendMode, Status};

/// Whose buffer a taken message's data is going into.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    Req(u64),
    Msg(u64),
    /// A control message of the cancel protocol, into `Engine::ctrl_in`.
    Ctrl,
}

/// MPI's matching engine over a fabric `F`.
pub struct Engine<F: Fabric> {
    pub(crate) fabric: F,
    pub(crate) me: Rank,
    pub(crate) size: Rank,
    pub(crate) eager_limit: usize,
    pub(crate) reqs: Slab<Request>,
    pub(crate) msgs: Slab<Msg>,
    pub(crate) matching: Matching,
    /// Messages taken and not yet reported received.
    pub(crate) takes: IntMap<MsgToken, Target>,
    /// Sends not yet complete.
    pub(crate) sends: IntMap<SendId, u64>,
    pub(crate) pool: Pool,
    pub(crate) events: Vec<Event>,
    pub(crate) lost: Vec<(Rank, String)>,
    pub(crate) poisoned: Option<FabricError>,
    pub(crate) spin: SpinWait,
    pub(crate) scratch: Vec<u64>,
    /// Requests running a collective schedule (`coll::nb`), advanced by `progress`.
    pub(crate) colls: Vec<u64>,
    /// Per destination: messages the fabric accepted for it (the next one's
    /// `MsgToken::seq` there).
    pub(crate) sent: Vec<u64>,
    /// The cancel protocol's messages in flight (sent, and being received).
    pub(crate) ctrl: super::cancel::CtrlBufs,
}

impl<F: Fabric> Engine<F> {
    pub fn new(fabric: F) -> Self {
        let eager_limit = fabric.eager_limit();
        let size = fabric.size();
        Engine {
            me: fabric.rank(),
            size,
            eager_limit,
            fabric,
            reqs: Slab::new(),
            msgs: Slab::new(),
            matching: Matching::default(),
            takes: IntMap::default(),
            sends: IntMap::default(),
            pool: Pool::new(eager_limit),
            events: Vec::new(),
            lost: Vec::new(),
            poisoned: None,
            spin: SpinWait::new(),
            scratch: Vec::new(),
            colls: Vec::new(),
            sent: vec![0; size as usize],
            ctrl: Default::default(),
        }
    }

    pub fn fabric(&self) -> &F {
        &self.fabric
    }

    pub fn fabric_mut(&mut self) -> &mut F {
        &mut self.fabric
    }

    /// This process's rank.
    pub fn rank(&self) -> Rank {
        self.me
    }

    /// The job's size.
    pub fn size(&self) -> Rank {
        self.size
    }

    /// Appends processes of other jobs as ranks (MPI's dynamic processes; see
    /// [`Fabric::add_peers`]); returns the first new rank.
    pub fn add_peers(&mut self, peers: &[super::fabric::NewPeer]) -> Result<Rank, P2pError> {
        self.check_usable()?;
        let first = self.fabric.add_peers(peers)?;
        self.size = self.fabric.size();
        self.sent.resize(self.size as usize, 0);
        Ok(first)
    }

    /// Rank `r` (another job's process) was disconnected: its exit is not a loss.
    pub fn retire(&mut self, r: Rank) {
        self.fabric.retire(r);
        self.lost.retain(|(l, _)| *l != r);
    }

    /// Whether nonblocking collective schedules are running (a wait that does not
    /// drive this engine must then call [`Engine::progress`] now and then).
    pub fn has_schedules(&self) -> bool {
        !self.colls.is_empty()
    }

    /// Requests not yet freed (sends, receives, completed ones not yet tested).
    pub fn live_requests(&self) -> usize {
        self.reqs.len()
    }

    pub(crate) fn check_usable(&self) -> Result<(), P2pError> {
        match &self.poisoned {
            Some(e) => Err(P2pError::Fabric(e.clone())),
            None => Ok(()),
        }
    }

    /// The number of the next message to `dest`: the fabric numbers them as it
    /// accepts them (MPI_Cancel retracts by it); [`super::request::NOT_SENT`] for a
    /// rank outside the job.
    #[inline]
    pub(crate) fn next_seq(&mut self, dest: Rank) -> u64 {
        match self.sent.get_mut(dest as usize) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => super::request::NOT_SENT,
        }
    }

    pub(crate) fn lost_error(&self, src: Option<Rank>) -> Option<P2pError> {
        lost_error_in(&self.lost, src)
    }

    /// Starts a send of `len` bytes at `data` to `dest` in context `ctx`.
    ///
    /// # Safety
    /// `data` is valid for reading `len` bytes until the request completes (even if
    /// it is freed before).
    pub unsafe fn isend(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        data: *const u8,
        len: usize,
        mode: SendMode,
    ) -> Result<ReqId, P2pError> {
        // SAFETY: forwarded.
        match unsafe { self.isend_now(dest, ctx, tag, data, len, mode) }? {
            Some(r) => Ok(r),
            None => {
                let status = Status {
                    source: dest,
                    tag,
                    len,
                    cancelled: false,
                    error: None,
                };
                let mut req =
                    Request::new(Phase::Done(status), UserBuf::flat(std::ptr::null_mut(), 0));
                req.seq = self.last_sent(dest);
                Ok(ReqId(self.reqs.insert(req)))
            }
        }
    }

    /// As [`Engine::isend`], but `Ok(None)` when the send completed inside the call
    /// (every byte has left `data`): no request is made, and the send's status is
    /// `dest`, `tag`, `len`, no error. The C layer's `MPI_Isend` of a short message
    /// then needs no engine request at all.
    ///
    /// # Safety
    /// As [`Engine::isend`].
    pub unsafe fn isend_now(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        data: *const u8,
        len: usize,
        mode: SendMode,
    ) -> Result<Option<ReqId>, P2pError> {
        self.check_usable()?;
        if !self.lost.is_empty() {
            if let Some(e) = self.lost_error(Some(dest)) {
                return Err(e);
            }
        }
        let sync = mode == SendMode::Sync;
        let env = Envelope {
            ctx,
            tag,
            len,
            sync,
        };
        // SAFETY: the caller keeps `data` readable for `len` bytes until this request
        // completes, and the request completes only after `SendDone` (or the loss of
        // `dest`, after which the fabric no longer reads it) — or at once when the
        // fabric says every byte has already left `data`.
        let r = unsafe { self.fabric.send_eager(dest, env, data) }?;
        let seq = self.next_seq(dest);
        let Some(id) = r else {
            return Ok(None);
        };
        let status = Status {
            source: dest,
            tag,
            len,
            cancelled: false,
            error: None,
        };
        let phase = Phase::Send {
            id,
            dest,
            done: false,
            await_sync: sync,
            cancel: Cancel::No,
            status,
        };
        let no_buf = UserBuf::flat(std::ptr::null_mut(), 0);
        let mut req = Request::new(phase, no_buf);
        req.seq = seq;
        let key = self.reqs.insert(req);
        self.sends.insert(id, key);
        Ok(Some(ReqId(key)))
    }

    /// Posts a receive of at most `cap` bytes into `buf` from `src` (`None`:
    /// ANY_SOURCE) with `tag` (`None`: ANY_TAG) in context `ctx`.
    ///
    /// # Safety
    /// `buf` is valid for writing `cap` bytes until the request completes (even if it
    /// is freed before), and nothing else reads or writes it meanwhile.
    pub unsafe fn irecv(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        buf: *mut u8,
        cap: usize,
    ) -> Result<ReqId, P2pError> {
        // The body of `irecv_buf`, kept apart: sharing it changed how this call, the
        // 8 B path's, is inlined into the C layer's `MPI_Irecv` (9 to 18 instructions
        // more per call; callgrind, bench/mpi/p2p_count.c).
        self.check_usable()?;
        if let Some(s) = src.filter(|&s| s >= self.size) {
            return Err(P2pError::Fabric(FabricError::NoSuchRank(s)));
        }
        let key = self.reqs.insert(Request::new(
            Phase::Posted { ctx, src, tag },
            UserBuf::flat(buf, cap),
        ));
        // One lookup of the context: a message already here, or else the posted
        // queue (unless a lost peer could be the sender: then the receive fails).
        let lost = &self.lost;
        let p = Posted {
            req: key,
            src,
            tag,
            buf: UserBuf::flat(buf, cap),
        };
        let no_loss = || lost.is_empty() || lost_error_in(lost, src).is_none();
        if let Some(m) = self.matching.match_or_post(ctx, p, no_loss) {
            if let Some(msg) = self.msgs.get_mut(m) {
                msg.queued = false;
            }
            self.deliver(key, m);
        } else if !self.lost.is_empty() {
            if let Some(e) = self.lost_error(src) {
                self.complete(key, failed(src, tag, e));
            }
        }
        Ok(ReqId(key))
    }

    /// Completes request `r` now if it is (after one progress call otherwise):
    /// `Some(status)` frees it.
    pub fn test(&mut self, r: ReqId) -> Result<Option<Status>, P2pError> {
        let done = self
            .reqs
            .get(r.0)
            .ok_or(P2pError::UnknownRequest)?
            .is_done();
        if !done {
            // A fatal fabric error completes every request; it shows in the status.
            let _ = self.progress();
        }
        Ok(self.take_done(r.0))
    }

    /// Waits for request `r` and frees it. Polls the fabric, backing off (and yielding
    /// the core when the machine is oversubscribed) while nothing moves.
    pub fn wait(&mut self, r: ReqId) -> Result<Status, P2pError> {
        self.spin.reset();
        loop {
            if let Some(s) = self.try_take(r)? {
                return Ok(s);
            }
            match self.progress() {
                Ok(true) => self.spin.reset(),
                Ok(false) => self.spin.spin(),
                // Poisoned: the request is complete now (with the error).
                Err(_) => {}
            }
        }
    }

    pub(crate) fn take_done(&mut self, key: u64) -> Option<Status> {
        self.try_take(ReqId(key)).ok().flatten()
    }

    /// Frees `r` and returns its status if it is complete; `None` if it is not (or
    /// unknown). Makes no progress: a caller waiting on many requests polls once per
    /// round, not once per request.
    #[inline]
    pub fn take_complete(&mut self, r: ReqId) -> Option<Status> {
        self.take_done(r.0)
    }

    /// As [`Engine::take_complete`] with one lookup: `Ok(Some)` frees a complete
    /// request, `Ok(None)` leaves a pending one, `Err` names no live request.
    #[inline]
    pub fn try_take(&mut self, r: ReqId) -> Result<Option<Status>, P2pError> {
        // The status is taken out in the slot (no move of the whole request), and
        // an owned buffer dropped: what is left owns nothing, so the slot is
        // emptied without the request's drop glue.
        let take = |r: &mut Request| {
            drop(r.owned.take());
            match &mut r.phase {
                Phase::Done(s) => Some(std::mem::replace(s, DONE_EMPTY)),
                _ => None,
            }
        };
        match self.reqs.take_emptied(r.0, Request::is_done, take) {
            Ok(s) => Ok(s.flatten()),
            Err(()) => Err(P2pError::UnknownRequest),
        }
    }

    /// As [`Engine::try_take`], but hands the status to `f` where it lies instead of
    /// moving it out: a caller that only converts it (the C layer's completion of
    /// every `MPI_Irecv`) moves no 64-byte `Status` and runs its drop code only when
    /// it carries an error.
    #[inline]
    pub fn take_map<R>(
        &mut self,
        r: ReqId,
        f: impl FnOnce(&Status) -> R,
    ) -> Result<Option<R>, P2pError> {
        let take = |r: &mut Request| {
            drop(r.owned.take());
            let Phase::Done(s) = &mut r.phase else {
                return None;
            };
            let out = f(s);
            if s.error.is_some() {
                // The slot is then forgotten, not dropped: free what the error owns.
                drop(std::mem::replace(s, DONE_EMPTY));
            }
            Some(out)
        };
        match self.reqs.take_emptied(r.0, Request::is_done, take) {
            Ok(s) => Ok(s.flatten()),
            Err(()) => Err(P2pError::UnknownRequest),
        }
    }

    /// The request in slot `index` of the request table whose generation ends in
    /// the bits `gen & mask`, if one is live: lets a caller name a request by a
    /// handle narrower than a [`ReqId`] (the C layer's `MPI_Request` naming the
    /// engine's slot, so an `MPI_Irecv` makes no second table entry).
    #[inline]
    pub fn req_at(&self, index: u32, gen: u32, mask: u32) -> Option<ReqId> {
        self.reqs.key_at(index as usize, gen, mask).map(ReqId)
    }

    /// Whether `r` names a request not yet freed.
    #[inline]
    pub fn is_live(&self, r: ReqId) -> bool {
        self.reqs.get(r.0).is_some()
    }

    /// Whether `r` is complete (no progress is made; unknown ids are not complete).
    pub fn is_complete(&self, r: ReqId) -> bool {
        self.reqs.get(r.0).is_some_and(Request::is_done)
    }

    /// The status of a complete request, without freeing it (MPI_Request_get_status).
    pub fn status(&self, r: ReqId) -> Option<Status> {
        self.reqs.get(r.0)?.status().cloned()
    }

    /// Cancels `r`: a receive no message has matched yet at once; a send by asking
    /// its receiver to retract the message (`super::cancel`), even when the send is
    /// already complete here. Its status then says `cancelled`; a receive already
    /// matched, or a send whose message was, completes normally. Either way the
    /// request must still be completed (test/wait) or freed.
    pub fn cancel(&mut self, r: ReqId) -> Result<(), P2pError> {
        let req = self.reqs.get(r.0).ok_or(P2pError::UnknownRequest)?;
        if req.seq != super::request::NOT_SENT {
            self.cancel_send(r.0);
            return Ok(());
        }
        if let Phase::Posted { ctx, src, tag } = req.phase {
            self.matching.remove_posted(ctx, r.0);
            let status = Status {
                source: src.unwrap_or(0),
                tag: tag.unwrap_or(0),
                len: 0,
                cancelled: true,
                error: None,
            };
            self.complete(r.0, status);
        }
        Ok(())
    }

    /// MPI_Request_free: forgets `r` now if complete, else when it completes. The
    /// buffer must stay valid until then all the same. Unknown ids are ignored.
    pub fn free(&mut self, r: ReqId) {
        let Some(req) = self.reqs.get_mut(r.0) else {
            return;
        };
        if req.is_done() {
            self.reqs.remove(r.0);
        } else {
            req.freed = true;
        }
    }

    /// The status (`len` = the whole message's length) of the message a receive
    /// (`src`, `ctx`, `tag`) would match now, after one progress call; `None` if there
    /// is none yet. The message stays to be received.
    pub fn iprobe(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
    ) -> Result<Option<Status>, P2pError> {
        self.progress()?;
        match self.matching.find_unexpected(ctx, src, tag) {
            Some(m) => Ok(self.msgs.get(m).map(probe_status)),
            None => self.lost_error(src).map_or(Ok(None), Err),
        }
    }

    /// As [`Engine::iprobe`], and the message leaves matching: only
    /// [`Engine::imrecv`] with the handle receives it.
    pub fn improbe(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
    ) -> Result<Option<(MsgHandle, Status)>, P2pError> {
        self.progress()?;
        match self.matching.take_unexpected(ctx, src, tag) {
            Some(m) => {
                let Some(msg) = self.msgs.get_mut(m) else {
                    return Ok(None);
                };
                msg.queued = false;
                Ok(Some((MsgHandle(m), probe_status(msg))))
            }
            None => self.lost_error(src).map_or(Ok(None), Err),
        }
    }

    /// Receives the message `m` from [`Engine::improbe`] into `buf`.
    ///
    /// # Safety
    /// As [`Engine::irecv`].
    pub unsafe fn imrecv(
        &mut self,
        m: MsgHandle,
        buf: *mut u8,
        cap: usize,
    ) -> Result<ReqId, P2pError> {
        self.imrecv_buf(m, UserBuf::flat(buf, cap))
    }

    pub(super) fn imrecv_buf(&mut self, m: MsgHandle, ub: UserBuf) -> Result<ReqId, P2pError> {
        let msg = self.msgs.get(m.0).ok_or(P2pError::UnknownRequest)?;
        if msg.queued || msg.claimed.is_some() {
            return Err(P2pError::UnknownRequest);
        }
        let phase = Phase::Posted {
            ctx: msg.env.ctx,
            src: Some(msg.token.src),
            tag: Some(msg.env.tag),
        };
        let key = self.reqs.insert(Request::new(phase, ub));
        self.deliver(key, m.0);
        Ok(ReqId(key))
    }

    /// Gives receive `key` message `m` (already out of the unexpected queue).
    pub(crate) fn deliver(&mut self, key: u64, m: u64) {
        let (Some(msg), Some(req)) = (self.msgs.get_mut(m), self.reqs.get_mut(key)) else {
            return;
        };
        let ub = req.buf;
        let status = recv_status(msg.token.src, msg.env.tag, msg.env.len, ub.cap);
        match std::mem::replace(&mut msg.data, MsgData::Untaken) {
            MsgData::Full(data) => {
                self.msgs.remove(m);
                copy_out(&data, ub);
                self.pool.put(data);
                self.complete(key, status);
            }
            MsgData::Filling(data) => {
                msg.data = MsgData::Filling(data);
                msg.claimed = Some(key);
                req.phase = Phase::Receiving {
                    token: msg.token,
                    status,
                };
            }
            MsgData::Untaken => {
                let token = msg.token;
                self.msgs.remove(m);
                self.take_into(key, token, status);
            }
            MsgData::Lost => {
                let src = msg.token.src;
                self.msgs.remove(m);
                let e = self.lost_error(Some(src)).unwrap_or(P2pError::PeerLost {
                    rank: src,
                    why: String::new(),
                });
                let mut s = status;
                s.len = 0;
                s.error = Some(e);
                self.complete(key, s);
            }
        }
    }

    /// Takes message `token` straight into receive `key`'s buffer.
    pub(crate) fn take_into(&mut self, key: u64, token: MsgToken, status: Status) {
        let Some(req) = self.reqs.get_mut(key) else {
            return;
        };
        let ub = req.buf;
        let r = match ub.lay() {
            // SAFETY: `ub` is the receive's buffer, valid for writing `cap` bytes
            // until the request completes (the promise of `irecv`/`imrecv`); the
            // request completes only once the fabric has reported the data in (or
            // failed the take).
            None => unsafe { self.fabric.take(token, ub.ptr, ub.cap) },
            // SAFETY: as above, for the receive's layout (`irecv_layout`'s promise).
            Some(lay) => unsafe { self.fabric.take_layout(token, lay, ub.cap) },
        };
        match r {
            Ok(true) => self.complete(key, status),
            Ok(false) => {
                req.phase = Phase::Receiving { token, status };
                self.takes.insert(token, Target::Req(key));
            }
            Err(e) => {
                let mut s = status;
                s.len = 0;
                s.error = Some(e.into());
                self.complete(key, s);
            }
        }
    }

    /// Request `key` is complete with `status`; a freed one goes at once.
    pub(crate) fn complete(&mut self, key: u64, status: Status) {
        super::progress::complete_in(&mut self.reqs, key, status);
    }
}

/// What a taken status leaves in its slot for the moment before the slot is freed.
const DONE_EMPTY: Status = Status {
    source: 0,
    tag: 0,
    len: 0,
    cancelled: false,
    error: None,
};

/// The error of a receive from `src` (`None`: ANY_SOURCE) given the lost peers.
pub(crate) fn lost_error_in(lost: &[(Rank, String)], src: Option<Rank>) -> Option<P2pError> {
    let (rank, why) = match src {
        Some(s) => lost.iter().find(|(r, _)| *r == s)?,
        None => lost.first()?,
    };
    Some(P2pError::PeerLost {
        rank: *rank,
        why: why.clone(),
    })
}

/// Copies an eager buffer into a receive's buffer (what fits).
pub(crate) fn copy_out(data: &[u8], ub: UserBuf) {
    let n = data.len().min(ub.cap);
    if let Some(lay) = ub.lay().filter(|_| n > 0) {
        // SAFETY: a layout receive's layout is valid, its memory writable, until the
        // request completes (`irecv_layout`); `data` is the engine's own buffer.
        unsafe { (*lay).scatter(0, data.as_ptr(), n) };
    } else if n > 0 {
        // SAFETY: `ub.ptr` is valid for writing `ub.cap >= n` bytes (the promise of
        // `irecv`/`imrecv`, the request not complete yet), and cannot overlap the
        // engine's own pool buffer `data`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ub.ptr, n) };
    }
}

fn probe_status(msg: &Msg) -> Status {
    Status {
        source: msg.token.src,
        tag: msg.env.tag,
        len: msg.env.len,
        cancelled: false,
        error: None,
    }
}

pub(crate) fn failed(src: Option<Rank>, tag: Option<i32>, e: P2pError) -> Status {
    Status {
        source: src.unwrap_or(0),
        tag: tag.unwrap_or(0),
        len: 0,
        cancelled: false,
        error: Some(e),
    }
}

impl<F: Fabric> Drop for Engine<F> {
    /// Owned buffers of requests still in flight are leaked, not freed: the fabric may
    /// still write them.
    fn drop(&mut self) {
        for req in self.reqs.values_mut() {
            if !req.is_done() {
                if let Some(v) = req.owned.take() {
                    std::mem::forget(v);
                }
                // A schedule's scratch may still be written by the fabric.
                if let Phase::Coll(s) = &mut req.phase {
                    std::mem::forget(s.take());
                }
            }
        }
    }
}

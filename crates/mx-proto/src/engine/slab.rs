//! The request slab: request handles with generations, allocation, completion, and
//! the calls that test and release requests.
//!
//! Must never allocate on the fast paths: freed slots keep their send vector.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReqKind {
    Send,
    Recv,
    Connect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReqState {
    Free,
    /// Posted and waiting (receives: in the posted queue).
    Pending,
    /// Matched / in progress.
    Active,
    /// Complete, waiting for the application to test it.
    Done,
}

#[derive(Debug)]
pub(super) struct Req {
    pub(super) gen: u16,
    pub(super) kind: ReqKind,
    pub(super) state: ReqState,
    pub(super) forgotten: bool,
    pub(super) context: u64,
    pub(super) peer: u16,
    pub(super) match_info: u64,
    pub(super) mask: u64,
    pub(super) msg_len: usize,
    pub(super) xfer_len: usize,
    pub(super) code: Code,
    /// Send: the message. Returned to the pool when the request ends.
    pub(super) data: Vec<u8>,
    pub(super) recv: Option<RecvBuf>,
    /// Send: sequenced frames not yet acknowledged (emitted, on lossless transports).
    pub(super) outstanding: u32,
    /// Send: a notify must arrive (synchronous or large).
    pub(super) need_notify: bool,
    /// Send: the message is not in `data` but lent by the caller, who passes it to every
    /// call that may emit its bytes (see [`Lent`]).
    pub(super) lent: bool,
    /// Send: the message vector was the caller's (`isend_vec`) and goes back to it with
    /// the completion, contents intact.
    pub(super) give_back: bool,
    pub(super) pull: Option<Box<Pull>>,
    /// Large send ([`Codec::REGIONS`]): the wire name of its region; [`NO_HANDLE`] for
    /// none.
    pub(super) region: u32,
    /// Connect: key, first and last attempt, the session of the instance asked for (0:
    /// any).
    pub(super) key: u32,
    pub(super) expect_session: u32,
    pub(super) started: u64,
    pub(super) last_try: u64,
    /// The earliest deadline this request has on the timer heap.
    pub(super) armed: Option<u64>,
}

impl Req {
    pub(super) fn empty() -> Req {
        Req {
            gen: 0,
            kind: ReqKind::Send,
            state: ReqState::Free,
            forgotten: false,
            context: 0,
            peer: 0,
            match_info: 0,
            mask: 0,
            msg_len: 0,
            xfer_len: 0,
            code: Code::Success,
            data: Vec::new(),
            recv: None,
            outstanding: 0,
            need_notify: false,
            pull: None,
            region: NO_HANDLE,
            key: 0,
            expect_session: 0,
            started: 0,
            last_try: 0,
            armed: None,
            lent: false,
            give_back: false,
        }
    }
}

pub(super) const MAX_REQS: usize = 0xffff;

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    #[inline(always)]
    pub(super) fn alloc(&mut self, kind: ReqKind, context: u64) -> Result<u32, Error> {
        let idx = match self.free_reqs.pop() {
            Some(i) => i as usize,
            None => {
                if self.reqs.len() >= MAX_REQS {
                    return Err(Error::TooManyRequests);
                }
                self.reqs.push(Req::empty());
                self.reqs.len() - 1
            }
        };
        let r = &mut self.reqs[idx];
        // A freed request holds no receive buffer or pull state (`free` took them) and
        // keeps its send vector for reuse, so resetting the plain fields is enough.
        debug_assert!(r.recv.is_none() && r.pull.is_none());
        let gen = r.gen.wrapping_add(1);
        r.gen = gen;
        r.kind = kind;
        r.state = ReqState::Pending;
        r.forgotten = false;
        r.context = context;
        r.peer = 0;
        r.match_info = 0;
        r.mask = 0;
        r.msg_len = 0;
        r.xfer_len = 0;
        r.code = Code::Success;
        r.outstanding = 0;
        r.need_notify = false;
        r.key = 0;
        r.started = 0;
        r.last_try = 0;
        r.armed = None;
        r.lent = false;
        r.give_back = false;
        // Not reset here (the fast path allocates): `region` is NO_HANDLE whenever the
        // slot is free (a send's region is released when it completes, before it can
        // be freed), and `expect_session` is set by the one call that reads it.
        debug_assert_eq!(r.region, NO_HANDLE);
        Ok(Request::new(idx, gen).raw())
    }

    #[inline]
    pub(super) fn req(&self, h: u32) -> Option<&Req> {
        let r = Request(h);
        self.reqs
            .get(r.index())
            .filter(|x| x.gen == r.gen() && x.state != ReqState::Free)
    }
    #[inline]
    pub(super) fn req_mut(&mut self, h: u32) -> Option<&mut Req> {
        let r = Request(h);
        self.reqs
            .get_mut(r.index())
            .filter(|x| x.gen == r.gen() && x.state != ReqState::Free)
    }

    #[inline(always)]
    pub(super) fn free(&mut self, h: u32) -> Option<RecvBuf> {
        let idx = Request(h).index();
        let r = &mut self.reqs[idx];
        r.state = ReqState::Free;
        if r.pull.is_some() {
            r.pull = None;
        }
        if r.give_back {
            r.recv = Some(RecvBuf::One(std::mem::take(&mut r.data)));
        }
        Self::spend(&mut r.data);
        let recv = r.recv.take();
        self.free_reqs.push(idx as u32);
        recv
    }

    #[inline(always)]
    pub(super) fn complete(&mut self, h: u32, code: Code) {
        let Some(r) = self.req_mut(h) else { return };
        if r.state == ReqState::Done {
            return;
        }
        r.state = ReqState::Done;
        r.code = code;
        if r.kind == ReqKind::Send && !r.give_back {
            Self::spend(&mut r.data);
        }
        if C::REGIONS && r.region != NO_HANDLE {
            self.release_region(h);
        }
        if self.reqs[Request(h).index()].forgotten {
            self.free(h);
        } else {
            self.completed.push_back(h);
        }
    }

    pub(super) fn status_of(&self, r: &Req) -> Status {
        Status {
            code: r.code,
            source: PeerId(r.peer),
            match_info: r.match_info,
            msg_len: r.msg_len,
            xfer_len: r.xfer_len,
            context: r.context,
        }
    }

    /// Whether [`Engine::test`] would answer at once: the request completed, or the
    /// handle is not valid (then `test` says so). Cheap enough for every spin of a wait.
    #[inline(always)]
    pub fn ready(&self, req: Request) -> bool {
        self.req(req.raw())
            .is_none_or(|r| r.state == ReqState::Done)
    }

    /// Completion of a request: its status and, for a receive, the buffer back. The
    /// request is released: its handle becomes stale.
    #[inline]
    pub fn test(&mut self, req: Request) -> Result<Option<(Status, Option<RecvBuf>)>, Error> {
        let r = self.req(req.raw()).ok_or(Error::BadRequest)?;
        if r.state != ReqState::Done {
            return Ok(None);
        }
        let st = self.status_of(r);
        self.unlist_completed(req.raw());
        let buf = self.free(req.raw());
        Ok(Some((st, buf)))
    }

    #[inline]
    pub(super) fn unlist_completed(&mut self, h: u32) {
        // Applications test the oldest or the newest completion, nearly always.
        if self.completed.front() == Some(&h) {
            self.completed.pop_front();
        } else if self.completed.back() == Some(&h) {
            self.completed.pop_back();
        } else if let Some(pos) = self.completed.iter().position(|&x| x == h) {
            self.completed.remove(pos);
        }
    }

    /// The first completed request not yet tested, without releasing it.
    pub fn ipeek(&self) -> Option<Request> {
        self.completed.front().map(|&h| Request(h))
    }

    /// The first completed request whose match info agrees with `match_info` under
    /// `mask`; released as by [`Engine::test`].
    #[allow(clippy::type_complexity)]
    pub fn test_any(
        &mut self,
        match_info: u64,
        mask: u64,
    ) -> Result<Option<(Request, Status, Option<RecvBuf>)>, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        let found = self.completed.iter().copied().find(|&h| {
            self.req(h)
                .is_some_and(|r| r.match_info & mask == match_info)
        });
        match found {
            Some(h) => {
                let (st, buf) = self.test(Request(h))?.ok_or(Error::BadRequest)?;
                Ok(Some((Request(h), st, buf)))
            }
            None => Ok(None),
        }
    }
    /// Cancels a receive not yet matched; gives its buffer back.
    pub fn cancel(&mut self, req: Request) -> Result<RecvBuf, Error> {
        let r = self.req(req.raw()).ok_or(Error::BadRequest)?;
        if r.kind != ReqKind::Recv || r.state != ReqState::Pending {
            return Err(Error::NotCancellable);
        }
        if let Some(pos) = self.posted.iter().position(|&h| h == req.raw()) {
            self.posted.remove(pos);
        }
        Ok(self.free(req.raw()).unwrap_or(RecvBuf::One(Vec::new())))
    }

    /// The application will not test this request: it is released when it completes.
    pub fn forget(&mut self, req: Request) -> Result<(), Error> {
        let r = self.req_mut(req.raw()).ok_or(Error::BadRequest)?;
        r.forgotten = true;
        if r.state == ReqState::Done {
            self.unlist_completed(req.raw());
            self.free(req.raw());
        }
        Ok(())
    }

    /// The per-request context.
    pub fn context(&self, req: Request) -> Result<u64, Error> {
        Ok(self.req(req.raw()).ok_or(Error::BadRequest)?.context)
    }
}

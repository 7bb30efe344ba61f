//! Completions: testing and waiting for requests, the blocking receive (with its
//! direct path that makes no request), peeking and probing. Every wait spins through
//! `progress`; none may sleep, and none may end early but on completion, timeout or the
//! watched peer's loss.

use std::time::{Duration, Instant};

use super::spin::Spin;
use super::{Completion, Endpoint, MxError};
use crate::engine::Codec;
use crate::engine::{self, DirectRecv, Lent, PeerId, RecvBuf, Request, Status};

impl<C: Codec> Endpoint<C> {
    /// Completion of a request, if it completed; the request is released.
    pub fn test(&mut self, r: Request) -> Result<Option<Completion>, MxError> {
        if let Some(c) = self.engine.test(r)? {
            return Ok(Some(c));
        }
        self.progress()?;
        Ok(self.engine.test(r)?)
    }

    /// Receives one message into `buf` and hands the buffer back: [`Endpoint::irecv`]
    /// and [`Endpoint::wait`] in one call, as `MPI_Recv` is. On a lossless transport
    /// (`shm`, `self`) with no other receive posted, it waits without a request, and a
    /// message that fits one frame goes straight from the frame into `buf`.
    ///
    /// On a timeout the receive is given up: if no message was matched to it yet,
    /// nothing is lost (a later message waits as unexpected); a message already
    /// matched and still arriving is dropped when it completes.
    ///
    /// ```
    /// use myrix_mx::{Code, Endpoint, RecvBuf};
    /// use std::time::Duration;
    ///
    /// let t = Duration::from_secs(5);
    /// let mut ep = Endpoint::open("self", 0, 7)?; // an endpoint sending to itself
    /// let me = ep.connect(&ep.addr().clone(), 7, t)?;
    /// ep.send(me, &[b"ping"], 0x10, t)?;
    /// let (st, buf) = ep.recv(RecvBuf::One(vec![0; 16]), 0x10, u64::MAX, t)?;
    /// assert_eq!((st.code, st.xfer_len), (Code::Success, 4));
    /// assert_eq!(&buf.to_vec()[..4], b"ping");
    /// # Ok::<(), myrix_mx::MxError>(())
    /// ```
    pub fn recv(
        &mut self,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        timeout: Duration,
    ) -> Result<(Status, RecvBuf), MxError> {
        if match_info & !mask != 0 {
            return Err(engine::Error::BadMatchMask { match_info, mask }.into());
        }
        let mut buf = buf;
        let mut spin = Spin::new(timeout);
        if self.engine.direct_ok(match_info, mask) {
            let mut d = DirectRecv {
                match_info,
                mask,
                buf,
                done: None,
                slow: false,
            };
            loop {
                self.progress_direct(&mut d)?;
                if let Some(st) = d.done {
                    return Ok((st, d.buf));
                }
                if d.slow {
                    // A frame went the general way: if it left a message for us in the
                    // unexpected queue, the posted receive below takes it, in order.
                    if !self.engine.direct_ok(match_info, mask) {
                        buf = d.buf;
                        break;
                    }
                    d.slow = false;
                }
                if spin.timed_out() {
                    return Err(MxError::Timeout);
                }
                if spin.checkpoint() && self.watched_lost() {
                    return Err(MxError::PeerLost);
                }
            }
        }
        let left = spin.left();
        let r = self.irecv(buf, match_info, mask, 0)?;
        let end = match self.wait(r, left) {
            Ok(Some((st, Some(b)))) => return Ok((st, b)),
            Ok(Some((_, None))) => return Err(engine::Error::BadRequest.into()),
            Ok(None) => MxError::Timeout,
            Err(MxError::PeerLost) => MxError::PeerLost,
            Err(e) => return Err(e),
        };
        if self.engine.cancel(r).is_err() {
            self.engine.forget(r)?;
        }
        Err(end)
    }

    /// Waits up to `timeout` for a request; `None` on timeout (the request stays valid).
    pub fn wait(&mut self, r: Request, timeout: Duration) -> Result<Option<Completion>, MxError> {
        self.spin_until_ready(r, timeout, None)?;
        Ok(self.engine.test(r)?)
    }

    /// Polls until `r` can be tested (true) or `timeout` passes (false), lending `lent`
    /// to every poll.
    pub(super) fn spin_until_ready(
        &mut self,
        r: Request,
        timeout: Duration,
        lent: Lent<'_>,
    ) -> Result<bool, MxError> {
        let mut spin = Spin::new(timeout);
        loop {
            if self.engine.ready(r) {
                return Ok(true);
            }
            self.progress_lent(lent, spin.started())?;
            if spin.timed_out() {
                return Ok(self.engine.ready(r));
            }
            if spin.checkpoint() && self.watched_lost() {
                return Err(MxError::PeerLost);
            }
        }
    }

    /// The peer a [`Endpoint::recv_from`] waits for is gone.
    #[cold]
    fn watched_lost(&self) -> bool {
        self.watch.is_some_and(|p| self.engine.peer_unreachable(p))
    }

    /// [`Endpoint::recv`] of a message expected from `peer`: ends with
    /// [`MxError::PeerLost`] as soon as `peer` is known gone instead of lasting the
    /// whole timeout. Any sender's message that matches is still taken (receives are
    /// not bound to a peer, as in MX).
    pub fn recv_from(
        &mut self,
        peer: PeerId,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        timeout: Duration,
    ) -> Result<(Status, RecvBuf), MxError> {
        if self.engine.peer_unreachable(peer) {
            return Err(MxError::PeerLost);
        }
        self.watch = Some(peer);
        let r = self.recv(buf, match_info, mask, timeout);
        self.watch = None;
        r
    }

    /// Any completed request whose match info agrees under `mask`.
    pub fn test_any(
        &mut self,
        match_info: u64,
        mask: u64,
    ) -> Result<Option<(Request, Status, Option<RecvBuf>)>, MxError> {
        self.progress()?;
        Ok(self.engine.test_any(match_info, mask)?)
    }

    pub fn wait_any(
        &mut self,
        match_info: u64,
        mask: u64,
        timeout: Duration,
    ) -> Result<Option<(Request, Status, Option<RecvBuf>)>, MxError> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(x) = self.test_any(match_info, mask)? {
                return Ok(Some(x));
            }
            if Instant::now() >= end {
                return Ok(None);
            }
        }
    }

    /// The first completed request, without releasing it.
    pub fn ipeek(&mut self) -> Result<Option<Request>, MxError> {
        self.progress()?;
        Ok(self.engine.ipeek())
    }

    pub fn peek(&mut self, timeout: Duration) -> Result<Option<Request>, MxError> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(r) = self.ipeek()? {
                return Ok(Some(r));
            }
            if Instant::now() >= end {
                return Ok(None);
            }
        }
    }

    /// An unexpected message matching, without receiving it.
    pub fn iprobe(&mut self, match_info: u64, mask: u64) -> Result<Option<Status>, MxError> {
        self.progress()?;
        Ok(self.engine.iprobe(match_info, mask)?)
    }

    pub fn probe(
        &mut self,
        match_info: u64,
        mask: u64,
        timeout: Duration,
    ) -> Result<Option<Status>, MxError> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(s) = self.iprobe(match_info, mask)? {
                return Ok(Some(s));
            }
            if Instant::now() >= end {
                return Ok(None);
            }
        }
    }
}

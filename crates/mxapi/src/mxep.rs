//! The `myrix-mx` endpoint under a C endpoint, in either frame layout: myrix's own
//! (shared memory only, or `MYRIX_MX_TRANSPORT=eth`) or Open-MX's (`omx+shm:` and
//! `omx:` boards: peers on other hosts over raw Ethernet). One enum so the rest of the
//! crate calls one type; each method hands the call to the endpoint inside.

use std::time::Duration;

use myrix_mx::engine::UnexpectedHandler;
use myrix_mx::{
    Completion, Endpoint, EndpointAddr, MxError, OmxEndpoint, OmxMxWireEndpoint, PeerId, RecvBuf,
    Request, Stats, Status,
};

pub enum MxEp {
    Mx(Endpoint),
    Omx(OmxEndpoint),
    /// Open-MX's MX-compatible wire mode (`MYRIX_OMX_WIRE=mx`).
    OmxMx(OmxMxWireEndpoint),
}

macro_rules! both {
    ($self:expr, $e:ident => $x:expr) => {
        match $self {
            MxEp::Mx($e) => $x,
            MxEp::Omx($e) => $x,
            MxEp::OmxMx($e) => $x,
        }
    };
}

impl MxEp {
    pub fn addr(&self) -> &EndpointAddr {
        both!(self, e => e.addr())
    }
    pub fn cancel(&mut self, r: Request) -> Result<RecvBuf, MxError> {
        both!(self, e => e.cancel(r))
    }
    pub fn connect(
        &mut self,
        peer: &EndpointAddr,
        key: u32,
        timeout: Duration,
    ) -> Result<PeerId, MxError> {
        both!(self, e => e.connect(peer, key, timeout))
    }
    pub fn iconnect(&mut self, peer: &EndpointAddr, key: u32) -> Result<Request, MxError> {
        both!(self, e => e.iconnect(peer, key))
    }
    pub fn disconnect(&mut self, peer: PeerId) -> Result<(), MxError> {
        both!(self, e => e.disconnect(peer))
    }
    pub fn flush_all(&mut self, timeout: Duration) -> Result<bool, MxError> {
        both!(self, e => e.flush_all(timeout))
    }
    pub fn forget(&mut self, r: Request) -> Result<(), MxError> {
        both!(self, e => e.forget(r))
    }
    pub fn ipeek(&mut self) -> Result<Option<Request>, MxError> {
        both!(self, e => e.ipeek())
    }
    pub fn iprobe(&mut self, match_info: u64, mask: u64) -> Result<Option<Status>, MxError> {
        both!(self, e => e.iprobe(match_info, mask))
    }
    pub fn irecv(
        &mut self,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        both!(self, e => e.irecv(buf, match_info, mask, context))
    }
    pub fn isend(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        both!(self, e => e.isend(peer, segments, match_info, context))
    }
    pub fn issend(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        both!(self, e => e.issend(peer, segments, match_info, context))
    }
    pub fn peer_identity(&self, peer: PeerId) -> Option<(u64, u8)> {
        both!(self, e => e.peer_identity(peer))
    }
    pub fn progress(&mut self) -> Result<usize, MxError> {
        both!(self, e => e.progress())
    }
    pub fn set_unexpected_handler(&mut self, h: Option<UnexpectedHandler>) {
        both!(self, e => e.set_unexpected_handler(h))
    }
    pub fn set_request_timeout(&mut self, t: std::time::Duration) {
        both!(self, e => e.set_request_timeout(t))
    }
    pub fn stats(&self) -> Stats {
        both!(self, e => e.stats())
    }
    pub fn test(&mut self, r: Request) -> Result<Option<Completion>, MxError> {
        both!(self, e => e.test(r))
    }
    #[allow(clippy::type_complexity)]
    pub fn test_any(
        &mut self,
        match_info: u64,
        mask: u64,
    ) -> Result<Option<(Request, Status, Option<RecvBuf>)>, MxError> {
        both!(self, e => e.test_any(match_info, mask))
    }
    pub fn wait(&mut self, r: Request, timeout: Duration) -> Result<Option<Completion>, MxError> {
        both!(self, e => e.wait(r, timeout))
    }
}

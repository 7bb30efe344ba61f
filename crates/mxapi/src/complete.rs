//! Completions: test, wait, test/wait any, peek, probe; and the unexpected handler.
//!
//! Blocking calls poll in slices of [`SLICE`], releasing the endpoint between slices so
//! other threads get their turn and `mx_wakeup` can end the wait (the call then
//! returns `MX_SUCCESS` with `*result = 0`, as on a timeout).

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use myrix_mx::{Code, HandlerAction, RecvBuf, Request, Status};

use crate::addr::{make, timeout};
use crate::endpoint::{code_of, entry, with_ep, Ep, Kind, PeerName, Req, IN_HANDLER};
use crate::init::{guard, lock};
use crate::types::*;

/// How long a blocking call polls before it lets go of the endpoint once.
const SLICE: Duration = Duration::from_millis(20);

/// The context of messages the program's unexpected handler finished: received into
/// nothing, their completions dropped.
const SINK: u64 = u64::MAX;

pub fn status_code(c: Code) -> mx_status_code_t {
    match c {
        Code::Success => st::SUCCESS,
        Code::Truncated => st::TRUNCATED,
        Code::BadKey => st::BAD_KEY,
        Code::NoEndpoint => st::ENDPOINT_CLOSED,
        Code::BadEndpoint => st::BAD_ENDPOINT,
        Code::Unreachable => st::ENDPOINT_UNREACHABLE,
        Code::PeerReset => st::BAD_SESSION,
        Code::Disconnected => st::ABORTED,
    }
}

fn write<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: every pointer passed here is a caller's out-parameter of type `T`,
        // written only when non-NULL.
        unsafe { p.write(v) }
    }
}

impl Ep {
    /// The status of a completed request of the program's.
    fn status_of(&self, q: &Req, s: &Status) -> mx_status_t {
        let (source, match_info) = match q.kind {
            Kind::Send { dest } => (dest, s.match_info),
            Kind::Recv => (self.addr_of(s.source), s.match_info),
            Kind::Connect {
                nic,
                eid,
                match_info,
            } => {
                if s.code == Code::Success {
                    lock(&self.book).insert(s.source, PeerName { nic, eid });
                    (self.addr_of(s.source), match_info)
                } else {
                    (make(nic, eid, self.inst, None, 0), match_info)
                }
            }
        };
        mx_status_t {
            code: status_code(s.code),
            source,
            match_info,
            msg_length: s.msg_len.min(u32::MAX as usize) as u32,
            xfer_length: s.xfer_len.min(u32::MAX as usize) as u32,
            context: q.ctx as *mut c_void,
        }
    }

    /// Reports the completion of `r` (`Some`), dropping it if it is a handler's sink.
    fn complete(&mut self, r: Request, s: &Status, status: *mut mx_status_t) -> bool {
        let Some(&token) = self.by_req.get(&r) else {
            return false;
        };
        let q = self.remove(token).expect("filed under by_req");
        write(status, self.status_of(&q, s));
        true
    }
}

/// Runs `step` until it answers, the timeout passes or `mx_wakeup` is called; then
/// `*result = 0`.
pub(crate) fn blocking(
    endpoint: mx_endpoint_t,
    name: &str,
    ms: u32,
    result: *mut u32,
    mut step: impl FnMut(&mut Ep, Duration) -> Option<mx_return_t>,
) -> mx_return_t {
    let end = Instant::now() + timeout(ms);
    // The wake-up count when the call began: any later mx_wakeup ends it.
    let start = entry(endpoint).map(|e| e.wake.load(Ordering::Acquire));
    loop {
        let mut answer = None;
        let r = with_ep(endpoint, name, |ep, e| {
            if start != Some(e.wake.load(Ordering::Acquire)) {
                write(result, 0);
                answer = Some(ret::SUCCESS);
                return ret::SUCCESS;
            }
            let left = end.saturating_duration_since(Instant::now());
            answer = step(ep, left.min(SLICE));
            if answer.is_none() && left <= SLICE {
                write(result, 0);
                answer = Some(ret::SUCCESS);
            }
            ret::SUCCESS
        });
        if r != ret::SUCCESS {
            return r;
        }
        if let Some(a) = answer {
            return a;
        }
        give_way(endpoint);
    }
}

/// Between two slices of a blocking call: lets threads waiting for the endpoint take
/// it first (for at most a slice), so a call that blocks for ever does not starve
/// the thread that would complete it (or call `mx_wakeup`).
fn give_way(endpoint: mx_endpoint_t) {
    let Some(e) = entry(endpoint) else { return };
    let until = Instant::now() + SLICE;
    while e.want.load(Ordering::Acquire) > 0 && Instant::now() < until {
        std::thread::yield_now();
    }
}

fn token_of(
    ep: &Ep,
    request: *mut mx_request_t,
    what: &str,
) -> Result<(usize, Request), mx_return_t> {
    let t = crate::request::req_token(ep, request, what)?;
    Ok((t, ep.reqs[&t].r))
}

#[no_mangle]
pub unsafe extern "C" fn mx_test(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_test", || {
        with_ep(endpoint, "mx_test", |ep, _| {
            let (_, r) = match token_of(ep, request, "mx_test") {
                Ok(x) => x,
                Err(e) => return e,
            };
            match ep.mx.test(r) {
                Ok(Some((s, _))) => {
                    let done = ep.complete(r, &s, status);
                    write(result, done as u32);
                    ret::SUCCESS
                }
                Ok(None) => {
                    write(result, 0);
                    ret::SUCCESS
                }
                Err(e) => ep.fail(code_of(&e), &format!("mx_test: {e}")),
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_wait(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
    timeout_ms: u32,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_wait", || {
        blocking(endpoint, "mx_wait", timeout_ms, result, |ep, slice| {
            let (_, r) = match token_of(ep, request, "mx_wait") {
                Ok(x) => x,
                Err(e) => return Some(e),
            };
            match ep.mx.wait(r, slice) {
                Ok(Some((s, _))) => {
                    let done = ep.complete(r, &s, status);
                    write(result, done as u32);
                    Some(ret::SUCCESS)
                }
                Ok(None) => None,
                Err(e) => Some(ep.fail(code_of(&e), &format!("mx_wait: {e}"))),
            }
        })
    })
}

/// One look for a completed request matching `match_info` under `mask`.
fn any_once(
    ep: &mut Ep,
    match_info: u64,
    mask: u64,
    status: *mut mx_status_t,
    what: &str,
) -> Option<mx_return_t> {
    loop {
        match ep.mx.test_any(match_info, mask) {
            Ok(Some((r, s, _))) => {
                if ep.complete(r, &s, status) {
                    return Some(ret::SUCCESS);
                }
                // A handler's sink: dropped; look again.
            }
            Ok(None) => return None,
            Err(e) => return Some(ep.fail(code_of(&e), &format!("{what}: {e}"))),
        }
    }
}

fn check_mask(ep: &Ep, match_info: u64, mask: u64, what: &str) -> Result<(), mx_return_t> {
    if match_info & !mask != 0 {
        return Err(ep.fail(
            ret::BAD_MATCH_MASK,
            &format!("{what}: match {match_info:#x} has bits outside mask {mask:#x}"),
        ));
    }
    ep.check_context_mask(mask, what)
}

#[no_mangle]
pub unsafe extern "C" fn mx_test_any(
    endpoint: mx_endpoint_t,
    match_info: u64,
    match_mask: u64,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_test_any", || {
        with_ep(endpoint, "mx_test_any", |ep, _| {
            if let Err(e) = check_mask(ep, match_info, match_mask, "mx_test_any") {
                return e;
            }
            match any_once(ep, match_info, match_mask, status, "mx_test_any") {
                Some(ret::SUCCESS) => {
                    write(result, 1);
                    ret::SUCCESS
                }
                Some(e) => e,
                None => {
                    write(result, 0);
                    ret::SUCCESS
                }
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_wait_any(
    endpoint: mx_endpoint_t,
    timeout_ms: u32,
    match_info: u64,
    match_mask: u64,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_wait_any", || {
        blocking(endpoint, "mx_wait_any", timeout_ms, result, |ep, slice| {
            if let Err(e) = check_mask(ep, match_info, match_mask, "mx_wait_any") {
                return Some(e);
            }
            let end = Instant::now() + slice;
            loop {
                match any_once(ep, match_info, match_mask, status, "mx_wait_any") {
                    Some(ret::SUCCESS) => {
                        write(result, 1);
                        return Some(ret::SUCCESS);
                    }
                    Some(e) => return Some(e),
                    None if Instant::now() >= end => return None,
                    None => {}
                }
            }
        })
    })
}

/// One look for any completed request of the program's.
fn peek_once(ep: &mut Ep, request: *mut mx_request_t) -> Result<bool, mx_return_t> {
    loop {
        let r = match ep.mx.ipeek() {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(false),
            Err(e) => return Err(ep.fail(code_of(&e), &format!("mx_ipeek: {e}"))),
        };
        if let Some(&token) = ep.by_req.get(&r) {
            write(request, token as mx_request_t);
            return Ok(true);
        }
        // A handler's sink at the front: release it and look again.
        let _ = ep.mx.test(r);
    }
}

#[no_mangle]
pub unsafe extern "C" fn mx_ipeek(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_ipeek", || {
        with_ep(endpoint, "mx_ipeek", |ep, _| {
            if request.is_null() {
                return ep.fail(ret::BAD_REQUEST, "mx_ipeek: NULL request pointer");
            }
            match peek_once(ep, request) {
                Ok(found) => {
                    write(result, found as u32);
                    ret::SUCCESS
                }
                Err(e) => e,
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_peek(
    endpoint: mx_endpoint_t,
    timeout_ms: u32,
    request: *mut mx_request_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_peek", || {
        blocking(endpoint, "mx_peek", timeout_ms, result, |ep, slice| {
            if request.is_null() {
                return Some(ep.fail(ret::BAD_REQUEST, "mx_peek: NULL request pointer"));
            }
            let end = Instant::now() + slice;
            loop {
                match peek_once(ep, request) {
                    Ok(true) => {
                        write(result, 1);
                        return Some(ret::SUCCESS);
                    }
                    Ok(false) if Instant::now() >= end => return None,
                    Ok(false) => {}
                    Err(e) => return Some(e),
                }
            }
        })
    })
}

fn probe_once(
    ep: &mut Ep,
    match_info: u64,
    mask: u64,
    status: *mut mx_status_t,
) -> Result<bool, mx_return_t> {
    match ep.mx.iprobe(match_info, mask) {
        Ok(Some(s)) => {
            let st = mx_status_t {
                code: st::SUCCESS,
                source: ep.addr_of(s.source),
                match_info: s.match_info,
                msg_length: s.msg_len.min(u32::MAX as usize) as u32,
                xfer_length: s.msg_len.min(u32::MAX as usize) as u32,
                context: std::ptr::null_mut(),
            };
            write(status, st);
            Ok(true)
        }
        Ok(None) => Ok(false),
        Err(e) => Err(ep.fail(code_of(&e), &format!("mx_iprobe: {e}"))),
    }
}

#[no_mangle]
pub unsafe extern "C" fn mx_iprobe(
    endpoint: mx_endpoint_t,
    match_info: u64,
    match_mask: u64,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_iprobe", || {
        with_ep(endpoint, "mx_iprobe", |ep, _| {
            if let Err(e) = check_mask(ep, match_info, match_mask, "mx_iprobe") {
                return e;
            }
            match probe_once(ep, match_info, match_mask, status) {
                Ok(found) => {
                    write(result, found as u32);
                    ret::SUCCESS
                }
                Err(e) => e,
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_probe(
    endpoint: mx_endpoint_t,
    timeout_ms: u32,
    match_info: u64,
    match_mask: u64,
    status: *mut mx_status_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_probe", || {
        blocking(endpoint, "mx_probe", timeout_ms, result, |ep, slice| {
            if let Err(e) = check_mask(ep, match_info, match_mask, "mx_probe") {
                return Some(e);
            }
            let end = Instant::now() + slice;
            loop {
                match probe_once(ep, match_info, match_mask, status) {
                    Ok(true) => {
                        write(result, 1);
                        return Some(ret::SUCCESS);
                    }
                    Ok(false) if Instant::now() >= end => return None,
                    Ok(false) => {}
                    Err(e) => return Some(e),
                }
            }
        })
    })
}

/// The program's handler and context, carried into the engine's handler.
struct CHandler {
    f: unsafe extern "C" fn(*mut c_void, mx_endpoint_addr_t, u64, u32, *mut c_void) -> u32,
    ctx: usize,
}

/// Calls the program's handler for each unexpected message, before it is queued.
/// `data_if_available` is always NULL (the data is not at hand when the handler
/// runs); `MX_RECV_FINISHED` drops the message.
#[no_mangle]
pub unsafe extern "C" fn mx_register_unexp_handler(
    endpoint: mx_endpoint_t,
    handler: mx_unexp_handler_t,
    context: *mut c_void,
) -> mx_return_t {
    guard("mx_register_unexp_handler", || {
        with_ep(endpoint, "mx_register_unexp_handler", |ep, _| {
            let Some(f) = handler else {
                ep.mx.set_unexpected_handler(None);
                return ret::SUCCESS;
            };
            let h = CHandler {
                f,
                ctx: context as usize,
            };
            let book = ep.book.clone();
            let (inst, nic) = (ep.inst, ep.nic);
            ep.mx.set_unexpected_handler(Some(Box::new(move |info| {
                let name = lock(&book).by_id.get(&info.source).copied();
                let name = name.unwrap_or(PeerName { nic, eid: 0 });
                let source = make(name.nic, name.eid, inst, Some(info.source), 0);
                let len = info.msg_len.min(u32::MAX as usize) as u32;
                IN_HANDLER.with(|c| c.set(true));
                // SAFETY: the program registered `f` for this endpoint with `ctx`; it
                // gets an address by value and a NULL data pointer.
                let action = unsafe {
                    (h.f)(
                        h.ctx as *mut c_void,
                        source,
                        info.match_info,
                        len,
                        std::ptr::null_mut(),
                    )
                };
                IN_HANDLER.with(|c| c.set(false));
                if action == MX_RECV_FINISHED {
                    HandlerAction::Receive {
                        buf: RecvBuf::One(Vec::new()),
                        context: SINK,
                    }
                } else {
                    HandlerAction::Continue
                }
            })));
            ret::SUCCESS
        })
    })
}

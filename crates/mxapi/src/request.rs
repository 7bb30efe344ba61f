//! Sends from and receives into the caller's segments; cancelling, forgetting and
//! the context of requests.
//!
//! A send's segments are copied when it is posted (as `myrix-mx`'s `isend` does), so
//! they may be reused at once (`mx_ibuffered` says so). A receive lands straight in
//! the caller's memory: one segment through [`myrix_mx::raw::RawRecv`], several
//! through [`Scatter`], which fills them in order.

use std::ffi::c_void;

use myrix_mx::raw::RawRecv;
use myrix_mx::{RecvBuf, RecvTarget};

use crate::endpoint::{code_of, entry_of_inst, with_ep, Ep, Kind};
use crate::init::{fail, guard, lock, need_init};
use crate::types::*;

/// Several segments of caller memory, filled in order as one buffer.
#[derive(Debug)]
pub struct Scatter {
    /// Each segment's start and length; `starts[i]` is its offset in the message.
    segs: Vec<(*mut u8, usize)>,
    starts: Vec<usize>,
    len: usize,
}

// SAFETY: a `Scatter` is the only path to its segments while the receive lives (the
// MX contract for a posted receive's buffers), so moving it between threads moves
// that exclusive access with it.
unsafe impl Send for Scatter {}

impl Scatter {
    /// # Safety
    /// Each segment must be valid for writes of its length and untouched by anything
    /// else until the receive completes, is cancelled or its endpoint closes.
    pub unsafe fn new(segs: Vec<(*mut u8, usize)>) -> Scatter {
        let mut starts = Vec::with_capacity(segs.len());
        let mut len = 0;
        for s in &segs {
            starts.push(len);
            len += s.1;
        }
        Scatter { segs, starts, len }
    }
}

impl RecvTarget for Scatter {
    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&mut self, offset: usize, data: &[u8]) {
        let end = offset.checked_add(data.len()).expect("offset overflows");
        assert!(end <= self.len, "write past the caller's segments");
        // The first segment holding `offset`, then on through the rest.
        let mut i = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let (ptr, len) = self.segs[i];
            let within = at - self.starts[i];
            let n = (len - within).min(rest.len());
            if n > 0 {
                // SAFETY: `ptr..ptr + len` is valid for writes and ours alone (`new`'s
                // contract) and `within + n <= len`; `rest` is a Rust slice, which
                // cannot overlap memory only this target may touch.
                unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), ptr.add(within), n) };
            }
            rest = &rest[n..];
            at += n;
            i += 1;
        }
    }
}

/// The caller's segment list, checked: `MX_BAD_SEG_CNT` over [`MX_MAX_SEGMENTS`],
/// `MX_BAD_SEG_LIST` for a NULL list with segments, `MX_BAD_SEG_MEM` for a NULL
/// segment with a length.
fn segments(
    ep: &Ep,
    list: *const mx_segment_t,
    count: u32,
    what: &str,
) -> Result<Vec<(*mut u8, usize)>, mx_return_t> {
    if count > MX_MAX_SEGMENTS {
        return Err(ep.fail(
            ret::BAD_SEG_CNT,
            &format!("{what}: {count} segments (at most {MX_MAX_SEGMENTS})"),
        ));
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    if list.is_null() {
        return Err(ep.fail(ret::BAD_SEG_LIST, &format!("{what}: NULL segment list")));
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        // SAFETY: the caller passes `count` segments at `list` (non-NULL, checked).
        let s = unsafe { list.add(i).read_unaligned() };
        let len = s.segment_length as usize;
        if s.segment_ptr.is_null() && len > 0 {
            return Err(ep.fail(
                ret::BAD_SEG_MEM,
                &format!("{what}: segment {i} is NULL with {len} bytes"),
            ));
        }
        out.push((s.segment_ptr.cast::<u8>(), len));
    }
    Ok(out)
}

// MX's seven arguments, and which of the two sends.
#[allow(clippy::too_many_arguments)]
fn send(
    endpoint: mx_endpoint_t,
    list: *const mx_segment_t,
    count: u32,
    dest: mx_endpoint_addr_t,
    match_info: u64,
    context: *mut c_void,
    request: *mut mx_request_t,
    synchronous: bool,
) -> mx_return_t {
    let what = if synchronous { "mx_issend" } else { "mx_isend" };
    with_ep(endpoint, what, |ep, _| {
        if request.is_null() {
            return ep.fail(ret::BAD_REQUEST, &format!("{what}: NULL request pointer"));
        }
        let segs = match segments(ep, list, count, what) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let peer = match ep.resolve(&dest, what) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let slices: Vec<&[u8]> = segs
            .iter()
            .filter(|s| s.1 > 0)
            // SAFETY: each segment is valid for reads of its length for this call (the
            // caller's contract; NULL ones with a length were refused), and the send
            // copies the bytes before returning.
            .map(|&(p, n)| unsafe { std::slice::from_raw_parts(p.cast_const(), n) })
            .collect();
        let posted = if synchronous {
            ep.mx.issend(peer, &slices, match_info, 0)
        } else {
            ep.mx.isend(peer, &slices, match_info, 0)
        };
        match posted {
            Ok(r) => {
                let dest = ep.addr_of(peer);
                let h = ep.add(r, Kind::Send { dest }, context);
                // SAFETY: `request` is non-NULL (checked) and points to the caller's handle.
                unsafe { request.write(h) };
                ret::SUCCESS
            }
            Err(e) => ep.fail(code_of(&e), &format!("{what}: {e}")),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_isend(
    endpoint: mx_endpoint_t,
    segments_list: *mut mx_segment_t,
    segments_count: u32,
    dest_endpoint: mx_endpoint_addr_t,
    match_info: u64,
    context: *mut c_void,
    request: *mut mx_request_t,
) -> mx_return_t {
    guard("mx_isend", || {
        send(
            endpoint,
            segments_list,
            segments_count,
            dest_endpoint,
            match_info,
            context,
            request,
            false,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_issend(
    endpoint: mx_endpoint_t,
    segments_list: *mut mx_segment_t,
    segments_count: u32,
    dest_endpoint: mx_endpoint_addr_t,
    match_info: u64,
    context: *mut c_void,
    request: *mut mx_request_t,
) -> mx_return_t {
    guard("mx_issend", || {
        send(
            endpoint,
            segments_list,
            segments_count,
            dest_endpoint,
            match_info,
            context,
            request,
            true,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_irecv(
    endpoint: mx_endpoint_t,
    segments_list: *mut mx_segment_t,
    segments_count: u32,
    match_info: u64,
    match_mask: u64,
    context: *mut c_void,
    request: *mut mx_request_t,
) -> mx_return_t {
    guard("mx_irecv", || {
        with_ep(endpoint, "mx_irecv", |ep, _| {
            if request.is_null() {
                return ep.fail(ret::BAD_REQUEST, "mx_irecv: NULL request pointer");
            }
            if match_info & !match_mask != 0 {
                return ep.fail(
                    ret::BAD_MATCH_MASK,
                    &format!(
                        "mx_irecv: match {match_info:#x} has bits outside mask {match_mask:#x}"
                    ),
                );
            }
            if let Err(r) = ep.check_context_mask(match_mask, "mx_irecv") {
                return r;
            }
            let segs = match segments(ep, segments_list, segments_count, "mx_irecv") {
                Ok(s) => s,
                Err(r) => return r,
            };
            let buf = match segs.as_slice() {
                [] => RecvBuf::One(Vec::new()),
                // SAFETY: MX's contract for a posted receive: the segment stays valid
                // and the program leaves it alone until the receive completes, is
                // cancelled, or the endpoint closes.
                [(p, n)] => unsafe { RawRecv::recv_buf(*p, *n) },
                // SAFETY: as above, for every segment.
                _ => RecvBuf::target(unsafe { Scatter::new(segs) }),
            };
            match ep.mx.irecv(buf, match_info, match_mask, 0) {
                Ok(r) => {
                    let h = ep.add(r, Kind::Recv, context);
                    // SAFETY: `request` is non-NULL (checked) and points to the caller's handle.
                    unsafe { request.write(h) };
                    ret::SUCCESS
                }
                Err(e) => ep.fail(code_of(&e), &format!("mx_irecv: {e}")),
            }
        })
    })
}

/// The request handle at `request`, checked against the endpoint's table.
pub(crate) fn req_token(
    ep: &Ep,
    request: *const mx_request_t,
    what: &str,
) -> Result<usize, mx_return_t> {
    if request.is_null() {
        return Err(ep.fail(ret::BAD_REQUEST, &format!("{what}: NULL request pointer")));
    }
    // SAFETY: `request` is non-NULL and points to the caller's handle.
    let token = unsafe { request.read() } as usize;
    if ep.reqs.contains_key(&token) {
        Ok(token)
    } else {
        Err(ep.fail(
            ret::BAD_REQUEST,
            &format!("{what}: not a request of this endpoint"),
        ))
    }
}

#[no_mangle]
pub unsafe extern "C" fn mx_cancel(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_cancel", || {
        with_ep(endpoint, "mx_cancel", |ep, _| {
            let token = match req_token(ep, request, "mx_cancel") {
                Ok(t) => t,
                Err(r) => return r,
            };
            let q = ep.reqs[&token];
            let cancelled = match q.kind {
                Kind::Send { .. } => {
                    return ep.fail(
                        ret::CANCEL_NOT_SUPPORTED,
                        "mx_cancel: a send cannot be cancelled",
                    )
                }
                Kind::Connect { .. } => ep.mx.forget(q.r).is_ok(),
                // A receive already matched (or done) is not cancelled: it completes.
                Kind::Recv => ep.mx.cancel(q.r).is_ok(),
            };
            if cancelled {
                ep.remove(token);
            }
            if !result.is_null() {
                // SAFETY: `result` is non-NULL and points to the caller's u32.
                unsafe { result.write(cancelled as u32) };
            }
            ret::SUCCESS
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_forget(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
) -> mx_return_t {
    guard("mx_forget", || {
        with_ep(endpoint, "mx_forget", |ep, _| {
            let token = match req_token(ep, request, "mx_forget") {
                Ok(t) => t,
                Err(r) => return r,
            };
            let q = ep.reqs[&token];
            match ep.mx.forget(q.r) {
                Ok(()) => {
                    ep.remove(token);
                    ret::SUCCESS
                }
                Err(e) => ep.fail(code_of(&e), &format!("mx_forget: {e}")),
            }
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn mx_context(
    request: *mut mx_request_t,
    context: *mut *mut c_void,
) -> mx_return_t {
    guard("mx_context", || {
        if let Err(e) = need_init("mx_context") {
            return e;
        }
        if request.is_null() || context.is_null() {
            return fail(ret::BAD_REQUEST, "mx_context: NULL pointer");
        }
        // SAFETY: `request` is non-NULL and points to the caller's handle.
        let token = unsafe { request.read() } as usize;
        let Some(e) = entry_of_inst((token >> 40) as u16) else {
            return fail(ret::BAD_REQUEST, "mx_context: not a request");
        };
        let ep = lock(&e.ep);
        match ep.reqs.get(&token) {
            Some(q) => {
                // SAFETY: `context` is non-NULL (checked) and points to the caller's pointer.
                unsafe { context.write(q.ctx as *mut c_void) };
                ret::SUCCESS
            }
            None => ep.fail(ret::BAD_REQUEST, "mx_context: not a request"),
        }
    })
}

/// Sends copy their data when posted: a send's buffers are free at once.
#[no_mangle]
pub unsafe extern "C" fn mx_ibuffered(
    endpoint: mx_endpoint_t,
    request: *mut mx_request_t,
    result: *mut u32,
) -> mx_return_t {
    guard("mx_ibuffered", || {
        with_ep(endpoint, "mx_ibuffered", |ep, _| {
            let token = match req_token(ep, request, "mx_ibuffered") {
                Ok(t) => t,
                Err(r) => return r,
            };
            let buffered = matches!(ep.reqs[&token].kind, Kind::Send { .. });
            if !result.is_null() {
                // SAFETY: `result` is non-NULL and points to the caller's u32.
                unsafe { result.write(buffered as u32) };
            }
            ret::SUCCESS
        })
    })
}

/// With no request (NULL), the endpoint's request timeout from now on, as Open-MX
/// sets its endpoint's default (10 s unless set; 0 ms is taken as 1 ms). A request's
/// own value is checked and accepted but not applied: the engine times out frames per
/// peer, not per request, so that request keeps the endpoint's timeout.
#[no_mangle]
pub extern "C" fn mx_set_request_timeout(
    endpoint: mx_endpoint_t,
    request: mx_request_t,
    ms: u32,
) -> mx_return_t {
    guard("mx_set_request_timeout", || {
        with_ep(endpoint, "mx_set_request_timeout", |ep, _| {
            if request.is_null() {
                let t = std::time::Duration::from_millis(u64::from(ms.max(1)));
                ep.mx.set_request_timeout(t);
                return ret::SUCCESS;
            }
            if !ep.reqs.contains_key(&(request as usize)) {
                return ep.fail(
                    ret::BAD_REQUEST,
                    "mx_set_request_timeout: not a request of this endpoint",
                );
            }
            ret::SUCCESS
        })
    })
}

/// Unimplemented calls, present for linking: they say so and abort, as Open-MX's do.
fn unimplemented(name: &str) -> ! {
    eprintln!("MX: {name} is not implemented");
    std::process::abort()
}

#[no_mangle]
pub extern "C" fn mx_register_unexp_callback(
    _ep: mx_endpoint_t,
    _cb: mx_matching_callback_t,
    _ctx: *mut c_void,
) -> mx_return_t {
    unimplemented("mx_register_unexp_callback")
}

#[no_mangle]
pub extern "C" fn mx_iput(
    _ep: mx_endpoint_t,
    _local: *mut c_void,
    _len: u32,
    _dest: mx_endpoint_addr_t,
    _remote: u64,
    _ctx: *mut c_void,
    _req: *mut mx_request_t,
) -> mx_return_t {
    unimplemented("mx_iput")
}

#[no_mangle]
pub extern "C" fn mx_iget(
    _ep: mx_endpoint_t,
    _local: *mut c_void,
    _len: u32,
    _dest: mx_endpoint_addr_t,
    _remote: u64,
    _ctx: *mut c_void,
    _req: *mut mx_request_t,
) -> mx_return_t {
    unimplemented("mx_iget")
}

#[no_mangle]
pub extern "C" fn mx_buffered(
    _ep: mx_endpoint_t,
    _req: *mut mx_request_t,
    _timeout: u32,
    _result: *mut u32,
) -> mx_return_t {
    unimplemented("mx_buffered")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_fills_segments_in_order() {
        let mut a = [0u8; 3];
        let mut b = [0u8; 0];
        let mut c = [0u8; 4];
        // SAFETY: the arrays outlive `s` and are not touched while it lives.
        let mut s = unsafe {
            Scatter::new(vec![
                (a.as_mut_ptr(), a.len()),
                (b.as_mut_ptr(), 0),
                (c.as_mut_ptr(), c.len()),
            ])
        };
        assert_eq!(s.len(), 7);
        s.write_at(0, b"ab");
        s.write_at(2, b"cde");
        s.write_at(5, b"fg");
        drop(s);
        assert_eq!((&a, &c), (b"abc", b"defg"));
    }
}

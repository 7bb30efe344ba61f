//! The rest of point-to-point from C, over `p2p`'s requests: probes and matched
//! probes, send-receive, cancel and request queries, `MPI_Get_count`/`_elements`,
//! buffered-send space, and persistent requests.

use crate::abi::*;
use crate::comm;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::p2p::*;
use crate::request::read_reqs;
use crate::runtime;
use myrix_mpi::p2p::SendMode;
use std::os::raw::{c_int, c_void};

/// Probe / Iprobe / Improbe / Mprobe: `(status, message)` of a matching message,
/// `None` when there is none yet (nonblocking forms).
///
/// # Safety
/// No pointer is touched here.
unsafe fn probe(
    source: c_int,
    tag: c_int,
    comm_h: MPI_Comm,
    block: bool,
    matched: bool,
    name: &str,
) -> Result<Option<(CStatus, MPI_Message)>, c_int> {
    let c = comm::lookup(comm_h, name)?;
    let tag = recv_tag(tag)?;
    let Some(src) = recv_peer(&c, source)? else {
        return Ok(Some((CStatus::empty(), MPI_MESSAGE_NO_PROC)));
    };
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let mut out = None;
        let mut once = !block;
        spin_until(p, |p| {
            if matched {
                if let Some((m, s)) = p
                    .engine
                    .improbe(src, c.ctx, tag)
                    .map_err(|e| report(name, &e))?
                {
                    let st = cstatus(&c.ranks, &s);
                    let h = p
                        .msgs
                        .insert(CMsg {
                            msg: m,
                            ranks: c.ranks.clone(),
                        })
                        .ok_or(MPI_ERR_NO_MEM)?;
                    out = Some((st, h));
                }
            } else if let Some(s) = p
                .engine
                .iprobe(src, c.ctx, tag)
                .map_err(|e| report(name, &e))?
            {
                out = Some((cstatus(&c.ranks, &s), MPI_MESSAGE_NULL));
            }
            let stop = out.is_some() || once;
            once = false;
            Ok(stop)
        })?;
        Ok(out)
    })
}

mpi_fn! {
    fn MPI_Probe / PMPI_Probe(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { probe(source, tag, comm, true, false, "MPI_Probe") }
            .map(|o| o.map(|(s, _)| unsafe { s.store(status) }).unwrap_or(()));
        finish(comm, "MPI_Probe", r)
    }
}

mpi_fn! {
    fn MPI_Iprobe / PMPI_Iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        // SAFETY: nothing touched.
        let r = unsafe { probe(source, tag, comm, false, false, "MPI_Iprobe") }.and_then(|o| {
            if let Some((s, _)) = o {
                // SAFETY: status is NULL or an MPI_Status.
                unsafe { s.store(status) };
            }
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(o.is_some())) }
        });
        finish(comm, "MPI_Iprobe", r)
    }
}

mpi_fn! {
    fn MPI_Mprobe / PMPI_Mprobe(source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: nothing touched.
        let r = unsafe { probe(source, tag, comm, true, true, "MPI_Mprobe") }.and_then(|o| {
            let (s, m) = o.unwrap_or((CStatus::empty(), MPI_MESSAGE_NO_PROC));
            // SAFETY: status is NULL or an MPI_Status.
            unsafe { s.store(status) };
            // SAFETY: message is NULL or an MPI_Message.
            unsafe { put(message, m) }
        });
        finish(comm, "MPI_Mprobe", r)
    }
}

mpi_fn! {
    fn MPI_Improbe / PMPI_Improbe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: nothing touched.
        let r = unsafe { probe(source, tag, comm, false, true, "MPI_Improbe") }.and_then(|o| {
            if let Some((s, m)) = o {
                // SAFETY: status is NULL or an MPI_Status.
                unsafe { s.store(status) };
                // SAFETY: message is NULL or an MPI_Message.
                unsafe { put(message, m)? };
            }
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(o.is_some())) }
        });
        finish(comm, "MPI_Improbe", r)
    }
}

/// Starts receiving a matched message; the message handle becomes
/// MPI_MESSAGE_NULL.
///
/// # Safety
/// `buf` holds `count` elements of `dt`; `message` is valid for an MPI_Message.
unsafe fn start_mrecv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
    name: &str,
) -> Result<MPI_Request, c_int> {
    if message.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let count = check_count(count)?;
    let dt = p2p_type(dt, count)?;
    // SAFETY: non-NULL; valid by the contract.
    let m = unsafe { message.read() };
    let h = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        if m == MPI_MESSAGE_NO_PROC {
            return insert_ready(p, CStatus::empty());
        }
        let cm = p.msgs.remove(m).ok_or(MPI_ERR_REQUEST)?;
        // SAFETY: the contract for buf, forwarded.
        unsafe { mrecv(p, cm, buf.cast(), count, dt, name) }
    })?;
    // SAFETY: as above.
    unsafe { message.write(MPI_MESSAGE_NULL) };
    Ok(h)
}

mpi_fn! {
    fn MPI_Mrecv / PMPI_Mrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for every pointer.
        let r = unsafe {
            start_mrecv(buf, count, datatype, message, "MPI_Mrecv")
                .and_then(|mut h| wait_handle(&mut h, status, "MPI_Mrecv"))
        };
        finish(MPI_COMM_WORLD, "MPI_Mrecv", r)
    }
}

mpi_fn! {
    fn MPI_Imrecv / PMPI_Imrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: the C contract for every pointer.
            unsafe { start_mrecv(buf, count, datatype, message, "MPI_Imrecv").and_then(|h| put(request, h)) }
        };
        finish(MPI_COMM_WORLD, "MPI_Imrecv", r)
    }
}

/// # Safety
/// The C contract for both buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: MPI_Datatype,
    source: c_int,
    rtag: c_int,
    comm_h: MPI_Comm,
    status: *mut MPI_Status,
    name: &str,
) -> Result<(), c_int> {
    // SAFETY: forwarded.
    let mut rh = unsafe { start_recv(rbuf, rcount, rdt, source, rtag, comm_h, name, false)? };
    let a = SendArgs {
        buf: sbuf,
        count: scount,
        dt: sdt,
        dest,
        tag: stag,
        comm: comm_h,
        mode: SendMode::Standard,
        buffered: false,
        name,
    };
    // SAFETY: forwarded.
    let mut sh = unsafe { start_send(&a)? };
    // SAFETY: our handles; status by the contract.
    unsafe {
        wait_handle(&mut sh, std::ptr::null_mut(), name)?;
        wait_handle(&mut rh, status, name)
    }
}

mpi_fn! {
    fn MPI_Sendrecv / PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for every pointer.
        let r = unsafe { sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status, "MPI_Sendrecv") };
        finish(comm, "MPI_Sendrecv", r)
    }
}

mpi_fn! {
    /// Sends the buffer's contents and receives into it: the outgoing data is
    /// packed into a copy first.
    fn MPI_Sendrecv_replace / PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let r = (|| {
            let n = check_count(count)?;
            let dt = p2p_type(datatype, n)?;
            let len = dt.size().checked_mul(n).ok_or(MPI_ERR_COUNT)?;
            let mut copy = vec![0u8; len];
            // SAFETY: buf holds count elements (the C contract).
            unsafe { dt.pack(buf.cast(), n, &mut copy) };
            // SAFETY: copy is packed bytes; buf by the contract.
            unsafe { sendrecv(copy.as_ptr().cast(), len as c_int, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag, comm, status, "MPI_Sendrecv_replace") }
        })();
        finish(comm, "MPI_Sendrecv_replace", r)
    }
}

mpi_fn! {
    fn MPI_Cancel / PMPI_Cancel(request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL; valid by the contract.
            let h = unsafe { request.read() };
            runtime::with("MPI_Cancel", |rt| cancel(p2p(rt)?, h))
        };
        finish(MPI_COMM_WORLD, "MPI_Cancel", r)
    }
}

mpi_fn! {
    fn MPI_Request_free / PMPI_Request_free(request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL; valid by the contract.
            let h = unsafe { request.read() };
            runtime::with("MPI_Request_free", |rt| free(p2p(rt)?, h)).and_then(|()| {
                // SAFETY: as above.
                unsafe { put(request, MPI_REQUEST_NULL) }
            })
        };
        finish(MPI_COMM_WORLD, "MPI_Request_free", r)
    }
}

mpi_fn! {
    fn MPI_Request_get_status / PMPI_Request_get_status(request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let r = runtime::with("MPI_Request_get_status", |rt| peek(p2p(rt)?, request)).and_then(|o| {
            if let Some(s) = o {
                // SAFETY: status is NULL or an MPI_Status.
                unsafe { s.store(status) };
            }
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(o.is_some())) }
        });
        finish(MPI_COMM_WORLD, "MPI_Request_get_status", r)
    }
}

mpi_fn! {
    fn MPI_Test_cancelled / PMPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
        let r = if status.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL; an MPI_Status by the contract.
            let c = unsafe { (*status).MPI_internal[2] } != 0;
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(c)) }
        };
        finish(MPI_COMM_WORLD, "MPI_Test_cancelled", r)
    }
}

/// `(bytes, datatype)` of a status query.
///
/// # Safety
/// `status` is NULL or an MPI_Status.
unsafe fn status_arg(
    status: *const MPI_Status,
    dt: MPI_Datatype,
) -> Result<(usize, std::sync::Arc<myrix_mpi::datatype::Datatype>), c_int> {
    if status.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL; an MPI_Status by the contract.
    let bytes = status_bytes(unsafe { &*status });
    Ok((bytes, datatype::lookup(dt)?))
}

mpi_fn! {
    fn MPI_Get_count / PMPI_Get_count(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
        // SAFETY: the C contract for both pointers.
        let r = unsafe { status_arg(status, datatype) }.and_then(|(bytes, dt)| {
            let n = match dt.size() {
                0 if bytes == 0 => 0,
                0 => MPI_UNDEFINED,
                s if bytes % s == 0 => c_int::try_from(bytes / s).unwrap_or(MPI_UNDEFINED),
                _ => MPI_UNDEFINED,
            };
            // SAFETY: count is NULL or an int.
            unsafe { put(count, n) }
        });
        finish(MPI_COMM_WORLD, "MPI_Get_count", r)
    }
}

mpi_fn! {
    fn MPI_Get_elements / PMPI_Get_elements(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
        // SAFETY: the C contract for both pointers.
        let r = unsafe { status_arg(status, datatype) }.and_then(|(bytes, dt)| {
            let n = dt.elements(bytes).and_then(|n| c_int::try_from(n).ok()).unwrap_or(MPI_UNDEFINED);
            // SAFETY: count is NULL or an int.
            unsafe { put(count, n) }
        });
        finish(MPI_COMM_WORLD, "MPI_Get_elements", r)
    }
}

mpi_fn! {
    fn MPI_Get_elements_x / PMPI_Get_elements_x(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        // SAFETY: the C contract for both pointers.
        let r = unsafe { status_arg(status, datatype) }.and_then(|(bytes, dt)| {
            let n = dt.elements(bytes).map_or(MPI_UNDEFINED as MPI_Count, |n| n as MPI_Count);
            // SAFETY: count is NULL or an MPI_Count.
            unsafe { put(count, n) }
        });
        finish(MPI_COMM_WORLD, "MPI_Get_elements_x", r)
    }
}

macro_rules! send_init_fns {
    ($($name:ident / $pname:ident : $mode:expr, $buffered:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
                let r = if request.is_null() {
                    Err(MPI_ERR_ARG)
                } else {
                    persistent(buf.cast_mut(), count, datatype, dest, tag, comm, true, $mode, $buffered, stringify!($name))
                        // SAFETY: request is non-NULL and an MPI_Request.
                        .and_then(|h| unsafe { put(request, h) })
                };
                finish(comm, stringify!($name), r)
            }
        }
    )*};
}

send_init_fns! {
    MPI_Send_init / PMPI_Send_init: SendMode::Standard, false;
    MPI_Ssend_init / PMPI_Ssend_init: SendMode::Sync, false;
    MPI_Rsend_init / PMPI_Rsend_init: SendMode::Ready, false;
    MPI_Bsend_init / PMPI_Bsend_init: SendMode::Standard, true;
}

mpi_fn! {
    fn MPI_Recv_init / PMPI_Recv_init(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            persistent(buf, count, datatype, source, tag, comm, false, SendMode::Standard, false, "MPI_Recv_init")
                // SAFETY: request is non-NULL and an MPI_Request.
                .and_then(|h| unsafe { put(request, h) })
        };
        finish(comm, "MPI_Recv_init", r)
    }
}

mpi_fn! {
    fn MPI_Start / PMPI_Start(request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL; an MPI_Request by the contract.
            start(unsafe { request.read() }, "MPI_Start")
        };
        finish(MPI_COMM_WORLD, "MPI_Start", r)
    }
}

mpi_fn! {
    fn MPI_Startall / PMPI_Startall(count: c_int, array_of_requests: *mut MPI_Request) -> c_int {
        // SAFETY: the C contract for the array.
        let r = unsafe { read_reqs(count, array_of_requests) }
            .and_then(|hs| hs.into_iter().try_for_each(|h| start(h, "MPI_Startall")));
        finish(MPI_COMM_WORLD, "MPI_Startall", r)
    }
}

// ---- Request state behind the calls above ----

/// MPI_Cancel: an unmatched receive is cancelled; a send is retracted if its
/// receiver has not matched it (the engine asks; the request completes with the
/// answer, even a send that had completed without an engine request); a null
/// request is an error.
pub(crate) fn cancel(p: &mut P2p, h: MPI_Request) -> Result<(), c_int> {
    p.promote(h);
    let r = p.reqs.get_mut(h).ok_or(MPI_ERR_REQUEST)?;
    if let Finish::Custom(c) = &mut r.finish {
        return c.cancel();
    }
    if let Some(id) = r.id {
        p.engine.cancel(id).map_err(|e| report("MPI_Cancel", &e))?;
    } else if let (Some((dest, seq)), Some(st), true) =
        (r.sent.take().map(Sent::get), r.ready, r.active)
    {
        let status = myrix_mpi::p2p::Status {
            source: dest,
            tag: st.tag,
            len: st.bytes,
            cancelled: false,
            error: None,
        };
        let id = p
            .engine
            .cancel_sent(dest, seq, status)
            .map_err(|e| report("MPI_Cancel", &e))?;
        r.id = Some(id);
        r.ready = None;
    }
    Ok(())
}

/// MPI_Request_free: an active request finishes in the background (the engine
/// keeps its buffer until then); an inactive persistent one is dropped.
pub(crate) fn free(p: &mut P2p, h: MPI_Request) -> Result<(), c_int> {
    p.promote(h);
    let r = p.reqs.remove(h).ok_or(MPI_ERR_REQUEST)?;
    if let Some(id) = r.id {
        match r.finish {
            Finish::None => p.engine.free(id),
            // The buffer must outlive the operation: keep it until the engine is done.
            f => p.orphans.push((id, f)),
        }
    } else if let Finish::Custom(c) = r.finish {
        c.freed();
    }
    Ok(())
}

/// MPI_Request_get_status: the status if complete, without freeing.
pub(crate) fn peek(p: &mut P2p, h: MPI_Request) -> Result<Option<CStatus>, c_int> {
    if h == MPI_REQUEST_NULL {
        return Ok(Some(CStatus::inactive()));
    }
    let _ = p
        .engine
        .progress()
        .map_err(|e| report("MPI_Request_get_status", &e))?;
    p.promote(h);
    let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
    if !r.active {
        return Ok(Some(CStatus::inactive()));
    }
    match r.id {
        None if matches!(r.finish, Finish::Custom(_)) => match &r.finish {
            Finish::Custom(c) => Ok(c.peek()),
            _ => Ok(r.ready),
        },
        None => Ok(r.ready),
        Some(id) => Ok(p.engine.status(id).map(|s| cstatus(&r.ranks, &s))),
    }
}

impl P2p {
    /// Ends what a completed request held: unpacks a receive of `bytes` bytes,
    /// gives buffered-send space back.
    pub(crate) fn release(&mut self, f: Finish, bytes: usize) {
        match f {
            Finish::None => {}
            Finish::Hold(..) | Finish::Layout(_) => {}
            Finish::Buffered(b) => self.bufs.release(b.1, b.0.len()),
            Finish::Unpack(u) => {
                let Unpack {
                    tmp,
                    dt,
                    buf,
                    count,
                } = *u;
                let n = bytes.min(tmp.len());
                // SAFETY: buf holds count elements of dt (the C caller's contract,
                // kept since the receive was posted).
                unsafe { dt.unpack(&tmp[..n], buf, count) };
            }
            Finish::Coll(s) => s.finish(),
            Finish::Custom(c) => c.freed(),
        }
    }

    /// Waits for the freed and buffered sends still running (MPI_Finalize).
    pub(crate) fn drain_orphans(&mut self) -> Result<(), c_int> {
        spin_until(self, |p| Ok(p.orphans.is_empty()))
    }

    /// Releases the buffers of freed requests the engine has finished with.
    pub(crate) fn reap_orphans(&mut self) {
        let mut i = 0;
        while i < self.orphans.len() {
            let id = self.orphans[i].0;
            if self.engine.is_complete(id) {
                let (_, f) = self.orphans.swap_remove(i);
                let st = self.engine.test(id).ok().flatten();
                self.release(f, st.map_or(0, |s| s.len));
            } else {
                i += 1;
            }
        }
    }
}

/// Makes a persistent request (inactive until MPI_Start).
#[allow(clippy::too_many_arguments)]
pub(crate) fn persistent(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm_h: MPI_Comm,
    send: bool,
    mode: SendMode,
    buffered: bool,
    name: &str,
) -> Result<MPI_Request, c_int> {
    let c = comm::lookup(comm_h, name)?;
    let count = check_count(count)?;
    let dt = p2p_type(dt, count)?;
    if send {
        send_tag(tag)?;
        send_peer(&c, peer)?;
    } else {
        recv_tag(tag)?;
        recv_peer(&c, peer)?;
    }
    let pers = Persist {
        send,
        mode,
        buffered,
        buf: buf.cast(),
        count,
        dt,
        peer,
        tag,
        comm: c.clone(),
        coll: None,
    };
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let h = insert(p, None, None, c.ranks.clone(), Finish::None, Some(pers))?;
        if let Some(r) = p.reqs.get_mut(h) {
            r.active = false;
        }
        Ok(h)
    })
}

/// MPI_Start: issues a persistent request's operation.
pub(crate) fn start(h: MPI_Request, name: &str) -> Result<(), c_int> {
    let pers = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
        match (&r.persist, r.active) {
            (Some(pe), false) => Ok((**pe).clone()),
            _ => Err(MPI_ERR_REQUEST),
        }
    })?;
    let c = &pers.comm;
    // SAFETY: the persistent request's buffer, by the contract of its _init call.
    let tmp = unsafe {
        if let Some(coll) = &pers.coll {
            crate::pcoll::start_coll(coll)?
        } else if pers.send {
            issue_send(
                c,
                pers.buf.cast_const().cast(),
                pers.count,
                pers.dt.clone(),
                send_peer(c, pers.peer)?,
                pers.tag,
                pers.mode,
                pers.buffered,
                name,
                None,
            )?
        } else {
            issue_recv(
                c,
                pers.buf,
                pers.count,
                pers.dt.clone(),
                recv_peer(c, pers.peer)?,
                recv_tag(pers.tag)?,
                name,
                None,
            )?
        }
    };
    adopt(h, tmp, name)
}

/// Moves the state of the fresh request `tmp` (its engine request, status, what it
/// holds) into the persistent handle `h`, which becomes active; `tmp` is freed.
pub(crate) fn adopt(h: MPI_Request, tmp: MPI_Request, name: &str) -> Result<(), c_int> {
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let fresh = p.reqs.remove(tmp).ok_or(MPI_ERR_INTERN)?;
        let r = p.reqs.get_mut(h).ok_or(MPI_ERR_REQUEST)?;
        r.id = fresh.id;
        r.ready = fresh.ready;
        r.sent = fresh.sent;
        r.finish = fresh.finish;
        r.active = true;
        Ok(())
    })
}

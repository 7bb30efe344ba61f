//! Completion from C: MPI_Wait, MPI_Test and their all/any/some forms over
//! `p2p`'s requests (a null or inactive request is complete with an empty status;
//! errors of array calls are reported per status with MPI_ERR_IN_STATUS).

use crate::abi::*;
use crate::ffi::{finish, mpi_fn};
use crate::p2p::*;
use crate::runtime;
use myrix_rsm::spin::SpinWait;
use std::os::raw::c_int;

mpi_fn! {
    fn MPI_Wait / PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for both pointers.
        let r = unsafe { wait_handle(request, status, "MPI_Wait") };
        finish(MPI_COMM_WORLD, "MPI_Wait", r)
    }
}

mpi_fn! {
    fn MPI_Test / PMPI_Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let r = (|| {
            if request.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: non-NULL; valid by the contract.
            let h = unsafe { request.read() };
            let (got, persistent) = runtime::with("MPI_Test", |rt| {
                let p = p2p(rt)?;
                let _ = p.engine.progress().map_err(|e| report("MPI_Test", &e))?;
                Ok(take_one(p, h)?.map_or((None, false), |(s, k)| (Some(s), k)))
            })?;
            // SAFETY: flag is non-NULL and an int by the contract.
            unsafe { flag.write(c_int::from(got.is_some())) };
            if let Some(s) = got {
                if !persistent {
                    // SAFETY: as above.
                    unsafe { request.write(MPI_REQUEST_NULL) };
                }
                // SAFETY: the contract for status.
                unsafe { s.store(status) };
                if s.error != MPI_SUCCESS {
                    return Err(s.error);
                }
            }
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Test", r)
    }
}

/// The requests of an array call, read once.
///
/// # Safety
/// `reqs` holds `count` MPI_Requests.
pub(crate) unsafe fn read_reqs(
    count: c_int,
    reqs: *mut MPI_Request,
) -> Result<Vec<MPI_Request>, c_int> {
    let n = check_count(count)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if reqs.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(reqs, n) }.to_vec())
}

/// Writes completion `i` back: the handle (nulled unless persistent) and its status
/// in a statuses array (NULL is MPI_STATUSES_IGNORE).
///
/// # Safety
/// `reqs` holds more than `i` requests; `sts` is NULL or holds more than `i` statuses.
pub(crate) unsafe fn store_at(
    reqs: *mut MPI_Request,
    sts: *mut MPI_Status,
    i: usize,
    s: &CStatus,
    persistent: bool,
) {
    if !persistent {
        // SAFETY: the caller's contract.
        unsafe { reqs.add(i).write(MPI_REQUEST_NULL) };
    }
    if !sts.is_null() {
        // SAFETY: the caller's contract.
        unsafe { s.store_all(sts.add(i)) };
    }
}

mpi_fn! {
    fn MPI_Waitall / PMPI_Waitall(count: c_int, array_of_requests: *mut MPI_Request, array_of_statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for the arrays.
        let r = unsafe { waitall(count, array_of_requests, array_of_statuses) };
        finish(MPI_COMM_WORLD, "MPI_Waitall", r)
    }
}

/// Completes the requests in array order, writing each one's handle and status back
/// as it completes, and polls the engine once per round while the next one is not
/// complete: no allocation, no scan of the whole array per poll (later requests
/// completing meanwhile are picked up when their turn comes).
///
/// # Safety
/// The arrays hold `count` entries (statuses may be NULL).
pub(crate) unsafe fn waitall(
    count: c_int,
    reqs: *mut MPI_Request,
    sts: *mut MPI_Status,
) -> Result<(), c_int> {
    let n = check_count(count)?;
    if n == 0 {
        return runtime::check("MPI_Waitall");
    }
    if reqs.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let failed = runtime::with("MPI_Waitall", |rt| {
        let p = p2p(rt)?;
        // SAFETY: `reqs` holds `n` requests (the caller's contract).
        let hs = unsafe { std::slice::from_raw_parts(reqs.cast_const(), n) };
        if hs.iter().any(|&h| h != MPI_REQUEST_NULL && !p.knows(h)) {
            return Err(MPI_ERR_REQUEST);
        }
        let mut failed = false;
        let mut spin = SpinWait::new();
        let mut next = 0;
        loop {
            while next < n {
                // SAFETY: next < n; read again, as it is written back below.
                let h = unsafe { reqs.add(next).read() };
                let Some((s, persistent)) = take_one(p, h)? else {
                    break;
                };
                failed |= s.error != MPI_SUCCESS;
                // SAFETY: next < n; the contract for both arrays.
                unsafe { store_at(reqs, sts, next, &s, persistent) };
                next += 1;
            }
            if next == n {
                return Ok(failed);
            }
            if !p.orphans.is_empty() {
                p.reap_orphans();
            }
            match p.engine.progress() {
                Ok(true) => spin.reset(),
                Ok(false) => spin.spin(),
                Err(e) => return Err(report("progress", &e)),
            }
        }
    })?;
    if failed {
        Err(MPI_ERR_IN_STATUS)
    } else {
        Ok(())
    }
}

mpi_fn! {
    fn MPI_Testall / PMPI_Testall(count: c_int, array_of_requests: *mut MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the arrays.
            let hs = unsafe { read_reqs(count, array_of_requests)? };
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // All or nothing: completes the requests only when every one is done.
            let all = runtime::with("MPI_Testall", |rt| {
                let p = p2p(rt)?;
                let _ = p.engine.progress().map_err(|e| report("MPI_Testall", &e))?;
                p.promote_all(&hs);
                for &h in &hs {
                    if h == MPI_REQUEST_NULL {
                        continue;
                    }
                    let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
                    if let Some(id) = r.id {
                        if !p.engine.is_complete(id) {
                            return Ok(None);
                        }
                    } else if let Finish::Custom(c) = &r.finish {
                        if r.active && !c.ready() {
                            return Ok(None);
                        }
                    }
                }
                let mut out = Vec::with_capacity(hs.len());
                for &h in &hs {
                    let s = test_one(p, h)?.unwrap_or_else(CStatus::empty);
                    out.push((s, p.reqs.get(h).is_some()));
                }
                Ok(Some(out))
            })?;
            // SAFETY: non-NULL int.
            unsafe { flag.write(c_int::from(all.is_some())) };
            let mut failed = false;
            for (i, (s, persistent)) in all.into_iter().flatten().enumerate() {
                failed |= s.error != MPI_SUCCESS;
                // SAFETY: i < count; the contract.
                unsafe { store_at(array_of_requests, array_of_statuses, i, &s, persistent) };
            }
            if failed { Err(MPI_ERR_IN_STATUS) } else { Ok(()) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Testall", r)
    }
}

/// Completes at most one (`any`) or every ready request among `hs`; the index and
/// status of each completed one. `None`: no active request at all.
/// A completion: the index, its status, whether the request stays (persistent).
pub(crate) type Done = (usize, CStatus, bool);

pub(crate) fn sweep(
    p: &mut P2p,
    hs: &[MPI_Request],
    any: bool,
) -> Result<Option<Vec<Done>>, c_int> {
    let mut active = false;
    let mut out = Vec::new();
    for (i, &h) in hs.iter().enumerate() {
        if inactive(p, h) {
            continue;
        }
        active = true;
        if let Some(s) = test_one(p, h)? {
            out.push((i, s, p.reqs.get(h).is_some()));
            if any {
                break;
            }
        }
    }
    Ok(active.then_some(out))
}

mpi_fn! {
    fn MPI_Waitany / PMPI_Waitany(count: c_int, array_of_requests: *mut MPI_Request, indx: *mut c_int, status: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the array.
            let hs = unsafe { read_reqs(count, array_of_requests)? };
            if indx.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let got = runtime::with("MPI_Waitany", |rt| {
                let p = p2p(rt)?;
                let mut got = None;
                spin_until(p, |p| {
                    got = sweep(p, &hs, true)?;
                    Ok(got.as_ref().is_none_or(|v| !v.is_empty()))
                })?;
                Ok(got)
            })?;
            match got.and_then(|v| v.into_iter().next()) {
                None => {
                    // SAFETY: non-NULL int; status by the contract.
                    unsafe {
                        indx.write(MPI_UNDEFINED);
                        CStatus::inactive().store(status);
                    }
                    Ok(())
                }
                Some((i, s, persistent)) => {
                    // SAFETY: i < count; the contract for every pointer.
                    unsafe {
                        indx.write(i as c_int);
                        if !persistent {
                            array_of_requests.add(i).write(MPI_REQUEST_NULL);
                        }
                        s.store(status);
                    }
                    if s.error != MPI_SUCCESS { Err(s.error) } else { Ok(()) }
                }
            }
        })();
        finish(MPI_COMM_WORLD, "MPI_Waitany", r)
    }
}

mpi_fn! {
    fn MPI_Testany / PMPI_Testany(count: c_int, array_of_requests: *mut MPI_Request, indx: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the array.
            let hs = unsafe { read_reqs(count, array_of_requests)? };
            if indx.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let got = runtime::with("MPI_Testany", |rt| {
                let p = p2p(rt)?;
                let _ = p.engine.progress().map_err(|e| report("MPI_Testany", &e))?;
                sweep(p, &hs, true)
            })?;
            // SAFETY: the contract for every pointer; indices below count.
            unsafe {
                match got {
                    None => {
                        flag.write(1);
                        indx.write(MPI_UNDEFINED);
                        CStatus::inactive().store(status);
                    }
                    Some(v) => match v.into_iter().next() {
                        // Nothing completed: index MPI_UNDEFINED too (the standard).
                        None => {
                            flag.write(0);
                            indx.write(MPI_UNDEFINED);
                        }
                        Some((i, s, persistent)) => {
                            flag.write(1);
                            indx.write(i as c_int);
                            if !persistent {
                                array_of_requests.add(i).write(MPI_REQUEST_NULL);
                            }
                            s.store(status);
                            if s.error != MPI_SUCCESS {
                                return Err(s.error);
                            }
                        }
                    },
                }
            }
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Testany", r)
    }
}

/// Waitsome / Testsome.
///
/// # Safety
/// The C contract for every array (indices and statuses hold `incount` entries).
pub(crate) unsafe fn some(
    incount: c_int,
    reqs: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut MPI_Status,
    wait: bool,
    name: &str,
) -> Result<(), c_int> {
    // SAFETY: forwarded.
    let hs = unsafe { read_reqs(incount, reqs)? };
    if outcount.is_null() || (incount > 0 && indices.is_null()) {
        return Err(MPI_ERR_ARG);
    }
    let got = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        if wait {
            let mut got = None;
            spin_until(p, |p| {
                got = sweep(p, &hs, false)?;
                Ok(got.as_ref().is_none_or(|v| !v.is_empty()))
            })?;
            Ok(got)
        } else {
            let _ = p.engine.progress().map_err(|e| report(name, &e))?;
            sweep(p, &hs, false)
        }
    })?;
    let Some(v) = got else {
        // SAFETY: non-NULL int.
        unsafe { outcount.write(MPI_UNDEFINED) };
        return Ok(());
    };
    let mut failed = false;
    for (k, (i, s, persistent)) in v.iter().enumerate() {
        failed |= s.error != MPI_SUCCESS;
        // SAFETY: k <= i < incount; the contract.
        unsafe {
            indices.add(k).write(*i as c_int);
            if !*persistent {
                reqs.add(*i).write(MPI_REQUEST_NULL);
            }
            if !sts.is_null() {
                s.store_all(sts.add(k));
            }
        }
    }
    // SAFETY: non-NULL int.
    unsafe { outcount.write(v.len() as c_int) };
    if failed {
        Err(MPI_ERR_IN_STATUS)
    } else {
        Ok(())
    }
}

mpi_fn! {
    fn MPI_Waitsome / PMPI_Waitsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for the arrays.
        let r = unsafe { some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true, "MPI_Waitsome") };
        finish(MPI_COMM_WORLD, "MPI_Waitsome", r)
    }
}

mpi_fn! {
    fn MPI_Testsome / PMPI_Testsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for the arrays.
        let r = unsafe { some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, false, "MPI_Testsome") };
        finish(MPI_COMM_WORLD, "MPI_Testsome", r)
    }
}

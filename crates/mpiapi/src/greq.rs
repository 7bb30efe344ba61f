//! Generalized requests (MPI_Grequest_start, MPI_Grequest_complete) and the
//! [`Hook`] a request can carry to run its own code when it completes, is freed or
//! cancelled (generalized requests, MPI_Comm_idup).
//!
//! A generalized request lives in `p2p`'s request table with no engine request:
//! `test_one` asks its hook whether it is [`Hook::ready`], which becomes true when
//! the program calls MPI_Grequest_complete — through an atomic flag, so that call
//! takes no lock the completion calls hold (a cancel callback may complete its own
//! request from inside MPI_Cancel). The callbacks run as the standard says:
//! `query_fn` then `free_fn` in the Wait/Test that completes the request,
//! `cancel_fn` in MPI_Cancel (told whether the request is complete), and `free_fn`
//! alone in MPI_Request_free or in MPI_Grequest_complete, whichever comes last.
//!
//! `query_fn` and `free_fn` run while the library holds its lock: they may set
//! status fields (MPI_Status_set_elements/cancelled) and call
//! MPI_Grequest_complete, not communicate.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put};
use crate::p2p::{insert, p2p, CStatus, Finish};
use crate::runtime;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Code a request runs at its end instead of (or besides) the engine's status.
pub(crate) trait Hook: Send {
    /// Whether the operation is over (asked only of requests the engine does not
    /// run).
    fn ready(&self) -> bool {
        true
    }
    /// Completed by a Wait/Test: may rewrite the status it returns.
    fn done(self: Box<Self>, st: &mut CStatus);
    /// Freed by MPI_Request_free (complete or not); no status is returned.
    fn freed(self: Box<Self>);
    /// MPI_Cancel on the request.
    fn cancel(&mut self) -> Result<(), c_int> {
        Ok(())
    }
    /// MPI_Request_get_status: the status if complete, without freeing.
    fn peek(&self) -> Option<CStatus> {
        None
    }
}

type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// One generalized request, shared by its table entry and the registry
/// MPI_Grequest_complete finds it in.
struct Shared {
    query: Option<QueryFn>,
    free: Option<FreeFn>,
    cancel: Option<CancelFn>,
    extra: *mut c_void,
    complete: AtomicBool,
    /// MPI_Request_free came before MPI_Grequest_complete.
    freed: AtomicBool,
}

// SAFETY: `extra` is the program's pointer, only handed back to its callbacks.
unsafe impl Send for Shared {}
// SAFETY: as above; the flags are atomics.
unsafe impl Sync for Shared {}

impl Shared {
    /// Calls `free_fn` (at most once: the caller removed the registry entry).
    fn call_free(&self) -> c_int {
        // SAFETY: the program's callback with its own extra_state.
        self.free.map_or(MPI_SUCCESS, |f| unsafe { f(self.extra) })
    }

    /// Calls `query_fn` on a fresh status.
    fn call_query(&self) -> CStatus {
        let base = CStatus::inactive();
        let mut s = MPI_Status {
            MPI_SOURCE: base.source,
            MPI_TAG: base.tag,
            MPI_ERROR: MPI_SUCCESS,
            MPI_internal: [0; 5],
        };
        // SAFETY: the program's callback with its own extra_state and a status.
        let rc = self
            .query
            .map_or(MPI_SUCCESS, |q| unsafe { q(self.extra, &mut s) });
        CStatus {
            source: s.MPI_SOURCE,
            tag: s.MPI_TAG,
            error: rc,
            bytes: crate::p2p::status_bytes(&s),
            cancelled: s.MPI_internal[2] != 0,
        }
    }
}

/// The generalized requests not yet both completed and released, by handle (a
/// freed handle may be reused while MPI_Grequest_complete is still to come, so a
/// handle may appear twice: the oldest is completed first).
static REG: Mutex<Vec<(MPI_Request, Arc<Shared>)>> = Mutex::new(Vec::new());

fn reg() -> MutexGuard<'static, Vec<(MPI_Request, Arc<Shared>)>> {
    REG.lock().unwrap_or_else(|p| p.into_inner())
}

fn unregister(s: &Arc<Shared>) {
    reg().retain(|(_, x)| !Arc::ptr_eq(x, s));
}

struct Greq(Arc<Shared>);

impl Hook for Greq {
    fn ready(&self) -> bool {
        self.0.complete.load(Ordering::Acquire)
    }

    fn done(self: Box<Self>, st: &mut CStatus) {
        unregister(&self.0);
        *st = self.0.call_query();
        let rc = self.0.call_free();
        if st.error == MPI_SUCCESS {
            st.error = rc;
        }
    }

    fn freed(self: Box<Self>) {
        if self.0.complete.load(Ordering::Acquire) {
            unregister(&self.0);
            self.0.call_free();
        } else {
            // MPI_Grequest_complete calls free_fn.
            self.0.freed.store(true, Ordering::Release);
        }
    }

    fn cancel(&mut self) -> Result<(), c_int> {
        let done = c_int::from(self.0.complete.load(Ordering::Acquire));
        // SAFETY: the program's callback with its own extra_state.
        let rc = self
            .0
            .cancel
            .map_or(MPI_SUCCESS, |c| unsafe { c(self.0.extra, done) });
        if rc == MPI_SUCCESS {
            Ok(())
        } else {
            Err(rc)
        }
    }

    fn peek(&self) -> Option<CStatus> {
        self.ready().then(|| self.0.call_query())
    }
}

mpi_fn! {
    fn MPI_Grequest_start / PMPI_Grequest_start(query_fn: Option<QueryFn>, free_fn: Option<FreeFn>, cancel_fn: Option<CancelFn>, extra_state: *mut c_void, request: *mut MPI_Request) -> c_int {
        let r = (|| {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let s = Arc::new(Shared {
                query: query_fn,
                free: free_fn,
                cancel: cancel_fn,
                extra: extra_state,
                complete: AtomicBool::new(false),
                freed: AtomicBool::new(false),
            });
            let hook: Box<dyn Hook> = Box::new(Greq(s.clone()));
            let h = runtime::with("MPI_Grequest_start", |rt| {
                insert(p2p(rt)?, None, None, Arc::from([] as [u32; 0]), Finish::Custom(hook), None)
            })?;
            reg().push((h, s));
            // SAFETY: non-NULL, an MPI_Request by the C contract.
            unsafe { put(request, h) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Grequest_start", r)
    }
}

mpi_fn! {
    /// Marks the request complete; if MPI_Request_free came first, its `free_fn`
    /// runs now. Takes only the registry's lock, never the library's.
    fn MPI_Grequest_complete / PMPI_Grequest_complete(request: MPI_Request) -> c_int {
        let r = (|| {
            runtime::check("MPI_Grequest_complete")?;
            let s = {
                let g = reg();
                let found = g.iter().find(|(h, s)| *h == request && !s.complete.load(Ordering::Acquire));
                found.map(|(_, s)| s.clone()).ok_or(MPI_ERR_REQUEST)?
            };
            s.complete.store(true, Ordering::Release);
            if s.freed.load(Ordering::Acquire) {
                unregister(&s);
                let rc = s.call_free();
                if rc != MPI_SUCCESS {
                    return Err(rc);
                }
            }
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Grequest_complete", r)
    }
}

//! A safe point-to-point face for Rust programs, over the same engine.
//!
//! Two ways to keep a buffer alive while the engine may use it:
//! * Borrowed, scoped: [`Engine::scope`] runs a closure that starts sends and receives
//!   on slices borrowed for the scope (`&'env [u8]`, `&'env mut [u8]`); when the
//!   closure returns (or unwinds) every request still open is cancelled if it can be
//!   and waited for, so no borrow ends while the engine may touch its buffer — the
//!   shape of `std::thread::scope`. A request guard cannot leak out of the scope.
//! * Owned: [`Engine::isend_vec`] / [`Engine::irecv_vec`] move a `Vec<u8>` into the
//!   engine, [`Engine::wait_vec`] / [`Engine::test_vec`] hand it back. A request never
//!   completed leaks its vector rather than free memory the fabric may write.
//!
//! Errors of a request (truncation, a lost peer) come back as `Err` here.

use std::marker::PhantomData;

use super::engine::Engine;
use super::fabric::{Fabric, Rank};
use super::{P2pError, ReqId, SendMode, Status};

/// The scope of borrowed-buffer requests; see [`Engine::scope`].
pub struct Scope<'s, 'env, F: Fabric> {
    engine: &'s mut Engine<F>,
    open: Vec<ReqId>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// A request started in a [`Scope`] (branded with it: it cannot be used in another).
#[must_use = "a scoped request is waited for at the end of its scope anyway"]
pub struct ScopedReq<'s> {
    id: ReqId,
    _brand: PhantomData<fn(&'s ()) -> &'s ()>,
}

fn into_result(s: Status) -> Result<Status, P2pError> {
    match s.error {
        Some(e) => Err(e),
        None => Ok(s),
    }
}

impl<F: Fabric> Engine<F> {
    /// Runs `f` with a scope for requests on borrowed buffers; every request still
    /// open when `f` returns is cancelled (an unmatched receive) or waited for.
    pub fn scope<'env, R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s, 'env, F>) -> R) -> R {
        let mut scope = Scope {
            engine: self,
            open: Vec::new(),
            _env: PhantomData,
        };
        f(&mut scope)
    }

    /// Starts sending `data` (moved into the engine until completion).
    pub fn isend_vec(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        data: Vec<u8>,
        mode: SendMode,
    ) -> Result<ReqId, P2pError> {
        // SAFETY: the vector's heap buffer does not move when the vector does; it is
        // kept in the request until completion (or leaked if the engine is dropped
        // first), so it stays readable as long as the fabric may read it.
        let r = unsafe { self.isend(dest, ctx, tag, data.as_ptr(), data.len(), mode) }?;
        if let Some(req) = self.reqs.get_mut(r.0) {
            req.owned = Some(Box::new(data));
        }
        Ok(r)
    }

    /// Starts receiving into `buf` (its length is the capacity; moved into the engine
    /// until completion).
    pub fn irecv_vec(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        mut buf: Vec<u8>,
    ) -> Result<ReqId, P2pError> {
        // SAFETY: as in `isend_vec`: the heap buffer stays put and alive in the request
        // until completion, and nothing else can reach it meanwhile.
        let r = unsafe { self.irecv(src, ctx, tag, buf.as_mut_ptr(), buf.len()) }?;
        if let Some(req) = self.reqs.get_mut(r.0) {
            req.owned = Some(Box::new(buf));
        }
        Ok(r)
    }

    /// Waits for an owned-buffer request; returns its status and the vector (for a
    /// receive, truncated to the bytes delivered).
    pub fn wait_vec(&mut self, r: ReqId) -> Result<(Status, Vec<u8>), P2pError> {
        self.spin.reset();
        while !self.is_complete(r) {
            self.wait_step(r)?;
        }
        self.finish_vec(r)
    }

    /// As [`Engine::wait_vec`] if `r` is complete (after one progress call).
    pub fn test_vec(&mut self, r: ReqId) -> Result<Option<(Status, Vec<u8>)>, P2pError> {
        if !self.is_complete(r) {
            self.wait_step(r)?;
        }
        if self.is_complete(r) {
            self.finish_vec(r).map(Some)
        } else {
            Ok(None)
        }
    }

    fn wait_step(&mut self, r: ReqId) -> Result<(), P2pError> {
        if self.reqs.get(r.0).is_none() {
            return Err(P2pError::UnknownRequest);
        }
        match self.progress() {
            Ok(true) => self.spin.reset(),
            _ => self.spin.spin(),
        }
        Ok(())
    }

    fn finish_vec(&mut self, r: ReqId) -> Result<(Status, Vec<u8>), P2pError> {
        let mut v = self
            .reqs
            .get_mut(r.0)
            .and_then(|q| q.owned.take())
            .map_or_else(Vec::new, |b| *b);
        let s = self.test(r)?.ok_or(P2pError::UnknownRequest)?;
        // A send's status has the vector's length; a receive's the bytes delivered.
        if s.len < v.len() {
            v.truncate(s.len);
        }
        into_result(s).map(|s| (s, v))
    }
}

impl<'s, 'env, F: Fabric> Scope<'s, 'env, F> {
    pub fn rank(&self) -> Rank {
        self.engine.rank()
    }

    pub fn size(&self) -> Rank {
        self.engine.size()
    }

    /// Starts sending `data`, borrowed until the scope ends.
    pub fn isend(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        data: &'env [u8],
        mode: SendMode,
    ) -> Result<ScopedReq<'s>, P2pError> {
        // SAFETY: `data` is borrowed for `'env`, which outlives the scope, and the
        // scope waits for every request it started before it ends.
        let id = unsafe {
            self.engine
                .isend(dest, ctx, tag, data.as_ptr(), data.len(), mode)
        }?;
        self.open.push(id);
        Ok(ScopedReq {
            id,
            _brand: PhantomData,
        })
    }

    /// Starts receiving into `buf`, borrowed (exclusively) until the scope ends.
    pub fn irecv(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        buf: &'env mut [u8],
    ) -> Result<ScopedReq<'s>, P2pError> {
        // SAFETY: `buf` is borrowed mutably for `'env`, which outlives the scope, and
        // the scope waits for every request it started before it ends.
        let id = unsafe {
            self.engine
                .irecv(src, ctx, tag, buf.as_mut_ptr(), buf.len())
        }?;
        self.open.push(id);
        Ok(ScopedReq {
            id,
            _brand: PhantomData,
        })
    }

    /// Waits for `r`; a request error (truncation, a lost peer) is `Err`.
    pub fn wait(&mut self, r: ScopedReq<'s>) -> Result<Status, P2pError> {
        self.open.retain(|&o| o != r.id);
        into_result(self.engine.wait(r.id)?)
    }

    /// `Ok(Some(status))` and the request is done; `Err(r)` hands the request back.
    pub fn test(&mut self, r: ScopedReq<'s>) -> Result<Result<Status, P2pError>, ScopedReq<'s>> {
        match self.engine.test(r.id) {
            Ok(Some(s)) => {
                self.open.retain(|&o| o != r.id);
                Ok(into_result(s))
            }
            _ => Err(r),
        }
    }

    /// Cancels `r` if it is an unmatched receive; wait for it afterwards.
    pub fn cancel(&mut self, r: &ScopedReq<'s>) {
        let _ = self.engine.cancel(r.id);
    }

    pub fn progress(&mut self) -> Result<bool, P2pError> {
        self.engine.progress()
    }

    pub fn iprobe(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
    ) -> Result<Option<Status>, P2pError> {
        self.engine.iprobe(src, ctx, tag)
    }

    /// Blocking send of a buffer of any lifetime (waits before returning).
    pub fn send(&mut self, dest: Rank, ctx: u32, tag: i32, data: &[u8]) -> Result<(), P2pError> {
        self.engine.send(dest, ctx, tag, data, SendMode::Standard)
    }

    /// Blocking receive into a buffer of any lifetime; errors are `Err`.
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, P2pError> {
        into_result(self.engine.recv(src, ctx, tag, buf)?)
    }
}

impl<F: Fabric> Drop for Scope<'_, '_, F> {
    fn drop(&mut self) {
        for id in std::mem::take(&mut self.open) {
            let _ = self.engine.cancel(id);
            // `wait` returns only once the request is complete (a fatal fabric error
            // completes it too); an unknown id cannot happen: only the scope frees.
            let _ = self.engine.wait(id);
        }
    }
}

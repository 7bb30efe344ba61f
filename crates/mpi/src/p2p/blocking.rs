//! Blocking sends and receives over slices (MPI_Send/Ssend/Rsend, MPI_Recv,
//! MPI_Sendrecv). They are safe: each waits for its requests before returning, and a
//! complete request's buffer is never touched again (see [`super::engine`]).

use super::engine::Engine;
use super::fabric::{Envelope, Fabric, Rank};
use super::request::recv_status;

/// Polls of the awaited channel between two calls of the engine's whole progress
/// during a direct receive (other peers' messages and this rank's queued sends wait
/// at most this long).
const DIRECT_PROGRESS_EVERY: u32 = 16;
use super::{P2pError, SendMode, Status};

impl<F: Fabric> Engine<F> {
    /// Sends `data` to `dest` and waits until the buffer is free (for `Sync`, until a
    /// receive matched it too).
    pub fn send(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        data: &[u8],
        mode: SendMode,
    ) -> Result<(), P2pError> {
        // SAFETY: `data` outlives this call, and the call waits for the request to
        // complete before returning.
        let r = unsafe { self.isend(dest, ctx, tag, data.as_ptr(), data.len(), mode) }?;
        match self.wait(r)?.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Receives into `buf`; the status carries the request's error, if any
    /// (truncation: `len` bytes were delivered and `error` is `Truncated`).
    pub fn recv(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        buf: &mut [u8],
    ) -> Result<Status, P2pError> {
        // SAFETY: `buf` is borrowed mutably for this whole call.
        unsafe { self.recv_raw(src, ctx, tag, buf.as_mut_ptr(), buf.len()) }
    }

    /// A blocking receive into `cap` bytes at `buf` (MPI_Recv). From a named source,
    /// while nothing already here or posted could match first (see
    /// [`super::matching`]), a short message is copied straight from the fabric: no
    /// request, no announcement. Otherwise, or once that stops being provably right,
    /// an ordinary receive and wait.
    ///
    /// # Safety
    /// `buf` is valid for writing `cap` bytes during the call.
    pub unsafe fn recv_raw(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Status, P2pError> {
        if let Some(s) = src.filter(|&s| s != self.me && s < self.size) {
            // SAFETY: forwarded.
            if let Some(st) = unsafe { self.recv_direct(s, ctx, tag, buf, cap) } {
                return Ok(st);
            }
        }
        // SAFETY: `buf` stays valid for this whole call, which waits for the request.
        let r = unsafe { self.irecv(src, ctx, tag, buf, cap) }?;
        self.wait(r)
    }

    /// Polls `src`'s channel for a message this receive may take directly, driving
    /// the rest of the engine every [`DIRECT_PROGRESS_EVERY`] polls. `None`: the
    /// direct path no longer applies (something arrived or was posted that matching
    /// must see first, a peer was lost, the engine is poisoned).
    unsafe fn recv_direct(
        &mut self,
        src: Rank,
        ctx: u32,
        tag: Option<i32>,
        buf: *mut u8,
        cap: usize,
    ) -> Option<Status> {
        self.spin.reset();
        let mut n: u32 = 0;
        // Matching, lost peers and poison change only in `progress`: checked again
        // after each call of it.
        let mut check = true;
        loop {
            if check
                && (self.poisoned.is_some()
                    || !self.lost.is_empty()
                    || !self.matching.direct_ok(ctx, src, tag))
            {
                return None;
            }
            check = false;
            let mut accept = |e: &Envelope| e.ctx == ctx && tag.is_none_or(|t| t == e.tag);
            // SAFETY: the caller's promise for `buf`.
            match unsafe { self.fabric.recv_now(src, &mut accept, buf, cap) } {
                // No `spin.reset()` here: every wait resets (and settles the
                // budget with these polls) when it starts, so the found path, on the
                // ping-pong's critical path, leaves it to the next wait.
                Ok(Some(env)) => return Some(recv_status(src, env.tag, env.len, cap)),
                Ok(None) => {}
                // The fabric reported the loss among its events: the ordinary path
                // fails the receive.
                Err(_) => return None,
            }
            n = n.wrapping_add(1);
            if n % DIRECT_PROGRESS_EVERY == 0 {
                check = true;
                match self.progress() {
                    Ok(true) => {
                        self.spin.reset();
                        continue;
                    }
                    Ok(false) => {}
                    Err(_) => return None,
                }
            }
            self.spin.spin_paused();
        }
    }

    /// Sends `data` to `dest` and receives into `buf` at once (no deadlock between two
    /// ranks exchanging). Returns the receive's status; a send error is returned as
    /// `Err` once both requests are complete.
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv(
        &mut self,
        dest: Rank,
        stag: i32,
        data: &[u8],
        src: Option<Rank>,
        rtag: Option<i32>,
        buf: &mut [u8],
        ctx: u32,
    ) -> Result<Status, P2pError> {
        // SAFETY: `buf` is borrowed for this whole call, which waits for the request.
        let rr = unsafe { self.irecv(src, ctx, rtag, buf.as_mut_ptr(), buf.len()) }?;
        // SAFETY: `data` is borrowed for this whole call, which waits for the request.
        let sr = match unsafe {
            self.isend(
                dest,
                ctx,
                stag,
                data.as_ptr(),
                data.len(),
                SendMode::Standard,
            )
        } {
            Ok(r) => r,
            Err(e) => {
                // The receive must not outlive `buf`: cancel it, or let it finish.
                let _ = self.cancel(rr);
                self.wait(rr)?;
                return Err(e);
            }
        };
        let rs = self.wait(rr)?;
        let ss = self.wait(sr)?;
        match ss.error {
            Some(e) => Err(e),
            None => Ok(rs),
        }
    }
}

//! Blocking sends and receives over slices (MPI_Send/Ssend/Rsend, MPI_Recv,
//! MPI_Sendrecv). They are safe: each waits for its requests before returning, and a
//! complete request's buffer is never touched again (see [`super::engine`]).

use super::engine::Engine;
use super::fabric::{Fabric, Rank};
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
        // SAFETY: `buf` is borrowed mutably for this whole call, which waits for the
        // request to complete before returning.
        let r = unsafe { self.irecv(src, ctx, tag, buf.as_mut_ptr(), buf.len()) }?;
        self.wait(r)
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

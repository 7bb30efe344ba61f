//! The engine's calls for non-contiguous buffers ([`super::Layout`]): a send whose
//! bytes the fabric gathers from the caller's memory, a receive whose bytes it
//! scatters into it (issue 23). Only on a fabric whose [`Fabric::layouts`] is true;
//! the C layer packs otherwise. Kept apart from `engine.rs` so that the flat calls,
//! the 8 B path's, keep their own bodies (sharing them changed their inlining).

use super::engine::{failed, lost_error_in, Engine};
use super::fabric::{Envelope, Fabric, FabricError, Rank};
use super::matching::Posted;
use super::request::{Cancel, Phase, Request, UserBuf};
use super::{MsgHandle, P2pError, ReqId, SendMode, Status};

impl<F: Fabric> Engine<F> {
    /// As [`Engine::isend`], the message's bytes gathered from `lay` (a
    /// non-contiguous buffer; `lay.len()` bytes) by the fabric as it writes them: no
    /// packed copy. Only on a fabric whose [`Fabric::layouts`] is true. Always makes
    /// a request (no completion inside the call).
    ///
    /// # Safety
    /// `lay` and its memory stay valid for reading until the request completes (even
    /// if it is freed before).
    pub unsafe fn isend_layout(
        &mut self,
        dest: Rank,
        ctx: u32,
        tag: i32,
        lay: *const super::Layout,
        mode: SendMode,
    ) -> Result<ReqId, P2pError> {
        self.check_usable()?;
        if let Some(e) = self.lost_error(Some(dest)) {
            return Err(e);
        }
        let sync = mode == SendMode::Sync;
        // SAFETY: the caller's promise.
        let len = unsafe { (*lay).len() };
        let env = Envelope {
            ctx,
            tag,
            len,
            sync,
        };
        // SAFETY: the caller keeps `lay` valid until this request completes, which is
        // only after `SendDone` (or the loss of `dest`).
        let id = unsafe { self.fabric.send_layout(dest, env, lay) }?;
        let seq = self.next_seq(dest);
        let status = Status {
            source: dest,
            tag,
            len,
            cancelled: false,
            error: None,
        };
        let phase = Phase::Send {
            id,
            dest,
            done: false,
            await_sync: sync,
            cancel: Cancel::No,
            status,
        };
        let mut req = Request::new(phase, UserBuf::flat(std::ptr::null_mut(), 0));
        req.seq = seq;
        let key = self.reqs.insert(req);
        self.sends.insert(id, key);
        Ok(ReqId(key))
    }

    /// As [`Engine::irecv`], into the first `cap` packed bytes of `lay` (a
    /// non-contiguous buffer the fabric scatters into; `cap <= lay.len()`). Only on a
    /// fabric whose [`Fabric::layouts`] is true.
    ///
    /// # Safety
    /// `lay` and its memory stay valid for writing until the request completes (even
    /// if it is freed before), and nothing else reads or writes that memory meanwhile.
    pub unsafe fn irecv_layout(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        lay: *const super::Layout,
        cap: usize,
    ) -> Result<ReqId, P2pError> {
        self.irecv_buf(src, ctx, tag, UserBuf::layout(lay, cap))
    }

    /// [`Engine::irecv`] of any buffer (a layout's: `irecv_layout`).
    fn irecv_buf(
        &mut self,
        src: Option<Rank>,
        ctx: u32,
        tag: Option<i32>,
        ub: UserBuf,
    ) -> Result<ReqId, P2pError> {
        self.check_usable()?;
        if let Some(s) = src.filter(|&s| s >= self.size) {
            return Err(P2pError::Fabric(FabricError::NoSuchRank(s)));
        }
        let key = self
            .reqs
            .insert(Request::new(Phase::Posted { ctx, src, tag }, ub));
        // One lookup of the context: a message already here, or else the posted
        // queue (unless a lost peer could be the sender: then the receive fails).
        let lost = &self.lost;
        let p = Posted {
            req: key,
            src,
            tag,
            buf: ub,
        };
        let no_loss = || lost.is_empty() || lost_error_in(lost, src).is_none();
        if let Some(m) = self.matching.match_or_post(ctx, p, no_loss) {
            if let Some(msg) = self.msgs.get_mut(m) {
                msg.queued = false;
            }
            self.deliver(key, m);
        } else if !self.lost.is_empty() {
            if let Some(e) = self.lost_error(src) {
                self.complete(key, failed(src, tag, e));
            }
        }
        Ok(ReqId(key))
    }

    /// As [`Engine::imrecv`], into a layout (see [`Engine::irecv_layout`]).
    ///
    /// # Safety
    /// As [`Engine::irecv_layout`].
    pub unsafe fn imrecv_layout(
        &mut self,
        m: MsgHandle,
        lay: *const super::Layout,
        cap: usize,
    ) -> Result<ReqId, P2pError> {
        self.imrecv_buf(m, UserBuf::layout(lay, cap))
    }
}

//! A small put sent at once: its write frame built straight into the driver's send
//! buffer, for a put when nothing else waits to go.
//!
//! [`Engine::put`] copies the data into a buffer, queues it in the peer's work queue
//! ([`super::flow`]), which sequences it and pushes it on the transmit queue, from which
//! [`Engine::poll_transmit`] takes it and builds the frame: three queues and their
//! bookkeeping for one frame. When the peer has no work queued, the transmit queue is
//! empty and the windows take the write, the result is the same frame with the same
//! number, sent first: [`Engine::put_now`] sequences it and builds it in one step.
//! The data is still kept until acknowledged (resends are built from it as from any
//! item), so reliability is unchanged.
//!
//! Must never reorder: it applies only when no frame is queued ahead of it.

use super::flow::{DataKind, Item, Pending};
use super::frames::{emit_item, frame_header};
use super::*;
use myrix_wire::rsm::WRITE_HEAD;

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// Writes `data` at `offset` of import `imp` as [`Engine::put`] does and, when it
    /// can go first and whole in one frame, builds that frame into `buf` at once: its
    /// destination and length (what [`Engine::poll_transmit`] would have returned
    /// next). `Ok(None)`: the write was queued the ordinary way (send with
    /// [`Engine::poll_transmit`]). An error queues nothing, as [`Engine::put`].
    pub fn put_now(
        &mut self,
        now: u64,
        imp: Import,
        offset: u64,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<Option<(A, usize)>, RsmError> {
        let i = self.connected(imp)?;
        if !i.perm.can_write() {
            return Err(RsmError::PermDenied);
        }
        check_range(i.len, offset, data.len() as u64)?;
        let (pi, exp) = (i.peer, i.exp.ok_or(RsmError::SegNotConnected)?);
        let len = data.len();
        let p = &self.peers[pi as usize];
        let direct = !self.rel.lossless
            && len > 0
            && len <= self.cfg.mtu - WRITE_HEAD
            && buf.len() >= self.cfg.mtu
            && self.txq.is_empty()
            && p.waiting.is_empty()
            && p.answers.is_empty()
            && p.rel.has_room(1, &self.rel)
            && (p.data_in_flight == 0 || p.data_in_flight + len <= self.cfg.write_window);
        if !direct {
            return self.queue_write(pi, exp, offset, data).map(|()| None);
        }
        let b = self.bufs.alloc_copy(data);
        let item = Item::Write {
            buf: b,
            at: 0,
            len: len as u32,
            exp,
            offset,
        };
        let p = &mut self.peers[pi as usize];
        p.data_in_flight += len;
        let seq = p.rel.push(item);
        p.tx_count = p.tx_count.wrapping_add(1);
        // What `poll_transmit` does with the number it takes off the transmit queue.
        p.rel.sending(seq, now);
        let h = frame_header(p, self.session, seq);
        let n = match emit_item(&h, item, &self.bufs, buf) {
            Ok(n) => n,
            Err(_) => {
                // Not expected (the buffer holds an MTU): the item is sequenced, so it
                // goes as any other would, from the transmit queue.
                self.txq.push_back(frames::Tx::Seq { peer: pi, seq });
                return Ok(None);
            }
        };
        let p = &mut self.peers[pi as usize];
        p.rel.piggybacked();
        let addr = p.addr;
        self.arm_peer(pi, now + self.cfg.resend_ns);
        self.stats.frames_out += 1;
        Ok(Some((addr, n)))
    }

    /// [`Engine::put`]'s queueing, the import checked already.
    pub(super) fn queue_write(
        &mut self,
        pi: u32,
        exp: u32,
        offset: u64,
        data: &[u8],
    ) -> Result<(), RsmError> {
        if data.is_empty() {
            return Ok(());
        }
        let len = u32::try_from(data.len()).map_err(|_| RsmError::BadLength)?;
        let p = &mut self.peers[pi as usize];
        if p.queued > 0 && p.queued + data.len() > self.cfg.max_queued {
            return Err(RsmError::InsufficientResources);
        }
        p.queued += data.len();
        let buf = self.bufs.alloc_copy(data);
        self.push_pending(
            pi,
            Pending::Data {
                kind: DataKind::Write { exp },
                buf,
                at: 0,
                len,
                offset,
            },
        );
        Ok(())
    }
}

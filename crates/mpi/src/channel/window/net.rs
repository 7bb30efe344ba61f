//! The network path of the channel's windows ([`super::Mem::net`] and its lazy and
//! batch forms): a window on another rank's segment behind a network controller,
//! whose stores are staged here and leave as `Import::put`s.
//!
//! A **network window** ([`super::Mem::net`]) is another rank's segment behind a network
//! controller (`udp`: no mapping). Its stores become `Import::put`s: data stores
//! ([`super::Mem::write`], [`super::Mem::write_from`], [`super::Mem::store_u32`]) are staged and
//! coalesced while contiguous; a *publishing* store ([`super::Mem::store_u64`],
//! [`super::Mem::store_u8`]: a postbox flag, an ack byte, a request's generation word)
//! puts the staged data and the word. Why the data is visible before the flag
//! without a round trip: the RSM engine applies one import's writes in order, each
//! a write into the exporter's memory (`rsm::net::memory`) that stores its first
//! 8 bytes last, atomically, after a release fence. A flag word just before the
//! staged run (a postbox's flag at its offset 0, its body after it) leads the run in
//! one put of at most 512 bytes, which travels as one frame and so as one write: one
//! frame per postbox. Any other flag is put after the staged run, as a put of its
//! own (applied after it). A copy within a write is otherwise in the C library's
//! order, so a flag never sits *inside* a put with its data. On a *lazy* window
//! ([`super::Mem::net_lazy`], the receiver's acks) byte stores are only staged and put
//! by [`NetFlush::flush`], which the fabric calls at the end of a progress that
//! found nothing to do, or once 32 are staged: the ack of a message leaves after the
//! reply the program sends to it, not before, and the acks of a message of several
//! postboxes leave together.
//! On a *batch* window ([`super::Mem::net_batch`], the sender's channel areas) a flag-led
//! run stays staged while the next postboxes (body, then flag into the gap left for
//! it) extend it, up to 1 KiB, and is put at [`NetFlush::flush`] (the fabric calls
//! it after each pump): a message of up to 16 postboxes inline is one frame.
//! [`super::Mem::barrier`] puts what is staged. Pool
//! blocks stay below the striping size of the import (64 KiB) and so travel on one
//! rail; a fail-over replays a rail's writes in order on the next. The receiver reads
//! its own exported memory as on shm.
//! Loads from a network window are `Import::get`s (a round trip; the channel never
//! does them on its fast path).

use super::OutOfBounds;
use myrix_rsm::{BarrierType, Import, RsmError};
use std::sync::Arc;

/// Another node's segment as a network window writes it: what the window needs of
/// RSM's [`Import`] over a network controller. The seam that lets the channel's state
/// machines run over something else that keeps the same promise (the tests drive
/// `rsm-proto`'s engine over a lossy in-memory network: `tests/channel_lossy.rs`).
///
/// The promise: the puts of one segment are applied in the order they were made, each
/// as one write that stores its first 8 bytes last (when 8-aligned and at least 8
/// long) if it fits one frame; the window relies on nothing else.
pub trait RemoteSegment: Send + Sync + std::fmt::Debug {
    /// The segment's bytes.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Queues a write of `data` at `off` (in bounds: the window checked).
    fn put(&self, off: usize, data: &[u8]) -> Result<(), RsmError>;
    /// As [`RemoteSegment::put`]; it may wait to leave with the next put toward the
    /// same node ([`Import::put_deferred`]).
    fn put_deferred(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put(off, data)
    }
    /// Reads `out.len()` bytes at `off` (a round trip; never on the channel's paths).
    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), RsmError>;
    /// A barrier over the puts so far (open, close): the import may forget their
    /// ranges. `Err(BarrierFailure)` when a rail failed over inside it (its writes were
    /// replayed on the others).
    fn barrier(&self) -> Result<(), RsmError>;
    /// The longest put applied as one write ([`Import::one_write`]); None: any.
    fn one_write(&self) -> Option<usize> {
        None
    }
}

impl RemoteSegment for Import {
    fn len(&self) -> usize {
        Import::len(self)
    }
    #[inline]
    fn put(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        Import::put(self, off, data)
    }
    #[inline]
    fn put_deferred(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        Import::put_deferred(self, off, data)
    }
    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), RsmError> {
        Import::get(self, off, out)
    }
    fn barrier(&self) -> Result<(), RsmError> {
        let mut b = self.init_barrier(BarrierType::Segment)?;
        b.open()?;
        b.close()
    }
    fn one_write(&self) -> Option<usize> {
        Import::one_write(self)
    }
}

/// What a network window puts into. RSM's import is called directly (no virtual call
/// on the network path the programs use); anything else through [`RemoteSegment`].
#[derive(Debug, Clone)]
pub(super) enum Target {
    Import(Arc<Import>),
    Other(Arc<dyn RemoteSegment>),
}

impl Target {
    pub(super) fn len(&self) -> usize {
        match self {
            Target::Import(i) => i.len(),
            Target::Other(s) => s.len(),
        }
    }
    fn one_write(&self) -> Option<usize> {
        match self {
            Target::Import(i) => i.one_write(),
            Target::Other(s) => s.one_write(),
        }
    }
    #[inline]
    fn put(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        match self {
            Target::Import(i) => i.put(off, data),
            Target::Other(s) => s.put(off, data),
        }
    }
    #[inline]
    fn put_deferred(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        match self {
            Target::Import(i) => i.put_deferred(off, data),
            Target::Other(s) => s.put_deferred(off, data),
        }
    }
    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), RsmError> {
        match self {
            Target::Import(i) => i.get(off, out),
            Target::Other(s) => s.get(off, out),
        }
    }
    fn barrier(&self) -> Result<(), RsmError> {
        match self {
            Target::Import(i) => RemoteSegment::barrier(&**i),
            Target::Other(s) => s.barrier(),
        }
    }
}

/// Puts between two barrier closes of a network window: a close lets the import
/// forget the ranges of its unflushed writes (a round trip every so many puts).
const NET_PUTS_PER_CLOSE: u32 = 4096;
/// Staged bytes above which they are put without waiting for the flag.
const NET_STAGE_MAX: usize = 256 << 10;
/// Writes of at least this many bytes (pool runs of long and rendezvous messages) are
/// put straight from the caller's buffer, after what is staged, instead of being
/// copied into the staging buffer first: one pass less over a long message's data
/// (the put copies it into the engine anyway). Shorter writes are staged, so that
/// neighbouring small ones share a put.
pub(super) const NET_DIRECT_MIN: usize = 4096;
/// The longest put a flag word may lead: it travels as one frame, applied first word
/// last (`rsm::net::memory`). Less where the import's frames carry less
/// ([`Import::one_write`], a small `MYRIX_UDP_MTU`): a longer run would be cut in two
/// writes, and the flag, in the first, stored before the rest of its postbox.
const NET_ONE_WRITE: usize = 1024;

/// Acks a lazy window stages at most before it puts them without waiting for the
/// flush (a busy receiver still frees the sender's postboxes and pool).
const NET_LAZY_ACKS: usize = 32;

/// Acks a lazy window must have staged before a batch window's put carries them
/// ([`NetFlush::carry_acks`]): each carried run is one more write (one more frame to
/// build, send and apply) in the datagram of an 8 B message, so a ping-pong carries
/// them on one reply in this many, not on every one (session 25, docs/mpi-net.md).
pub(super) const NET_CARRY_MIN: usize = 8;

/// A network window: its import and its staged writes (shared with [`NetFlush`]).
#[derive(Debug)]
pub struct NetWin(Arc<NetInner>);

/// A handle that puts a lazy network window's staged writes (the fabric's progress).
#[derive(Debug, Clone)]
pub struct NetFlush(Arc<NetInner>);

impl NetFlush {
    /// Puts what is staged (a failed put shows at the window's next store).
    pub fn flush(&self) {
        let _ = self.0.flush();
    }

    /// On a batch window (the sender's, toward a peer), `acks` (the lazy window of the
    /// acks this rank owes the same peer) is put, queued without a send of its own,
    /// just before each put of the batch: the acks ride in the reply's datagram
    /// (`Import::put_deferred`) instead of costing one each way. Set once.
    pub fn carry_acks(&self, acks: &NetFlush) {
        if self.0.batch && acks.0.lazy && !Arc::ptr_eq(&self.0, &acks.0) {
            let _ = self.0.acks.set(acks.clone());
        }
    }
}

#[derive(Debug)]
struct NetInner {
    imp: Target,
    /// Where the window begins in the segment (a receiver's queue in a sender's
    /// shared area toward another node, [`NetWin::skip`]); added to every access.
    base: usize,
    /// The longest flag-led run: [`NET_ONE_WRITE`] or the import's one write if less.
    one_write: usize,
    /// Byte stores (acks) are staged too, put at the next [`NetFlush::flush`].
    lazy: bool,
    /// A run led by a flag waits for more postboxes (their bodies and flags fill it in
    /// order) until [`NetFlush::flush`]: the sender's window on a channel area.
    batch: bool,
    /// A batch window's peer's ack window ([`NetFlush::carry_acks`]).
    acks: std::sync::OnceLock<NetFlush>,
    /// On a lazy window, how many bytes are staged, as of the last change: a batch
    /// window that may carry them ([`NetInner::flush_deferred`]) reads this before it
    /// takes the lock, so the usual case (too few to carry) costs no lock per put. A
    /// stale value only delays a carry (the acks leave at the idle flush anyway).
    staged: std::sync::atomic::AtomicUsize,
    st: std::sync::Mutex<Staged>,
}

#[derive(Debug, Default)]
struct Staged {
    off: usize,
    data: Vec<u8>,
    /// The run starts with a published flag word (one put, first word last).
    led: bool,
    /// An 8-byte gap in the run (at this offset of the segment) its flag fills.
    hole: Option<usize>,
    puts: u32,
    /// A put failed: every later access fails too (no flag after lost data).
    failed: bool,
}

impl NetInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Staged> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `n` bytes at `off` (filled by `fill`) to the staged run, putting the
    /// run first if `off` does not continue it.
    fn stage(&self, off: usize, n: usize, fill: impl FnOnce(&mut [u8])) -> Result<(), OutOfBounds> {
        self.stage_vec(off, n, |v| {
            let at = v.len();
            v.resize(at + n, 0);
            fill(&mut v[at..]);
            Ok(())
        })
    }

    /// [`NetInner::stage`] where `append` pushes the `n` bytes onto the staging
    /// buffer itself (a gathered layout writes them into its spare capacity, with no
    /// zeroing pass first); an error leaves the run as it was.
    fn stage_vec(
        &self,
        off: usize,
        n: usize,
        append: impl FnOnce(&mut Vec<u8>) -> Result<(), OutOfBounds>,
    ) -> Result<(), OutOfBounds> {
        let mut st = self.lock();
        let end = st.off + st.data.len();
        if self.batch
            && st.led
            && st.hole.is_none()
            && off == end + 8
            && off % 8 == 0
            && st.data.len() + 8 + n <= self.one_write
        {
            // The next postbox's body: its flag will fill the gap.
            st.hole = Some(end);
            let at = st.data.len();
            st.data.resize(at + 8, 0);
        } else if !st.data.is_empty()
            && (end != off || (st.led && st.data.len() + n > self.one_write))
        {
            // Not a continuation, or past what one write (one frame) may hold.
            self.put_staged(&mut st)?;
        }
        if st.data.is_empty() {
            st.off = off;
        }
        let at = st.data.len();
        append(&mut st.data)?;
        debug_assert_eq!(st.data.len(), at + n, "a stage appended the wrong length");
        if !st.led && st.data.len() >= NET_STAGE_MAX {
            self.put_staged(&mut st)?;
        }
        Ok(())
    }

    /// Puts `data` at `off` without staging it, after what is staged (so writes keep
    /// their order on the import).
    fn put_direct(&self, off: usize, data: &[u8]) -> Result<(), OutOfBounds> {
        let mut st = self.lock();
        self.put_staged(&mut st)?;
        self.put(&mut st, off, data)
    }

    fn put(&self, st: &mut Staged, off: usize, data: &[u8]) -> Result<(), OutOfBounds> {
        self.put_as(st, off, data, false)
    }

    /// [`NetInner::put`]; `defer`: queued to leave with the next put toward the node.
    fn put_as(
        &self,
        st: &mut Staged,
        off: usize,
        data: &[u8],
        defer: bool,
    ) -> Result<(), OutOfBounds> {
        if st.failed {
            return Err(OutOfBounds);
        }
        st.failed = true;
        let off = self.base + off;
        if defer {
            self.imp.put_deferred(off, data)
        } else {
            self.imp.put(off, data)
        }
        .map_err(|_| OutOfBounds)?;
        st.puts += 1;
        if st.puts >= NET_PUTS_PER_CLOSE {
            st.puts = 0;
            match self.imp.barrier() {
                // A rail failed over inside the scope: its writes were replayed on the
                // others and are all in remote memory (the channel's writes are in
                // bounds, so no other write failure says this).
                Ok(()) | Err(myrix_rsm::RsmError::BarrierFailure) => {}
                Err(_) => return Err(OutOfBounds),
            }
        }
        st.failed = false;
        Ok(())
    }

    fn put_staged(&self, st: &mut Staged) -> Result<(), OutOfBounds> {
        if st.data.is_empty() {
            return Ok(());
        }
        if let Some(a) = self.acks.get() {
            // Lock order: a batch window, then its ack window (which locks no other).
            let _ = a.0.flush_deferred(NET_CARRY_MIN);
        }
        let data = std::mem::take(&mut st.data);
        let r = match st.hole.take() {
            // A body whose flag has not come (never at a flush point of the channel):
            // the part before it, then the body; its flag will be a put after both.
            Some(h) => {
                let cut = h - st.off;
                self.put(st, st.off, &data[..cut])
                    .and_then(|()| self.put(st, h + 8, &data[cut + 8..]))
            }
            None => self.put(st, st.off, &data),
        };
        st.led = false;
        st.data = data;
        st.data.clear();
        self.note_staged(st);
        r
    }

    /// A publishing store of `word` at `off`. An 8-byte word just before the staged
    /// run leads it in one put (one frame, applied first word last: the data is
    /// visible once the word is); otherwise the staged run is put, then the word. On
    /// a lazy window a byte is only staged.
    fn publish(&self, off: usize, word: &[u8]) -> Result<(), OutOfBounds> {
        if self.lazy && word.len() == 1 {
            // An ack: appended to the staged run (which it continues, or which is put
            // first), under one lock.
            let mut st = self.lock();
            if !st.data.is_empty() && st.off + st.data.len() != off {
                self.put_staged(&mut st)?;
            }
            if st.data.is_empty() {
                st.off = off;
            }
            st.data.push(word[0]);
            if st.data.len() >= NET_LAZY_ACKS {
                self.put_staged(&mut st)?;
            }
            self.note_staged(&st);
            return Ok(());
        }
        let mut st = self.lock();
        if word.len() == 8 && st.hole == Some(off) {
            // The flag of a later postbox of the batch.
            let at = off - st.off;
            st.data[at..at + 8].copy_from_slice(word);
            st.hole = None;
            return Ok(());
        }
        if word.len() == 8
            && off % 8 == 0
            && !st.data.is_empty()
            && !st.led
            && st.hole.is_none()
            && off + 8 == st.off
            && st.data.len() + 8 <= self.one_write
        {
            // The word in front of the run, in place: no buffer per message.
            let n = st.data.len();
            st.data.resize(n + 8, 0);
            st.data.copy_within(0..n, 8);
            st.data[..8].copy_from_slice(word);
            st.off = off;
            st.led = true;
            if self.batch {
                // Wait for more postboxes until the flush.
                return Ok(());
            }
            return self.put_staged(&mut st);
        }
        self.put_staged(&mut st)?;
        self.put(&mut st, off, word)
    }

    /// A postbox: the flag `word` at `off`, `body` right after it, one locked step
    /// (what [`NetInner::stage`] of the body then [`NetInner::publish`] of the flag
    /// do, without the second lock, the gap and the move of the body behind the
    /// flag). On a batch window the postbox extends a flag-led run it follows while
    /// the run stays one write; any other staged run is put first.
    fn post_led(&self, off: usize, word: &[u8; 8], body: &[u8]) -> Result<(), OutOfBounds> {
        let n = 8 + body.len();
        if n > self.one_write || off % 8 != 0 {
            self.stage(off + 8, body.len(), |d| d.copy_from_slice(body))?;
            return self.publish(off, word);
        }
        let mut st = self.lock();
        if !st.data.is_empty() {
            let joins = self.batch
                && st.led
                && st.hole.is_none()
                && st.off + st.data.len() == off
                && st.data.len() + n <= self.one_write;
            if !joins {
                self.put_staged(&mut st)?;
            }
        }
        if st.data.is_empty() {
            st.off = off;
            st.led = true;
        }
        st.data.extend_from_slice(word);
        st.data.extend_from_slice(body);
        if self.batch {
            // Wait for more postboxes until the flush.
            return Ok(());
        }
        self.put_staged(&mut st)
    }

    /// Updates a lazy window's [`NetInner::staged`] hint.
    fn note_staged(&self, st: &Staged) {
        if self.lazy {
            self.staged
                .store(st.data.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn flush(&self) -> Result<(), OutOfBounds> {
        let mut st = self.lock();
        self.put_staged(&mut st)
    }

    /// Puts a lazy window's staged acks, queued to leave with the put that follows,
    /// if at least `min` are staged.
    fn flush_deferred(&self, min: usize) -> Result<(), OutOfBounds> {
        if self.staged.load(std::sync::atomic::Ordering::Relaxed) < min {
            return Ok(());
        }
        let mut st = self.lock();
        if st.data.is_empty() || st.data.len() < min {
            return Ok(());
        }
        // Acks are runs of bytes: no flag leads them, no hole.
        debug_assert!(st.hole.is_none() && !st.led);
        let (off, data) = (st.off, std::mem::take(&mut st.data));
        let r = self.put_as(&mut st, off, &data, true);
        st.data = data;
        st.data.clear();
        self.note_staged(&st);
        r
    }

    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        self.flush()?;
        self.imp.get(self.base + off, out).map_err(|_| OutOfBounds)
    }
}

impl NetWin {
    pub(super) fn new(imp: Target, lazy: bool, batch: bool) -> NetWin {
        Self::new_at(imp, 0, lazy, batch)
    }

    fn new_at(imp: Target, base: usize, lazy: bool, batch: bool) -> NetWin {
        let one_write = imp
            .one_write()
            .map_or(NET_ONE_WRITE, |w| w.min(NET_ONE_WRITE));
        NetWin(Arc::new(NetInner {
            imp,
            base,
            one_write,
            lazy,
            batch,
            acks: std::sync::OnceLock::new(),
            staged: std::sync::atomic::AtomicUsize::new(0),
            st: std::sync::Mutex::new(Staged::default()),
        }))
    }

    /// The window from `off` on, same import and modes: only before anything was
    /// staged or a flush handle taken (None otherwise), so no write is left behind
    /// in this one. The caller checked `off` against the window's length.
    pub(super) fn skip(self, off: usize) -> Option<NetWin> {
        if Arc::strong_count(&self.0) != 1 || !self.0.lock().data.is_empty() {
            return None;
        }
        let i = &self.0;
        Some(Self::new_at(i.imp.clone(), i.base + off, i.lazy, i.batch))
    }

    /// The flush handle of this window (shares its staged writes).
    pub(super) fn flush_handle(&self) -> NetFlush {
        NetFlush(self.0.clone())
    }

    pub(super) fn stage(
        &self,
        off: usize,
        n: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), OutOfBounds> {
        self.0.stage(off, n, fill)
    }
    pub(super) fn stage_vec(
        &self,
        off: usize,
        n: usize,
        append: impl FnOnce(&mut Vec<u8>) -> Result<(), OutOfBounds>,
    ) -> Result<(), OutOfBounds> {
        self.0.stage_vec(off, n, append)
    }
    pub(super) fn put_direct(&self, off: usize, data: &[u8]) -> Result<(), OutOfBounds> {
        self.0.put_direct(off, data)
    }
    pub(super) fn publish(&self, off: usize, word: &[u8]) -> Result<(), OutOfBounds> {
        self.0.publish(off, word)
    }
    pub(super) fn post_led(
        &self,
        off: usize,
        word: &[u8; 8],
        body: &[u8],
    ) -> Result<(), OutOfBounds> {
        self.0.post_led(off, word, body)
    }
    pub(super) fn flush(&self) -> Result<(), OutOfBounds> {
        self.0.flush()
    }
    pub(super) fn get(&self, off: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        self.0.get(off, out)
    }
}

impl Drop for NetWin {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

//! The memory views of the channel, and the only `unsafe` of it.
//!
//! * A **remote window** is memory of another rank this one writes (a channel area,
//!   a peer's inbox, an ack segment): on `shm` the mapped pointer of an
//!   [`myrix_rsm::Import`] ([`myrix_rsm::Mapping::as_ptr`]).
//! * A **local window** is memory of this rank others write (its inbox, the areas it
//!   received, its ack segments): [`myrix_rsm::Export::as_ptr`].
//! * [`Mem::heap`] is plain memory for tests of the state machines: both ends of a
//!   channel in one thread.
//!
//! All three are a [`Mem`]: a pointer, a length and what keeps the memory alive. Every
//! access is bounds-checked against the length (a hostile peer's offsets end here as a
//! [`OutOfBounds`], never as a read or write outside the segment). Polled words are
//! atomics; bulk data is copied with plain copies, which the protocol orders with the
//! flag words (a peer that writes data it has already released can only garble its
//! own messages).
//!
//! * A **network window** ([`Mem::net`]) is another rank's segment behind a network
//!   controller (`udp`: no mapping). Its stores become `Import::put`s: data stores
//!   ([`Mem::write`], [`Mem::write_from`], [`Mem::store_u32`]) are staged and
//!   coalesced while contiguous; a *publishing* store ([`Mem::store_u64`],
//!   [`Mem::store_u8`]: a postbox flag, an ack byte, a request's generation word)
//!   puts the staged data and the word. Why the data is visible before the flag
//!   without a round trip: the RSM engine applies one import's writes in order, each
//!   a write into the exporter's memory (`rsm::net::memory`) that stores its first
//!   8 bytes last, atomically, after a release fence. A flag word just before the
//!   staged run (a postbox's flag at its offset 0, its body after it) leads the run in
//!   one put of at most 512 bytes, which travels as one frame and so as one write: one
//!   frame per postbox. Any other flag is put after the staged run, as a put of its
//!   own (applied after it). A copy within a write is otherwise in the C library's
//!   order, so a flag never sits *inside* a put with its data. On a *lazy* window
//!   ([`Mem::net_lazy`], the receiver's acks) byte stores are only staged and put
//!   by [`NetFlush::flush`], which the fabric calls at the end of a progress that
//!   found nothing to do, or once 32 are staged: the ack of a message leaves after the
//!   reply the program sends to it, not before, and the acks of a message of several
//!   postboxes leave together.
//!   On a *batch* window ([`Mem::net_batch`], the sender's channel areas) a flag-led
//!   run stays staged while the next postboxes (body, then flag into the gap left for
//!   it) extend it, up to 1 KiB, and is put at [`NetFlush::flush`] (the fabric calls
//!   it after each pump): a message of up to 16 postboxes inline is one frame.
//!   [`Mem::barrier`] puts what is staged. Pool
//!   blocks stay below the striping size of the import (64 KiB) and so travel on one
//!   rail; a fail-over replays a rail's writes in order on the next. The receiver reads
//!   its own exported memory as on shm.
//!   Loads from a network window are `Import::get`s (a round trip; the channel never
//!   does them on its fast path).
//!
//! [`SrcBuf`] and [`DstBuf`] carry the caller's buffers of `Fabric::send`/`take` (raw
//! pointers with the trait's safety promise) to the copies here.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use myrix_rsm::{Barrier, BarrierType, Export, Import, Mapping};

/// An access outside a window (a peer's bad offset or length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds;

/// What keeps a window's memory mapped.
#[derive(Debug)]
pub enum Backing {
    /// This rank's exported segment.
    Export(Export),
    /// Another rank's segment, mapped.
    Mapping(Mapping),
    /// Test memory.
    Heap(Arc<Heap>),
    /// Another rank's segment over the network: no memory here.
    Net(NetWin),
}

/// Puts between two barrier closes of a network window: a close lets the import
/// forget the ranges of its unflushed writes (a round trip every so many puts).
const NET_PUTS_PER_CLOSE: u32 = 4096;
/// Staged bytes above which they are put without waiting for the flag.
const NET_STAGE_MAX: usize = 256 << 10;
/// The longest put a flag word may lead: it travels as one frame, applied first word
/// last (`rsm::net::memory`).
const NET_ONE_WRITE: usize = 1024;

/// Acks a lazy window stages at most before it puts them without waiting for the
/// flush (a busy receiver still frees the sender's postboxes and pool).
const NET_LAZY_ACKS: usize = 32;

/// Acks a lazy window must have staged before a batch window's put carries them
/// ([`NetFlush::carry_acks`]): each carried run is one more write (one more frame to
/// build, send and apply) in the datagram of an 8 B message, so a ping-pong carries
/// them on one reply in this many, not on every one (session 25, docs/mpi-net.md).
const NET_CARRY_MIN: usize = 8;

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
    imp: Arc<Import>,
    /// Byte stores (acks) are staged too, put at the next [`NetFlush::flush`].
    lazy: bool,
    /// A run led by a flag waits for more postboxes (their bodies and flags fill it in
    /// order) until [`NetFlush::flush`]: the sender's window on a channel area.
    batch: bool,
    /// A batch window's peer's ack window ([`NetFlush::carry_acks`]).
    acks: std::sync::OnceLock<NetFlush>,
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
    barrier: Option<Barrier>,
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
        let mut st = self.lock();
        let end = st.off + st.data.len();
        if self.batch
            && st.led
            && st.hole.is_none()
            && off == end + 8
            && off % 8 == 0
            && st.data.len() + 8 + n <= NET_ONE_WRITE
        {
            // The next postbox's body: its flag will fill the gap.
            st.hole = Some(end);
            let at = st.data.len();
            st.data.resize(at + 8, 0);
        } else if !st.data.is_empty()
            && (end != off || (st.led && st.data.len() + n > NET_ONE_WRITE))
        {
            // Not a continuation, or past what one write (one frame) may hold.
            self.put_staged(&mut st)?;
        }
        if st.data.is_empty() {
            st.off = off;
        }
        let at = st.data.len();
        st.data.resize(at + n, 0);
        fill(&mut st.data[at..]);
        if !st.led && st.data.len() >= NET_STAGE_MAX {
            self.put_staged(&mut st)?;
        }
        Ok(())
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
        if defer {
            self.imp.put_deferred(off, data)
        } else {
            self.imp.put(off, data)
        }
        .map_err(|_| OutOfBounds)?;
        st.puts += 1;
        if st.puts >= NET_PUTS_PER_CLOSE {
            st.puts = 0;
            let b = match &mut st.barrier {
                Some(b) => b,
                None => st.barrier.insert(
                    self.imp
                        .init_barrier(BarrierType::Segment)
                        .map_err(|_| OutOfBounds)?,
                ),
            };
            b.open().map_err(|_| OutOfBounds)?;
            match b.close() {
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
        r
    }

    /// A publishing store of `word` at `off`. An 8-byte word just before the staged
    /// run leads it in one put (one frame, applied first word last: the data is
    /// visible once the word is); otherwise the staged run is put, then the word. On
    /// a lazy window a byte is only staged.
    fn publish(&self, off: usize, word: &[u8]) -> Result<(), OutOfBounds> {
        if self.lazy && word.len() == 1 {
            self.stage(off, 1, |d| d.copy_from_slice(word))?;
            let mut st = self.lock();
            if st.data.len() >= NET_LAZY_ACKS {
                self.put_staged(&mut st)?;
            }
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
            && st.data.len() + 8 <= NET_ONE_WRITE
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

    fn flush(&self) -> Result<(), OutOfBounds> {
        let mut st = self.lock();
        self.put_staged(&mut st)
    }

    /// Puts a lazy window's staged acks, queued to leave with the put that follows,
    /// if at least `min` are staged.
    fn flush_deferred(&self, min: usize) -> Result<(), OutOfBounds> {
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
        r
    }

    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        self.flush()?;
        self.imp.get(off, out).map_err(|_| OutOfBounds)
    }
}

impl NetWin {
    fn stage(&self, off: usize, n: usize, fill: impl FnOnce(&mut [u8])) -> Result<(), OutOfBounds> {
        self.0.stage(off, n, fill)
    }
    fn publish(&self, off: usize, word: &[u8]) -> Result<(), OutOfBounds> {
        self.0.publish(off, word)
    }
    fn flush(&self) -> Result<(), OutOfBounds> {
        self.0.flush()
    }
    fn get(&self, off: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        self.0.get(off, out)
    }
}

impl Drop for NetWin {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Zeroed, 64-byte aligned memory for tests.
#[derive(Debug)]
pub struct Heap {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: `Heap` owns its allocation; all access to it goes through `Mem`, whose
// methods use atomics for polled words and are bounds-checked.
unsafe impl Send for Heap {}
// SAFETY: as above.
unsafe impl Sync for Heap {}

impl Drop for Heap {
    fn drop(&mut self) {
        // SAFETY: allocated in `Mem::heap` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// A window on a segment.
#[derive(Debug)]
pub struct Mem {
    ptr: NonNull<u8>,
    len: usize,
    _keep: Backing,
}

// SAFETY: the memory stays valid while `_keep` lives; `Mem` hands out no references to
// it, only copies and atomic accesses.
unsafe impl Send for Mem {}

impl Mem {
    /// `len` zeroed bytes (rounded up to 64), shared by the returned views.
    pub fn heap(len: usize) -> (Mem, Mem) {
        let len = super::layout::round_up(len.max(64), 64);
        let layout = Layout::from_size_align(len, 64).expect("test sizes are small");
        // SAFETY: `layout` has a nonzero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        let heap = Arc::new(Heap { ptr, layout });
        (
            Mem {
                ptr,
                len,
                _keep: Backing::Heap(heap.clone()),
            },
            Mem {
                ptr,
                len,
                _keep: Backing::Heap(heap),
            },
        )
    }

    /// The local window of this rank's export.
    pub fn export(e: Export) -> Mem {
        let (ptr, len) = (e.as_ptr(), e.len());
        Mem {
            ptr: NonNull::new(ptr).expect("an export has memory"),
            len,
            _keep: Backing::Export(e),
        }
    }

    /// The remote window of a mapped import.
    pub fn mapping(m: Mapping) -> Mem {
        let (ptr, len) = (m.as_ptr(), m.len());
        Mem {
            ptr: NonNull::new(ptr).expect("a mapping has memory"),
            len,
            _keep: Backing::Mapping(m),
        }
    }

    /// The remote window of an import over a network controller (explicit barrier
    /// mode: puts are queued, not waited for). See the module docs.
    pub fn net(imp: Arc<Import>) -> Mem {
        Self::net_with(imp, false, false)
    }

    /// A network window whose byte stores (acks) wait for [`NetFlush::flush`]: the
    /// receiver's window on an ack segment.
    pub fn net_lazy(imp: Arc<Import>) -> Mem {
        Self::net_with(imp, true, false)
    }

    /// A network window whose postboxes wait for [`NetFlush::flush`] and leave
    /// together, up to 1 KiB in one put: the sender's window on a channel area.
    pub fn net_batch(imp: Arc<Import>) -> Mem {
        Self::net_with(imp, false, true)
    }

    fn net_with(imp: Arc<Import>, lazy: bool, batch: bool) -> Mem {
        let _ = imp.set_mode(myrix_rsm::BarrierMode::Explicit);
        Mem {
            ptr: NonNull::dangling(),
            len: imp.len(),
            _keep: Backing::Net(NetWin(Arc::new(NetInner {
                imp,
                lazy,
                batch,
                acks: std::sync::OnceLock::new(),
                st: std::sync::Mutex::new(Staged::default()),
            }))),
        }
    }

    /// The flush handle of a network window.
    pub fn net_flush(&self) -> Option<NetFlush> {
        self.net_win().map(|w| NetFlush(w.0.clone()))
    }

    #[inline]
    fn net_win(&self) -> Option<&NetWin> {
        match &self._keep {
            Backing::Net(w) => Some(w),
            _ => None,
        }
    }

    /// Bounds of a network window's access (no pointer to compute).
    fn net_check(&self, off: usize, n: usize, align: usize) -> Result<(), OutOfBounds> {
        match off.checked_add(n) {
            Some(end) if end <= self.len && off % align == 0 => Ok(()),
            _ => Err(OutOfBounds),
        }
    }

    /// On a local window of a network export: takes in the frames that arrived (the
    /// caller drives the endpoint, so remote writes land without waiting for the
    /// controller's thread). Nothing on other windows.
    pub fn poll_net(&self) {
        if let Backing::Export(e) = &self._keep {
            let _ = e.load_u64(0);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The exported segment behind a local window, if it is one.
    pub fn as_export(&self) -> Option<&Export> {
        match &self._keep {
            Backing::Export(e) => Some(e),
            _ => None,
        }
    }

    #[inline]
    fn check(&self, off: usize, n: usize, align: usize) -> Result<*mut u8, OutOfBounds> {
        match off.checked_add(n) {
            Some(end) if end <= self.len && off % align == 0 => {
                // SAFETY: `off <= len`, inside (or one past) the allocation.
                Ok(unsafe { self.ptr.as_ptr().add(off) })
            }
            _ => Err(OutOfBounds),
        }
    }

    #[inline]
    fn word(&self, off: usize) -> Result<&AtomicU64, OutOfBounds> {
        let p = self.check(off, 8, 8)?;
        // SAFETY: in bounds and 8-aligned (the base is page- or 64-aligned); the memory
        // lives as long as `self`; other processes access it only atomically or with
        // plain copies, and an atomic view of it is always defined.
        Ok(unsafe { AtomicU64::from_ptr(p.cast()) })
    }

    /// Loads the u64 at `off` (8-aligned) with acquire ordering.
    #[inline]
    pub fn load_u64(&self, off: usize) -> Result<u64, OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, 8, 8)?;
            let mut b = [0u8; 8];
            w.get(off, &mut b)?;
            return Ok(u64::from_ne_bytes(b));
        }
        Ok(self.word(off)?.load(Ordering::Acquire))
    }

    /// Stores the u64 at `off` (8-aligned) with release ordering: everything written
    /// before it is visible to whoever sees it.
    #[inline]
    pub fn store_u64(&self, off: usize, v: u64) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, 8, 8)?;
            return w.publish(off, &v.to_ne_bytes());
        }
        self.word(off)?.store(v, Ordering::Release);
        Ok(())
    }

    /// Stores the u64 at `off` with sequential consistency (a clear that must be
    /// ordered before later loads).
    pub fn store_u64_seqcst(&self, off: usize, v: u64) -> Result<(), OutOfBounds> {
        if self.net_win().is_some() {
            return self.store_u64(off, v);
        }
        self.word(off)?.store(v, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        Ok(())
    }

    #[inline]
    pub fn load_u8(&self, off: usize) -> Result<u8, OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, 1, 1)?;
            let mut b = [0u8; 1];
            w.get(off, &mut b)?;
            return Ok(b[0]);
        }
        let p = self.check(off, 1, 1)?;
        // SAFETY: in bounds; see `word`.
        Ok(unsafe { AtomicU8::from_ptr(p) }.load(Ordering::Acquire))
    }

    #[inline]
    pub fn store_u8(&self, off: usize, v: u8) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, 1, 1)?;
            return w.publish(off, &[v]);
        }
        let p = self.check(off, 1, 1)?;
        // SAFETY: in bounds; see `word`.
        unsafe { AtomicU8::from_ptr(p) }.store(v, Ordering::Release);
        Ok(())
    }

    /// A u32 field (written before a flag word that publishes it).
    #[inline]
    pub fn load_u32(&self, off: usize) -> Result<u32, OutOfBounds> {
        let mut b = [0u8; 4];
        self.read(off, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    pub fn store_u32(&self, off: usize, v: u32) -> Result<(), OutOfBounds> {
        self.write(off, &v.to_le_bytes())
    }

    /// Copies `data` to `off`.
    #[inline]
    pub fn write(&self, off: usize, data: &[u8]) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, data.len(), 1)?;
            return w.stage(off, data.len(), |d| d.copy_from_slice(data));
        }
        let p = self.check(off, data.len(), 1)?;
        // SAFETY: `p..p+len` is in bounds; `data` is this process's memory and is not
        // part of a segment window (callers pass their own buffers).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Copies the first `n` bytes of `data` (`n <= N`) to `off`. On shared memory all
    /// `N` bytes are copied, the caller's padding past `n` included: a copy of a size
    /// known here is a few moves, with no call into the C library. On a network window
    /// only the `n` bytes are staged (they travel).
    #[inline]
    pub fn write_prefix<const N: usize>(
        &self,
        off: usize,
        data: &[u8; N],
        n: usize,
    ) -> Result<(), OutOfBounds> {
        if self.net_win().is_some() {
            return self.write(off, data.get(..n).ok_or(OutOfBounds)?);
        }
        let p = self.check(off, N, 1)?;
        // SAFETY: `p..p+N` is in bounds; `data` is this process's memory (as `write`).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, N) };
        Ok(())
    }

    /// Copies bytes at `off` into `out`.
    #[inline]
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, out.len(), 1)?;
            return w.get(off, out);
        }
        let p = self.check(off, out.len(), 1)?;
        // SAFETY: in bounds; `out` is ours.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copies `n` bytes of `src` from `at` to `off`.
    #[inline]
    pub fn write_from(
        &self,
        off: usize,
        src: &SrcBuf,
        at: usize,
        n: usize,
    ) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, n, 1)?;
            let s = src.range(at, n)?;
            // SAFETY: `s..s+n` is inside the sender's buffer (checked), valid by
            // `Fabric::send`'s promise; `d` is the staging buffer, ours.
            return w.stage(off, n, |d| unsafe {
                std::ptr::copy_nonoverlapping(s, d.as_mut_ptr(), n)
            });
        }
        let p = self.check(off, n, 1)?;
        let s = src.range(at, n)?;
        // SAFETY: `p..p+n` is in bounds of the window; `s..s+n` of the sender's buffer
        // (valid by `Fabric::send`'s promise, checked against its length).
        unsafe { std::ptr::copy_nonoverlapping(s, p, n) };
        Ok(())
    }

    /// Copies `n` bytes at `off` into `dst` from `at`; bytes past `dst`'s capacity are
    /// dropped (truncation).
    #[inline]
    pub fn read_into(
        &self,
        off: usize,
        dst: &DstBuf,
        at: usize,
        n: usize,
    ) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, n, 1)?;
            let n = n.min(dst.cap.saturating_sub(at));
            let mut tmp = vec![0u8; n];
            w.get(off, &mut tmp)?;
            // SAFETY: `at + n <= cap`, inside the receive buffer (valid by
            // `Fabric::take`'s promise); `tmp` is ours.
            unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), dst.ptr.add(at), n) };
            return Ok(());
        }
        let p = self.check(off, n, 1)?;
        let n = n.min(dst.cap.saturating_sub(at));
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `at + n <= cap`, inside the receive buffer (valid by `Fabric::take`'s
        // promise); `p..p+n` in bounds of the window.
        unsafe { std::ptr::copy_nonoverlapping(p, dst.ptr.add(at), n) };
        Ok(())
    }

    /// The barrier between filling pool blocks and writing the postboxes that point
    /// to them (seed §3.2). On shared memory a release fence; on a network window the
    /// staged data is put (one import's writes are applied in order: no round trip).
    #[inline]
    pub fn barrier(&self) {
        if let Some(w) = self.net_win() {
            // A failed put shows at the next publishing store (the same import).
            let _ = w.flush();
            return;
        }
        fence(Ordering::Release);
    }
}

/// A sender's buffer: `len` bytes at `ptr`, valid until the send is reported done.
#[derive(Debug, Clone, Copy)]
pub struct SrcBuf {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the caller of `Fabric::send` promised the buffer stays valid for reading
// until `SendDone`; the fabric only reads it.
unsafe impl Send for SrcBuf {}

impl SrcBuf {
    /// # Safety
    /// `ptr` is valid for reading `len` bytes for as long as the `SrcBuf` (or a copy)
    /// is used (`Fabric::send`'s promise). `ptr` may be dangling when `len` is 0.
    pub unsafe fn new(ptr: *const u8, len: usize) -> SrcBuf {
        SrcBuf { ptr, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn range(&self, at: usize, n: usize) -> Result<*const u8, OutOfBounds> {
        match at.checked_add(n) {
            Some(end) if end <= self.len => {
                // SAFETY: `at <= len`: inside or one past the buffer.
                Ok(unsafe { self.ptr.add(at) })
            }
            _ => Err(OutOfBounds),
        }
    }

    /// Copies `out.len()` bytes from `at` into `out`.
    #[inline]
    pub fn copy_into(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let s = self.range(at, out.len())?;
        // SAFETY: `s..s+len` is inside the sender's buffer (checked), valid by
        // `Fabric::send`'s promise; `out` is ours.
        unsafe { std::ptr::copy_nonoverlapping(s, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copies `n` bytes from `at` into `dst` from `dst_at` (the in-process path to
    /// self), truncating at `dst`'s capacity.
    pub fn copy_to(&self, at: usize, dst: &DstBuf, dst_at: usize, n: usize) {
        let n = n.min(dst.cap.saturating_sub(dst_at));
        let Ok(s) = self.range(at, n) else { return };
        if n == 0 {
            return;
        }
        // SAFETY: both ranges are inside their buffers (checked above), valid by the
        // two trait promises; a send and a receive buffer may alias only if the
        // program passed overlapping buffers, which MPI forbids.
        unsafe { std::ptr::copy(s, dst.ptr.add(dst_at), n) };
    }

    /// Reads `n <= 8` bytes as a slice copy (tests of small payloads).
    pub fn get(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let s = self.range(at, out.len())?;
        // SAFETY: in bounds of the sender's buffer.
        unsafe { std::ptr::copy_nonoverlapping(s, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
}

/// A receiver's buffer: `cap` bytes at `ptr`, valid until its data is reported received.
#[derive(Debug, Clone, Copy)]
pub struct DstBuf {
    ptr: *mut u8,
    cap: usize,
}

// SAFETY: as for `SrcBuf`, with `Fabric::take`'s promise.
unsafe impl Send for DstBuf {}

impl DstBuf {
    /// # Safety
    /// `ptr` is valid for writing `cap` bytes for as long as the `DstBuf` is used
    /// (`Fabric::take`'s promise). `ptr` may be dangling when `cap` is 0.
    pub unsafe fn new(ptr: *mut u8, cap: usize) -> DstBuf {
        DstBuf { ptr, cap }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Copies `data` to the start of the buffer, truncated at its capacity.
    #[inline]
    pub fn write_slice(&self, data: &[u8]) {
        let n = data.len().min(self.cap);
        if n == 0 {
            return;
        }
        // SAFETY: `n <= cap`, inside the receive buffer (valid by `Fabric::take`'s
        // promise); `data` is ours.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr, n) };
    }
}

#[cfg(test)]
mod tests;

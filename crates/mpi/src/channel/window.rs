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
//!   controller (`udp`: no mapping): its stores become `Import::put`s, staged and
//!   coalesced so that a postbox's data is visible before its flag without a round
//!   trip (`window/net.rs` says how). [`Mem::net_over`] is the same window over any
//!   [`RemoteSegment`] (the tests' RSM engines on a lossy in-memory network).
//!
//! Split by path: this file is the windows themselves and the shared-memory path
//! (loads, stores and copies on mapped memory: the fast path of every message);
//! `window/net.rs` the network path (staging and puts); `window/bufs.rs` the
//! caller's buffers.
//!
//! [`SrcBuf`] and [`DstBuf`] carry the caller's buffers of `Fabric::send`/`take` (raw
//! pointers with the trait's safety promise) to the copies here.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use myrix_rsm::{Export, Import, Mapping};

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
    /// Memory several windows view (a sender's shared area: [`Mem::share`]).
    Shared(Arc<Backing>),
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

    /// This window made shareable ([`Mem::share`]): a sender's shared area, whose
    /// links each hold a window on it.
    pub fn into_shared(self) -> Mem {
        let Mem { ptr, len, _keep } = self;
        let _keep = match _keep {
            k @ (Backing::Net(_) | Backing::Heap(_) | Backing::Shared(_)) => k,
            k => Backing::Shared(Arc::new(k)),
        };
        Mem { ptr, len, _keep }
    }

    /// The window from `off` on (a queue of a shared area seen as if the area began
    /// there, so the postbox offsets of the hot paths are those of a one-queue area).
    /// None past the end, or on a network window already written or flushed through.
    pub fn skip(self, off: usize) -> Option<Mem> {
        if off > self.len {
            return None;
        }
        let Mem { ptr, len, _keep } = self;
        if let Backing::Net(w) = _keep {
            return Some(Mem {
                ptr,
                len: len - off,
                _keep: Backing::Net(w.skip(off)?),
            });
        }
        // SAFETY: `off <= len`: inside (or one past) the window's memory.
        let ptr = unsafe { NonNull::new_unchecked(ptr.as_ptr().add(off)) };
        Some(Mem {
            ptr,
            len: len - off,
            _keep,
        })
    }

    /// Another window on the same memory, for a window made by [`Mem::into_shared`]
    /// or on test memory. None otherwise (a network window's staging is its own).
    pub fn share(&self) -> Option<Mem> {
        let keep = match &self._keep {
            Backing::Heap(h) => Backing::Heap(h.clone()),
            Backing::Shared(b) => Backing::Shared(b.clone()),
            _ => return None,
        };
        Some(Mem {
            ptr: self.ptr,
            len: self.len,
            _keep: keep,
        })
    }

    /// The first byte of this window's memory in this process; None on a network
    /// window (no memory here).
    pub fn local_ptr(&self) -> Option<NonNull<u8>> {
        self.net_win().is_none().then_some(self.ptr)
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
        Self::net_target(net::Target::Import(imp), lazy, batch)
    }

    /// A network window over another implementation of [`RemoteSegment`] (the tests'
    /// RSM engines on a lossy in-memory network): as [`Mem::net`] (`lazy` and `batch`
    /// false), [`Mem::net_lazy`] (`lazy`) or [`Mem::net_batch`] (`batch`).
    pub fn net_over(seg: Arc<dyn RemoteSegment>, lazy: bool, batch: bool) -> Mem {
        Self::net_target(net::Target::Other(seg), lazy, batch)
    }

    fn net_target(t: net::Target, lazy: bool, batch: bool) -> Mem {
        Mem {
            ptr: NonNull::dangling(),
            len: t.len(),
            _keep: Backing::Net(NetWin::new(t, lazy, batch)),
        }
    }

    /// The flush handle of a network window.
    pub fn net_flush(&self) -> Option<NetFlush> {
        self.net_win().map(NetWin::flush_handle)
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
            // The poll alone: `load_u64(0)` also locked the segment's state twice (its
            // length and address) on every look, nearly all of them empty.
            e.poll();
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

    /// A postbox in one step: `write_prefix(off + 8, body, n)`, then `store_u64(off,
    /// flag)`. On a network window the flag and the body are staged together (one
    /// lock, the body in place behind the flag: session 26, docs/mpi-net.md).
    #[inline]
    pub fn post_led<const N: usize>(
        &self,
        off: usize,
        flag: u64,
        body: &[u8; N],
        n: usize,
    ) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, 8 + n, 8)?;
            return w.post_led(off, &flag.to_ne_bytes(), body.get(..n).ok_or(OutOfBounds)?);
        }
        // Shared memory: the line (all `N` bytes, as `write_prefix`), then the flag
        // with release, without `write_prefix`'s and `store_u64`'s own looks at the
        // backing (this runs once per short message on shm too).
        let word = self.word(off)?;
        let p = self.check(off + 8, N, 1)?;
        // SAFETY: `p..p+N` is in bounds; `body` is this process's memory (as `write`).
        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), p, N) };
        word.store(flag, Ordering::Release);
        demote(word.as_ptr().cast());
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
        if src.lay().is_some() {
            return self.write_gathered(off, src, at, n);
        }
        if let Some(w) = self.net_win() {
            self.net_check(off, n, 1)?;
            let s = src.range(at, n)?;
            if n >= net::NET_DIRECT_MIN {
                // SAFETY: `s..s+n` is inside the sender's buffer (checked), valid by
                // `Fabric::send`'s promise for as long as this call (the put copies
                // it before it returns).
                let data = unsafe { std::slice::from_raw_parts(s, n) };
                return w.put_direct(off, data);
            }
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

    /// [`Mem::write_from`] of a layout: the bytes gathered straight into the window
    /// (shared memory) or into the staged put (network).
    #[inline(never)]
    fn write_gathered(
        &self,
        off: usize,
        src: &SrcBuf,
        at: usize,
        n: usize,
    ) -> Result<(), OutOfBounds> {
        if let Some(w) = self.net_win() {
            self.net_check(off, n, 1)?;
            // Gathered into the staging buffer's spare room: no zeroing pass over a
            // long message's bytes before the gather overwrites them.
            return w.stage_vec(off, n, |v| {
                v.reserve(n);
                let at_end = v.len();
                // SAFETY: `reserve` made `n` bytes of room after `at_end` in the
                // staging buffer, ours; `gather_to` writes all `n` when it returns Ok
                // (it checks the range before it copies), and only then are they
                // counted in the length.
                unsafe {
                    src.gather_to(at, v.as_mut_ptr().add(at_end), n)?;
                    v.set_len(at_end + n);
                }
                Ok(())
            });
        }
        let p = self.check(off, n, 1)?;
        // SAFETY: `p..p+n` is in bounds of the window, which is no part of the
        // sender's buffer.
        unsafe { src.gather_to(at, p, n) }
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
            if dst.is_layout() {
                // SAFETY: a layout buffer; `tmp` is ours.
                unsafe { dst.scatter_from(at, tmp.as_ptr(), n) };
                return Ok(());
            }
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
        if dst.is_layout() {
            // SAFETY: a layout buffer; `p..p+n` in bounds of the window, which is no
            // part of the receive buffer.
            unsafe { dst.scatter_from(at, p, n) };
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

#[path = "window/net.rs"]
mod net;
pub use net::{NetFlush, NetWin, RemoteSegment};

#[path = "window/bufs.rs"]
mod bufs;
pub use bufs::{DstBuf, SrcBuf};

/// Hints the CPU to move the cache line at `p` from this core's private caches to the
/// shared one (`CLDEMOTE`), so that the peer polling it loads it from there instead of
/// snooping this core: a postbox just written is read next by the other rank, and by
/// this one not before a lap later. No architectural effect; processors without it
/// run the encoding as a NOP (the 0F 1C hint space), valgrind too.
#[inline(always)]
fn demote(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: CLDEMOTE neither reads nor writes memory architecturally (a cache hint
    // that cannot fault); `p` is a mapped line of this window anyway.
    unsafe {
        std::arch::asm!(".byte 0x0f, 0x1c, 0x07", in("rdi") p, options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests;

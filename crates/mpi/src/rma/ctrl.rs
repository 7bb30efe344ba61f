//! A window's control block: one per rank and window, in an RSM segment of its
//! own, that every rank of the window maps. Everything in it is a `u64` word
//! manipulated with atomics only (so two processes mapping it at different
//! addresses agree):
//!
//! | word | what |
//! |---|---|
//! | 0 | state: [`LIVE`] while the window exists, [`FREED`] after its owner freed it |
//! | 1 | the passive-target lock: bit 63 exclusive, bits 0..63 shared holders |
//! | 2 | the accumulate lock (a spin lock for accumulates hardware atomics cannot do) |
//! | 3 | dynamic windows: the attach table's sequence (odd while it changes) |
//! | 4 | dynamic windows: slots of the attach table ever used (lookups scan no further) |
//! | 8.. | `posts[r]`: how many times rank `r` posted to this rank (PSCW) |
//! | 8+n.. | `completes[r]`: how many times rank `r` completed towards this rank |
//! | 8+2n.. | dynamic windows: [`ATTACH_MAX`] attachments of [`SLOT_WORDS`] words (address, length, `shm` segment id + 1, page start) |
//!
//! The lock is a reader-writer word: an exclusive locker moves it from 0 to
//! `EXCL`, a shared one adds 1 while `EXCL` is clear. Lockers spin
//! ([`myrix_rsm::spin::SpinWait`]) and nothing queues: a steady stream of shared
//! lockers can starve an exclusive one, and a process that dies holding a lock
//! leaves it held: a waiter asks now and then whether a rank died
//! ([`Ctrl::lock_exclusive_unless`]) and gives up with an error.

use myrix_rsm::spin::SpinWait;
use std::sync::atomic::{AtomicU64, Ordering};

pub const LIVE: u64 = 0x5749_4e00_0000_0001;
pub const FREED: u64 = 0x5749_4e00_0000_0002;
const EXCL: u64 = 1 << 63;
const HDR: usize = 8;
/// Spins of a lock wait between two looks for a dead rank (a look costs a system
/// call per rank of the node).
pub const CHECK_EVERY: u32 = 1024;
/// Attachments (pieces of attached regions, see [`Attachment`]) a dynamic window's
/// rank may hold at once. Pages of the table no rank uses are never touched.
pub const ATTACH_MAX: usize = 2048;
/// Words per attachment slot.
pub const SLOT_WORDS: usize = 4;

/// Bytes of a control block for a window of `n` ranks.
pub fn len(n: usize) -> usize {
    8 * (HDR + 2 * n + SLOT_WORDS * ATTACH_MAX)
}

/// One attachment of a dynamic window: a region attached by MPI_Win_attach, or the
/// piece of one that lies in one segment (a region whose pages partly belong to
/// memory already exposed is cut where the segments meet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    pub addr: u64,
    pub len: u64,
    /// The `shm` segment holding it.
    pub seg: u32,
    /// The first byte of the segment in the attaching process.
    pub page: u64,
}

impl Attachment {
    /// Whether `addr..addr+n` lies inside it.
    pub fn holds(&self, addr: u64, n: u64) -> bool {
        addr >= self.addr
            && addr
                .checked_add(n)
                .is_some_and(|e| e <= self.addr + self.len)
    }
}

/// A control block at some address of this process (its owner's export, or
/// another rank's mapping of it).
#[derive(Debug, Clone, Copy)]
pub struct Ctrl {
    ptr: usize,
    n: usize,
}

impl Ctrl {
    /// # Safety
    /// `ptr` is 8-aligned and [`len`]`(n)` bytes stay mapped, readable and
    /// writable, while this `Ctrl` (and its copies) are used; the memory is only
    /// accessed through `Ctrl`s.
    pub unsafe fn new(ptr: *mut u8, n: usize) -> Ctrl {
        Ctrl {
            ptr: ptr as usize,
            n,
        }
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < HDR + 2 * self.n + SLOT_WORDS * ATTACH_MAX);
        // SAFETY: in bounds (checked), 8-aligned and mapped by `new`'s contract;
        // every access to the block is atomic.
        unsafe { AtomicU64::from_ptr((self.ptr as *mut u64).add(i)) }
    }

    #[inline]
    pub fn state(&self) -> u64 {
        self.word(0).load(Ordering::Acquire)
    }
    pub fn set_state(&self, s: u64) {
        self.word(0).store(s, Ordering::Release)
    }

    #[cfg(test)]
    pub fn lock_exclusive(&self) {
        self.lock_exclusive_unless(|| false);
    }

    #[cfg(test)]
    pub fn lock_shared(&self) {
        self.lock_shared_unless(|| false);
    }

    /// Takes the exclusive lock, asking `gone` every [`CHECK_EVERY`] spins whether to
    /// give up (a rank of the window died: the holder may be that rank, and nothing
    /// would release the lock); `false` when it gave up.
    pub fn lock_exclusive_unless(&self, mut gone: impl FnMut() -> bool) -> bool {
        let w = self.word(1);
        let mut s = SpinWait::new();
        let mut k = 0u32;
        while w
            .compare_exchange_weak(0, EXCL, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            k = k.wrapping_add(1);
            if k % CHECK_EVERY == 0 && gone() {
                return false;
            }
            s.spin();
        }
        true
    }

    /// A shared lock, giving up as [`Ctrl::lock_exclusive_unless`] does.
    pub fn lock_shared_unless(&self, mut gone: impl FnMut() -> bool) -> bool {
        let w = self.word(1);
        let mut s = SpinWait::new();
        let mut k = 0u32;
        loop {
            let v = w.load(Ordering::Relaxed);
            if v & EXCL == 0
                && w.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return true;
            }
            k = k.wrapping_add(1);
            if k % CHECK_EVERY == 0 && gone() {
                return false;
            }
            s.spin();
        }
    }

    /// One attempt at the exclusive lock (a target's service thread, for a remote
    /// origin: it retries later rather than spin).
    pub fn try_lock_exclusive(&self) -> bool {
        self.word(1)
            .compare_exchange(0, EXCL, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// One attempt at a shared lock.
    pub fn try_lock_shared(&self) -> bool {
        let w = self.word(1);
        let v = w.load(Ordering::Relaxed);
        v & EXCL == 0
            && w.compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    pub fn unlock_exclusive(&self) {
        self.word(1).fetch_and(!EXCL, Ordering::Release);
    }

    pub fn unlock_shared(&self) {
        self.word(1).fetch_sub(1, Ordering::Release);
    }

    /// The lock word (tests, diagnostics).
    pub fn lock_word(&self) -> u64 {
        self.word(1).load(Ordering::Relaxed)
    }

    /// Runs `f` holding the accumulate lock.
    pub fn with_acc_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        let w = self.word(2);
        let mut s = SpinWait::new();
        while w
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            s.spin();
        }
        let r = f();
        w.store(0, Ordering::Release);
        r
    }

    /// `from` posted to this rank.
    pub fn post_from(&self, from: usize) {
        self.word(HDR + from).fetch_add(1, Ordering::Release);
    }
    pub fn posts(&self, from: usize) -> u64 {
        self.word(HDR + from).load(Ordering::Acquire)
    }
    /// Byte offset of `posts[from]` in a block (a remote poster puts its count there:
    /// the word has one writer).
    pub fn posts_offset(from: usize) -> usize {
        8 * (HDR + from)
    }
    /// Byte offset of `completes[from]` in a block of `n` ranks.
    pub fn completes_offset(n: usize, from: usize) -> usize {
        8 * (HDR + n + from)
    }
    /// `from` completed its access epoch towards this rank.
    pub fn complete_from(&self, from: usize) {
        self.word(HDR + self.n + from)
            .fetch_add(1, Ordering::Release);
    }
    pub fn completes(&self, from: usize) -> u64 {
        self.word(HDR + self.n + from).load(Ordering::Acquire)
    }

    fn attach_word(&self, slot: usize, k: usize) -> &AtomicU64 {
        self.word(HDR + 2 * self.n + SLOT_WORDS * slot + k)
    }

    /// Slots of the attach table ever used.
    pub fn slots_used(&self) -> usize {
        (self.word(4).load(Ordering::Acquire) as usize).min(ATTACH_MAX)
    }

    /// Records an attachment in a free slot (the owner only); `false` when full.
    pub fn attach(&self, a: Attachment) -> bool {
        let used = self.slots_used();
        let Some(slot) = (0..ATTACH_MAX)
            .find(|&i| i >= used || self.attach_word(i, 2).load(Ordering::Relaxed) == 0)
        else {
            return false;
        };
        self.edit(|| {
            self.attach_word(slot, 0).store(a.addr, Ordering::Relaxed);
            self.attach_word(slot, 1).store(a.len, Ordering::Relaxed);
            self.attach_word(slot, 3).store(a.page, Ordering::Relaxed);
            self.attach_word(slot, 2)
                .store(u64::from(a.seg) + 1, Ordering::Relaxed);
            if slot >= used {
                self.word(4).store(slot as u64 + 1, Ordering::Release);
            }
        });
        true
    }

    /// Removes the attachment starting at `addr` (the owner only).
    pub fn detach(&self, addr: u64) -> Option<Attachment> {
        let slot = (0..self.slots_used()).find(|&i| {
            self.attach_word(i, 2).load(Ordering::Relaxed) != 0
                && self.attach_word(i, 0).load(Ordering::Relaxed) == addr
        })?;
        let a = self.read_slot(slot)?;
        self.edit(|| self.attach_word(slot, 2).store(0, Ordering::Relaxed));
        Some(a)
    }

    fn edit(&self, f: impl FnOnce()) {
        let seq = self.word(3);
        seq.fetch_add(1, Ordering::AcqRel);
        std::sync::atomic::fence(Ordering::Release);
        f();
        seq.fetch_add(1, Ordering::Release);
    }

    fn read_slot(&self, i: usize) -> Option<Attachment> {
        let seg = self.attach_word(i, 2).load(Ordering::Relaxed);
        (seg != 0).then(|| Attachment {
            addr: self.attach_word(i, 0).load(Ordering::Relaxed),
            len: self.attach_word(i, 1).load(Ordering::Relaxed),
            seg: (seg - 1) as u32,
            page: self.attach_word(i, 3).load(Ordering::Relaxed),
        })
    }

    /// The attachment holding `addr..addr+n`, read consistently (a sequence lock).
    pub fn find_attachment(&self, addr: u64, n: u64) -> Option<Attachment> {
        self.read_table(|| {
            (0..self.slots_used()).find_map(|i| self.read_slot(i).filter(|a| a.holds(addr, n)))
        })
    }

    /// Whether `addr..addr+n` is attached memory: inside one attachment, or pieces
    /// of attachments laid end to end (a region cut where its pages meet memory
    /// exposed before, see [`Attachment`]). Only the owner's own process can reach
    /// such a range with one pointer (its service thread, or the rank itself).
    pub fn covers(&self, addr: u64, n: u64) -> bool {
        let Some(end) = addr.checked_add(n) else {
            return false;
        };
        if n == 0 {
            return self.find_attachment(addr, 0).is_some();
        }
        self.read_table(|| {
            let used = self.slots_used();
            let mut at = addr;
            loop {
                let Some(a) = (0..used).find_map(|i| {
                    self.read_slot(i)
                        .filter(|a| a.addr <= at && at < a.addr + a.len)
                }) else {
                    return false;
                };
                at = a.addr + a.len;
                if at >= end {
                    return true;
                }
            }
        })
    }

    /// `f`'s reading of the attach table, retried until no edit overlapped it.
    fn read_table<T>(&self, f: impl Fn() -> T) -> T {
        let seq = self.word(3);
        let mut s = SpinWait::new();
        loop {
            let before = seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                s.spin();
                continue;
            }
            let found = f();
            std::sync::atomic::fence(Ordering::Acquire);
            if seq.load(Ordering::Relaxed) == before {
                return found;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn block(n: usize) -> (Arc<Vec<AtomicU64>>, Ctrl) {
        let v: Arc<Vec<AtomicU64>> = Arc::new((0..len(n) / 8).map(|_| AtomicU64::new(0)).collect());
        // SAFETY: the vector outlives the test's threads (they hold the Arc) and
        // is only accessed through the Ctrl.
        let c = unsafe { Ctrl::new(v.as_ptr() as *mut u8, n) };
        (v, c)
    }

    #[test]
    fn exclusive_lock_makes_plain_increments_exact() {
        let (mem, c) = block(4);
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (mem, counter) = (mem.clone(), counter.clone());
                std::thread::spawn(move || {
                    let _keep = mem;
                    for _ in 0..2000 {
                        c.lock_exclusive();
                        // A non-atomic read-modify-write, made exact by the lock.
                        let v = counter.load(Ordering::Relaxed);
                        counter.store(v + 1, Ordering::Relaxed);
                        c.unlock_exclusive();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 8000);
        assert_eq!(c.lock_word(), 0);
    }

    #[test]
    fn shared_holders_exclude_an_exclusive_one() {
        let (_mem, c) = block(2);
        c.lock_shared();
        c.lock_shared();
        assert_eq!(c.lock_word(), 2);
        let w = c.word(1);
        assert!(w
            .compare_exchange(0, EXCL, Ordering::Acquire, Ordering::Relaxed)
            .is_err());
        c.unlock_shared();
        c.unlock_shared();
        c.lock_exclusive();
        assert_eq!(c.lock_word(), EXCL);
        c.unlock_exclusive();
        assert_eq!(c.lock_word(), 0);
    }

    #[test]
    fn pscw_counters_and_attachments() {
        let (_mem, c) = block(3);
        c.post_from(2);
        c.post_from(2);
        c.complete_from(1);
        assert_eq!((c.posts(2), c.posts(0), c.completes(1)), (2, 0, 1));
        let a = Attachment {
            addr: 0x1000_0010,
            len: 64,
            seg: 0x8000_0005,
            page: 0x1000_0000,
        };
        assert!(c.attach(a));
        assert_eq!(c.find_attachment(0x1000_0010 + 8, 56), Some(a));
        assert_eq!(c.find_attachment(0x1000_0010 + 8, 57), None);
        assert_eq!(c.detach(a.addr), Some(a));
        assert_eq!(c.find_attachment(a.addr, 1), None);
        for i in 0..ATTACH_MAX as u64 {
            assert!(c.attach(Attachment { addr: i * 64, ..a }));
        }
        assert!(!c.attach(a));
        // A region cut into two pieces: covered as a whole, not by either piece.
        let (_mem, c) = block(2);
        let p1 = Attachment {
            addr: 0x5000,
            len: 0x100,
            seg: 1,
            page: 0x5000,
        };
        let p2 = Attachment {
            addr: 0x5100,
            len: 0x2000,
            seg: 2,
            page: 0x6000,
        };
        assert!(c.attach(p1) && c.attach(p2));
        assert_eq!(c.find_attachment(0x50f0, 0x20), None);
        assert!(c.covers(0x50f0, 0x20));
        assert!(c.covers(0x5000, 0x2100));
        assert!(!c.covers(0x5000, 0x2101));
        assert!(!c.covers(0x4fff, 2));
        assert!(c.covers(0x5100, 0));
    }
}

//! The runtime's lock (`runtime::RT`): a mutex biased toward one thread, the one that
//! started the runtime, which takes and releases it without an atomic
//! read-modify-write instruction.
//!
//! Why: every MPI call takes the runtime's lock, and MPI programs almost always call
//! from one thread (MPI_THREAD_SINGLE and FUNNELED allow no other; most SERIALIZED
//! programs use one). A `std::sync::Mutex` costs two locked instructions per call (a
//! compare-and-swap to take it, a swap to release it); each is a full barrier that
//! waits for the store buffer to drain — on the shared-memory path that buffer holds
//! the postbox line just written for the peer, whose ownership comes from the other
//! core. On an 8-byte ping-pong both sit on the critical path (docs/mpi-p2p.md,
//! "Session 27").
//!
//! How: the owner marks itself inside (`busy`, a plain store), then checks that the
//! bias still holds (a plain load). Another thread that wants the lock takes the
//! ordinary mutex, clears the bias for good, and issues `membarrier(2)`
//! (`MEMBARRIER_CMD_PRIVATE_EXPEDITED`): the kernel runs a full memory barrier on every
//! CPU running a thread of this process. So either the owner's `busy` store is
//! visible to the revoking thread after the call, or the owner's later load of the
//! bias sees it cleared (the asymmetric form of Dekker's mutual exclusion: the owner
//! needs only a compiler fence, the rare side pays for the system call). The revoking
//! thread then waits until `busy` is clear; from then on every thread, the owner
//! too, takes the mutex. Where `membarrier` is unavailable (an old kernel, a seccomp
//! filter) the lock is never biased: every call takes the mutex, as before.
//!
//! A thread that calls in while the owner is inside therefore still waits for it:
//! calls stay serialized whatever the thread level, and a program that breaks its
//! thread level's promise is no less safe than with the plain mutex.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// A mutex biased toward one thread (see the module docs).
pub struct BiasedLock<T> {
    /// The ordinary lock: every thread but the owner, and the owner once the bias is
    /// gone.
    mutex: Mutex<()>,
    /// The owner's fast path is allowed; cleared for good by the first other thread.
    biased: AtomicBool,
    /// The owner thread (`pthread_self`), meaningful while `biased`.
    owner: AtomicUsize,
    /// The owner is inside through the fast path.
    busy: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is reached only through a `Guard`, and at most one guard exists at a
// time: the mutex excludes the slow holders from each other, and `busy` with the
// bias protocol excludes the owner's fast path from them (module docs).
unsafe impl<T: Send> Sync for BiasedLock<T> {}

/// Access to the locked value; released on drop.
pub struct Guard<'a, T> {
    lock: &'a BiasedLock<T>,
    /// `None`: taken through the owner's fast path.
    slow: Option<MutexGuard<'a, ()>>,
}

fn me() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

impl<T> BiasedLock<T> {
    pub const fn new(v: T) -> Self {
        BiasedLock {
            mutex: Mutex::new(()),
            biased: AtomicBool::new(false),
            owner: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            data: UnsafeCell::new(v),
        }
    }

    /// Takes the lock, waiting for another holder.
    #[inline]
    pub fn lock(&self) -> Guard<'_, T> {
        if let Some(g) = self.try_fast() {
            return g;
        }
        self.lock_slow()
    }

    /// Takes the lock if nobody holds it (the owner holding it itself included).
    pub fn try_lock(&self) -> Option<Guard<'_, T>> {
        if self.biased.load(Ordering::Relaxed) && self.owner.load(Ordering::Relaxed) == me() {
            if self.busy.load(Ordering::Relaxed) {
                return None; // the owner holds it further up its own stack
            }
            if let Some(g) = self.try_fast() {
                return Some(g);
            }
        }
        let m = match self.mutex.try_lock() {
            Ok(m) => m,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        self.revoke();
        if self.busy.load(Ordering::Acquire) {
            return None; // the owner is inside; the bias is gone all the same
        }
        Some(Guard {
            lock: self,
            slow: Some(m),
        })
    }

    /// The owner's fast path: `None` if this thread is not the owner or the bias is
    /// gone.
    #[inline]
    fn try_fast(&self) -> Option<Guard<'_, T>> {
        if !self.biased.load(Ordering::Relaxed) || self.owner.load(Ordering::Relaxed) != me() {
            return None;
        }
        // A second guard on this thread would alias the first: a std mutex would
        // deadlock here; this refuses (a panic, which the C boundary reports).
        assert!(
            !self.busy.load(Ordering::Relaxed),
            "the runtime's lock taken twice by one thread"
        );
        self.busy.store(true, Ordering::Relaxed);
        // Only the compiler must keep the store above the load: a revoking thread's
        // membarrier supplies the processor's barrier (module docs).
        compiler_fence(Ordering::SeqCst);
        if self.biased.load(Ordering::Acquire) {
            return Some(Guard {
                lock: self,
                slow: None,
            });
        }
        self.busy.store(false, Ordering::Release);
        None
    }

    #[cold]
    fn lock_slow(&self) -> Guard<'_, T> {
        let m = self.mutex.lock().unwrap_or_else(|p| p.into_inner());
        self.revoke();
        let mut spins = 0u32;
        while self.busy.load(Ordering::Acquire) {
            // The owner is inside (possibly blocked in a receive): wait without
            // burning its core.
            spins = spins.saturating_add(1);
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 1024 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        Guard {
            lock: self,
            slow: Some(m),
        }
    }

    /// Ends the bias for good, unless it is this thread's own (called with the mutex
    /// held). After it, the owner's fast path fails or its `busy` is visible here.
    fn revoke(&self) {
        if !self.biased.load(Ordering::Relaxed) || self.owner.load(Ordering::Relaxed) == me() {
            return;
        }
        self.biased.store(false, Ordering::SeqCst);
        membarrier::all_threads();
    }
}

impl<T> Guard<'_, T> {
    /// Biases the lock toward the calling thread, if the lock was never biased and
    /// `membarrier` is available: called by the thread that starts the runtime, with
    /// the lock held.
    pub fn bias_to_current_thread(&self) {
        let l = self.lock;
        if self.slow.is_none() || l.owner.load(Ordering::Relaxed) != 0 {
            return; // biased once already (to this thread, or revoked)
        }
        l.owner.store(me(), Ordering::Relaxed);
        if membarrier::register() {
            // Published to other threads by the mutex's release.
            l.biased.store(true, Ordering::Relaxed);
        }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only access to the value (see `Sync` above).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.slow.is_none() {
            self.lock.busy.store(false, Ordering::Release);
        }
        // A slow guard releases the mutex as its `MutexGuard` drops.
    }
}

/// Linux's `membarrier(2)`, private expedited: a full barrier on every CPU that runs
/// a thread of this process.
mod membarrier {
    // The command numbers of Linux's `include/uapi/linux/membarrier.h`.
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// Registers the process for [`all_threads`]; false when the kernel refuses.
    #[cfg(target_os = "linux")]
    pub fn register() -> bool {
        // SAFETY: a system call with integer arguments only.
        unsafe { libc::syscall(libc::SYS_membarrier, CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn register() -> bool {
        false
    }

    /// The barrier. Registration succeeded before any bias was set, so this cannot
    /// fail for want of it; any other failure would leave the owner's `busy` store
    /// possibly unseen, so it ends the process rather than go on unsafely.
    #[cfg(target_os = "linux")]
    pub fn all_threads() {
        // SAFETY: a system call with integer arguments only.
        let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_PRIVATE_EXPEDITED, 0) };
        if r != 0 {
            crate::ffi::say!(
                "myrix MPI: membarrier failed: {}",
                std::io::Error::last_os_error()
            );
            std::process::abort();
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn all_threads() {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn owner_fast_then_other_thread_revokes_and_counts_stay_exact() {
        let l = Arc::new(BiasedLock::new(0u64));
        l.lock().bias_to_current_thread();
        assert_eq!(l.biased.load(Ordering::Relaxed), membarrier::register());
        {
            let g = l.lock();
            assert_eq!(g.slow.is_none(), l.biased.load(Ordering::Relaxed));
            // The owner holds it: a nested try fails instead of aliasing.
            assert!(l.try_lock().is_none());
        }
        // The owner and another thread add concurrently; the bias goes at the
        // other's first call, and no increment is lost.
        let n = 200_000u64;
        let other = {
            let l = Arc::clone(&l);
            std::thread::spawn(move || {
                for _ in 0..n {
                    *l.lock() += 1;
                }
            })
        };
        for _ in 0..n {
            *l.lock() += 1;
        }
        other.join().unwrap();
        assert_eq!(*l.lock(), 2 * n);
        assert!(!l.biased.load(Ordering::Relaxed));
        assert!(!l.busy.load(Ordering::Relaxed));
    }

    #[test]
    fn a_lock_never_biased_is_a_mutex() {
        let l = BiasedLock::new(5u8);
        let g = l.lock();
        assert!(g.slow.is_some());
        std::thread::scope(|s| {
            s.spawn(|| assert!(l.try_lock().is_none()));
        });
        drop(g);
        assert_eq!(*l.try_lock().unwrap(), 5);
    }
}

//! Holding other threads' writes while caller memory changes mapping.
//!
//! Sharing caller memory in place (and taking it back) copies a range and then maps
//! something else over it. The range is whole pages, so it usually holds bytes that
//! are not the segment's: the rest of a malloc'd buffer's first and last page (other
//! allocations, the allocator's own free lists). A write by another thread between the
//! copy and the mapping would be lost, and the allocator's are not rare: a thread that
//! frees a block the main thread allocated writes the block's list pointers. MPI
//! windows over malloc'd memory in processes whose network agent thread runs hit it as
//! heap corruption ("malloc(): unaligned tcache chunk detected").
//!
//! So while a range is switched it is made read-only first, and a write into it from
//! any thread faults into [`on_fault`], which waits until the new mapping is in place
//! and returns: the write is then made again, into the new mapping. Faults elsewhere go
//! to the handler that was there before (or the default action). Only one range is
//! switched at a time in a process.
//!
//! Between [`protect`] and [`release`] the switching thread must not allocate or take
//! a lock: a held writer may be holding it. A system call of another thread writing
//! into the range during those microseconds fails with `EFAULT` instead of waiting.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The range being switched (`LO..HI`; `HI == 0`: none), and the last one switched.
static LO: AtomicUsize = AtomicUsize::new(0);
static HI: AtomicUsize = AtomicUsize::new(0);
static LAST_LO: AtomicUsize = AtomicUsize::new(0);
static LAST_HI: AtomicUsize = AtomicUsize::new(0);
/// The switching thread: a fault of its own inside the range cannot wait for itself.
static SWITCHER: AtomicI32 = AtomicI32::new(0);

/// The SIGSEGV disposition before ours, for faults that are not ours.
struct Old(libc::sigaction);
// SAFETY: written once before our handler is installed, only read afterwards.
unsafe impl Sync for Old {}
unsafe impl Send for Old {}
static OLD: OnceLock<Option<Old>> = OnceLock::new();

thread_local! {
    /// The address this thread last retried after its range was released: a second
    /// fault there is not ours.
    static RETRIED: Cell<usize> = const { Cell::new(0) };
}

/// One switch at a time per process; held from before [`protect`] until after
/// [`release`].
pub(crate) struct Switching {
    _one: MutexGuard<'static, ()>,
}

/// Installs the fault handler (once) and takes the process's switching turn. `None`
/// when the handler cannot be installed: then the caller switches unprotected, as
/// before (and says so nowhere: `sigaction` does not fail for SIGSEGV in practice).
pub(crate) fn begin() -> Option<Switching> {
    static ONE: Mutex<()> = Mutex::new(());
    let installed = OLD.get_or_init(install).is_some();
    let g = ONE.lock().unwrap_or_else(|e| e.into_inner());
    installed.then_some(Switching { _one: g })
}

fn install() -> Option<Old> {
    // SAFETY: plain sigaction calls with zeroed, then filled, structures.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGSEGV, &sa, &mut old) == 0).then_some(Old(old))
    }
}

/// Makes `ptr..ptr+len` read-only and marks it as being switched.
///
/// # Safety
/// The range is page-aligned, mapped, and the caller holds [`Switching`]; it calls
/// [`release`] before anything else of its own writes the range.
pub(crate) unsafe fn protect(ptr: *mut u8, len: usize) -> bool {
    if !OLD.get().is_some_and(Option::is_some) {
        return false; // no handler: a held write would kill the process
    }
    // SAFETY: gettid has no memory effects.
    SWITCHER.store(unsafe { libc::gettid() }, Ordering::SeqCst);
    LO.store(ptr as usize, Ordering::SeqCst);
    HI.store(ptr as usize + len, Ordering::SeqCst);
    // SAFETY: the caller's contract.
    let ok = unsafe { libc::mprotect(ptr.cast(), len, libc::PROT_READ) } == 0;
    if !ok {
        HI.store(0, Ordering::SeqCst);
    }
    ok
}

/// Ends the switch of the range [`protect`] marked: held writers go on, into whatever
/// is mapped there now. If the switch failed, `restore` gives the range its write
/// permission back first.
///
/// # Safety
/// After [`protect`] returned true, by the same caller.
pub(crate) unsafe fn release(restore: bool) {
    let (lo, hi) = (LO.load(Ordering::SeqCst), HI.load(Ordering::SeqCst));
    if restore {
        // SAFETY: the range protect made read-only; it is still the same mapping.
        unsafe {
            libc::mprotect(
                lo as *mut libc::c_void,
                hi - lo,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
    }
    LAST_LO.store(lo, Ordering::SeqCst);
    LAST_HI.store(hi, Ordering::SeqCst);
    HI.store(0, Ordering::SeqCst);
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel's siginfo for a SIGSEGV carries the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    let inside = |lo: &AtomicUsize, hi: &AtomicUsize| {
        let h = hi.load(Ordering::SeqCst);
        h != 0 && lo.load(Ordering::SeqCst) <= addr && addr < h
    };
    // SAFETY: gettid is async-signal-safe.
    if inside(&LO, &HI) && SWITCHER.load(Ordering::SeqCst) != unsafe { libc::gettid() } {
        while inside(&LO, &HI) {
            // SAFETY: async-signal-safe; lets the switching thread finish.
            unsafe { libc::sched_yield() };
        }
        return;
    }
    // The switch may have ended between the fault and this handler: retry once.
    if inside(&LAST_LO, &LAST_HI) && RETRIED.with(|r| r.replace(addr)) != addr {
        return;
    }
    RETRIED.with(|r| r.set(0));
    chain(sig, info, ctx);
}

/// Hands a fault that is not ours to the disposition that was there before.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let old = OLD.get().and_then(|o| o.as_ref());
    let Some(Old(old)) = old else {
        return default_again(sig);
    };
    let h = old.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        return default_again(sig);
    }
    if old.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler, installed with SA_SIGINFO, takes these three.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: the previous plain handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
        f(sig);
    }
}

/// Restores the default action: the faulting instruction runs again on return and the
/// process ends as it would have without us (with a core where that is enabled).
fn default_again(sig: libc::c_int) {
    // SAFETY: a plain sigaction call.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::super::mem;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    /// A thread counting in a word on the first page of a range that is shared in
    /// place and taken back over and over (as a neighbour of a window's buffer on a
    /// malloc'd page is): not one of its increments is lost. Without the hold, a
    /// thousand switches lose some (each switch copies, then maps over the copy).
    #[test]
    fn writes_of_other_threads_survive_switching_their_page() {
        let page = mem::page_size();
        // Long enough that the copy takes a while after passing the counter's word.
        let len = 64 * page;
        let base = mem::alloc_guarded(len).unwrap() as usize;
        let file = tempfile_of(len);
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let counter = {
            let (stop, done) = (stop.clone(), done.clone());
            std::thread::spawn(move || {
                let p = (base + 64) as *mut u64;
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: the guarded allocation lives until after the join; a
                    // plain (not atomic) read-modify-write, as the allocator's are.
                    unsafe { p.write_volatile(p.read_volatile() + 1) };
                    n += 1;
                }
                done.store(n, Ordering::SeqCst);
            })
        };
        for _ in 0..1000 {
            // SAFETY: the range is the guarded allocation, page-aligned and ours; the
            // file is `len` bytes.
            unsafe {
                mem::share_in_place(&file, base as *mut u8, len).unwrap();
                mem::unshare_in_place(base as *mut u8, len).unwrap();
            }
        }
        stop.store(true, Ordering::SeqCst);
        counter.join().unwrap();
        // SAFETY: as above; the counting thread has ended.
        let seen = unsafe { ((base + 64) as *const u64).read_volatile() };
        let n = done.load(Ordering::SeqCst);
        // SAFETY: the allocation above, no longer used.
        unsafe { mem::free_guarded(base as *mut u8, len) };
        assert!(n > 0);
        assert_eq!(seen, n, "increments lost while the page switched mapping");
    }

    /// A fault that is not a held write still ends the process as before (the default
    /// action, chained).
    #[test]
    fn other_faults_are_not_swallowed() {
        if std::env::var_os("MYRIX_HOLD_CHILD").is_some() {
            let _ = super::begin();
            // SAFETY: deliberately writes a read-only page to fault (in a child).
            unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                ) as *mut u8;
                p.write_volatile(1);
            }
            std::process::exit(0);
        }
        let me = std::env::current_exe().unwrap();
        let out = std::process::Command::new(me)
            .args([
                "--exact",
                "shm::hold::tests::other_faults_are_not_swallowed",
            ])
            .args(["--nocapture", "--test-threads=1"])
            .env("MYRIX_HOLD_CHILD", "1")
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGSEGV),
            "{:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn tempfile_of(len: usize) -> std::fs::File {
        let path = std::env::temp_dir().join(format!(
            "myrix-hold-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let _ = std::fs::remove_file(&path);
        f.set_len(len as u64).unwrap();
        f
    }
}

//! The system calls of the shm controller and every raw memory access it makes: guarded
//! allocations, sharing caller memory in place (and taking it back), file mappings,
//! copies into and out of mapped segments, futexes, file locks, eventfds.
//!
//! This is the one module of the controller allowed `unsafe`. Its functions take
//! offsets that the caller has bounds-checked and assert them again (cheaply, with
//! `assert!`) before any raw access, so a bug elsewhere panics rather than writing
//! outside a mapping. It must never form a Rust reference to segment memory other than
//! atomics: other processes write it at any time.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

use myrix_rsm_proto::RsmError;

pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

fn os_err() -> io::Error {
    io::Error::last_os_error()
}

/// An error of a call that allocates or maps, as RSMAPI names it.
pub(crate) fn mem_error(e: &io::Error) -> RsmError {
    match e.raw_os_error() {
        Some(libc::ENOMEM) | Some(libc::ENOSPC) | Some(libc::EFBIG) => RsmError::InsufficientMem,
        Some(libc::EMFILE) | Some(libc::ENFILE) => RsmError::InsufficientResources,
        Some(libc::EACCES) | Some(libc::EPERM) => RsmError::PermDenied,
        _ => RsmError::MapFailed,
    }
}

/// `len` zeroed bytes with an inaccessible guard page on each side; returns the first
/// usable byte.
pub(crate) fn alloc_guarded(len: usize) -> Result<*mut u8, RsmError> {
    let page = page_size();
    let total = len.checked_add(2 * page).ok_or(RsmError::BadLength)?;
    // SAFETY: a fresh anonymous mapping chosen by the kernel; no existing memory is
    // affected.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(mem_error(&os_err()));
    }
    let user = (base as usize + page) as *mut u8;
    // SAFETY: `user..user+len` lies inside the mapping just made.
    let r = unsafe { libc::mprotect(user.cast(), len, libc::PROT_READ | libc::PROT_WRITE) };
    if r != 0 {
        let e = mem_error(&os_err());
        // SAFETY: the whole mapping made above, used by nothing yet.
        unsafe { libc::munmap(base, total) };
        return Err(e);
    }
    Ok(user)
}

/// Frees what [`alloc_guarded`] returned, guards included.
///
/// # Safety
/// `user`/`len` came from `alloc_guarded`, and nothing uses the memory any more.
pub(crate) unsafe fn free_guarded(user: *mut u8, len: usize) {
    let page = page_size();
    // SAFETY: the caller's promise: this is exactly the mapping alloc_guarded made.
    unsafe { libc::munmap((user as usize - page) as *mut libc::c_void, len + 2 * page) };
}

/// Whether every byte of `ptr..ptr+len` is mapped readable and writable, from the
/// kernel's list of this process's mappings (`/proc/self/maps`, sorted by address).
pub(crate) fn is_mapped(ptr: *mut u8, len: usize) -> bool {
    mapped_as(ptr, len, |perms| perms.starts_with("rw"))
}

/// Whether every byte of `ptr..ptr+len` is still a shared, writable mapping: what
/// sharing in place made of it. Memory the program freed and reused since is
/// private ("rw-p"), or not mapped at all.
fn is_shared_in_place(ptr: *mut u8, len: usize) -> bool {
    mapped_as(ptr, len, |perms| {
        perms.starts_with("rw") && perms.as_bytes().get(3) == Some(&b's')
    })
}

/// Whether every byte of `ptr..ptr+len` is mapped with permissions `ok` accepts.
fn mapped_as(ptr: *mut u8, len: usize, ok: impl Fn(&str) -> bool) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let (mut at, end) = (ptr as usize, (ptr as usize).saturating_add(len));
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else {
            continue;
        };
        if b <= at {
            continue;
        }
        if a > at || !ok(perms) {
            return false;
        }
        at = b;
        if at >= end {
            return true;
        }
    }
    false
}

/// Whether `ptr..ptr+len` overlaps the calling thread's stack. Such memory cannot be
/// shared in place by code running on that stack: between the copy and the mapping
/// the thread's own frames on those pages change, and the mapping would bring back
/// their old contents (return addresses, stack canaries). [`share_in_place`] and
/// [`unshare_in_place`] then do the work on a stack of their own ([`frozen`]).
pub(crate) fn on_this_threads_stack(ptr: *mut u8, len: usize) -> bool {
    let Some((s, e)) = this_threads_stack() else {
        return false;
    };
    let (a, b) = (ptr as usize, (ptr as usize).saturating_add(len));
    a < e && s < b
}

thread_local! {
    /// The calling thread's stack as first found (see [`this_threads_stack`]).
    static STACK: std::cell::Cell<Option<(usize, usize)>> = const { std::cell::Cell::new(None) };
}

/// The calling thread's stack, `start..end`, found once per thread. Once found it
/// is kept: for the process's main thread glibc works the range out from
/// `/proc/self/maps`, where a segment shared in place inside the stack splits the
/// stack's mapping, and a later look would see only the part above it (then the
/// unshare of that very segment would run on the stack it remaps).
fn this_threads_stack() -> Option<(usize, usize)> {
    if let Some(r) = STACK.with(|c| c.get()) {
        return Some(r);
    }
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: fills `attr` for the calling thread; destroyed below when it succeeded.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) } != 0 {
        return None;
    }
    let (mut lo, mut size) = (std::ptr::null_mut::<libc::c_void>(), 0usize);
    // SAFETY: `attr` was initialized by pthread_getattr_np.
    let got = unsafe { libc::pthread_attr_getstack(attr.as_ptr(), &mut lo, &mut size) };
    // SAFETY: as above; destroyed once.
    unsafe { libc::pthread_attr_destroy(attr.as_mut_ptr()) };
    if got != 0 {
        return None;
    }
    let r = (lo as usize, (lo as usize).saturating_add(size));
    STACK.with(|c| c.set(Some(r)));
    Some(r)
}

/// Bytes of the stack [`frozen`] runs its work on (a copy and one mapping call).
const ALT_STACK: usize = 256 * 1024;

thread_local! {
    /// The work [`frozen`] hands to [`alt_entry`] (one at a time per thread).
    static ALT_JOB: std::cell::Cell<Option<*mut (dyn FnMut() + 'static)>> =
        const { std::cell::Cell::new(None) };
}

extern "C" fn alt_entry() {
    if let Some(f) = ALT_JOB.with(|j| j.take()) {
        // SAFETY: `frozen` stored a pointer to a closure that outlives this call
        // (it waits in swapcontext until we return).
        let f = unsafe { &mut *f };
        // A panic cannot unwind out of an extern "C" function: end the process
        // rather than return into frames in an unknown state.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
            std::process::abort();
        }
    }
}

/// Runs `f` on a stack of its own, with every signal blocked, while this thread's
/// own stack is left untouched: nothing writes it between the switch away and the
/// switch back (the registers are saved in heap memory, before the switch), so `f`
/// may copy and remap pages of it. Errors of the switch itself are `MapFailed`.
fn frozen<R>(f: impl FnOnce() -> R) -> Result<R, RsmError> {
    let mut f = Some(f);
    let mut out: Option<R> = None;
    let mut job = || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    };
    let stack = alloc_guarded(ALT_STACK)?;
    // Contexts on the heap: getcontext keeps pointers into the struct itself, and
    // the caller's stack must not be written once the switch began.
    let mut here = Box::new(std::mem::MaybeUninit::<libc::ucontext_t>::zeroed());
    let mut there = Box::new(std::mem::MaybeUninit::<libc::ucontext_t>::zeroed());
    let jp: *mut (dyn FnMut() + '_) = &mut job;
    // SAFETY: only the lifetime is erased; `job` outlives its use (alt_entry runs
    // and returns inside swapcontext below, and the slot is cleared after).
    let jp: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(jp) };
    ALT_JOB.with(|j| j.set(Some(jp)));
    // SAFETY: `there` is initialized by getcontext before use; its stack is the
    // guarded allocation above (kept until after the switch back), its successor
    // `here`, filled by swapcontext; both live on the heap until the end.
    let r = unsafe {
        let t = there.as_mut_ptr();
        if libc::getcontext(t) != 0 {
            -1
        } else {
            (*t).uc_stack.ss_sp = stack.cast();
            (*t).uc_stack.ss_size = ALT_STACK;
            (*t).uc_stack.ss_flags = 0;
            (*t).uc_link = here.as_mut_ptr();
            libc::sigfillset(&mut (*t).uc_sigmask);
            libc::makecontext(t, alt_entry, 0);
            libc::swapcontext(here.as_mut_ptr(), t)
        }
    };
    ALT_JOB.with(|j| j.set(None));
    // SAFETY: the stack from alloc_guarded, no longer used (we are back).
    unsafe { free_guarded(stack, ALT_STACK) };
    if r != 0 {
        return Err(RsmError::MapFailed);
    }
    out.ok_or(RsmError::MapFailed)
}

/// Copies `ptr..ptr+len` into `file` (from offset 0) and maps the file over that range,
/// shared: the same address now shows the same bytes, and they are the file's.
/// Memory of the calling thread's stack is handled from another stack ([`frozen`]).
///
/// # Safety
/// `ptr..ptr+len` is page-aligned memory of this process that nothing relies on being
/// private, valid for reads, and the file is at least `len` bytes long. Other threads
/// may write it meanwhile: their writes wait for the new mapping (`super::hold`).
pub(crate) unsafe fn share_in_place(file: &File, ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    // Other threads' writes into the range wait while it switches (see `hold`).
    let _turn = super::hold::begin();
    if on_this_threads_stack(ptr, len) {
        let (fd, p) = (file.as_raw_fd(), ptr as usize);
        // SAFETY: the caller's contract; the thread's frames on these pages do not
        // change while `frozen` runs the work.
        return frozen(move || unsafe { copy_and_map(fd, p as *mut u8, len) })?;
    }
    // SAFETY: the caller's contract.
    unsafe { copy_and_map(file.as_raw_fd(), ptr, len) }
}

/// # Safety
/// As [`share_in_place`]; the switching turn (`super::hold::begin`) is held.
unsafe fn copy_and_map(fd: i32, ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    // SAFETY: the caller's range; released below on every path, nothing allocated or
    // locked in between.
    let held = unsafe { super::hold::protect(ptr, len) };
    // SAFETY: as above.
    let r = unsafe { copy_and_map_held(fd, ptr, len) };
    if held {
        // SAFETY: after protect, by this thread; a failed switch left the old mapping.
        unsafe { super::hold::release(r.is_err()) };
    }
    r
}

/// # Safety
/// As [`copy_and_map`].
unsafe fn copy_and_map_held(fd: i32, ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    let mut done = 0usize;
    while done < len {
        // SAFETY: reads `ptr+done..ptr+len`, inside the range the caller promised.
        let n = unsafe { libc::pwrite(fd, ptr.add(done).cast(), len - done, done as libc::off_t) };
        if n < 0 {
            let e = os_err();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(mem_error(&e));
        }
        if n == 0 {
            return Err(RsmError::InsufficientMem);
        }
        done += n as usize;
    }
    // SAFETY: replaces the caller's pages (their contents are in the file now) with the
    // file's, at the same address; MAP_FIXED never touches memory outside the range.
    let m = unsafe {
        libc::mmap(
            ptr.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    if m == libc::MAP_FAILED {
        return Err(mem_error(&os_err()));
    }
    Ok(())
}

/// Gives `ptr..ptr+len` private pages with the same contents at the same address: from
/// now on nothing written into the file it was shared with reaches it. Memory of the
/// calling thread's stack is handled from another stack ([`frozen`]).
///
/// # Safety
/// `ptr..ptr+len` is page-aligned, mapped readable and writable, and this process's.
pub(crate) unsafe fn unshare_in_place(ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    let _turn = super::hold::begin();
    // A program may free the memory before the segment that shares it (MPICH's
    // rma/test3 frees a window's buffer before MPI_Win_free). If the allocator gave
    // pages back to the kernel there is nothing to keep: copying from them would
    // fault, and another thread may already have a mapping of its own there (the
    // kernel reuses addresses), which must not be touched. Ours is shared; a
    // program's is private.
    if !is_shared_in_place(ptr, len) {
        return Ok(());
    }
    if on_this_threads_stack(ptr, len) {
        let p = ptr as usize;
        // SAFETY: the caller's contract, with the thread's frames frozen.
        return frozen(move || unsafe { copy_back(p as *mut u8, len) })?;
    }
    // SAFETY: the caller's contract.
    unsafe { copy_back(ptr, len) }
}

/// # Safety
/// As [`unshare_in_place`]; the switching turn (`super::hold::begin`) is held.
unsafe fn copy_back(ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    // SAFETY: as in copy_and_map.
    let held = unsafe { super::hold::protect(ptr, len) };
    // SAFETY: the caller's contract.
    let r = unsafe { copy_back_held(ptr, len) };
    if held {
        // SAFETY: as in copy_and_map.
        unsafe { super::hold::release(r.is_err()) };
    }
    r
}

/// # Safety
/// As [`copy_back`].
unsafe fn copy_back_held(ptr: *mut u8, len: usize) -> Result<(), RsmError> {
    // SAFETY: a fresh anonymous mapping chosen by the kernel.
    let tmp = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if tmp == libc::MAP_FAILED {
        return Err(mem_error(&os_err()));
    }
    // SAFETY: both ranges are `len` bytes, mapped, and distinct mappings.
    unsafe { std::ptr::copy_nonoverlapping(ptr, tmp.cast::<u8>(), len) };
    // SAFETY: moves the private copy over the shared range in one step (the old
    // mapping at `ptr` is replaced atomically); `tmp` is ours alone.
    let r = unsafe {
        libc::mremap(
            tmp,
            len,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            ptr.cast::<libc::c_void>(),
        )
    };
    if r == libc::MAP_FAILED {
        let e = mem_error(&os_err());
        // SAFETY: the copy is still at `tmp` and ours.
        unsafe { libc::munmap(tmp, len) };
        return Err(e);
    }
    Ok(())
}

/// A shared mapping of a file, unmapped on drop.
pub(crate) struct Map {
    ptr: usize,
    len: usize,
}

impl Map {
    /// Maps the first `len` bytes of `file` (writable or read-only), shared.
    pub(crate) fn file(file: &File, len: usize, writable: bool) -> Result<Map, RsmError> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a new mapping chosen by the kernel. The file may change under us (other
        // processes write it): every access goes through raw copies or atomics.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(mem_error(&os_err()));
        }
        Ok(Map {
            ptr: p as usize,
            len,
        })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr as *mut u8
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn u32(&self, off: usize) -> &AtomicU32 {
        assert!(off % 4 == 0 && off + 4 <= self.len);
        // SAFETY: in bounds and aligned (checked; the mapping is page-aligned), and the
        // word is only ever accessed atomically; it lives as long as `self`.
        unsafe { AtomicU32::from_ptr((self.ptr + off) as *mut u32) }
    }

    pub(crate) fn u64(&self, off: usize) -> &AtomicU64 {
        assert!(off % 8 == 0 && off + 8 <= self.len);
        // SAFETY: as for `u32`.
        unsafe { AtomicU64::from_ptr((self.ptr + off) as *mut u64) }
    }

    /// Copies `data` to `off` (the mapping must be writable).
    pub(crate) fn write(&self, off: usize, data: &[u8]) {
        assert!(off <= self.len && data.len() <= self.len - off);
        // SAFETY: the range is inside the mapping (checked). Other processes may write
        // the same bytes concurrently: the result is some interleaving of bytes, the
        // same as for a device writing memory; no Rust reference to it exists.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr().add(off), data.len()) }
    }

    /// Copies from `off` into `out`.
    pub(crate) fn read(&self, off: usize, out: &mut [u8]) {
        assert!(off <= self.len && out.len() <= self.len - off);
        // SAFETY: as for `write`, reading.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr().add(off), out.as_mut_ptr(), out.len()) }
    }
}

macro_rules! scalar_access {
    ($put:ident, $get:ident, $t:ty, $a:ty) => {
        impl Map {
            /// One atomic access per element, from `off` (aligned, in bounds).
            pub(crate) fn $put(&self, off: usize, data: &[$t]) {
                let w = std::mem::size_of::<$t>();
                assert!(off % w == 0 && off <= self.len && data.len() * w <= self.len - off);
                for (i, v) in data.iter().enumerate() {
                    // SAFETY: in bounds and aligned (checked above).
                    let a = unsafe { <$a>::from_ptr((self.ptr + off + i * w) as *mut $t) };
                    a.store(*v, Ordering::Relaxed);
                }
            }
            pub(crate) fn $get(&self, off: usize, out: &mut [$t]) {
                let w = std::mem::size_of::<$t>();
                assert!(off % w == 0 && off <= self.len && out.len() * w <= self.len - off);
                for (i, v) in out.iter_mut().enumerate() {
                    // SAFETY: in bounds and aligned (checked above).
                    let a = unsafe { <$a>::from_ptr((self.ptr + off + i * w) as *mut $t) };
                    *v = a.load(Ordering::Relaxed);
                }
            }
        }
    };
}
scalar_access!(put8, get8, u8, AtomicU8);
scalar_access!(put16, get16, u16, AtomicU16);
scalar_access!(put32, get32, u32, AtomicU32);
scalar_access!(put64, get64, u64, AtomicU64);

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: our own mapping; every reference into it borrowed `self`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

// SAFETY: the mapping is plain shared memory accessed only through atomics and raw
// copies; moving or sharing the handle between threads is as safe as between processes.
unsafe impl Send for Map {}
// SAFETY: as above.
unsafe impl Sync for Map {}

/// Waits while `word` holds `val`, at most `timeout` (a shared futex: other processes
/// wake it).
pub(crate) fn futex_wait(word: &AtomicU32, val: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the word (valid: a reference) and the timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            val,
            &ts as *const libc::timespec,
        )
    };
}

/// Wakes every waiter on `word`, in any process.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the word's address.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
}

pub(crate) fn pid_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || os_err().raw_os_error() == Some(libc::EPERM)
}

pub(crate) fn lock_exclusive(f: &File) -> io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = os_err();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Whether someone holds an exclusive lock on the file (the exporter, alive): a shared
/// lock cannot be had. If it can, it is released at once.
pub(crate) fn locked_by_other(f: &File) -> bool {
    // SAFETY: flock on a descriptor we own.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if r == 0 {
        // SAFETY: as above.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) };
        false
    } else {
        os_err().raw_os_error() == Some(libc::EWOULDBLOCK)
    }
}

/// A new eventfd, non-blocking and close-on-exec: a pollable descriptor with no name,
/// which goes with the last process that holds it.
pub(crate) fn eventfd() -> io::Result<File> {
    // SAFETY: eventfd takes no pointer.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_err());
    }
    // SAFETY: a descriptor just made, owned by nobody else.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Makes an eventfd readable (adds one to its count; a full count stays readable).
pub(crate) fn poke(f: &File) {
    use std::io::Write;
    let _ = (&*f).write(&1u64.to_ne_bytes());
}

/// Takes an eventfd's count: it is not readable again until the next poke.
pub(crate) fn drain(f: &File) {
    use std::io::Read;
    let mut count = [0u8; 8];
    let _ = (&*f).read(&mut count);
}

/// This process's effective user and group, and id.
pub(crate) fn whoami() -> (u32, u32, u32) {
    // SAFETY: these calls cannot fail and touch no memory.
    unsafe { (libc::geteuid(), libc::getegid(), libc::getpid() as u32) }
}

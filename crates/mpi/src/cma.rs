//! The OS side of `coll::shm`'s one-copy way for large blocks (`direct.rs` there):
//! Linux's cross-memory attach, `process_vm_readv`/`process_vm_writev`, which copy
//! between two processes' memories in one kernel copy (Open MPI's vader does the
//! same for large messages).
//!
//! The kernel allows it when the caller may ptrace the target (same user, the
//! target dumpable, and Yama's `ptrace_scope` 0 or, as root, 1–2). Whether it does
//! is not guessed from those rules: at set-up every rank reads a known word from
//! every other rank ([`probe`]), and the communicator uses this way only if every
//! rank succeeded (decided alike, by an allgather, in [`crate::shmseg`]).

use crate::coll::shm::PeerMem;

/// A word every process of the job holds at an address it publishes at set-up.
static PROBE: u64 = 0x6d79_7269_785f_636d;

/// This process's id and the address of its probe word.
pub(crate) fn card() -> (u32, u64) {
    (std::process::id(), std::ptr::addr_of!(PROBE) as u64)
}

/// Whether this process can read process `pid`'s probe word at `addr`.
pub(crate) fn probe(pid: u32, addr: u64) -> bool {
    let mut got = [0u8; 8];
    read(pid, addr as usize, &mut got) && u64::from_ne_bytes(got) == PROBE
}

/// `process_vm_readv` or `process_vm_writev` (the same arguments).
type VmCopy = unsafe extern "C" fn(
    libc::pid_t,
    *const libc::iovec,
    libc::c_ulong,
    *const libc::iovec,
    libc::c_ulong,
    libc::c_ulong,
) -> libc::ssize_t;

/// Copies `len` bytes between `local` in this process and `remote` in process `pid`
/// with `call`, again after a partial copy or an interrupted call; false on failure.
///
/// # Safety
/// `local` is valid for `len` bytes, and writable when `call` reads into it.
unsafe fn copy(call: VmCopy, pid: u32, local: *mut u8, remote: usize, len: usize) -> bool {
    let mut done = 0;
    while done < len {
        let mine = libc::iovec {
            // SAFETY: within the `len` bytes the caller vouches for.
            iov_base: unsafe { local.add(done) }.cast(),
            iov_len: len - done,
        };
        let theirs = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local iovec is the caller's range (above); the kernel checks
        // the remote one against the target's mappings (EFAULT, not a crash).
        let k = unsafe { call(pid as libc::pid_t, &mine, 1, &theirs, 1, 0) };
        if k <= 0 {
            if k < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        done += k as usize;
    }
    true
}

fn read(pid: u32, from: usize, to: &mut [u8]) -> bool {
    // SAFETY: `to` is writable for its length.
    unsafe { copy(libc::process_vm_readv, pid, to.as_mut_ptr(), from, to.len()) }
}

fn write(pid: u32, to: usize, from: &[u8]) -> bool {
    // SAFETY: `from` is readable for its length, and process_vm_writev only reads it.
    unsafe {
        copy(
            libc::process_vm_writev,
            pid,
            from.as_ptr().cast_mut(),
            to,
            from.len(),
        )
    }
}

/// The communicator's ranks' process ids, by rank.
pub(crate) struct Cma {
    pub pids: Vec<u32>,
}

impl PeerMem for Cma {
    fn read(&self, q: usize, from: usize, to: &mut [u8]) -> bool {
        self.pids.get(q).is_some_and(|&p| read(p, from, to))
    }
    fn write(&self, q: usize, to: usize, from: &[u8]) -> bool {
        self.pids.get(q).is_some_and(|&p| write(p, to, from))
    }
}

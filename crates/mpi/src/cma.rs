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

fn read(pid: u32, from: usize, to: &mut [u8]) -> bool {
    let mut done = 0;
    while done < to.len() {
        let local = libc::iovec {
            iov_base: to[done..].as_mut_ptr().cast(),
            iov_len: to.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (from + done) as *mut libc::c_void,
            iov_len: to.len() - done,
        };
        // SAFETY: the local iovec is `to`'s unfilled part; the kernel checks the
        // remote one against the target's mappings (EFAULT, not a crash).
        let k = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
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

fn write(pid: u32, to: usize, from: &[u8]) -> bool {
    let mut done = 0;
    while done < from.len() {
        let local = libc::iovec {
            iov_base: from[done..].as_ptr().cast_mut().cast(),
            iov_len: from.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (to + done) as *mut libc::c_void,
            iov_len: from.len() - done,
        };
        // SAFETY: the local iovec is `from`'s unwritten part, only read; the kernel
        // checks the remote one.
        let k = unsafe { libc::process_vm_writev(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
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

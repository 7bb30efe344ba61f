//! A handle's signal mailbox: the senders of the signals that arrived and are not yet
//! taken, and an eventfd (semaphore mode) that counts them, so the handle's pollfd is
//! readable exactly while a signal is pending.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use myrix_rsm_proto::engine::SignalTarget;
use myrix_rsm_proto::{NodeId, RsmError};

/// A pending signal: its sender, and the rail and engine target it came by.
type Pending = (NodeId, usize, SignalTarget);

#[derive(Debug)]
pub(crate) struct Mailbox {
    q: Mutex<VecDeque<Pending>>,
    fd: OwnedFd,
}

impl Mailbox {
    #[allow(unsafe_code)]
    pub(crate) fn new() -> Result<Mailbox, RsmError> {
        // SAFETY: creates a new descriptor; no memory is passed.
        let fd = unsafe {
            libc::eventfd(
                0,
                libc::EFD_CLOEXEC | libc::EFD_NONBLOCK | libc::EFD_SEMAPHORE,
            )
        };
        if fd < 0 {
            return Err(RsmError::InsufficientResources);
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Mailbox {
            q: Mutex::new(VecDeque::new()),
            fd,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Pending>> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A signal from `from` arrived by `rail` for the engine's `target`.
    #[allow(unsafe_code)]
    pub(crate) fn post(&self, from: NodeId, rail: usize, target: SignalTarget) {
        let mut q = self.lock();
        q.push_back((from, rail, target));
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
        let _ = unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Takes the oldest pending signal.
    #[allow(unsafe_code)]
    pub(crate) fn take(&self) -> Option<Pending> {
        let mut q = self.lock();
        let from = q.pop_front()?;
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from our own eventfd (semaphore mode:
        // takes one count; non-blocking).
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
        Some(from)
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

//! Signals: rsm_intr_signal_post and _wait on either kind of segment handle, and the
//! poll descriptors (rsm_memseg_get_pollfd, _release_pollfd,
//! rsm_intr_signal_wait_pollfd).

use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use myrix_rsm::{RsmError, SignalFlags};

use crate::ffi::{guard, guard_code, write_out, Res, RSMERR_BAD_ARGS_ERRORS, RSM_SUCCESS};
use crate::handles::{kind_of, Kind};
use crate::objects::{export, forget_pollfds, import, lock, ExportObj, ImportObj, POLLFDS};

pub const RSM_SIGPOST_NO_ACCUMULATE: c_uint = 0x02;

/// A segment handle of either kind, as the signal functions take them.
enum Seg {
    Export(Arc<ExportObj>),
    Import(Arc<ImportObj>),
}

impl Seg {
    fn of(h: *mut c_void) -> Res<Seg> {
        match kind_of(h as usize) {
            Some(Kind::Export) => export(h).map(Seg::Export),
            Some(Kind::Import) => import(h).map(Seg::Import),
            _ => Err(RsmError::BadSegHndl),
        }
    }

    fn post(&self, flags: SignalFlags) -> Res {
        match self {
            Seg::Export(e) => e.export.signal_post(flags),
            Seg::Import(i) => i.import.signal_post(flags),
        }
    }

    fn wait(&self, timeout: Option<Duration>) -> Res {
        match self {
            Seg::Export(e) => e.export.signal_wait(timeout),
            Seg::Import(i) => i.import.signal_wait(timeout),
        }
    }

    fn pollfd(&self) -> Res<c_int> {
        match self {
            Seg::Export(e) => e.export.pollfd(),
            Seg::Import(i) => i.import.pollfd(),
        }
    }

    fn refs(&self) -> &Mutex<u32> {
        match self {
            Seg::Export(e) => &e.pollfds,
            Seg::Import(i) => &i.pollfds,
        }
    }
}

/// Signals the exporter (import handle) or every importer (export handle). Flags
/// other than RSM_SIGPOST_NO_ACCUMULATE are ignored.
#[no_mangle]
pub extern "C" fn rsm_intr_signal_post(memseg: *mut c_void, flags: c_uint) -> c_int {
    guard(|| {
        Seg::of(memseg)?.post(SignalFlags {
            no_accumulate: flags & RSM_SIGPOST_NO_ACCUMULATE != 0,
        })
    })
}

/// Waits up to `timeout` ms for a signal (negative: forever).
#[no_mangle]
pub extern "C" fn rsm_intr_signal_wait(memseg: *mut c_void, timeout: c_int) -> c_int {
    guard(|| {
        let t = u64::try_from(timeout).ok().map(Duration::from_millis);
        Seg::of(memseg)?.wait(t)
    })
}

/// Fills `*fd` with a descriptor that polls readable (POLLRDNORM) while a signal is
/// pending on the segment; each call must be matched by rsm_memseg_release_pollfd
/// before the segment is unpublished, destroyed or disconnected.
///
/// # Safety
/// `fd` is NULL or points to a writable `struct pollfd`.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_get_pollfd(
    memseg: *mut c_void,
    fd: *mut libc::pollfd,
) -> c_int {
    guard(|| {
        let seg = Seg::of(memseg)?;
        if fd.is_null() {
            return Err(RsmError::BadAddr);
        }
        let raw = seg.pollfd()?;
        let value = libc::pollfd {
            fd: raw,
            events: libc::POLLRDNORM,
            revents: 0,
        };
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(fd, value) }?;
        *lock(seg.refs()) += 1;
        let mut fds = lock(&POLLFDS);
        if !fds.contains(&(raw, memseg as usize)) {
            fds.push((raw, memseg as usize));
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn rsm_memseg_release_pollfd(memseg: *mut c_void) -> c_int {
    guard(|| {
        let seg = Seg::of(memseg)?;
        let mut n = lock(seg.refs());
        *n = n.saturating_sub(1);
        if *n == 0 {
            forget_pollfds(memseg as usize);
        }
        Ok(())
    })
}

/// poll(2) over `fds`, where the descriptors from rsm_memseg_get_pollfd report
/// POLLRDNORM once a signal arrived (and the signal is consumed). Returns
/// RSMERR_TIMEOUT if nothing happened within `timeout` ms (negative: forever).
///
/// # Safety
/// `fds` is NULL or points to `nfds` readable and writable `struct pollfd`s;
/// `numfdsp` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_intr_signal_wait_pollfd(
    fds: *mut libc::pollfd,
    nfds: libc::nfds_t,
    timeout: c_int,
    numfdsp: *mut c_int,
) -> c_int {
    guard_code(|| {
        if (fds.is_null() && nfds > 0) || nfds > libc::c_int::MAX as libc::nfds_t {
            return Ok(RSMERR_BAD_ARGS_ERRORS);
        }
        if (fds as usize) % std::mem::align_of::<libc::pollfd>() != 0 {
            return Err(RsmError::BadAddr);
        }
        let deadline = u64::try_from(timeout)
            .ok()
            .map(|ms| Instant::now() + Duration::from_millis(ms));
        loop {
            let left: c_int = match deadline {
                None => -1,
                Some(d) => {
                    let ms = d.saturating_duration_since(Instant::now()).as_millis();
                    c_int::try_from(ms).unwrap_or(c_int::MAX)
                }
            };
            // SAFETY: fds points to nfds pollfds (the caller's promise), or is NULL
            // with nfds 0, which poll accepts.
            let r = unsafe { libc::poll(fds, nfds, left) };
            if r < 0 {
                return match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => Err(RsmError::Interrupted),
                    Some(libc::ENOMEM) => Err(RsmError::InsufficientMem),
                    Some(libc::EFAULT) => Err(RsmError::BadAddr),
                    _ => Ok(RSMERR_BAD_ARGS_ERRORS),
                };
            }
            if r == 0 {
                return Err(RsmError::Timeout);
            }
            // SAFETY: poll succeeded on these nfds entries, so they are valid memory;
            // nothing else uses them during the call (the caller's promise).
            let entries = unsafe { std::slice::from_raw_parts_mut(fds, nfds as usize) };
            let ours = lock(&POLLFDS).clone();
            let mut ready = 0;
            for p in entries.iter_mut().filter(|p| p.revents != 0) {
                if let Some(&(_, h)) = ours.iter().find(|(fd, _)| *fd == p.fd) {
                    // Consume the signal; another waiter may have taken it first.
                    let got = Seg::of(h as *mut c_void)
                        .and_then(|s| s.wait(Some(Duration::ZERO)))
                        .is_ok();
                    p.revents = if got { libc::POLLRDNORM } else { 0 };
                }
                if p.revents != 0 {
                    ready += 1;
                }
            }
            if ready > 0 {
                if !numfdsp.is_null() {
                    // SAFETY: not NULL; the caller promises it is writable.
                    unsafe { write_out(numfdsp, ready) }?;
                }
                return Ok(RSM_SUCCESS);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RsmError::Timeout);
            }
        }
    })
}

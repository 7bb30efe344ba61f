//! A target's side of a window spanning nodes: one thread per window and process
//! that applies the records remote origins put into this rank's request segment
//! (accumulates, compare-and-swap, lock requests) on this rank's window memory, with
//! the same atomics and lock words the origins of this node use
//! ([`crate::rma::acc`], [`Ctrl`]), and puts the results and counters back into
//! each origin's reply segment.
//!
//! The thread sleeps in `ppoll(2)` on the request segment's signal descriptor (an
//! origin signals after its records) and an eventfd that ends it; while a lock
//! request waits for the lock it polls every [`LOCK_RETRY`]. So accumulates and locks
//! progress whatever the target's program does (computing, or inside another MPI
//! call), at the price of a thread wake-up per burst of records.
//!
//! It must never trust a record: a bad kind, type, length or range is counted as an
//! error in the reply (the origin reports it at its next synchronization) and
//! skipped; it never writes outside the window.

use super::wire::{self, Kind};
use crate::rma::acc;
use crate::rma::ctrl::Ctrl;
use myrix_rsm::{Export, Import};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a waiting lock request is tried again.
pub const LOCK_RETRY: Duration = Duration::from_micros(100);

/// What the thread serves.
pub struct Ctx {
    /// This rank's window rank.
    pub me: usize,
    /// This rank's request segment (one ring per origin).
    pub req: Arc<Export>,
    /// Per origin: its reply segment, for origins on other nodes.
    pub replies: Vec<Option<Import>>,
    pub ctrl: Ctrl,
    /// This rank's window memory (address and length; 0, 0 for an empty one).
    pub base: usize,
    pub len: usize,
    /// A dynamic window: a record's offset is an address, applied only when the
    /// attach table in `ctrl` holds its whole range.
    pub dynamic: bool,
}

// SAFETY: `base` is an address of window memory the window keeps mapped until the
// thread is joined (Service is dropped before the window's memory); Ctrl likewise.
unsafe impl Send for Ctx {}

/// The running thread; dropping it stops and joins it.
pub struct Service {
    stop: Arc<AtomicBool>,
    kick: i32,
    thread: Option<JoinHandle<()>>,
}

impl Service {
    pub fn start(ctx: Ctx) -> std::io::Result<Service> {
        // SAFETY: plain syscall; the descriptor is closed in Drop.
        let kick = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if kick < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("myrix-mpi-rma".into())
            .spawn(move || run(ctx, &s2, kick));
        match thread {
            Ok(t) => Ok(Service {
                stop,
                kick,
                thread: Some(t),
            }),
            Err(e) => {
                // SAFETY: our own descriptor, closed once.
                unsafe { libc::close(kick) };
                Err(e)
            }
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes to our eventfd.
        unsafe { libc::write(self.kick, one.as_ptr().cast(), 8) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // SAFETY: our own descriptor, closed once, after the thread ended.
        unsafe { libc::close(self.kick) };
    }
}

/// Per origin: records applied, locks granted, records refused.
#[derive(Default, Clone, Copy)]
struct Counts {
    applied: u64,
    granted: u64,
    errors: u64,
}

fn sleep(fds: &[i32], timeout: Option<Duration>) {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .filter(|&&f| f >= 0)
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: p and the timespec outlive the call.
    unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            tp,
            std::ptr::null(),
        )
    };
}

fn run(ctx: Ctx, stop: &AtomicBool, kick: i32) {
    let n = ctx.replies.len();
    let mut counts = vec![Counts::default(); n];
    let mut waiting: VecDeque<(usize, Kind)> = VecDeque::new();
    let pfd = ctx.req.pollfd().unwrap_or(-1);
    let mut buf = vec![0u8; wire::DATA];
    let mut old = vec![0u8; wire::DATA];
    loop {
        let timeout = if waiting.is_empty() {
            if pfd < 0 {
                Some(Duration::from_millis(1))
            } else {
                None
            }
        } else {
            Some(LOCK_RETRY)
        };
        sleep(&[pfd, kick], timeout);
        if stop.load(Ordering::Acquire) {
            return;
        }
        while let Ok(Some(_)) = ctx.req.take_signal() {}
        // Takes in the frames that arrived (records not yet applied by the agent).
        let _ = ctx.req.load_u64(0);
        let mut changed = vec![false; n];
        for o in 0..n {
            if ctx.replies[o].is_none() {
                continue;
            }
            loop {
                let k = counts[o].applied;
                let at = wire::ring_at(o) + wire::slot_at(k);
                // SAFETY: inside the request segment (n rings), 8-aligned; origins
                // write it through the controller, which stores the tag last.
                let tag = unsafe { AtomicU64::from_ptr(ctx.req.as_ptr().add(at).cast::<u64>()) }
                    .load(Ordering::Acquire);
                if tag != k + 1 {
                    break;
                }
                let mut hdr = [0u8; wire::HDR];
                // SAFETY: as above; the slot is whole once its tag is there, and the
                // origin rewrites it only after this record is applied.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        ctx.req.as_ptr().add(at),
                        hdr.as_mut_ptr(),
                        wire::HDR,
                    )
                };
                match wire::decode(&hdr) {
                    Ok(h) => {
                        // SAFETY: h.len <= DATA, inside the slot.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                ctx.req.as_ptr().add(at + wire::HDR),
                                buf.as_mut_ptr(),
                                h.len,
                            )
                        };
                        apply(
                            &ctx,
                            o,
                            k,
                            &h,
                            &buf[..h.len],
                            &mut old,
                            &mut counts[o],
                            &mut waiting,
                        );
                    }
                    Err(_) => counts[o].errors += 1,
                }
                counts[o].applied += 1;
                changed[o] = true;
            }
        }
        // Lock requests that could not be granted: once more, in arrival order.
        let mut still = VecDeque::new();
        while let Some((o, kind)) = waiting.pop_front() {
            let ok = still.is_empty()
                && match kind {
                    Kind::LockExclusive => ctx.ctrl.try_lock_exclusive(),
                    _ => ctx.ctrl.try_lock_shared(),
                };
            if ok {
                counts[o].granted += 1;
                changed[o] = true;
            } else {
                still.push_back((o, kind));
            }
        }
        waiting = still;
        for o in 0..n {
            if let (true, Some(rep)) = (changed[o], &ctx.replies[o]) {
                let c = counts[o];
                let mut w = [0u8; 24];
                w[0..8].copy_from_slice(&c.applied.to_le_bytes());
                w[8..16].copy_from_slice(&c.granted.to_le_bytes());
                w[16..24].copy_from_slice(&c.errors.to_le_bytes());
                // The first word (applied) is stored last: results and grants put
                // before it are there when the origin sees it. An origin gone is
                // noticed by nobody else here.
                let _ = rep.put(wire::area_at(ctx.me), &w);
            }
        }
    }
}

/// Where `len` bytes at offset `off` of a record are in this rank's window: inside
/// its memory, or (dynamic windows) an address inside one attachment; else None.
fn at(ctx: &Ctx, off: u64, len: usize) -> Option<*mut u8> {
    if len == 0 {
        return None;
    }
    if ctx.dynamic {
        // Attached memory is this process's own, at its own address (so a range
        // over two pieces of one region is contiguous here).
        return ctx
            .ctrl
            .covers(off, len as u64)
            .then_some(off as usize as *mut u8);
    }
    let end = off.checked_add(len as u64)?;
    (end <= ctx.len as u64).then(|| (ctx.base + off as usize) as *mut u8)
}

#[allow(clippy::too_many_arguments)]
fn apply(
    ctx: &Ctx,
    o: usize,
    k: u64,
    h: &wire::Head,
    data: &[u8],
    old: &mut [u8],
    c: &mut Counts,
    waiting: &mut VecDeque<(usize, Kind)>,
) {
    let target = || -> Option<*mut u8> { at(ctx, h.off, h.len) };
    let res = match h.kind {
        Kind::Acc | Kind::FetchAcc => target().and_then(|p| {
            let fetch = h.kind == Kind::FetchAcc;
            let out = fetch.then(|| &mut old[..h.len]);
            // SAFETY: p..p+len lies inside this rank's window (checked), which only
            // the window's atomics and locks update.
            unsafe { acc::accumulate(h.op, h.basic, data, p, out, &ctx.ctrl) }.ok()?;
            Some(if fetch { h.len } else { 0 })
        }),
        Kind::Cas => {
            let w = h.basic.size();
            let h1 = wire::Head { len: w, ..*h };
            let p = at(ctx, h1.off, w);
            p.and_then(|p| {
                // SAFETY: one element inside the window (checked).
                unsafe {
                    acc::compare_and_swap(
                        h.basic,
                        &data[..w],
                        &data[w..2 * w],
                        p,
                        &mut old[..w],
                        &ctx.ctrl,
                    )
                }
                .ok()?;
                Some(w)
            })
        }
        Kind::LockShared | Kind::LockExclusive => {
            let ok = waiting.is_empty()
                && if h.kind == Kind::LockExclusive {
                    ctx.ctrl.try_lock_exclusive()
                } else {
                    ctx.ctrl.try_lock_shared()
                };
            if ok {
                c.granted += 1;
            } else {
                waiting.push_back((o, h.kind));
            }
            Some(0)
        }
        Kind::UnlockShared => {
            ctx.ctrl.unlock_shared();
            Some(0)
        }
        Kind::UnlockExclusive => {
            ctx.ctrl.unlock_exclusive();
            Some(0)
        }
    };
    match res {
        None => c.errors += 1,
        Some(0) => {}
        Some(n) => {
            if let Some(rep) = &ctx.replies[o] {
                let _ = rep.put(wire::area_at(ctx.me) + wire::result_at(k), &old[..n]);
            }
        }
    }
}

//! A segment's control block (an unnamed file of 16 KiB, mapped by the exporter and
//! every importer) and the signals that go through it.
//!
//! Layout, every word accessed atomically (each group on its own cache line):
//!
//! | offset | word |
//! |---|---|
//! | 0 | magic (u64) |
//! | 8 | state: 1 published, 2 withdrawn (unpublished; importers' accesses abort) |
//! | 12, 16, 20, 24 | owner pid, uid, gid, node |
//! | 32 | data length (u64) |
//! | 40 | inode of the data file (u64), so an importer knows it is this block's |
//! | 64 | exporter's mailbox: pending count (futex), armed (a pollable descriptor is out), sender (u64) |
//! | 256 + 64·K | importer slot K: claimant pid, pending, armed, node, sender |
//!
//! A signal is a count in a mailbox: posting adds one (or sets one if none is pending,
//! for `no_accumulate`) and wakes the futex; taking subtracts one. The library writes
//! the sender word (node << 32 | pid) itself before the count, so the receiver learns
//! who posted from the library, never from the sender's data (the most recent poster
//! when several signals accumulated). When the receiver has asked for a pollable
//! descriptor, the mailbox is *armed*: a post that makes the count non-zero also
//! pokes the receiver's eventfd (an unnamed descriptor the receiver made and the
//! poster holds a copy of, handed over by the exporter's serving thread,
//! `serve.rs`), and the take that makes it zero drains it. A post racing with that
//! take can leave a poke with nothing pending: the descriptor then polls readable
//! once for nothing, never the other way round.
//! This module must never block without a timeout nor trust a length read here.

use std::fs::File;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use myrix_rsm_proto::{NodeId, RsmError};

use super::mem::{self, Map};
use crate::export::SignalSender;

pub(crate) const CTL_BYTES: usize = 16384;
pub(crate) const MAGIC: u64 = 0x6d79_7269_785f_7273; // "myrix_rs"
pub(crate) const LIVE: u32 = 1;
pub(crate) const WITHDRAWN: u32 = 2;

const H_MAGIC: usize = 0;
const H_STATE: usize = 8;
const H_PID: usize = 12;
const H_UID: usize = 16;
const H_GID: usize = 20;
const H_NODE: usize = 24;
const H_LEN: usize = 32;
const H_INO: usize = 40;
const EXP_BOX: usize = 64;
const SLOT_BASE: usize = 256;
const SLOT_BYTES: usize = 64;
/// Importer slots: how many imports of one segment can receive signals at once.
pub(crate) const SLOTS: usize = (CTL_BYTES - SLOT_BASE) / SLOT_BYTES;

/// How long a wait sleeps at most before it looks at the connection again.
const WAIT_SLICE: Duration = Duration::from_millis(10);

/// The control block as mapped.
pub(crate) struct Ctl {
    pub(crate) map: Map,
}

/// What the owner writes into a new block.
pub(crate) struct Owner {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
    pub node: NodeId,
    pub len: u64,
    pub ino: u64,
}

impl Ctl {
    pub(crate) fn open(file: &File) -> Result<Ctl, RsmError> {
        let size = file
            .metadata()
            .map_err(|_| RsmError::SegNotPublished)?
            .len();
        if size != CTL_BYTES as u64 {
            return Err(RsmError::SegNotPublished);
        }
        Ok(Ctl {
            map: Map::file(file, CTL_BYTES, true)?,
        })
    }

    /// Fills a new block; the state is written last.
    pub(crate) fn init(&self, o: &Owner) {
        let m = &self.map;
        m.u32(H_PID).store(o.pid, Ordering::Relaxed);
        m.u32(H_UID).store(o.uid, Ordering::Relaxed);
        m.u32(H_GID).store(o.gid, Ordering::Relaxed);
        m.u32(H_NODE).store(o.node.0, Ordering::Relaxed);
        m.u64(H_LEN).store(o.len, Ordering::Relaxed);
        m.u64(H_INO).store(o.ino, Ordering::Relaxed);
        m.u64(H_MAGIC).store(MAGIC, Ordering::Relaxed);
        m.u32(H_STATE).store(LIVE, Ordering::Release);
    }

    pub(crate) fn valid(&self) -> bool {
        self.map.u64(H_MAGIC).load(Ordering::Acquire) == MAGIC
    }
    pub(crate) fn state(&self) -> &AtomicU32 {
        self.map.u32(H_STATE)
    }
    pub(crate) fn live(&self) -> bool {
        self.state().load(Ordering::Acquire) == LIVE
    }
    pub(crate) fn len(&self) -> u64 {
        self.map.u64(H_LEN).load(Ordering::Relaxed)
    }
    pub(crate) fn ino(&self) -> u64 {
        self.map.u64(H_INO).load(Ordering::Relaxed)
    }

    /// The exporter's mailbox (`None`) or importer slot K's.
    pub(crate) fn mailbox(&self, slot: Option<usize>) -> Mailbox<'_> {
        let (p, a, s) = match slot {
            None => (EXP_BOX, EXP_BOX + 4, EXP_BOX + 8),
            Some(k) => {
                let b = SLOT_BASE + k.min(SLOTS - 1) * SLOT_BYTES;
                (b + 4, b + 8, b + 16)
            }
        };
        Mailbox {
            pending: self.map.u32(p),
            armed: self.map.u32(a),
            sender: self.map.u64(s),
        }
    }

    fn claim_word(&self, k: usize) -> &AtomicU32 {
        self.map.u32(SLOT_BASE + k * SLOT_BYTES)
    }

    /// The process that claims slot `k` (None: free, or no such slot).
    pub(crate) fn claimant(&self, k: usize) -> Option<u32> {
        (k < SLOTS)
            .then(|| self.claim_word(k).load(Ordering::Acquire))
            .filter(|&pid| pid != 0)
    }

    /// Claims an importer slot for process `pid` (reusing one of a dead process);
    /// `InsufficientResources` when all are taken.
    pub(crate) fn claim_slot(&self, pid: u32) -> Result<usize, RsmError> {
        let take = |k: usize, from: u32| {
            self.claim_word(k)
                .compare_exchange(from, pid, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        };
        let found = (0..SLOTS).find(|&k| take(k, 0)).or_else(|| {
            (0..SLOTS).find(|&k| {
                let who = self.claim_word(k).load(Ordering::Relaxed);
                who != 0 && !mem::pid_alive(who) && take(k, who)
            })
        });
        let k = found.ok_or(RsmError::InsufficientResources)?;
        let mb = self.mailbox(Some(k));
        mb.armed.store(0, Ordering::Relaxed);
        mb.pending.store(0, Ordering::Release);
        Ok(k)
    }

    pub(crate) fn release_slot(&self, k: usize) {
        let mb = self.mailbox(Some(k));
        mb.armed.store(0, Ordering::Relaxed);
        mb.pending.store(0, Ordering::Relaxed);
        self.claim_word(k).store(0, Ordering::Release);
    }

    /// The slots claimed now.
    pub(crate) fn claimed(&self) -> impl Iterator<Item = usize> + '_ {
        (0..SLOTS).filter(|&k| self.claim_word(k).load(Ordering::Acquire) != 0)
    }

    /// Wakes every waiter on every mailbox (the segment is going away).
    pub(crate) fn wake_all(&self) {
        mem::futex_wake(self.mailbox(None).pending);
        for k in 0..SLOTS {
            mem::futex_wake(self.mailbox(Some(k)).pending);
        }
    }
}

/// One receiver's signal words.
pub(crate) struct Mailbox<'a> {
    pub pending: &'a AtomicU32,
    pub armed: &'a AtomicU32,
    pub sender: &'a AtomicU64,
}

impl Mailbox<'_> {
    /// Posts a signal from `from`; true when the receiver's eventfd is to be poked
    /// (armed, and the count was zero), which the caller does.
    #[must_use]
    pub(crate) fn post(&self, from: SignalSender, no_accumulate: bool) -> bool {
        self.sender.store(
            (u64::from(from.node.0) << 32) | u64::from(from.pid),
            Ordering::Relaxed,
        );
        let mut p = self.pending.load(Ordering::Relaxed);
        loop {
            if no_accumulate && p > 0 {
                return false;
            }
            let new = p.saturating_add(1);
            match self
                .pending
                .compare_exchange_weak(p, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => p = now,
            }
        }
        let poke = p == 0 && self.armed.load(Ordering::Acquire) != 0;
        mem::futex_wake(self.pending);
        poke
    }

    /// Takes one pending signal, draining `fifo` (the eventfd) when none is left.
    pub(crate) fn take(&self, fifo: Option<&File>) -> Option<SignalSender> {
        let mut p = self.pending.load(Ordering::Acquire);
        loop {
            if p == 0 {
                return None;
            }
            match self
                .pending
                .compare_exchange_weak(p, p - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => p = now,
            }
        }
        if p == 1 {
            if let Some(f) = fifo {
                mem::drain(f);
            }
        }
        let s = self.sender.load(Ordering::Relaxed);
        Some(SignalSender {
            node: NodeId((s >> 32) as u32),
            pid: s as u32,
        })
    }

    /// Waits for and takes a signal; `alive` says whether to go on waiting.
    pub(crate) fn wait(
        &self,
        timeout: Option<Duration>,
        fifo: Option<&File>,
        alive: impl Fn() -> Result<(), RsmError>,
    ) -> Result<SignalSender, RsmError> {
        let end = timeout.map(|t| Instant::now() + t);
        loop {
            if let Some(s) = self.take(fifo) {
                return Ok(s);
            }
            alive()?;
            let slice = match end {
                None => WAIT_SLICE,
                Some(end) => {
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(RsmError::Timeout);
                    }
                    left.min(WAIT_SLICE)
                }
            };
            mem::futex_wait(self.pending, 0, slice);
        }
    }
}

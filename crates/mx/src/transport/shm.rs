//! `shm:NAME` — endpoints in processes on one host, through lock-free rings in shared
//! memory. Written by hand: no crate offers a cross-process SPSC ring over a mapped file.
//!
//! Each endpoint owns a segment, the file `/dev/shm/myrix-NIC-EP`, holding [`RINGS`]
//! inbound rings. A sender attaches to the receiver's segment and claims one ring (a
//! compare-and-swap on the ring's claimant word, then it clears the ring and marks the
//! claim ready); from then on the ring is single-producer, single-consumer.
//!
//! Each slot starts with a sequence word: the producer writes the frame at position `p`
//! and publishes `seq = p + 1` in the same cache line, so one line transfer brings the
//! consumer both the signal and a tiny frame. The consumer does not write the slot back:
//! it publishes how far it has read in a separate word (`tail`) only every quarter ring
//! or when it finds the ring empty, and the producer reads `tail` only when its cached
//! copy says the ring is full. On the fast path one cache line moves per frame, and no
//! system call is made.
//!
//! Waiting: a wait polls without a system call, but once polls have moved no frame either
//! way for 200 µs ([`YIELD_AFTER`]) every 256th poll yields the CPU, so a peer
//! descheduled on our core gets to run (see [`YIELD_AFTER`] for why not sooner).
//!
//! Clean-up: the owner unlinks its segment when the endpoint is dropped, and a sender
//! gives its rings back when dropped: it marks its claim closed, and the owner frees the
//! ring only once it has read every frame published before that, so closing right after
//! sending loses nothing. A process that crashed leaves its file behind; the
//! next endpoint opened on the host removes every segment whose owner process is gone,
//! and a ring claimed by a dead sender is reset by its owner, so a restarted process
//! opens its endpoint again.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use std::time::{Duration, Instant};

use memmap2::MmapMut;

use super::{Loc, Transport, Verdict};

/// Inbound rings per endpoint: how many peers can send to it at once.
pub const RINGS: usize = 16;
/// How often dead peers are looked for, at most.
const REAP_EVERY: Duration = Duration::from_millis(10);
/// How long polls may move no frame either way before a poll gives the CPU away (then
/// every [`YIELD_EVERY`] polls; the clock is read only every [`YIELD_EVERY`] idle polls).
/// A peer that sends nothing for that long may be waiting for the CPU we spin on (both
/// processes on one core, or more ranks than cores): without the yield each turn of a
/// ping-pong then lasts a whole scheduler slice (tens of ms per 1 MiB round trip,
/// against about 1 ms one way with it). Not sooner: a 1 MiB ping-pong on two cores idles
/// for tens of µs in normal operation (a count of 4096 idle polls, tried first, was
/// reached about 7 times per round trip: a poll takes a few ns), and on a busy machine
/// each yield can hand the core to another program for a slice just before the peer
/// answers.
const YIELD_AFTER: Duration = Duration::from_micros(200);
const YIELD_EVERY: u32 = 1 << 8;
/// Slots per ring.
pub const SLOTS: usize = 64;
/// Bytes per slot: sequence word, length, frame.
pub const SLOT_BYTES: usize = 8256;
const SLOT_HEAD: usize = 16;
/// Largest frame a slot holds.
pub const MTU: usize = SLOT_BYTES - SLOT_HEAD;

const MAGIC: u64 = 0x6d79_7269_785f_7368; // "myrix_sh"
const HEADER_BYTES: usize = 4096;
const RING_HEAD: usize = 128;
// Ring head fields: the claimant word and, a cache line apart, the consumer's tail.
const R_CLAIM: usize = 0;
const R_TAIL: usize = 64;
// Claimant word, low byte: the claim is being set up / ready / given back but not yet
// drained by the owner (no new sender may take the ring until the owner frees it).
const CLAIM_INIT: u64 = 2;
const CLAIM_READY: u64 = 1;
const CLAIM_CLOSED: u64 = 3;
const RING_BYTES: usize = RING_HEAD + SLOTS * SLOT_BYTES;
const SEGMENT_BYTES: usize = HEADER_BYTES + RINGS * RING_BYTES;

// Header fields.
const H_MAGIC: usize = 0;
const H_PID: usize = 8;
const H_READY: usize = 12;

fn dir() -> PathBuf {
    std::env::var_os("MYRIX_SHM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"))
}

/// The segment file name of endpoint `ep` on board `nic`.
/// This host's NIC id for shared memory: every endpoint on the host must agree on it
/// (it names the segments). Derived from `/etc/machine-id` (else the host name).
pub fn host_nic() -> u64 {
    let id = std::fs::read_to_string("/etc/machine-id")
        .or_else(|_| std::fs::read_to_string("/proc/sys/kernel/hostname"))
        .unwrap_or_default();
    // FNV-1a, folded to 48 bits, with the locally-administered bit set.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.trim().bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    ((h ^ (h >> 48)) & 0xfcff_ffff_ffff) | 0x0200_0000_0000
}

pub fn segment_name(nic: u64, ep: u8) -> String {
    format!("myrix-{nic:012x}-{ep}")
}

fn pid_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A mapped segment.
struct Segment {
    /// The mapping's first byte, kept apart so the fast paths need not ask `map`.
    base: *mut u8,
    _map: MmapMut,
    _file: File,
}

// SAFETY: the mapping is plain shared memory; every access to words other processes
// write goes through atomics, and the struct is only used by one thread at a time.
unsafe impl Send for Segment {}

impl Segment {
    #[inline(always)]
    fn base(&self) -> *mut u8 {
        self.base
    }
    fn atomic64(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off % 8 == 0 && off + 8 <= SEGMENT_BYTES);
        // SAFETY: in bounds (checked above), 8-aligned (the mapping is page-aligned and
        // every offset used is a multiple of 8), and only ever accessed atomically.
        unsafe { AtomicU64::from_ptr(self.base().add(off) as *mut u64) }
    }
    fn atomic32(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off % 4 == 0 && off + 4 <= SEGMENT_BYTES);
        // SAFETY: as for `atomic64`, with 4-byte alignment.
        unsafe { AtomicU32::from_ptr(self.base().add(off) as *mut u32) }
    }
    fn ring(r: usize) -> usize {
        HEADER_BYTES + r * RING_BYTES
    }
    fn slot(r: usize, s: usize) -> usize {
        Self::ring(r) + RING_HEAD + s * SLOT_BYTES
    }
    fn claimant(&self, r: usize) -> &AtomicU64 {
        self.atomic64(Self::ring(r) + R_CLAIM)
    }
    fn tail(&self, r: usize) -> &AtomicU64 {
        self.atomic64(Self::ring(r) + R_TAIL)
    }
    fn seq(&self, r: usize, s: usize) -> &AtomicU64 {
        self.atomic64(Self::slot(r, s))
    }
    /// Empties ring `r`: no slot published, nothing consumed.
    fn init_ring(&self, r: usize) {
        for s in 0..SLOTS {
            self.seq(r, s).store(0, Ordering::Relaxed);
        }
        self.tail(r).store(0, Ordering::Relaxed);
    }
    fn open(path: &PathBuf, create: bool) -> io::Result<Segment> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create)
            .open(path)?;
        if create {
            file.set_len(SEGMENT_BYTES as u64)?;
        } else if file.metadata()?.len() != SEGMENT_BYTES as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a myrix segment", path.display()),
            ));
        }
        // SAFETY: the file is ours or another myrix endpoint's; it may change under us,
        // which is why every shared word is read and written atomically and every
        // length read from it is bounds-checked before use.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        Ok(Segment {
            base: map.as_mut_ptr(),
            _map: map,
            _file: file,
        })
    }
}

/// Removes segments whose owner process no longer exists.
fn reap_stale() {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("myrix-") {
            continue;
        }
        let path = e.path();
        if let Ok(seg) = Segment::open(&path, false) {
            let magic = seg.atomic64(H_MAGIC).load(Ordering::Acquire);
            let pid = seg.atomic32(H_PID).load(Ordering::Acquire);
            let ready = seg.atomic32(H_READY).load(Ordering::Acquire);
            if magic == MAGIC && ready == 1 && !pid_alive(pid) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// A sender's attachment to a peer's segment.
struct Outbound {
    seg: Segment,
    ring: usize,
    pos: u64,
    /// The consumer's tail as last read: positions below `tail + SLOTS` are free.
    tail: u64,
    /// Inode of the segment file: a restarted peer has a new one.
    ino: u64,
}

pub struct Shm {
    nic: u64,
    ep: u8,
    path: PathBuf,
    own: Segment,
    /// Per inbound ring: consumer position, the tail last published, and the
    /// claimant's endpoint, when claimed.
    inbound: [(u64, u64, Option<u8>); RINGS],
    /// Bit r set: inbound ring r has a claimant (so a poll visits only those rings).
    active: u32,
    /// Claimant words as last seen, to notice new and dead senders.
    claims: [u64; RINGS],
    polls: u32,
    /// Polls in a row that moved no frame either way, and when the 256th of them was
    /// made (see [`YIELD_AFTER`]).
    idle: u32,
    idle_since: Instant,
    out: Vec<Option<Outbound>>,
    /// Peers found dead, not yet reported.
    gone: Vec<u8>,
    /// When dead peers were last looked for.
    last_reap: Instant,
    /// Our claimant word, ready state: process, a per-endpoint nonce (so a ring given
    /// back and claimed again reads as a new claim), endpoint.
    claim: u64,
}

fn claim_word(pid: u32, nonce: u16, ep: u8) -> u64 {
    ((pid as u64) << 32) | ((nonce as u64) << 16) | ((ep as u64) << 8) | CLAIM_READY
}

fn claim_pid(w: u64) -> u32 {
    (w >> 32) as u32
}

impl Shm {
    /// Opens endpoint `ep` of board `nic`. Fails if a live process holds it.
    pub fn open(nic: u64, ep: u8) -> io::Result<Shm> {
        reap_stale();
        let path = dir().join(segment_name(nic, ep));
        let own = match Segment::open(&path, true) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!(
                        "endpoint {ep} is open in another process ({})",
                        path.display()
                    ),
                ))
            }
            Err(e) => return Err(e),
        };
        let pid = std::process::id();
        let nonce = rand::random::<u16>();
        for r in 0..RINGS {
            own.init_ring(r);
            own.claimant(r).store(0, Ordering::Relaxed);
        }
        own.atomic64(H_MAGIC).store(MAGIC, Ordering::Relaxed);
        own.atomic32(H_PID).store(pid, Ordering::Relaxed);
        own.atomic32(H_READY).store(1, Ordering::Release);
        Ok(Shm {
            nic,
            ep,
            path,
            own,
            inbound: [(0, 0, None); RINGS],
            active: 0,
            claims: [0; RINGS],
            polls: 0,
            idle: 0,
            idle_since: Instant::now(),
            out: (0..256).map(|_| None).collect(),
            gone: Vec::new(),
            last_reap: Instant::now(),
            claim: claim_word(pid, nonce, ep),
        })
    }

    fn attach(&mut self, ep: u8) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let path = dir().join(segment_name(self.nic, ep));
        let ino = match std::fs::metadata(&path) {
            Ok(m) => m.ino(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "no endpoint {ep} open on this host ({} does not exist)",
                        path.display()
                    ),
                ))
            }
            Err(e) => return Err(e),
        };
        if self.out[ep as usize].as_ref().is_some_and(|o| o.ino == ino) {
            return Ok(());
        }
        self.release(ep);
        let seg = Segment::open(&path, false)?;
        if seg.atomic64(H_MAGIC).load(Ordering::Acquire) != MAGIC
            || seg.atomic32(H_READY).load(Ordering::Acquire) != 1
        {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("{} is not ready", path.display()),
            ));
        }
        let me = self.claim;
        let setting_up = (me & !0xff) | CLAIM_INIT;
        let ring = (0..RINGS)
            .find(|&r| {
                seg.claimant(r)
                    .compare_exchange(0, setting_up, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })
            .inspect(|&r| {
                // The owner ignores the ring until it is clear and marked ready.
                seg.init_ring(r);
                seg.claimant(r).store(me, Ordering::Release);
            })
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!("endpoint {ep} has all {RINGS} rings taken"),
                )
            })?;
        self.out[ep as usize] = Some(Outbound {
            seg,
            ring,
            pos: 0,
            tail: 0,
            ino,
        });
        Ok(())
    }

    /// Gives back the ring we hold in `ep`'s segment. The owner frees it after reading
    /// what is left in it (the Release here orders every publish before the close).
    fn release(&mut self, ep: u8) {
        if let Some(o) = self.out[ep as usize].take() {
            let _ = o.seg.claimant(o.ring).compare_exchange(
                self.claim,
                (self.claim & !0xff) | CLAIM_CLOSED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }

    /// Notices newly claimed rings and, when `reap`, resets rings of senders that died.
    fn refresh_claims(&mut self, reap: bool) {
        for r in 0..RINGS {
            let w = self.own.claimant(r).load(Ordering::Acquire);
            if w == self.claims[r] {
                continue;
            }
            self.refresh_one(r, w);
        }
        if !reap {
            return;
        }
        for r in 0..RINGS {
            let w = self.claims[r];
            // A closed ring is drained by `poll_recv` even when its sender has exited.
            if w != 0 && w & 0xff != CLAIM_CLOSED && !pid_alive(claim_pid(w)) {
                self.own.init_ring(r);
                self.own.claimant(r).store(0, Ordering::Release);
                self.claims[r] = 0;
                self.set_inbound(r, None);
                self.gone.push((w >> 8) as u8);
            }
        }
        // Peers we send to whose process died: their segment is a corpse.
        for ep in 0..=255u8 {
            let dead = self.out[ep as usize]
                .as_ref()
                .is_some_and(|o| !pid_alive(o.seg.atomic32(H_PID).load(Ordering::Acquire)));
            if dead {
                self.release(ep);
                if !self.gone.contains(&ep) {
                    self.gone.push(ep);
                }
            }
        }
    }

    /// Frames moved on another path of the same endpoint (`omx+shm`'s Ethernet): the
    /// endpoint is not idle, so the polls do not give the CPU away.
    #[inline]
    pub fn moved_elsewhere(&mut self) {
        self.idle = 0;
    }

    /// Every [`YIELD_EVERY`] idle polls: the streak's start is noted at the first, and
    /// once it is [`YIELD_AFTER`] old the CPU is given away.
    #[cold]
    #[inline(never)]
    fn idle_wait(&mut self) {
        let now = Instant::now();
        if self.idle == YIELD_EVERY {
            self.idle_since = now;
        } else if now.duration_since(self.idle_since) >= YIELD_AFTER {
            // SAFETY: sched_yield takes no arguments and touches no memory of ours.
            unsafe { libc::sched_yield() };
        }
    }

    /// Ring `r` starts over, claimed by `ep` or by nobody.
    fn set_inbound(&mut self, r: usize, ep: Option<u8>) {
        self.inbound[r] = (0, 0, ep);
        if ep.is_some() {
            self.active |= 1 << r;
        } else {
            self.active &= !(1 << r);
        }
    }

    /// Ring `r`'s claimant word is now `w` (loaded with Acquire): a new sender starts at 0.
    fn refresh_one(&mut self, r: usize, w: u64) {
        use std::os::unix::fs::MetadataExt;
        let before = std::mem::replace(&mut self.claims[r], w);
        let ep = (w >> 8) as u8;
        match w & 0xff {
            // The same claim, now closed: keep reading where we are; `poll_recv` frees
            // the ring once it is empty.
            CLAIM_CLOSED if before == (w & !0xff) | CLAIM_READY => return,
            // Claimed and closed between two looks: its frames start at 0.
            CLAIM_CLOSED => {
                self.set_inbound(r, Some(ep));
                return;
            }
            CLAIM_READY => self.set_inbound(r, Some(ep)),
            _ => {
                self.set_inbound(r, None);
                return;
            }
        }
        // A new claim may come from a reopened endpoint: our way back to it must lead to
        // its new segment, not the unlinked one we still map.
        if let Some(o) = &self.out[ep as usize] {
            let path = dir().join(segment_name(self.nic, ep));
            if std::fs::metadata(path).map(|m| m.ino()).ok() != Some(o.ino) {
                self.release(ep);
            }
        }
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        for ep in 0..=255 {
            self.release(ep);
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Transport for Shm {
    fn locator(&self) -> String {
        format!("shm:{}", segment_name(self.nic, self.ep))
    }
    fn mtu(&self) -> usize {
        MTU
    }
    fn reliable(&self) -> bool {
        true
    }
    fn resolve(&mut self, location: &str, endpoint: u8) -> io::Result<Loc> {
        if location != segment_name(self.nic, endpoint) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("shared-memory segment {location:?} is not on this host"),
            ));
        }
        self.attach(endpoint)?;
        Ok(Loc::Shm(endpoint))
    }
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool> {
        if frame.len() > MTU {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "frame too long",
            ));
        }
        let Some(room) = self.frame_slot(to)? else {
            return Ok(false);
        };
        room[..frame.len()].copy_from_slice(frame);
        self.commit_slot(to, frame.len());
        Ok(true)
    }
    #[inline]
    fn frame_slot(&mut self, to: &Loc) -> io::Result<Option<&mut [u8]>> {
        let Loc::Shm(ep) = *to else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a shared-memory location",
            ));
        };
        if self.out[ep as usize].is_none() {
            // A peer that connected to us: attach to its segment to answer.
            self.attach(ep)?;
        }
        let o = self.out[ep as usize].as_mut().expect("attached");
        if o.pos.wrapping_sub(o.tail) >= SLOTS as u64 {
            // Full as far as we knew: see how far the consumer has got.
            o.tail = o.seg.tail(o.ring).load(Ordering::Acquire);
            if o.pos.wrapping_sub(o.tail) >= SLOTS as u64 {
                return Ok(None);
            }
        }
        let off = Segment::slot(o.ring, (o.pos % SLOTS as u64) as usize) + SLOT_HEAD;
        // SAFETY: the slot is ours until we publish it (the consumer's tail says it has
        // read the slot's previous frame, and it reads nothing unpublished), and its frame
        // area is MTU bytes inside the mapping.
        Ok(Some(unsafe {
            std::slice::from_raw_parts_mut(o.seg.base().add(off), MTU)
        }))
    }
    #[inline(always)]
    fn commit_slot(&mut self, to: &Loc, len: usize) {
        let Loc::Shm(ep) = *to else { return };
        let Some(o) = self.out[ep as usize].as_mut() else {
            return;
        };
        let s = (o.pos % SLOTS as u64) as usize;
        // SAFETY: as in `frame_slot`; the length word sits in the same unpublished slot.
        unsafe {
            let p = o.seg.base().add(Segment::slot(o.ring, s));
            (p.add(8) as *mut u32).write_volatile(len.min(MTU) as u32);
        }
        o.seg.seq(o.ring, s).store(o.pos + 1, Ordering::Release);
        o.pos += 1;
        self.idle = 0;
    }
    fn poll_gone(&mut self) -> Option<Loc> {
        self.gone.pop().map(Loc::Shm)
    }
    #[inline]
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        mut deliver: F,
    ) -> io::Result<usize> {
        self.polls = self.polls.wrapping_add(1);
        let mut n = 0;
        let mut rings = self.active;
        while rings != 0 {
            let r = rings.trailing_zeros() as usize;
            rings &= rings - 1;
            // A line only the claimant's setup writes: cheap to check on every poll, and
            // it makes a ring given back and claimed again start over at once.
            let w = self.own.claimant(r).load(Ordering::Acquire);
            if w != self.claims[r] {
                self.refresh_one(r, w);
            }
            let (mut pos, mut published, Some(ep)) = self.inbound[r] else {
                continue;
            };
            let start = pos;
            while n < max {
                let s = (pos % SLOTS as u64) as usize;
                if self.own.seq(r, s).load(Ordering::Acquire) != pos + 1 {
                    break;
                }
                let off = Segment::slot(r, s);
                // SAFETY: the producer published the slot (Acquire above) and does not
                // touch it until our tail passes it; the length is clamped to the slot.
                let frame = unsafe {
                    let p = self.own.base().add(off);
                    let len = ((p.add(8) as *const u32).read_volatile() as usize).min(MTU);
                    std::slice::from_raw_parts(p.add(SLOT_HEAD), len)
                };
                n += 1;
                if deliver(&Loc::Shm(ep), frame) == Verdict::Busy {
                    break;
                }
                pos += 1;
                if pos - published >= (SLOTS / 4) as u64 {
                    self.own.tail(r).store(pos, Ordering::Release);
                    published = pos;
                }
            }
            if pos == start && published != pos {
                // Idle: tell the producer everything is free.
                self.own.tail(r).store(pos, Ordering::Release);
                published = pos;
            }
            self.inbound[r] = (pos, published, Some(ep));
            // A frame left unread (max reached, or Busy) keeps the ring closed but held.
            if w & 0xff == CLAIM_CLOSED {
                let s = (pos % SLOTS as u64) as usize;
                if self.own.seq(r, s).load(Ordering::Acquire) != pos + 1 {
                    // Closed and drained: free for the next sender.
                    self.own.init_ring(r);
                    self.claims[r] = 0;
                    self.set_inbound(r, None);
                    self.own.claimant(r).store(0, Ordering::Release);
                }
            }
        }
        if n > 0 {
            self.idle = 0;
        } else {
            self.idle = self.idle.wrapping_add(1);
            if self.idle % YIELD_EVERY == 0 {
                self.idle_wait();
            }
        }
        // New senders are noticed within 64 idle polls. Dead peers cost a system call
        // each to find, which on the ping-pong's path is nanoseconds per message if made
        // every few thousand polls: they are looked for every 4096 polls once
        // REAP_EVERY has passed (a clock read), so within about 10 ms.
        if n == 0 && self.polls % 64 == 0 || self.polls % 4096 == 0 {
            let reap = self.polls % 4096 == 0 && self.last_reap.elapsed() >= REAP_EVERY;
            if reap {
                self.last_reap = Instant::now();
            }
            self.refresh_claims(reap);
        }
        Ok(n)
    }
}

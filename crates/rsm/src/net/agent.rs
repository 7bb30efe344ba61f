//! The RSM engine served beside MX on an MX endpoint, and the progress agent that
//! keeps it going while the application does not call the library.
//!
//! * [`Core`] — the engine, the exporter's memory ([`Segments`]) and what the engine
//!   told us (finished connects, gets and flushes by id; signals into mailboxes), behind
//!   one lock ([`CoreLock`]: whoever lets go of it leaves word of the engine's next
//!   deadline and whether it has frames to send, which the endpoint's polls read
//!   without taking the lock).
//! * [`RsmProtocol`] — the `mx::protocol::Protocol` the endpoint calls for frames tagged
//!   `0x52`: it locks the core, hands the frame and the memory to the engine, and sorts
//!   the events.
//! * [`spawn_agent`] — the progress thread: it sleeps in `poll(2)` on the endpoint's
//!   socket until a frame arrives or the engine's next timer is due, then runs the
//!   endpoint's progress. See the module docs of `net` for why a thread.
//!
//! Lock order: the endpoint, then the core. Code holding the core never takes the
//! endpoint.

use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use myrix_mx::protocol::Protocol;
use myrix_mx::transport::{Loc, Verdict};
use myrix_rsm_proto::engine::{Engine, Event, Import, SignalTarget};
use myrix_rsm_proto::hash::{FastMap, FastSet};
use myrix_rsm_proto::{NodeId, RsmError};

use super::bundle;
use super::memory::Segments;
use super::signal::Mailbox;
use super::Net;

/// A peer's place on the transport: `mx::transport::Loc` without the in-host variants,
/// `Copy` as the engine wants its addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Addr {
    Udp(SocketAddr),
    Eth([u8; 6]),
}

impl Addr {
    pub(crate) fn from_loc(l: &Loc) -> Option<Addr> {
        match l {
            Loc::Udp(a) => Some(Addr::Udp(*a)),
            Loc::Eth(m) => Some(Addr::Eth(*m)),
            _ => None,
        }
    }

    pub(crate) fn loc(self) -> Loc {
        match self {
            Addr::Udp(a) => Loc::Udp(a),
            Addr::Eth(m) => Loc::Eth(m),
        }
    }
}

/// The engine and what it reported; see the module docs.
pub(crate) struct Core {
    pub(crate) engine: Engine<Addr>,
    pub(crate) mem: Segments,
    pub(crate) connects: FastMap<u32, Result<u64, RsmError>>,
    pub(crate) gets: FastMap<u32, Result<Vec<u8>, RsmError>>,
    pub(crate) flushes: FastMap<u32, Result<(), RsmError>>,
    /// Where signals for a target go (the handle's mailbox).
    pub(crate) mailboxes: FastMap<SignalTarget, Arc<Mailbox>>,
    /// Peers the engine declared unreachable (for the next connect to retry afresh).
    pub(crate) unreachable: FastSet<Addr>,
    /// This core's rail.
    pub(crate) rail: usize,
    /// Fault injection: every frame in and out is dropped (a dead link).
    pub(crate) down: bool,
    /// The endpoint's clock at its last call into the engine: the agent's deadlines
    /// are on that clock, not its own.
    pub(crate) last_now: u64,
    /// A frame taken from the engine that could not join the datagram before it
    /// (another peer, no room left): the next datagram starts with it.
    held: Option<(Addr, usize)>,
    /// Its bytes; also where each next frame is written to see whether it joins.
    spare: Vec<u8>,
    /// The engine's MTU ([`bundle::HEAD`] bytes below the endpoint's).
    mtu: usize,
    /// What the endpoint's polls read without the lock ([`CoreLock`]).
    signals: Arc<Unlocked>,
}

/// What a holder of the core's lock leaves, as it lets go, for the endpoint's polls to
/// read without taking it: an idle poll (an exporter spinning on its flag, a wait's
/// polls) and a poll that took a frame in whose answer has already gone then do not
/// lock the engine to hear that it has nothing to do.
#[derive(Default)]
struct Unlocked {
    /// The engine's next deadline (`u64::MAX`: none): what
    /// [`Protocol::poll_timeout`] answers.
    deadline: AtomicU64,
    /// Frames may be waiting ([`Core::more_to_send`]): [`Protocol::poll_transmit`]
    /// takes the lock only then.
    pending: AtomicBool,
}

impl Core {
    pub(crate) fn new(engine: Engine<Addr>, rail: usize) -> Core {
        let mtu = engine.config().mtu;
        Core {
            held: None,
            spare: vec![0; mtu],
            mtu,
            signals: Arc::default(),
            engine,
            mem: Segments::default(),
            connects: FastMap::default(),
            gets: FastMap::default(),
            flushes: FastMap::default(),
            mailboxes: FastMap::default(),
            unreachable: FastSet::default(),
            rail,
            down: false,
            last_now: 0,
        }
    }

    /// The next datagram: the engine's next frame and those after it to the same peer
    /// that fit ([`bundle`]), written into `buf` (the endpoint's send buffer).
    pub(crate) fn next_datagram(&mut self, now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        self.last_now = now;
        self.bundle_next(now, buf)
    }

    /// A put of import `imp` and the datagram that carries it: a small put with
    /// nothing ahead of it built straight into `buf` ([`Engine::put_now`]), else
    /// queued and the next datagram built as [`Core::next_datagram`] does. An error
    /// queues nothing and sends nothing.
    pub(crate) fn put_now(
        &mut self,
        now: u64,
        imp: Import,
        off: u64,
        data: &[u8],
        buf: &mut [u8],
    ) -> Result<Option<(Loc, usize)>, RsmError> {
        self.last_now = now;
        if self.held.is_some() {
            // The held frame was taken from the engine before this write: it goes first.
            self.engine.put(imp, off, data)?;
        } else if let Some((a, n)) = self.engine.put_now(now, imp, off, data, buf)? {
            return Ok(Some((a.loc(), n)));
        }
        Ok(self.bundle_next(now, buf))
    }

    /// Whether frames are left to send after [`Core::next_datagram`] (one held back,
    /// or the engine's queue not drained: a large frame went alone).
    pub(crate) fn more_to_send(&self) -> bool {
        self.held.is_some() || self.engine.has_transmit()
    }

    fn bundle_next(&mut self, now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        let (held, spare, mtu) = (&mut self.held, &mut self.spare, self.mtu);
        let head = bundle::HEAD;
        if buf.len() < head + mtu {
            // No room for a bundle's head (not the endpoint's own buffer): one frame.
            if let Some((a, n)) = held.take() {
                buf[..n].copy_from_slice(&spare[..n]);
                return Some((a.loc(), n));
            }
            return self
                .engine
                .poll_transmit(now, buf)
                .map(|(a, n)| (a.loc(), n));
        }
        // The first frame goes where it lies in a bundle, so joining costs no copy of it.
        let (to, first) = match held.take() {
            Some((a, n)) => {
                buf[head..head + n].copy_from_slice(&spare[..n]);
                (a, n)
            }
            None => self.engine.poll_transmit(now, &mut buf[head..])?,
        };
        let limit = head + mtu;
        if first > mtu / 2 {
            // A large frame (a piece of a bulk put): nothing much would join it, and
            // moving it to the datagram's start would copy it again. It goes as a
            // bundle of one.
            bundle::start(buf, first);
            return Some((to.loc(), head + first));
        }
        let mut end = head + first;
        // `has_transmit` first: a lone frame (a flush's reply) then asks the engine
        // nothing more.
        while let Some((a, n)) = self
            .engine
            .has_transmit()
            .then(|| self.engine.poll_transmit(now, spare))
            .flatten()
        {
            match (a == to)
                .then(|| bundle::push(buf, end, limit, &spare[..n]))
                .flatten()
            {
                Some(e) => end = e,
                None => {
                    *held = Some((a, n));
                    break;
                }
            }
        }
        if end == head + first {
            buf.copy_within(head..end, 0);
            return Some((to.loc(), first));
        }
        bundle::start(buf, first);
        Some((to.loc(), end))
    }

    /// A datagram arrived from `addr`: its frames to the engine, the events sorted.
    /// Returns false on a downed rail (the frame is dropped, nothing answers it).
    fn take_in(&mut self, now: u64, addr: Addr, frame: &[u8]) -> bool {
        self.last_now = now;
        if self.down {
            return false;
        }
        if bundle::is_bundle(frame) {
            for f in bundle::frames(frame) {
                self.engine.handle_frame(now, &addr, f, &mut self.mem);
            }
        } else {
            self.engine.handle_frame(now, &addr, frame, &mut self.mem);
        }
        self.drain();
        true
    }

    /// Leaves word for the endpoint's polls ([`Unlocked`]); called as the lock goes.
    fn note_unlocked(&self) {
        let t = self.engine.poll_timeout().unwrap_or(u64::MAX);
        self.signals.deadline.store(t, Ordering::Relaxed);
        self.signals
            .pending
            .store(self.more_to_send(), Ordering::Release);
    }

    /// Sorts the engine's events into the tables and mailboxes.
    pub(crate) fn drain(&mut self) {
        while let Some(e) = self.engine.poll_event() {
            match e {
                Event::Connected { import, result } => {
                    self.connects.insert(import.0, result);
                }
                Event::GetDone { get, result, .. } => {
                    self.gets.insert(get.0, result);
                }
                Event::BarrierDone { flush, result, .. } => {
                    self.flushes.insert(flush.0, result);
                }
                Event::Aborted { .. } => {}
                Event::Signal { target, from } => {
                    if let Some(m) = self.mailboxes.get(&target) {
                        // Pending until the application takes it (no-accumulate).
                        self.engine.signal_held(target);
                        m.post(from, self.rail, target);
                    }
                }
                Event::PeerUnreachable { peer } => {
                    self.unreachable.insert(peer);
                }
            }
        }
    }
}

/// Takes the oldest signal of `m` and tells the engine of the rail it came by.
pub(crate) fn take_signal(net: &Net, m: &Mailbox) -> Option<NodeId> {
    let (from, rail, target) = m.take()?;
    if let Some(r) = net.rails.get(rail) {
        lock(&r.core).engine.signal_taken(target);
    }
    Some(from)
}

/// Locks a mutex (or the core), taking the data of a poisoned one (a panic elsewhere
/// must not make every later call panic).
pub(crate) fn lock<L: Lockable + ?Sized>(m: &L) -> L::Guard<'_> {
    m.locked()
}

/// What [`lock`] locks: a mutex, or the core, whose guard does more as it lets go.
pub(crate) trait Lockable {
    type Guard<'a>
    where
        Self: 'a;
    fn locked(&self) -> Self::Guard<'_>;
}

impl<T> Lockable for Mutex<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        T: 'a;
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<L: Lockable + ?Sized> Lockable for Arc<L> {
    type Guard<'a>
        = L::Guard<'a>
    where
        L: 'a;
    fn locked(&self) -> L::Guard<'_> {
        (**self).locked()
    }
}

/// The core behind its lock. Every holder, whatever it did (a put, a flush, a frame
/// taken in, a timer), leaves the engine's deadline and whether frames wait as it lets
/// go ([`CoreGuard`]'s drop), so what the endpoint's polls read without the lock is
/// never older than the last release: a frame queued by any call is seen by the next
/// poll, as when every poll took the lock.
pub(crate) struct CoreLock {
    core: Mutex<Core>,
    signals: Arc<Unlocked>,
}

impl CoreLock {
    pub(crate) fn new(core: Core) -> CoreLock {
        let signals = core.signals.clone();
        CoreLock {
            core: Mutex::new(core),
            signals,
        }
    }
}

impl Lockable for CoreLock {
    type Guard<'a> = CoreGuard<'a>;
    fn locked(&self) -> CoreGuard<'_> {
        CoreGuard(self.core.locked())
    }
}

/// The core, locked; see [`CoreLock`].
pub(crate) struct CoreGuard<'a>(MutexGuard<'a, Core>);

impl Deref for CoreGuard<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.0
    }
}

impl DerefMut for CoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.0
    }
}

impl Drop for CoreGuard<'_> {
    fn drop(&mut self) {
        // Still under the lock: the mutex guard is dropped after this.
        self.0.note_unlocked();
    }
}

/// The engine as a protocol of the MX endpoint. Frames the engine has for one peer at
/// once leave in one datagram ([`bundle`], [`Core::next_datagram`]); the engine's
/// frames are [`bundle::HEAD`] bytes shorter than the endpoint's (`Net::open` sets its
/// MTU so).
pub(crate) struct RsmProtocol {
    pub(crate) core: Arc<CoreLock>,
}

impl RsmProtocol {
    pub(crate) fn new(core: Arc<CoreLock>) -> RsmProtocol {
        RsmProtocol { core }
    }
}

impl Protocol for RsmProtocol {
    fn tag(&self) -> u8 {
        myrix_wire::protocol::RSM
    }

    fn handle_frame(&mut self, now: u64, from: &Loc, frame: &[u8]) -> Verdict {
        if let Some(addr) = Addr::from_loc(from) {
            lock(&self.core).take_in(now, addr, frame);
        }
        Verdict::Taken
    }

    fn handle_frame_answer(
        &mut self,
        now: u64,
        from: &Loc,
        frame: &[u8],
        room: &mut [u8],
    ) -> (Verdict, Option<(Loc, usize)>) {
        let Some(addr) = Addr::from_loc(from) else {
            return (Verdict::Taken, None);
        };
        // The answer (a flush's reply, a read's, an ack due now) is built under the
        // lock that took the frame in: the endpoint sends it as the receive returns,
        // and its later `poll_transmit` finds the flag clear, so the exporter's engine
        // is locked once per request, not twice.
        let mut c = lock(&self.core);
        if !c.take_in(now, addr, frame) || !c.more_to_send() {
            return (Verdict::Taken, None);
        }
        (Verdict::Taken, c.next_datagram(now, room))
    }

    fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        // The endpoint asks until it hears "none": after the last datagram, and on
        // every idle poll, that is this load, not the lock.
        if !self.core.signals.pending.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.core).next_datagram(now, buf)
    }

    fn poll_timeout(&self) -> Option<u64> {
        match self.core.signals.deadline.load(Ordering::Relaxed) {
            u64::MAX => None,
            t => Some(t),
        }
    }

    fn handle_timeout(&mut self, now: u64) {
        let mut c = lock(&self.core);
        c.engine.handle_timeout(now);
        c.drain();
    }
}

/// The longest the agent sleeps without a frame or a due timer: how late the MX
/// endpoint's own housekeeping may run.
pub(crate) const AGENT_MAX_SLEEP: Duration = Duration::from_millis(20);
/// How long the agent backs off when the application holds the endpoint.
const AGENT_BUSY_BACKOFF: Duration = Duration::from_micros(200);
/// The application drove the endpoint this recently: it is polling, so the agent
/// leaves the socket to it (a frame woke nobody but the caller that reads it).
pub(crate) const APP_ACTIVE_NS: u64 = 200_000;
/// The shortest nap of the agent while the application polls: it naps until the
/// application would stop counting as active, at least this long. Each nap's end is a
/// wake-up that, when every core runs a polling rank, preempts one (a context switch
/// each way, on a message's path one time in ~80 at 200 µs; docs/mpi-net.md, session
/// 28): 1 ms makes them 5x rarer, and the agent takes over at most ~1.2 ms after the
/// application stops polling.
const AGENT_NAP_MIN: Duration = Duration::from_millis(1);
/// How long the agent keeps polling the socket after a frame before it sleeps in
/// `poll(2)`, when the machine has a core for every busy process: the next frame of a
/// burst (a put's flush, the next put of a sequence) then costs no wake-up.
const AGENT_SPIN_NS: u64 = 50_000;

/// Starts the progress thread of `net`. It holds the controller only weakly (and a
/// duplicate of the socket's descriptor to sleep on), so it ends within
/// [`AGENT_MAX_SLEEP`] of the controller's last handle going.
#[allow(unsafe_code)]
pub(crate) fn spawn_agent(net: &Arc<Net>, rail: usize, fd: Option<RawFd>) -> std::io::Result<()> {
    let fd = match fd {
        Some(fd) => {
            // SAFETY: duplicates a descriptor the endpoint owns and keeps open now.
            let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if d < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `d` was just created and is owned by nothing else.
            Some(unsafe { OwnedFd::from_raw_fd(d) })
        }
        None => None,
    };
    let weak: Weak<Net> = Arc::downgrade(net);
    std::thread::Builder::new()
        .name("myrix-rsm-agent".into())
        .spawn(move || agent_loop(weak, rail, fd))?;
    Ok(())
}

/// What one round of the agent decided.
enum Next {
    /// The application polls the endpoint itself (or holds it): nap.
    Nap(Duration),
    /// Frames came in: keep polling a little while the machine has a core for it.
    Spin,
    /// Sleep on the socket until a frame arrives or the engine's next timer.
    Sleep(Duration),
}

/// One round: progress on the endpoint if the application is not driving it, and what
/// to do next.
fn agent_round(net: &Net, rail: usize) -> Next {
    let r = &net.rails[rail];
    if let Some(left) = net.app_active_for() {
        return Next::Nap(left.max(AGENT_NAP_MIN));
    }
    let got = match r.ep.try_lock() {
        Ok(mut ep) => r.progress(&mut ep, false),
        Err(std::sync::TryLockError::Poisoned(p)) => r.progress(&mut p.into_inner(), false),
        Err(std::sync::TryLockError::WouldBlock) => return Next::Nap(AGENT_BUSY_BACKOFF),
    };
    if got > 0 {
        net.took_frames();
        return Next::Spin;
    }
    // The engine's next deadline, on the endpoint's clock (the `now` the endpoint
    // gave the engine in the progress just made).
    let c = lock(&r.core);
    let d = match c.engine.poll_timeout() {
        Some(t) => Duration::from_nanos(t.saturating_sub(c.last_now)).min(AGENT_MAX_SLEEP),
        None => AGENT_MAX_SLEEP,
    };
    Next::Sleep(d)
}

fn agent_loop(weak: Weak<Net>, rail: usize, fd: Option<OwnedFd>) {
    // While spinning: when the last frame came.
    let mut spin_from: Option<Instant> = None;
    loop {
        let next = {
            let Some(net) = weak.upgrade() else { return };
            let next = agent_round(&net, rail);
            if !matches!(next, Next::Spin) {
                // Counted as a wake-up unless it only goes on spinning.
                let spinning = matches!(next, Next::Sleep(_)) && spin_from.is_some();
                if !spinning {
                    net.agent_rounds
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            next
        };
        match next {
            Next::Nap(d) => {
                spin_from = None;
                std::thread::sleep(d);
            }
            Next::Spin => {
                let may = weak.upgrade().is_some_and(|n| n.may_spin());
                if may {
                    spin_from = Some(Instant::now());
                }
            }
            Next::Sleep(d) => {
                let spinning =
                    spin_from.is_some_and(|t| t.elapsed() < Duration::from_nanos(AGENT_SPIN_NS));
                if spinning {
                    std::hint::spin_loop();
                } else {
                    spin_from = None;
                    wait_readable(fd.as_ref(), d);
                }
            }
        }
    }
}

/// Sleeps until `fd` is readable or `d` passes (just sleeps without a descriptor).
#[allow(unsafe_code)]
fn wait_readable(fd: Option<&OwnedFd>, d: Duration) {
    let Some(fd) = fd else {
        std::thread::sleep(d);
        return;
    };
    let mut p = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(fd),
        events: libc::POLLIN,
        revents: 0,
    };
    // At least a microsecond: a deadline due now was just handled by the progress
    // before (a zero timeout would make this a busy loop).
    let d = d.max(Duration::from_micros(1));
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    let start = Instant::now();
    // SAFETY: one live pollfd, count 1; a live timespec; no signal mask.
    let r = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    if r < 0 && start.elapsed() < d {
        // Interrupted: no busy loop.
        std::thread::sleep(Duration::from_micros(100));
    }
}

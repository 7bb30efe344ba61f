//! The hot path allocates nothing once warm: isend/irecv/test/progress/iprobe over a
//! fabric that itself never allocates (a one-rank loop with preallocated queues),
//! counted by a counting global allocator on the test's own thread (the harness's
//! other threads allocate now and then when the machine is loaded and the test slow:
//! 4 allocations seen in CI, none of them the engine's).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
use myrix_mpi::p2p::{Engine, SendMode};

struct Counting;
thread_local! {
    /// Set on the test's thread while it counts (const: reading it never allocates).
    static COUNT: Cell<bool> = const { Cell::new(false) };
}
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

fn counting() -> bool {
    COUNT.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded from the caller, who got `p` from `alloc` above.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded from the caller.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Rank 0 of 1: sends to itself; data read from the sender's buffer at take time.
struct SelfLoop {
    msgs: VecDeque<(MsgToken, Envelope, *const u8, SendId, bool)>,
    pending: VecDeque<Event>,
    deferred: VecDeque<MsgToken>,
    seq: u64,
    takes: u64,
}

impl Fabric for SelfLoop {
    fn rank(&self) -> Rank {
        0
    }
    fn size(&self) -> Rank {
        1
    }
    fn eager_limit(&self) -> usize {
        64
    }
    unsafe fn send(
        &mut self,
        _d: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        let token = MsgToken {
            src: 0,
            seq: self.seq,
        };
        self.seq += 1;
        self.msgs
            .push_back((token, env, data, SendId(token.seq), false));
        Ok(SendId(token.seq))
    }
    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        let i = self
            .msgs
            .iter()
            .position(|m| m.0 == token && m.4)
            .ok_or(FabricError::UnknownMessage(token))?;
        let Some((_, env, data, send, _)) = self.msgs.remove(i) else {
            return Err(FabricError::UnknownMessage(token));
        };
        let n = env.len.min(cap);
        if n > 0 {
            // SAFETY: the sender's buffer is readable for `env.len` bytes until its
            // SendDone (pushed below), the receiver's writable for `cap`.
            unsafe { std::ptr::copy_nonoverlapping(data, buf, n) };
        }
        self.pending.push_back(Event::SendDone { send });
        if env.sync {
            self.pending.push_back(Event::SyncMatched { send });
        }
        self.takes += 1;
        if self.takes % 2 == 0 {
            self.deferred.push_back(token);
            Ok(false)
        } else {
            Ok(true)
        }
    }
    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        let before = events.len();
        events.extend(self.pending.drain(..));
        events.extend(
            self.deferred
                .drain(..)
                .map(|token| Event::Received { token }),
        );
        for m in self.msgs.iter_mut().filter(|m| !m.4) {
            m.4 = true;
            events.push(Event::Arrived {
                token: m.0,
                env: m.1,
            });
        }
        Ok(events.len() > before)
    }
}

fn round(e: &mut Engine<SelfLoop>, out: &[u8], inb: &mut [u8], i: usize) {
    let len = [0, 8, 64, 65, 300][i % 5];
    let mode = [SendMode::Standard, SendMode::Sync, SendMode::Ready][i % 3];
    let tag = (i % 4) as i32;
    // SAFETY: both buffers outlive the requests, waited for below.
    unsafe {
        if i % 2 == 0 {
            let r = e.irecv(None, 0, Some(tag), inb.as_mut_ptr(), 200).unwrap();
            let s = e.isend(0, 0, tag, out.as_ptr(), len, mode).unwrap();
            while e.test(r).unwrap().is_none() {}
            e.wait(s).unwrap();
        } else {
            let s = e.isend(0, 0, tag, out.as_ptr(), len, mode).unwrap();
            while e.iprobe(Some(0), 0, None).unwrap().is_none() {}
            let r = e.irecv(Some(0), 0, None, inb.as_mut_ptr(), 200).unwrap();
            let st = e.wait(r).unwrap();
            assert_eq!(st.len, len.min(200));
            e.wait(s).unwrap();
        }
    }
}

#[test]
fn steady_state_allocates_nothing() {
    let f = SelfLoop {
        msgs: VecDeque::with_capacity(64),
        pending: VecDeque::with_capacity(64),
        deferred: VecDeque::with_capacity(64),
        seq: 0,
        takes: 0,
    };
    let mut e = Engine::new(f);
    let out: Vec<u8> = (0..300).map(|i| i as u8).collect();
    let mut inb = vec![0u8; 300];
    for i in 0..500 {
        round(&mut e, &out, &mut inb, i);
    }
    COUNT.with(|c| c.set(true));
    for i in 0..5000 {
        round(&mut e, &out, &mut inb, i);
    }
    COUNT.with(|c| c.set(false));
    assert_eq!(ALLOCS.load(Ordering::SeqCst), 0);
    assert_eq!(e.live_requests(), 0);
}

//! An in-process fabric for tests: N ranks' [`LoopFabric`]s in one process sharing
//! queues (usable from one thread driving every rank, or one thread per rank).
//!
//! It keeps the [`Fabric`] contract exactly, and exercises its freedoms on purpose,
//! deterministically from a seed (ChaCha8, one stream per rank): each source's
//! messages are announced in send order while different sources are interleaved at
//! random; a message of at most the eager limit is copied at send time (its
//! `SendDone` follows at once), a longer one's data is read from the sender's buffer
//! only after [`Fabric::take`] (its `SendDone` follows the copy); `SyncMatched` follows
//! the take; a take completes at once or, at random, in a later `progress` with
//! `Received`. [`LoopNet::kill`] injects a lost peer. Not for production: it allocates
//! per message and locks one mutex per call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::engine::Engine;
use super::fabric::{Claim, Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};

/// How a loop network behaves.
#[derive(Clone, Debug)]
pub struct LoopConfig {
    /// Seeds every random choice.
    pub seed: u64,
    /// [`Fabric::eager_limit`].
    pub eager_limit: usize,
    /// Percent of takes that complete in a later `progress` (with `Received`).
    pub defer_percent: u32,
    /// At most this many arrivals announced per `progress` (at least 1).
    pub max_announce: usize,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            seed: 0,
            eager_limit: 256,
            defer_percent: 30,
            max_announce: 4,
        }
    }
}

enum Payload {
    /// Copied at send time (eager).
    Copied(Vec<u8>),
    /// The sender's buffer, read at take time (rendezvous).
    Borrowed(*const u8),
}

// SAFETY: a `Borrowed` pointer is only read (never written) and only while its send
// has not been reported done: the sender promised it readable until then
// (`Fabric::send`'s contract). Reading it from the receiver's thread is a read of
// memory no one writes meanwhile.
unsafe impl Send for Payload {}

struct Wire {
    seq: u64,
    env: Envelope,
    send: SendId,
    payload: Payload,
}

#[derive(Default)]
struct Chan {
    next_seq: u64,
    /// Messages with `seq < announced` have been announced.
    announced: u64,
    queue: VecDeque<Wire>,
}

struct Shared {
    n: usize,
    dead: Vec<Option<String>>,
    /// Channel `src * n + dest`.
    chans: Vec<Chan>,
    /// Per rank: send events and lost peers waiting for its next `progress`.
    events: Vec<VecDeque<Event>>,
}

/// A handle on the whole network (to inject failures).
#[derive(Clone)]
pub struct LoopNet {
    shared: Arc<Mutex<Shared>>,
}

struct Deferred {
    token: MsgToken,
    send: SendId,
    payload: Payload,
    len: usize,
    buf: *mut u8,
    cap: usize,
}

/// One rank's end of a [`LoopNet`].
pub struct LoopFabric {
    rank: Rank,
    size: Rank,
    cfg: LoopConfig,
    shared: Arc<Mutex<Shared>>,
    rng: ChaCha8Rng,
    next_send: u64,
    deferred: Vec<Deferred>,
}

// SAFETY: the raw pointers in `deferred` are receive buffers and send buffers the
// engine promised valid until the take is reported received; the fabric is used by
// one thread at a time (`&mut self`), so moving it moves their only user.
unsafe impl Send for LoopFabric {}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LoopNet {
    /// A network of `n` ranks; the fabric of rank `i` is at index `i`.
    pub fn new(n: Rank, cfg: LoopConfig) -> (LoopNet, Vec<LoopFabric>) {
        let nu = n as usize;
        let shared = Arc::new(Mutex::new(Shared {
            n: nu,
            dead: vec![None; nu],
            chans: (0..nu * nu).map(|_| Chan::default()).collect(),
            events: (0..nu).map(|_| VecDeque::new()).collect(),
        }));
        let fabrics = (0..n)
            .map(|rank| LoopFabric {
                rank,
                size: n,
                cfg: cfg.clone(),
                shared: shared.clone(),
                rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ (u64::from(rank) << 40)),
                next_send: 0,
                deferred: Vec::new(),
            })
            .collect();
        (LoopNet { shared }, fabrics)
    }

    /// As [`LoopNet::new`], each fabric inside an [`Engine`].
    pub fn engines(n: Rank, cfg: LoopConfig) -> (LoopNet, Vec<Engine<LoopFabric>>) {
        let (net, f) = LoopNet::new(n, cfg);
        (net, f.into_iter().map(Engine::new).collect())
    }

    /// Rank `rank` dies: every other rank sees `PeerLost`, its messages not yet taken
    /// vanish, and sends to it fail.
    pub fn kill(&self, rank: Rank, why: &str) {
        let mut s = lock(&self.shared);
        let r = rank as usize;
        if r >= s.n || s.dead[r].is_some() {
            return;
        }
        s.dead[r] = Some(why.to_string());
        let n = s.n;
        for other in 0..n {
            s.chans[r * n + other].queue.clear();
            s.chans[other * n + r].queue.clear();
            if other != r {
                s.events[other].push_back(Event::PeerLost {
                    rank,
                    why: why.to_string(),
                });
            }
        }
    }
}

impl LoopFabric {
    fn rand(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    /// Copies a taken message's data into `buf`; returns the events it causes.
    fn copy(d: &Deferred, s: &mut Shared) {
        let n = d.len.min(d.cap);
        if n > 0 {
            let src = match &d.payload {
                Payload::Copied(v) => v.as_ptr(),
                Payload::Borrowed(p) => *p,
            };
            // SAFETY: `src` is valid for `d.len >= n` bytes (our copy, or the sender's
            // buffer, readable until its `SendDone`, pushed only below); `d.buf` is
            // valid for `d.cap >= n` bytes until we report the take done (the caller
            // of `take` promised it); they are different allocations.
            unsafe { std::ptr::copy_nonoverlapping(src, d.buf, n) };
        }
        if matches!(d.payload, Payload::Borrowed(_)) {
            s.events[d.token.src as usize].push_back(Event::SendDone { send: d.send });
        }
    }
}

impl Fabric for LoopFabric {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn size(&self) -> Rank {
        self.size
    }

    fn eager_limit(&self) -> usize {
        self.cfg.eager_limit
    }

    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        let mut s = lock(&self.shared);
        let (me, d) = (self.rank as usize, dest as usize);
        if d >= s.n {
            return Err(FabricError::NoSuchRank(dest));
        }
        if let Some(why) = &s.dead[d] {
            return Err(FabricError::PeerLost {
                rank: dest,
                why: why.clone(),
            });
        }
        if s.dead[me].is_some() {
            return Err(FabricError::Other("this rank was killed".into()));
        }
        let send = SendId(self.next_send);
        self.next_send += 1;
        let payload = if env.len <= self.cfg.eager_limit {
            let mut v = vec![0u8; env.len];
            if env.len > 0 {
                // SAFETY: the caller promised `data` readable for `env.len` bytes.
                unsafe { std::ptr::copy_nonoverlapping(data, v.as_mut_ptr(), env.len) };
            }
            s.events[me].push_back(Event::SendDone { send });
            Payload::Copied(v)
        } else {
            Payload::Borrowed(data)
        };
        let n = s.n;
        let chan = &mut s.chans[me * n + d];
        let seq = chan.next_seq;
        chan.next_seq += 1;
        chan.queue.push_back(Wire {
            seq,
            env,
            send,
            payload,
        });
        Ok(SendId(send.0))
    }

    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        let defer = self.rand(100) < self.cfg.defer_percent as usize;
        let mut s = lock(&self.shared);
        let (src, n) = (token.src as usize, s.n);
        if src >= n {
            return Err(FabricError::NoSuchRank(token.src));
        }
        if let Some(why) = &s.dead[src] {
            return Err(FabricError::PeerLost {
                rank: token.src,
                why: why.clone(),
            });
        }
        let chan = &mut s.chans[src * n + self.rank as usize];
        let pos = chan
            .queue
            .iter()
            .position(|w| w.seq == token.seq && w.seq < chan.announced)
            .ok_or(FabricError::UnknownMessage(token))?;
        let Some(w) = chan.queue.remove(pos) else {
            return Err(FabricError::UnknownMessage(token));
        };
        if w.env.sync {
            s.events[src].push_back(Event::SyncMatched { send: w.send });
        }
        let d = Deferred {
            token,
            send: w.send,
            payload: w.payload,
            len: w.env.len,
            buf,
            cap,
        };
        if defer {
            self.deferred.push(d);
            Ok(false)
        } else {
            Self::copy(&d, &mut s);
            Ok(true)
        }
    }

    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        self.poll(events, None)
    }

    fn progress_claiming(
        &mut self,
        events: &mut Vec<Event>,
        claim: &mut dyn Claim,
    ) -> Result<bool, FabricError> {
        self.poll(events, Some(claim))
    }
}

impl LoopFabric {
    /// One `progress`; with `claim`, an eager non-sync message is (at random) offered
    /// to it before it would be announced, unless this call announced an earlier
    /// message of its source.
    fn poll(
        &mut self,
        events: &mut Vec<Event>,
        mut claim: Option<&mut dyn Claim>,
    ) -> Result<bool, FabricError> {
        let shared = self.shared.clone();
        let mut s = lock(&shared);
        let (me, n) = (self.rank as usize, s.n);
        if s.dead[me].is_some() {
            return Err(FabricError::Other("this rank was killed".into()));
        }
        let before = events.len();
        events.extend(s.events[me].drain(..));
        // Deferred takes: each completes now with even odds.
        let mut i = 0;
        while i < self.deferred.len() {
            let src = self.deferred[i].token.src as usize;
            if s.dead[src].is_some() {
                self.deferred.swap_remove(i);
            } else if self.rand(2) == 0 {
                let d = self.deferred.swap_remove(i);
                Self::copy(&d, &mut s);
                events.push(Event::Received { token: d.token });
            } else {
                i += 1;
            }
        }
        // Arrivals: per-source order, sources interleaved at random.
        let budget = 1 + self.rand(self.cfg.max_announce.max(1));
        let mut announced = vec![false; n];
        let mut claimed = false;
        for _ in 0..budget {
            let ready = (0..n)
                .filter(|&src| {
                    let c = &s.chans[src * n + me];
                    c.queue.iter().any(|w| w.seq >= c.announced)
                })
                .count();
            if ready == 0 {
                break;
            }
            let mut pick = self.rand(ready);
            #[allow(clippy::needless_range_loop)] // `src` also picks the channel
            for src in 0..n {
                let c = &mut s.chans[src * n + me];
                let Some(w) = c.queue.iter().find(|w| w.seq >= c.announced) else {
                    continue;
                };
                if pick > 0 {
                    pick -= 1;
                    continue;
                }
                let (seq, env) = (w.seq, w.env);
                c.announced = seq + 1;
                let offer = !announced[src]
                    && !env.sync
                    && matches!(w.payload, Payload::Copied(_))
                    && self.rng.next_u64() % 2 == 0;
                if let Some(cl) = claim.as_deref_mut().filter(|_| offer) {
                    if let Some((buf, cap)) = cl.claim(src as Rank, &env) {
                        let pos = c.queue.iter().position(|w| w.seq == seq);
                        if let Some(w) = pos.and_then(|p| c.queue.remove(p)) {
                            let d = Deferred {
                                token: MsgToken {
                                    src: src as Rank,
                                    seq,
                                },
                                send: w.send,
                                payload: w.payload,
                                len: env.len,
                                buf,
                                cap,
                            };
                            Self::copy(&d, &mut s);
                        }
                        cl.claimed(true);
                        claimed = true;
                        break;
                    }
                }
                announced[src] = true;
                events.push(Event::Arrived {
                    token: MsgToken {
                        src: src as Rank,
                        seq,
                    },
                    env,
                });
                break;
            }
        }
        Ok(claimed || events.len() > before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(tag: i32, len: usize, sync: bool) -> Envelope {
        Envelope {
            ctx: 0,
            tag,
            len,
            sync,
        }
    }

    fn poll(f: &mut LoopFabric, n: usize) -> Vec<Event> {
        let mut ev = Vec::new();
        for _ in 0..n {
            f.progress(&mut ev).unwrap();
        }
        ev
    }

    /// Three senders, ten messages each: per-source order kept, sources interleaved,
    /// the same interleaving for the same seed.
    fn arrivals(seed: u64) -> Vec<MsgToken> {
        let cfg = LoopConfig {
            seed,
            ..LoopConfig::default()
        };
        let (_net, mut f) = LoopNet::new(4, cfg);
        let d = [0u8; 4];
        for i in 0..10 {
            for f in f.iter_mut().skip(1) {
                // SAFETY: `d` outlives the fabric (eager: copied at once).
                unsafe { f.send(0, env(i, 4, false), d.as_ptr()) }.unwrap();
            }
        }
        poll(&mut f[0], 100)
            .into_iter()
            .filter_map(|e| match e {
                Event::Arrived { token, .. } => Some(token),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn per_source_order_random_interleaving_deterministic() {
        let a = arrivals(1);
        assert_eq!(a.len(), 30);
        for src in 1..4 {
            let seqs: Vec<u64> = a.iter().filter(|t| t.src == src).map(|t| t.seq).collect();
            assert_eq!(seqs, (0..10).collect::<Vec<_>>());
        }
        assert_eq!(a, arrivals(1));
        assert_ne!(a, arrivals(2));
        let srcs: Vec<u32> = a.iter().map(|t| t.src).collect();
        assert_ne!(srcs[..3], srcs[3..6], "sources interleave at random");
    }

    #[test]
    fn rendezvous_moves_after_take_and_sync_matches_at_take() {
        let cfg = LoopConfig {
            eager_limit: 8,
            defer_percent: 0,
            ..LoopConfig::default()
        };
        let (_net, mut f) = LoopNet::new(2, cfg);
        let long = [7u8; 20];
        // SAFETY: `long` outlives the transfer.
        let id = unsafe { f[0].send(1, env(1, 20, true), long.as_ptr()) }.unwrap();
        let ev = poll(&mut f[1], 3);
        let token = match ev.as_slice() {
            [Event::Arrived { token, .. }] => *token,
            e => panic!("{e:?}"),
        };
        assert!(
            poll(&mut f[0], 3).is_empty(),
            "nothing done before the take"
        );
        let mut buf = [0u8; 10];
        // SAFETY: `buf` is valid for 10 bytes; the take completes at once.
        assert!(unsafe { f[1].take(token, buf.as_mut_ptr(), 10) }.unwrap());
        assert_eq!(buf, [7u8; 10]);
        let ev = poll(&mut f[0], 1);
        assert!(ev.contains(&Event::SyncMatched { send: id }));
        assert!(ev.contains(&Event::SendDone { send: id }));
        // SAFETY: refused: already taken.
        let again = unsafe { f[1].take(token, buf.as_mut_ptr(), 10) };
        assert_eq!(again, Err(FabricError::UnknownMessage(token)));
    }

    #[test]
    fn kill_reports_the_loss_and_refuses_sends() {
        let (net, mut f) = LoopNet::new(3, LoopConfig::default());
        net.kill(2, "test");
        let ev = poll(&mut f[0], 1);
        assert!(matches!(ev.as_slice(), [Event::PeerLost { rank: 2, .. }]));
        // SAFETY: refused before reading.
        let r = unsafe { f[0].send(2, env(0, 0, false), std::ptr::null()) };
        assert!(matches!(r, Err(FabricError::PeerLost { rank: 2, .. })));
        assert!(f[2].progress(&mut Vec::new()).is_err());
    }
}

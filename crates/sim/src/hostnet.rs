//! Protocol engines on the simulated hosts: one sans-IO engine at every host interface,
//! its frames carried as Myrinet packets through the flit-level model, the simulator's
//! clock as the engines' clock. The part [`crate::mxnet`] (MX) and [`crate::rsmnet`]
//! (remote shared memory) share: frame slots, injection, arrivals, timers, stepping.
//!
//! A frame becomes the payload of one packet: route bytes, type byte and CRC are added
//! on the wire as for any packet ([`crate::wire_bytes`]). The engines' clock is the
//! simulator's in whole nanoseconds ([`HostNet::clock`]); the interface itself adds no
//! delay (the simulator's `Config::send_overhead` does, if set). Other traffic may share
//! the network: the simulator's own generated messages run alongside unless
//! [`Sim::quiet`] is called.
//!
//! This module must never change what the simulator does to a packet: it only injects
//! packets and reads their arrival. Once the frame slots have grown, a frame costs no
//! allocation here.

use crate::{Config, ConfigError, Sim};
use myrix_fabric::itb::RouteTable;
use myrix_fabric::Topology;
use myrix_link::{Nanos, Picos};

/// A simulator to carry engines' frames: `cfg` with no warm-up and a measurement that
/// does not end, and the simulator's own generated traffic at `load` flits/ns/switch
/// alongside, or none (`None`: [`Sim::quiet`]).
pub fn carrier<'a>(
    cfg: Config,
    t: &'a Topology,
    routes: &'a RouteTable,
    load: Option<f64>,
) -> Result<Sim<'a>, ConfigError> {
    let cfg = Config {
        load: load.unwrap_or(0.01),
        warmup: Picos::ZERO,
        measure: Picos(u64::MAX / 4),
        ..cfg
    };
    let mut sim = Sim::new(cfg, t, routes)?;
    if load.is_none() {
        sim.quiet();
    }
    Ok(sim)
}

/// What [`HostNet`] needs of the engine at a host: frames out, frames in, timers.
/// Peers are named by host index.
pub trait HostEngine {
    /// Whether a frame may be waiting (a cheap test; `true` is always correct).
    fn has_transmit(&self) -> bool {
        true
    }
    /// The next frame, written into `buf`: its destination host and length.
    fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(u32, usize)>;
    /// A frame from host `src` arrived whole.
    fn handle_frame(&mut self, now: u64, src: u32, frame: &[u8]);
    /// The engine's next deadline, ns.
    fn poll_timeout(&self) -> Option<u64>;
    fn handle_timeout(&mut self, now: u64);
}

/// A simulated network with an engine at every host; see the module docs.
pub struct HostNet<'a, E> {
    pub sim: Sim<'a>,
    /// Engine `h` is host `h`'s interface; its peers are located by host index.
    pub engines: Vec<E>,
    /// Frames in the network by tag. A freed slot keeps its buffer, so once the slots
    /// have grown a frame costs no allocation.
    frames: Vec<Frame>,
    free: Vec<usize>,
    arrivals: Vec<(u64, u32)>,
    buf: Vec<u8>,
    /// Frames put into the network, and refused by the interface (destination not in
    /// the map).
    pub frames_sent: u64,
    pub frames_refused: u64,
    /// Length of the last frame sent, bytes.
    pub last_frame_len: usize,
    /// Told the clock every [`WATCH_TICKS`] ticks of [`HostNet::run_until`].
    watch: Option<Box<dyn FnMut(Nanos) + 'a>>,
}

/// How often [`HostNet::run_until`] tells its watcher the clock: 0.4 ms at 160 MB/s.
const WATCH_TICKS: u64 = 1 << 16;

#[derive(Default)]
struct Frame {
    src: u32,
    in_flight: bool,
    bytes: Vec<u8>,
}

/// How often engines' timers are looked at, in ticks (the timers are microseconds to
/// milliseconds long).
const TIMER_TICKS: u64 = 16;

impl<'a, E: HostEngine> HostNet<'a, E> {
    /// `engines[h]` at host `h` of `sim`'s topology; no engine writes frames longer
    /// than `mtu`.
    pub fn with_engines(sim: Sim<'a>, engines: Vec<E>, mtu: usize) -> HostNet<'a, E> {
        HostNet {
            sim,
            engines,
            frames: Vec::new(),
            free: Vec::new(),
            arrivals: Vec::new(),
            buf: vec![0; mtu.max(64)],
            frames_sent: 0,
            frames_refused: 0,
            last_frame_len: 0,
            watch: None,
        }
    }

    /// Has `f` told the clock every 65 536 ticks that [`Self::run_until`] runs:
    /// progress reports for long runs. It changes nothing in the run.
    pub fn set_watch(&mut self, f: Box<dyn FnMut(Nanos) + 'a>) {
        self.watch = Some(f);
    }

    /// The engines' clock: the simulated time in whole nanoseconds (truncated), plus one
    /// so that it is never 0 (engines treat 0 as unset).
    pub fn clock(&self) -> Nanos {
        Nanos::from(self.sim.now()) + Nanos(1)
    }

    /// [`Self::clock`] as the engines take it: a bare `u64` of nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.clock().0
    }

    /// Frames still in the network.
    pub fn in_flight(&self) -> usize {
        self.frames.len() - self.free.len()
    }

    /// One tick: engines hand their frames to their interfaces, the network moves, and
    /// the frames that arrived whole are handed to their engines.
    pub fn step(&mut self) {
        let now = self.now_ns();
        for h in 0..self.engines.len() {
            if !self.engines[h].has_transmit() {
                continue;
            }
            while let Some((dst, n)) = self.engines[h].poll_transmit(now, &mut self.buf) {
                let tag = self.free.pop().unwrap_or_else(|| {
                    self.frames.push(Frame::default());
                    self.frames.len() - 1
                });
                let f = &mut self.frames[tag];
                f.src = h as u32;
                f.in_flight = true;
                f.bytes.clear();
                f.bytes.extend_from_slice(&self.buf[..n]);
                self.frames_sent += 1;
                self.last_frame_len = n;
                if !self.sim.inject_frame(h as u32, dst, n, tag as u64) {
                    self.frames_refused += 1;
                    self.frames[tag].in_flight = false;
                    self.free.push(tag);
                }
            }
        }
        self.sim.step();
        self.sim.take_arrivals(&mut self.arrivals);
        let now = self.now_ns();
        for (tag, dst) in self.arrivals.drain(..) {
            let t = tag as usize;
            let f = &mut self.frames[t];
            assert!(std::mem::take(&mut f.in_flight), "a frame in flight");
            self.free.push(t);
            // A busy receiver drops the frame; the sender resends it, as over UDP.
            self.engines[dst as usize].handle_frame(now, f.src, &f.bytes);
        }
        if self.sim.now_ticks().0 % TIMER_TICKS == 0 {
            for e in &mut self.engines {
                if e.poll_timeout().is_some_and(|d| d <= now) {
                    e.handle_timeout(now);
                }
            }
        }
    }

    /// Steps until `done` holds or `limit` of simulated time passes; returns `done`.
    pub fn run_until(
        &mut self,
        limit: Nanos,
        mut done: impl FnMut(&mut HostNet<'a, E>) -> bool,
    ) -> bool {
        let end = self.clock() + limit;
        let mut steps = 0u64;
        while !done(self) {
            if self.clock() > end {
                return false;
            }
            self.step();
            steps += 1;
            if steps % WATCH_TICKS == 0 {
                let now = self.clock();
                if let Some(w) = self.watch.as_mut() {
                    w(now);
                }
            }
        }
        true
    }
}

//! The simulation engine. [`Sim`] holds the model's state as named structs of arrays,
//! one module each, indexed by newtype ids ([`ids`]): channels and their timing wheels
//! ([`channels`]), switch ports ([`ports`]), shared routing units ([`units`]), host
//! interfaces ([`hosts`]), in-transit buffers ([`itb`]), packets ([`packets`]), meters
//! ([`meters`]); failures and remaps live in [`faults`]. [`Sim::step`] is one call per
//! phase. A tick costs only what moves or changes in it: the engine must never
//! allocate per flit, scan every port or host per tick, or build pointer graphs.

mod channels;
mod config;
mod faults;
mod hosts;
mod ids;
mod itb;
mod meters;
mod packets;
mod ports;
mod units;
mod wheels;

pub use config::{ChannelRelease, Config, ConfigError, Results, SwitchModel, MAX_DELAY};

use channels::Channels;
use hosts::Hosts;
use itb::InTransit;
use meters::Meters;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::Topology;
use myrix_link::slack::SlackBuffer;
use myrix_link::Picos;
use packets::{Packets, NO_TAG};
use ports::{Inputs, Outputs, Ports};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use units::Units;

use crate::Ticks;

/// Durations derived from the [`Config`], in ticks (bare: the engine's hot loop adds
/// them to `Sim::now`).
struct Timing {
    /// Header processing at a switch.
    route: u64,
    /// A message's generation to its first byte leaving the host.
    send: u64,
    /// Mean gap between a host's messages.
    mean_gap: f64,
    /// An in-transit buffer's detection and DMA set-up.
    itb: u64,
    /// Extra delay of an in-transit packet spilled to host memory.
    spill: u64,
    /// The long-period time-out.
    timeout: u64,
    /// The next tick at which blocked headers are checked (never when the time-out is 0).
    next_timeout_check: u64,
}

pub struct Sim<'a> {
    cfg: Config,
    topo: &'a Topology,
    /// Route tables in force, oldest first: new packets take the last; packets in flight
    /// keep the one they started with.
    tables: Vec<&'a RouteTable>,
    timing: Timing,
    now: u64,
    ch: Channels,
    ports: Ports,
    inp: Inputs,
    out: Outputs,
    units: Units,
    hosts: Hosts,
    itb: InTransit,
    pkts: Packets,
    meters: Meters,
    rng: ChaCha8Rng,
}

impl<'a> Sim<'a> {
    pub fn new(
        cfg: Config,
        topo: &'a Topology,
        routes: &'a RouteTable,
    ) -> Result<Sim<'a>, ConfigError> {
        if !(cfg.load > 0.0 && cfg.load.is_finite()) {
            return Err(ConfigError::Load(cfg.load));
        }
        if cfg
            .msg_mix
            .iter()
            .any(|&(b, w)| b == 0 || !(w > 0.0 && w.is_finite()))
        {
            return Err(ConfigError::MsgBytes);
        }
        if cfg.msg_bytes == 0 {
            return Err(ConfigError::MsgBytes);
        }
        if cfg.flit == Picos::ZERO {
            return Err(ConfigError::Flit);
        }
        if cfg.measure == Picos::ZERO {
            return Err(ConfigError::Measure);
        }
        let (cap, stop, go) = cfg.slack;
        let slack =
            SlackBuffer::new(cap, stop, go).map_err(|e| ConfigError::Slack(e.to_string()))?;
        if topo.num_hosts() < 2 {
            return Err(ConfigError::Hosts);
        }
        if routes.num_switches() != topo.num_switches() {
            return Err(ConfigError::Routes(
                routes.num_switches(),
                topo.num_switches(),
            ));
        }
        let flit_ns = cfg.flit.as_nanos_f64();
        let longest = topo
            .hosts()
            .iter()
            .map(|h| h.length_m)
            .chain(topo.links().iter().map(|l| l.length_m))
            .fold(0.0, f64::max);
        let ticks = (longest * cfg.ns_per_m / flit_ns).ceil();
        // Written so that NaN is refused too.
        if ticks.is_nan() || ticks > MAX_DELAY as f64 {
            return Err(ConfigError::Cable(
                longest,
                ticks.min(u64::MAX as f64) as u64,
            ));
        }

        let ports = Ports::new(topo);
        let delay = |m: f64| ((m * cfg.ns_per_m / flit_ns).ceil() as u32).max(1);
        let wiring = Channels::wire(topo, &ports, delay);
        let nh = topo.num_hosts();
        let np = ports.len();
        // The mix as cumulative weights, and its mean payload.
        let mix: Vec<(usize, f64)> = if cfg.msg_mix.is_empty() {
            vec![(cfg.msg_bytes, 1.0)]
        } else {
            cfg.msg_mix.clone()
        };
        let total_w: f64 = mix.iter().map(|m| m.1).sum();
        let mean_bytes = mix.iter().map(|&(b, w)| b as f64 * w).sum::<f64>() / total_w;
        let mut acc = 0.0;
        let mix_cdf: Vec<(usize, f64)> = mix
            .iter()
            .map(|&(b, w)| {
                acc += w / total_w;
                (b, acc)
            })
            .collect();
        let hosts_per_ns = cfg.load * topo.num_switches() as f64 / nh as f64 / mean_bytes;
        let ticks = |d: Picos| Ticks::covering(d, cfg.flit).0;
        let route = ticks(cfg.switch_latency);
        let warm = ticks(cfg.warmup);
        let meas = ticks(cfg.measure);
        let mut sim = Sim {
            timing: Timing {
                route,
                send: ticks(cfg.send_overhead),
                mean_gap: 1.0 / (hosts_per_ns * flit_ns),
                itb: ticks(cfg.itb_latency),
                spill: ticks(cfg.itb_spill),
                timeout: ticks(cfg.block_timeout),
                next_timeout_check: if cfg.block_timeout > Picos::ZERO {
                    0
                } else {
                    u64::MAX
                },
            },
            topo,
            tables: vec![routes],
            now: 0,
            ch: wiring.channels,
            inp: Inputs::new(np, slack, wiring.in_from, route as usize + 2),
            out: Outputs::new(wiring.out_ch),
            units: Units::new(topo.num_switches(), np, route),
            ports,
            hosts: Hosts::new(topo, mix_cdf),
            itb: InTransit::new(topo, cfg.itb_pool),
            pkts: Packets::default(),
            meters: Meters::new(nh, warm, warm + meas),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
        };
        for h in 0..nh as u32 {
            let t = sim.next_gap();
            sim.hosts.gen.push(Reverse((t, h)));
        }
        Ok(sim)
    }

    /// Runs one tick, phase by phase. Only what can change this tick is touched: flits
    /// and STOP/GO symbols due now (timing wheels), routing timers due now, outputs just
    /// freed, inputs that can move a flit ("movers") and hosts that can send.
    pub fn step(&mut self) {
        self.arrivals();
        self.flow_control();
        self.generate();
        self.routing_timers();
        self.new_headers();
        if self.cfg.switch_model == SwitchModel::SharedUnit {
            self.shared_units();
        }
        self.arbitration();
        self.crossbar();
        self.host_sends();
        if self.now == self.timing.next_timeout_check {
            self.timing.next_timeout_check = self.now + (self.timing.timeout / 64).max(1);
            self.long_timeouts();
        }
        self.now += 1;
    }

    /// Injects one message now, outside the traffic process (for tests and tools).
    pub fn inject(&mut self, src: u32, dst: u32) {
        self.new_packet(src, dst);
    }

    /// Queues a packet of `payload` bytes from host `src` to host `dst`, named `tag`: its
    /// arrival is reported by [`Self::take_arrivals`]. False when the interface refuses
    /// it (the destination is not in the map); a packet lost in a failed link is never
    /// reported.
    pub fn inject_frame(&mut self, src: u32, dst: u32, payload: usize, tag: u64) -> bool {
        debug_assert_ne!(tag, NO_TAG);
        self.new_packet_of(src, dst, Some(payload), tag)
    }

    /// The tags of the injected packets that arrived whole since the last call, with
    /// their destination host, in arrival order (appended to `out`).
    pub fn take_arrivals(&mut self, out: &mut Vec<(u64, u32)>) {
        out.append(&mut self.meters.arrivals);
    }

    /// Packets lost in failed links and in the in-transit buffers of hosts switched off,
    /// so far.
    pub fn lost(&self) -> u64 {
        self.meters.lost
    }

    /// Long-period time-outs that fired (each dropped a packet).
    pub fn timeouts(&self) -> u64 {
        self.meters.timeouts
    }

    /// Messages lost in the memory of hosts switched off before they were sent.
    pub fn dropped(&self) -> u64 {
        self.meters.dropped
    }

    /// Messages not sent because the routes in force have no way to their destination
    /// (it is known to be off).
    pub fn refused(&self) -> u64 {
        self.meters.refused
    }

    /// Payload bytes delivered since the start of the run.
    pub fn delivered_payload(&self) -> u64 {
        self.meters.delivered_payload
    }

    /// Dormant routing units woken so far (see `Config::unit_fast_forward`).
    pub fn unit_wakes(&self) -> u64 {
        self.units.wakes
    }

    /// The length of a tick: the flit time.
    pub fn tick(&self) -> Picos {
        self.cfg.flit
    }

    /// The first tick of the measurement and the first after it.
    pub fn measure_window(&self) -> (Ticks, Ticks) {
        (
            Ticks(self.meters.measure_from),
            Ticks(self.meters.measure_to),
        )
    }

    /// The tick about to run (the ticks run so far).
    pub fn now_ticks(&self) -> Ticks {
        Ticks(self.now)
    }

    /// Simulated time: the ticks run so far in picoseconds.
    pub fn now(&self) -> Picos {
        self.now_ticks() * self.tick()
    }

    /// Stops the traffic process: only [`Self::inject`]ed messages travel.
    pub fn quiet(&mut self) {
        self.hosts.gen.clear();
    }

    /// Messages delivered so far, by source host.
    pub fn delivered_by_source(&self) -> &[u64] {
        &self.meters.delivered_by_src
    }

    /// Messages delivered so far, by destination host.
    pub fn delivered_by_destination(&self) -> &[u64] {
        &self.meters.delivered_by_dst
    }

    /// Generation-to-delivery time of the last message delivered.
    pub fn last_latency_ticks(&self) -> Ticks {
        Ticks(self.meters.last_latency)
    }

    /// Bytes that found a full slack buffer so far.
    pub fn slack_overflows(&self) -> u64 {
        self.meters.overflows
    }

    /// The fullest slack buffer right now, bytes.
    pub fn max_slack_level(&self) -> usize {
        self.inp
            .slack
            .iter()
            .map(SlackBuffer::level)
            .max()
            .unwrap_or(0)
    }

    /// Messages generated and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.pkts.in_flight()
    }

    /// Generated messages not made because their source's queue was full: the offered
    /// load is past what the network carries (the results call that saturated too).
    pub fn source_full(&self) -> u64 {
        self.meters.source_full
    }

    /// Messages waiting in host memory.
    pub fn queued(&self) -> u64 {
        self.hosts.queued()
    }

    /// Runs warm-up and measurement and reports.
    pub fn run(self) -> Results {
        self.run_watched(&mut |_| {})
    }

    /// [`Self::run`], telling `advanced` how much simulated time has passed, every
    /// 65 536 ticks (0.4 ms at 160 MB/s) and at the end of warm-up and measurement:
    /// progress reports for long runs. The run is the same as [`Self::run`]'s.
    pub fn run_watched(mut self, advanced: &mut dyn FnMut(Picos)) -> Results {
        let from = self.meters.measure_from;
        self.run_to(from, advanced);
        self.meters.queue_at_start = self.queued();
        let to = self.meters.measure_to;
        self.run_to(to, advanced);
        self.results()
    }

    fn run_to(&mut self, end: u64, advanced: &mut dyn FnMut(Picos)) {
        while self.now < end {
            let start = self.now;
            let stop = end.min(start.saturating_add(1 << 16));
            while self.now < stop {
                self.step();
            }
            advanced(Ticks(self.now - start) * self.tick());
        }
    }
}

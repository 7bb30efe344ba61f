//! The simulation engine: arrays indexed by channel, port, host and packet; timing wheels
//! (flit arrivals, STOP/GO arrivals, routing timers, routing-unit turns) so that a tick
//! costs only what moves or changes in it. It must never allocate per flit.

use crate::traffic::Traffic;
use myrix_fabric::itb::{AltRef, Policy, RouteTable};
use myrix_fabric::{PortUse, Topology};
use myrix_link::slack::SlackBuffer;
use myrix_link::symbol::Control;
use myrix_link::Time;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Model parameters; the defaults are the minimal-routing study's.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// One flit (byte) time: 6.25 ns at 160 MB/s.
    pub flit: Time,
    /// Cable propagation delay, ns per metre (1.5 ns/ft).
    pub ns_per_m: f64,
    /// Header arrival to first byte out of a switch: 150 ns.
    pub switch_latency: Time,
    /// Slack buffer capacity, STOP and GO watermarks, bytes.
    pub slack: (usize, usize, usize),
    /// Payload bytes per message (when `msg_mix` is empty).
    pub msg_bytes: usize,
    /// A distribution of payload sizes: (bytes, weight). Empty: every message has
    /// `msg_bytes`.
    pub msg_mix: Vec<(usize, f64)>,
    /// Offered load, payload flits per ns per switch.
    pub load: f64,
    pub traffic: Traffic,
    pub seed: u64,
    /// Time simulated before measuring.
    pub warmup: Time,
    /// Time measured after the warm-up.
    pub measure: Time,
    /// Delay from a message's generation to its first byte entering the link, besides
    /// queueing (the interface's own overhead).
    pub send_overhead: Time,
    /// How a switch spends its 150 ns of header processing; see [`SwitchModel`].
    pub switch_model: SwitchModel,
    /// When a packet gives its output channel back; see [`ChannelRelease`].
    pub channel_release: ChannelRelease,
    /// Skip the turns of a shared routing unit that can change nothing, working out its
    /// place in the cycle when something changes. Results are the same either way (a
    /// test compares them); off only to check that.
    pub unit_fast_forward: bool,
    /// In-transit buffers: detecting the packet (275 ns) and programming the DMA (200 ns),
    /// from header arrival at the in-transit host to the first byte re-injected.
    pub itb_latency: Time,
    /// In-transit buffer pool per interface, bytes (90 KB).
    pub itb_pool: usize,
    /// Extra delay when a packet does not fit in the pool and goes through host memory:
    /// re-injection then starts this long after its last byte arrived.
    pub itb_spill: Time,
    /// The long-period time-out: a packet whose header has waited this long at a switch
    /// input is dropped there (the seed's ~50 ms; it breaks deadlocks, e.g. while old and
    /// new routes mix after a remap). 0: never.
    pub block_timeout: Time,
}

/// Readings of the study's switch ("a simple routing control unit … the first flit
/// latency is 150 ns … each output port can only process one message header at a time …
/// when a message gets the routing control unit but cannot be routed because the output
/// channel is busy, it must wait in the input buffer until its next turn"). All three
/// give the same zero-load latency; they differ under contention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchModel {
    /// Every input routes its own header in 150 ns, then requests the output; outputs
    /// are granted round-robin and held only while bytes flow.
    RouteThenRequest,
    /// The output is claimed when the header reaches the front and held through the
    /// 150 ns of routing.
    HoldOutput,
    /// One routing unit per switch serves the inputs with a header in round-robin turns of
    /// 150 ns each; a header whose output is busy at the end of its turn asks for it and
    /// waits for its next turn, and a freed output is kept for the next input that asked,
    /// in round-robin order (the default, with [`ChannelRelease::Drain`]).
    SharedUnit,
}

impl SwitchModel {
    pub const NAMES: [&'static str; 3] = ["route-then-request", "hold-output", "shared-unit"];
    pub fn name(self) -> &'static str {
        match self {
            SwitchModel::RouteThenRequest => "route-then-request",
            SwitchModel::HoldOutput => "hold-output",
            SwitchModel::SharedUnit => "shared-unit",
        }
    }
    pub fn parse(s: &str) -> Option<SwitchModel> {
        match s {
            "route-then-request" => Some(SwitchModel::RouteThenRequest),
            "hold-output" => Some(SwitchModel::HoldOutput),
            "shared-unit" => Some(SwitchModel::SharedUnit),
            _ => None,
        }
    }
}

/// When an output channel is free for the next packet. Myrinet's slack buffer is a byte
/// FIFO, so the bytes of the next packet may follow a tail straight into it (`Send`).
/// The classic wormhole channel model instead gives a channel, with the buffer at its far
/// end, to one packet at a time (`Drain`): a blocked packet then keeps the channel
/// behind it busy until it moves on. Same zero-load latency; they differ under load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelRelease {
    /// Free once the tail has been sent into the channel.
    Send,
    /// Free once the tail has left the buffer at the channel's far end (or reached the
    /// host there).
    Drain,
}

impl ChannelRelease {
    pub const NAMES: [&'static str; 2] = ["send", "drain"];
    pub fn name(self) -> &'static str {
        match self {
            ChannelRelease::Send => "send",
            ChannelRelease::Drain => "drain",
        }
    }
    pub fn parse(s: &str) -> Option<ChannelRelease> {
        match s {
            "send" => Some(ChannelRelease::Send),
            "drain" => Some(ChannelRelease::Drain),
            _ => None,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            flit: 6_250,
            ns_per_m: 1.5 / 0.3048,
            switch_latency: 150_000,
            slack: (80, 56, 40),
            msg_bytes: 32,
            msg_mix: Vec::new(),
            load: 0.01,
            traffic: Traffic::Uniform,
            seed: 1,
            warmup: 100_000_000,  // 100 µs
            measure: 400_000_000, // 400 µs
            send_overhead: 0,
            // The study's reading (see README, "Against the paper"): with these two its
            // saturation figures come out; the others stay selectable.
            switch_model: SwitchModel::SharedUnit,
            channel_release: ChannelRelease::Drain,
            unit_fast_forward: true,
            itb_latency: 475_000,
            itb_pool: 90 * 1024,
            itb_spill: 5_000_000,
            block_timeout: 50 * myrix_link::MS,
        }
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("load must be a positive number of flits/ns/switch (got {0})")]
    Load(f64),
    #[error("messages need at least 1 payload byte")]
    MsgBytes,
    #[error("the flit time must be positive")]
    Flit,
    #[error("{0}")]
    Slack(String),
    #[error("the network has fewer than 2 hosts")]
    Hosts,
    #[error("the route set has {0} switches, the topology {1}")]
    Routes(usize, usize),
    #[error("measurement time must be positive")]
    Measure,
    #[error(
        "a {0} m cable is {1} flit times long; the model takes at most {MAX_DELAY} (about 1300 km)"
    )]
    Cable(f64, u64),
    #[error("more than 254 route table changes in one run")]
    TooManyRemaps,
}

/// The longest cable delay the model accepts, in flit times: the timing wheels are as
/// long as the longest delay.
pub const MAX_DELAY: u64 = 1 << 20;

/// What a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    pub switch_model: SwitchModel,
    pub channel_release: ChannelRelease,
    pub switches: usize,
    pub hosts: usize,
    pub msg_bytes: usize,
    pub seed: u64,
    /// Offered load asked for, payload flits/ns/switch.
    pub offered: f64,
    /// Payload flits/ns/switch actually generated during the measurement (the offered
    /// load as the random arrivals drew it).
    pub generated: f64,
    /// Payload flits delivered per ns per switch during the measurement.
    pub accepted: f64,
    pub messages_delivered: u64,
    /// Latency of messages generated during the measurement, generation to last byte
    /// delivered, ns.
    pub avg_latency_ns: f64,
    pub p50_latency_ns: f64,
    pub p99_latency_ns: f64,
    /// Half-width of the 95 % confidence interval of the average latency, from 10 batch
    /// means (by generation time; Student's t with 9 degrees of freedom).
    pub latency_ci95_ns: f64,
    /// Spread of the accepted traffic over 10 batches: (min, max).
    pub accepted_batches: (f64, f64),
    /// The fraction of the measured messages (in arrival order) that MSER-5 would
    /// discard as transient ([`crate::steady::mser5`], which looks in the first half);
    /// at 0.45 or more the point did not settle. NaN when too few messages arrived.
    pub mser_truncated: f64,
    /// Messages generated in the measurement window that had not arrived at its end.
    pub undelivered: u64,
    /// Accepted fell short of offered, or source queues kept growing.
    pub saturated: bool,
    /// Bytes that arrived to a full slack buffer (the model's own sanity check: 0).
    pub slack_overflows: u64,
    /// In-transit buffers used per message delivered in the measurement.
    pub itbs_per_message: f64,
    /// The fullest in-transit buffer pool seen at any interface, bytes.
    pub itb_pool_peak: usize,
    /// Packets that did not fit in an in-transit pool and went through host memory.
    pub itb_spills: u64,
    /// Mean fraction of time each switch-to-switch channel carried a flit.
    pub link_utilization: f64,
    /// The same for the busiest switch-to-switch channel.
    pub max_link_utilization: f64,
    /// Flit-hops moved (flits put on any channel), for speed measurements.
    pub flit_hops: u64,
    /// Flits of all packets delivered during the whole run (warm-up included), counted
    /// as injected (route bytes included): what BookSim2 calls delivered flits.
    pub wire_flits_delivered: u64,
    pub ticks: u64,
}

// A flit: packet slot in the high bits, head and tail flags in the low two.
type Flit = u32;
const HEAD: u32 = 1;
const TAIL: u32 = 2;
const fn flit(pkt: u32, head: bool, tail: bool) -> Flit {
    pkt << 2 | (head as u32) | ((tail as u32) << 1)
}
const fn pkt_of(f: Flit) -> u32 {
    f >> 2
}

const NONE: u32 = u32::MAX;

const fn measured_now(t: u64, from: u64, to: u64) -> bool {
    t >= from && t < to
}

/// Where a channel delivers.
#[derive(Clone, Copy, Debug)]
enum Sink {
    Input(u32),
    Host(u32),
    /// A failed link: what is sent into it is lost, and nothing comes back.
    Void,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum In {
    Idle,
    /// Routing unit busy until this tick.
    Routing(u64),
    /// Header at the front, waiting for the switch's shared routing unit.
    Pending,
    Waiting(u32),
    Connected(u32),
    /// The packet whose header was blocked here past the long-period time-out is being
    /// dropped, up to its tail.
    Discard,
}

struct Packet {
    src: u32,
    dst: u32,
    generated: u64,
    /// Bytes on the wire at injection: every sub-route's route bytes and type byte,
    /// the payload and the CRC.
    wire_len: u32,
    /// The packet's length where its head is now (each switch strips a route byte,
    /// each in-transit host its type byte).
    remaining: u32,
    src_switch: u32,
    dst_switch: u32,
    /// The alternative chosen, and whether from `pit`'s one-link-longer set.
    alt: u8,
    longer: bool,
    /// Next hop of the alternative to take.
    hop: u16,
    /// In-transit hosts passed; `in_itb_leg` while between ejection and re-injection.
    splits_done: u8,
    in_itb_leg: bool,
    measured: bool,
    payload: u32,
    /// The route table the packet was routed with (tables change on a remap).
    epoch: u8,
    /// The caller's name for a packet it injected with [`Sim::inject_frame`]
    /// (`NO_TAG` for generated traffic): its delivery is reported under it.
    tag: u64,
}

const NO_TAG: u64 = u64::MAX;

/// A packet passing through an interface's in-transit buffer.
#[derive(Clone, Copy, Debug)]
struct Itb {
    pkt: u32,
    header_at: u64,
    /// Bytes arrived so far, type byte included, of `len_in`.
    received: u32,
    len_in: u32,
    tail_at: u64,
    spilled: bool,
}

pub struct Sim<'a> {
    cfg: Config,
    topo: &'a Topology,
    /// Route tables in force, oldest first: new packets take the last; packets in flight
    /// keep the one they started with.
    tables: Vec<&'a RouteTable>,
    // Channels (directed): delay, sink, flits in flight with arrival tick, sender stopped.
    ch_delay: Vec<u32>,
    ch_sink: Vec<Sink>,
    ch_pipe: Vec<VecDeque<(u64, Flit)>>,
    ch_stopped: Vec<bool>,
    /// Under [`ChannelRelease::Drain`]: a tail was sent into the channel and has not yet
    /// left the buffer at its far end, so its sender may not start another packet.
    ch_held: Vec<bool>,
    /// The channel's link has failed; it becomes [`Sink::Void`] once the worm on it has
    /// passed (the model cuts links between packets, not through one).
    ch_dying: Vec<bool>,
    /// Packets lost in failed links.
    lost: u64,
    /// Payload bytes delivered since the start.
    delivered_payload: u64,
    ch_busy_ticks: Vec<u64>,
    /// Switch-to-switch channels (the others belong to hosts).
    ch_is_link: Vec<bool>,
    // Switch ports, by global port id base[s] + p.
    base: Vec<u32>,
    port_switch: Vec<u32>,
    in_buf: Vec<VecDeque<Flit>>,
    in_slack: Vec<SlackBuffer>,
    in_state: Vec<In>,
    in_from: Vec<u32>,    // channel feeding the input
    in_marked: Vec<bool>, // next forwarded flit is the head of the new hop
    in_ready: Vec<u64>,   // first tick the connected input may forward
    in_mover: Vec<bool>,
    out_ch: Vec<u32>,
    out_busy: Vec<bool>,
    out_rr: Vec<u8>,
    out_conn: Vec<u32>,
    /// Since when each input's header has waited for its output.
    wait_since: Vec<u64>,
    timeout_ticks: u64,
    /// The next tick at which blocked headers are checked (never when the time-out is 0).
    next_timeout_check: u64,
    /// Long-period time-outs that fired.
    timeouts: u64,
    out_waiters: Vec<Vec<u32>>,
    out_in_arb: Vec<bool>,
    /// Shared routing unit: the input a free output is kept for until that input's next
    /// turn (the output's round-robin choice among the inputs that asked for it).
    out_reserved: Vec<u32>,
    // Hosts.
    host_inj: Vec<u32>,
    host_queue: Vec<VecDeque<u32>>,
    host_sending: Vec<(u32, u32)>, // (packet, bytes sent), packet NONE if idle
    host_active: Vec<bool>,
    /// The packet being sent comes from the in-transit buffer.
    host_itb: Vec<bool>,
    itb_q: Vec<VecDeque<Itb>>,
    itb_free: Vec<usize>,
    itb_ticks: u64,
    spill_ticks: u64,
    itb_peak: usize,
    itb_spills: u64,
    itbs_delivered: u64,
    delivered_measured: u64,
    /// In-transit hosts by route-table epoch and switch: a table computed after hosts
    /// went off splits only at the hosts still on.
    itb_hosts: Vec<Vec<Vec<u32>>>,
    /// Hosts switched off (or cut off with their switch): they generate nothing and
    /// accept nothing.
    host_off: Vec<bool>,
    /// Hosts the current route table knows to be off: nobody sends to them.
    known_off: Vec<bool>,
    /// Messages lost in the memory of a host switched off, and messages not sent because
    /// their destination was known to be off.
    dropped: u64,
    refused: u64,
    rr: Vec<u8>,
    same_switch: Vec<Vec<u32>>,
    // Packets: slots reused through a free list.
    pkts: Vec<Packet>,
    free: Vec<u32>,
    // Work lists.
    wheel: Vec<Vec<u32>>,
    fc_wheel: Vec<Vec<(u32, bool)>>,
    movers: Vec<u32>,
    idle_check: Vec<u32>,
    arb_list: Vec<u32>,
    timer_wheel: Vec<Vec<u32>>,
    ch_out_port: Vec<u32>,
    ch_inj_host: Vec<u32>,
    active_hosts: Vec<u32>,
    gen: BinaryHeap<Reverse<(u64, u32)>>,
    // Shared routing units, per switch.
    ru_current: Vec<u32>,
    ru_rr: Vec<u8>,
    /// Turns ending, by tick (a ring as long as a turn): no per-tick scan of the units.
    ru_wheel: Vec<Vec<u32>>,
    ru_pending: Vec<Vec<u32>>,
    /// The output a pending input's header asks for (looked up once, not every turn).
    ru_out: Vec<u32>,
    /// Switches whose idle unit may start a turn this tick.
    ru_start: Vec<u32>,
    /// A unit whose every waiting header asks for a busy output would only take turns
    /// that change nothing: it is left dormant from `ru_t0` on and its place in the
    /// cycle worked out when something changes (`wake_unit`), so that saturated
    /// networks cost work per flit, not per turn.
    ru_dormant: Vec<bool>,
    ru_t0: Vec<u64>,
    /// The last tick whose turn ends have been processed.
    ru_done: u64,
    ru_wakes: u64,
    rng: ChaCha8Rng,
    // Derived timing.
    route_ticks: u64,
    send_ticks: u64,
    mean_gap_ticks: f64,
    // Measurement.
    now: u64,
    measure_from: u64,
    measure_to: u64,
    latencies: Vec<u64>,
    batch_flits: [u64; 10],
    generated_measured: u64,
    overflows: u64,
    flit_hops: u64,
    queue_at_start: u64,
    delivered_by_src: Vec<u64>,
    delivered_by_dst: Vec<u64>,
    last_latency: u64,
    mix_cdf: Vec<(usize, f64)>,
    generated_bytes: u64,
    messages_in_window: u64,
    wire_flits_delivered: u64,
    lat_batches: [(u64, u64); 10],
    arrivals: Vec<(u64, u32)>,
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
        if cfg.flit == 0 {
            return Err(ConfigError::Flit);
        }
        if cfg.measure == 0 {
            return Err(ConfigError::Measure);
        }
        let (cap, stop, go) = cfg.slack;
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
        let flit_ns = cfg.flit as f64 / 1000.0;
        let delay = |m: f64| ((m * cfg.ns_per_m / flit_ns).ceil() as u32).max(1);
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

        let mut base = Vec::new();
        let mut port_switch = Vec::new();
        for (s, sw) in topo.switches().iter().enumerate() {
            base.push(port_switch.len() as u32);
            port_switch.extend(std::iter::repeat_n(s as u32, sw.ports as usize));
        }
        let nports = port_switch.len();
        let nh = topo.num_hosts();
        let mut ch_delay = Vec::new();
        let mut ch_sink = Vec::new();
        let mut out_ch = vec![NONE; nports];
        let mut in_from = vec![NONE; nports];
        let mut host_inj = vec![NONE; nh];
        let mut add = |d: u32, sink: Sink| {
            ch_delay.push(d);
            ch_sink.push(sink);
            (ch_delay.len() - 1) as u32
        };
        for (h, host) in topo.hosts().iter().enumerate() {
            let g = base[host.switch as usize] + host.port as u32;
            let d = delay(host.length_m);
            host_inj[h] = add(d, Sink::Input(g));
            in_from[g as usize] = host_inj[h];
            out_ch[g as usize] = add(d, Sink::Host(h as u32));
        }
        for l in topo.links() {
            let ga = base[l.a.switch as usize] + l.a.port as u32;
            let gb = base[l.b.switch as usize] + l.b.port as u32;
            let d = delay(l.length_m);
            let ab = add(d, Sink::Input(gb));
            let ba = add(d, Sink::Input(ga));
            out_ch[ga as usize] = ab;
            in_from[gb as usize] = ab;
            out_ch[gb as usize] = ba;
            in_from[ga as usize] = ba;
        }
        let nch = ch_delay.len();
        let mut ch_out_port = vec![NONE; nch];
        for (g, &c) in out_ch.iter().enumerate() {
            if c != NONE {
                ch_out_port[c as usize] = g as u32;
            }
        }
        let mut ch_inj_host = vec![NONE; nch];
        for (h, &c) in host_inj.iter().enumerate() {
            ch_inj_host[c as usize] = h as u32;
        }
        let first_link = 2 * nh;
        let ch_is_link = (0..nch).map(|c| c >= first_link).collect();
        let wheel_len = ch_delay.iter().copied().max().unwrap_or(1) as usize + 1;
        let same_switch = topo
            .hosts()
            .iter()
            .map(|h| topo.hosts_on(h.switch).collect())
            .collect();
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
        let mean_gap_ticks = 1.0 / (hosts_per_ns * flit_ns);
        let warm = cfg.warmup.div_ceil(cfg.flit);
        let meas = cfg.measure.div_ceil(cfg.flit);
        let mut sim = Sim {
            route_ticks: cfg.switch_latency.div_ceil(cfg.flit),
            send_ticks: cfg.send_overhead.div_ceil(cfg.flit),
            mean_gap_ticks,
            topo,
            tables: vec![routes],
            ch_dying: vec![false; nch],
            lost: 0,
            delivered_payload: 0,
            ch_pipe: (0..nch).map(|_| VecDeque::new()).collect(),
            ch_stopped: vec![false; nch],
            ch_held: vec![false; nch],
            ch_busy_ticks: vec![0; nch],
            ch_is_link,
            ch_delay,
            ch_sink,
            in_buf: (0..nports).map(|_| VecDeque::with_capacity(cap)).collect(),
            in_slack: vec![SlackBuffer::new(cap, stop, go).expect("checked"); nports],
            in_state: vec![In::Idle; nports],
            in_from,
            in_marked: vec![false; nports],
            in_ready: vec![0; nports],
            in_mover: vec![false; nports],
            out_busy: vec![false; nports],
            out_rr: vec![0; nports],
            out_conn: vec![NONE; nports],
            wait_since: vec![0; nports],
            timeout_ticks: cfg.block_timeout.div_ceil(cfg.flit),
            next_timeout_check: if cfg.block_timeout > 0 { 0 } else { u64::MAX },
            timeouts: 0,
            out_waiters: vec![Vec::new(); nports],
            out_in_arb: vec![false; nports],
            out_reserved: vec![NONE; nports],
            out_ch,
            base,
            port_switch,
            host_inj,
            host_queue: (0..nh).map(|_| VecDeque::new()).collect(),
            host_sending: vec![(NONE, 0); nh],
            host_active: vec![false; nh],
            host_itb: vec![false; nh],
            itb_q: (0..nh).map(|_| VecDeque::new()).collect(),
            itb_free: vec![cfg.itb_pool; nh],
            itb_ticks: cfg.itb_latency.div_ceil(cfg.flit),
            spill_ticks: cfg.itb_spill.div_ceil(cfg.flit),
            itb_peak: 0,
            itb_spills: 0,
            itbs_delivered: 0,
            delivered_measured: 0,
            itb_hosts: vec![(0..topo.num_switches() as u32)
                .map(|s| topo.hosts_on(s).collect())
                .collect()],
            host_off: vec![false; nh],
            known_off: vec![false; nh],
            dropped: 0,
            refused: 0,
            rr: vec![0; nh * topo.num_switches()],
            same_switch,
            pkts: Vec::new(),
            free: Vec::new(),
            wheel: vec![Vec::new(); wheel_len],
            fc_wheel: vec![Vec::new(); wheel_len],
            movers: Vec::new(),
            idle_check: Vec::new(),
            arb_list: Vec::new(),
            timer_wheel: vec![Vec::new(); cfg.switch_latency.div_ceil(cfg.flit) as usize + 2],
            ch_out_port,
            ch_inj_host,
            active_hosts: Vec::new(),
            gen: BinaryHeap::new(),
            ru_current: vec![NONE; topo.num_switches()],
            ru_rr: vec![0; topo.num_switches()],
            ru_wheel: vec![Vec::new(); cfg.switch_latency.div_ceil(cfg.flit).max(1) as usize + 1],
            ru_pending: vec![Vec::new(); topo.num_switches()],
            ru_out: vec![NONE; nports],
            ru_start: Vec::new(),
            ru_dormant: vec![false; topo.num_switches()],
            ru_t0: vec![0; topo.num_switches()],
            ru_done: 0,
            ru_wakes: 0,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            now: 0,
            measure_from: warm,
            measure_to: warm + meas,
            latencies: Vec::new(),
            batch_flits: [0; 10],
            generated_measured: 0,
            overflows: 0,
            flit_hops: 0,
            queue_at_start: 0,
            delivered_by_src: vec![0; nh],
            delivered_by_dst: vec![0; nh],
            mix_cdf,
            generated_bytes: 0,
            messages_in_window: 0,
            wire_flits_delivered: 0,
            lat_batches: [(0, 0); 10],
            arrivals: Vec::new(),
            last_latency: 0,
            cfg,
        };
        for h in 0..nh as u32 {
            let t = sim.next_gap();
            sim.gen.push(Reverse((t, h)));
        }
        Ok(sim)
    }

    fn next_gap(&mut self) -> u64 {
        // Exponential inter-arrival, at least one tick.
        let u: f64 = self.rng.gen_range(f64::MIN_POSITIVE..1.0);
        (-u.ln() * self.mean_gap_ticks).ceil().max(1.0) as u64
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
        out.append(&mut self.arrivals);
    }

    /// The alternative the policy picks now for a message from host `src` to switch
    /// `ds` in the route table in force, with its hops and in-transit hosts; `None` when
    /// the table has none (the destination's switch is gone).
    fn choose(&mut self, src: u32, ds: u32) -> Option<(u8, bool, usize, usize)> {
        let ss = self.topo.hosts()[src as usize].switch;
        let table = *self.tables.last().expect("one table at least");
        let alts = table.alternatives(ss, ds);
        let longer = table.longer(ss, ds);
        if alts.is_empty() {
            return None;
        }
        let (alt, is_longer) = match table.policy {
            Policy::Osud | Policy::Omit => (0, false),
            Policy::Rmit => (self.rng.gen_range(0..alts.len()), false),
            Policy::Rrmit | Policy::RrmitMin => {
                let c = &mut self.rr[src as usize * table.num_switches() + ds as usize];
                let a = *c as usize % alts.len();
                *c = c.wrapping_add(1);
                (a, false)
            }
            Policy::Pit => {
                if !longer.is_empty() && self.rng.gen_bool(0.2) {
                    (self.rng.gen_range(0..longer.len()), true)
                } else {
                    (self.rng.gen_range(0..alts.len()), false)
                }
            }
        };
        let a = if is_longer {
            longer.at(alt)
        } else {
            alts.at(alt)
        };
        Some((alt as u8, is_longer, a.ports.len(), a.splits.len()))
    }

    fn new_packet(&mut self, src: u32, dst: u32) {
        self.new_packet_of(src, dst, None, NO_TAG);
    }

    /// A packet of `payload` bytes (or one drawn from the configured sizes) from `src` to
    /// `dst`, queued at `src`; false when the interface refuses it.
    fn new_packet_of(&mut self, src: u32, dst: u32, payload: Option<usize>, tag: u64) -> bool {
        let hosts = self.topo.hosts();
        let (ss, ds) = (hosts[src as usize].switch, hosts[dst as usize].switch);
        let epoch = (self.tables.len() - 1) as u8;
        if self.known_off[dst as usize] || self.host_off[src as usize] {
            // Not in the current map: the interface refuses the send.
            self.refused += 1;
            return false;
        }
        let Some((alt, is_longer, hops, splits)) = self.choose(src, ds) else {
            self.refused += 1;
            return false;
        };
        let payload = if let Some(n) = payload {
            n
        } else if self.mix_cdf.len() == 1 {
            self.mix_cdf[0].0
        } else {
            let u: f64 = self.rng.gen();
            self.mix_cdf
                .iter()
                .find(|m| u < m.1)
                .unwrap_or(&self.mix_cdf[self.mix_cdf.len() - 1])
                .0
        };
        if measured_now(self.now, self.measure_from, self.measure_to) {
            self.generated_bytes += payload as u64;
        }
        let wire_len = crate::wire_bytes(payload, hops, splits + 1) as u32;
        let measured = self.now >= self.measure_from && self.now < self.measure_to;
        self.generated_measured += measured as u64;
        let p = Packet {
            src,
            dst,
            generated: self.now,
            wire_len,
            remaining: wire_len,
            src_switch: ss,
            dst_switch: ds,
            alt,
            longer: is_longer,
            hop: 0,
            splits_done: 0,
            in_itb_leg: false,
            measured,
            payload: payload as u32,
            epoch,
            tag,
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        };
        self.host_queue[src as usize].push_back(id);
        self.activate_host(src);
        true
    }

    fn activate_host(&mut self, h: u32) {
        if !self.host_active[h as usize] {
            self.host_active[h as usize] = true;
            self.active_hosts.push(h);
        }
    }

    fn send(&mut self, c: u32, f: Flit) {
        let t = self.now + self.ch_delay[c as usize] as u64;
        self.ch_pipe[c as usize].push_back((t, f));
        let w = self.wheel.len();
        self.wheel[t as usize % w].push(c);
        self.flit_hops += 1;
        if self.now >= self.measure_from && self.now < self.measure_to {
            self.ch_busy_ticks[c as usize] += 1;
        }
    }

    fn flow(&mut self, g: u32) {
        if let Some(req) = self.in_slack[g as usize].take_request() {
            let c = self.in_from[g as usize];
            let t = self.now + self.ch_delay[c as usize] as u64;
            let w = self.fc_wheel.len();
            self.fc_wheel[t as usize % w].push((c, req == Control::Stop));
        }
    }

    /// Runs one tick. Only what can change this tick is touched: flits and STOP/GO
    /// symbols due now (timing wheels), routing timers due now, outputs just freed,
    /// inputs that can move a flit ("movers") and hosts that can send.
    pub fn step(&mut self) {
        let t = self.now;
        let w = self.wheel.len();
        // 1. Flits arriving.
        let mut arriving = std::mem::take(&mut self.wheel[t as usize % w]);
        for &c in &arriving {
            let (at, f) = self.ch_pipe[c as usize]
                .pop_front()
                .expect("scheduled arrival");
            debug_assert_eq!(at, t);
            match self.ch_sink[c as usize] {
                Sink::Host(h) => {
                    let p = pkt_of(f);
                    if self.pkts[p as usize].dst != h {
                        self.itb_arrive(h, f);
                    } else if f & TAIL != 0 {
                        self.deliver(p);
                    }
                    if f & TAIL != 0 {
                        self.drained(c);
                        if self.ch_dying[c as usize] {
                            self.make_void(c);
                        }
                    }
                }
                Sink::Input(g) => {
                    if self.in_slack[g as usize].arrive() {
                        self.in_buf[g as usize].push_back(f);
                    } else {
                        self.overflows += 1;
                    }
                    self.flow(g);
                    match self.in_state[g as usize] {
                        In::Idle => self.idle_check.push(g),
                        In::Connected(_) | In::Discard => self.wake(g),
                        _ => {}
                    }
                    if f & TAIL != 0 && self.ch_dying[c as usize] {
                        self.make_void(c);
                    }
                }
                Sink::Void => {
                    if f & TAIL != 0 {
                        self.drained(c);
                        self.lose(pkt_of(f));
                    }
                }
            }
        }
        arriving.clear();
        self.wheel[t as usize % w] = arriving;
        // 2. STOP/GO reaching senders; GO wakes whoever sends on that channel.
        let mut fcs = std::mem::take(&mut self.fc_wheel[t as usize % w]);
        for &(c, stop) in &fcs {
            if matches!(self.ch_sink[c as usize], Sink::Void) {
                continue;
            }
            self.ch_stopped[c as usize] = stop;
            if !stop {
                let o = self.ch_out_port[c as usize];
                if o != NONE && self.out_conn[o as usize] != NONE {
                    self.wake(self.out_conn[o as usize]);
                }
                let h = self.ch_inj_host[c as usize];
                if h != NONE {
                    self.activate_host(h);
                }
            }
        }
        fcs.clear();
        self.fc_wheel[t as usize % w] = fcs;
        // 3. New messages.
        while let Some(&Reverse((at, h))) = self.gen.peek() {
            if at > t {
                break;
            }
            self.gen.pop();
            if self.host_off[h as usize] {
                continue;
            }
            let n = self.topo.num_hosts() as u32;
            let dst =
                self.cfg
                    .traffic
                    .destination(h, n, &self.same_switch[h as usize], &mut self.rng);
            self.new_packet(h, dst);
            let gap = self.next_gap();
            self.gen.push(Reverse((t + gap, h)));
        }
        // 4. Routing timers due now, then headers newly at the front of an input.
        let tw = self.timer_wheel.len();
        let mut due = std::mem::take(&mut self.timer_wheel[t as usize % tw]);
        for &g in &due {
            match self.in_state[g as usize] {
                In::Routing(ready) if ready == t => {
                    let f = self.in_buf[g as usize][0];
                    let out = self.route(g, pkt_of(f), false);
                    self.wait_for(g, out);
                }
                In::Connected(_) if self.in_ready[g as usize] == t => self.wake(g),
                _ => {}
            }
        }
        due.clear();
        self.timer_wheel[t as usize % tw] = due;
        let mut idle = std::mem::take(&mut self.idle_check);
        for &g in &idle {
            let gi = g as usize;
            if self.in_state[gi] != In::Idle {
                continue;
            }
            let Some(&f) = self.in_buf[gi].front() else {
                continue;
            };
            debug_assert!(f & HEAD != 0, "a packet starts with its route byte");
            // The routing unit sees the header now; the first byte may leave
            // `route_ticks` after it arrived.
            match self.cfg.switch_model {
                SwitchModel::RouteThenRequest => {
                    self.in_state[gi] = In::Routing(t + self.route_ticks);
                    self.timer(g, t + self.route_ticks);
                }
                SwitchModel::HoldOutput => {
                    let out = self.route(g, pkt_of(f), false);
                    self.wait_for(g, out);
                }
                SwitchModel::SharedUnit => {
                    self.in_state[gi] = In::Pending;
                    self.wait_since[gi] = t;
                    self.ru_out[gi] = self.route(g, pkt_of(f), true);
                    let s = self.port_switch[gi];
                    self.wake_unit(s as usize);
                    if self.ru_current[s as usize] == NONE {
                        self.ru_start.push(s);
                    }
                    self.ru_pending[s as usize].push(g);
                }
            }
        }
        idle.clear();
        self.idle_check = idle;
        if self.cfg.switch_model == SwitchModel::SharedUnit {
            self.shared_units();
        }
        // 5. Arbitration: a free output with waiters goes to the waiting input next after
        // the last one served (demand-slotted round robin).
        let mut arb = std::mem::take(&mut self.arb_list);
        for &o in &arb {
            let oi = o as usize;
            self.out_in_arb[oi] = false;
            if self.out_busy[oi] || self.out_waiters[oi].is_empty() {
                continue;
            }
            let s = self.port_switch[oi] as usize;
            let ports = self.topo.switches()[s].ports as u32;
            let rr = self.out_rr[oi] as u32;
            let (k, _) = self.out_waiters[oi]
                .iter()
                .enumerate()
                .min_by_key(|(_, &g)| (g - self.base[s] + ports - rr - 1) % ports)
                .expect("non-empty");
            if self.cfg.switch_model == SwitchModel::SharedUnit {
                // The input takes it when its turn at the routing unit next ends.
                if self.out_reserved[oi] == NONE {
                    self.out_reserved[oi] = self.out_waiters[oi][k];
                }
                continue;
            }
            let g = self.out_waiters[oi].swap_remove(k);
            let hold = self.cfg.switch_model == SwitchModel::HoldOutput;
            self.connect(g, o, if hold { t + self.route_ticks } else { t });
        }
        arb.clear();
        self.arb_list = arb;
        // 6. Crossbar: every mover sends one flit; the blocked leave the list until an
        // arrival, a GO or a timer wakes them.
        let mut i = 0;
        while i < self.movers.len() {
            let g = self.movers[i] as usize;
            let keep = match self.in_state[g] {
                In::Connected(o) => {
                    let c = self.out_ch[o as usize];
                    if self.ch_stopped[c as usize] || t < self.in_ready[g] {
                        false
                    } else if let Some(f) = self.in_buf[g].pop_front() {
                        self.in_slack[g].depart();
                        self.flow(g as u32);
                        let head = std::mem::take(&mut self.in_marked[g]);
                        let out = (f & !HEAD) | if head { HEAD } else { 0 };
                        self.send(c, out);
                        if f & TAIL != 0 {
                            self.drained(self.in_from[g]);
                            self.release(g as u32, o);
                            false
                        } else {
                            true
                        }
                    } else {
                        false
                    }
                }
                In::Discard => match self.in_buf[g].pop_front() {
                    Some(f) => {
                        self.in_slack[g].depart();
                        self.flow(g as u32);
                        if f & TAIL != 0 {
                            self.drained(self.in_from[g]);
                            self.in_state[g] = In::Idle;
                            self.lose(pkt_of(f));
                            if !self.in_buf[g].is_empty() {
                                self.idle_check.push(g as u32);
                            }
                            false
                        } else {
                            true
                        }
                    }
                    None => false,
                },
                _ => false,
            };
            if keep {
                i += 1;
            } else {
                self.in_mover[g] = false;
                self.movers.swap_remove(i);
            }
        }
        // 7. Host interfaces send, in-transit packets first; a stopped one waits for GO.
        let mut i = 0;
        while i < self.active_hosts.len() {
            let h = self.active_hosts[i] as usize;
            if self.host_off[h] && self.host_sending[h].0 == NONE {
                self.reap(h);
                self.host_active[h] = false;
                self.active_hosts.swap_remove(i);
                continue;
            }
            let held = self.ch_held[self.host_inj[h] as usize];
            if self.host_sending[h].0 == NONE && !held {
                if let Some(e) = self.itb_q[h].front() {
                    let start = if e.spilled {
                        e.tail_at.saturating_add(self.spill_ticks)
                    } else {
                        e.header_at + self.itb_ticks
                    };
                    if t >= start {
                        self.host_sending[h] = (e.pkt, 0);
                        self.host_itb[h] = true;
                        // The type byte that marked the in-transit host is consumed.
                        self.pkts[e.pkt as usize].remaining = e.len_in - 1;
                    }
                }
            }
            if self.host_sending[h].0 == NONE && !held {
                if let Some(&p) = self.host_queue[h].front() {
                    if t >= self.pkts[p as usize].generated + self.send_ticks {
                        self.host_queue[h].pop_front();
                        self.host_sending[h] = (p, 0);
                        self.host_itb[h] = false;
                    }
                }
            }
            let (p, sent) = self.host_sending[h];
            let stopped = self.ch_stopped[self.host_inj[h] as usize];
            if p != NONE && !stopped {
                let (len, ready) = if self.host_itb[h] {
                    // Cut-through: byte `sent` of the re-injected packet is byte `sent + 1`
                    // of what arrived.
                    let e = self.itb_q[h][0];
                    (e.len_in - 1, e.received >= sent + 2)
                } else {
                    (self.pkts[p as usize].wire_len, true)
                };
                if ready {
                    let f = flit(p, sent == 0, sent + 1 == len);
                    self.send(self.host_inj[h], f);
                    if sent + 1 == len {
                        self.host_sending[h] = (NONE, 0);
                        if self.cfg.channel_release == ChannelRelease::Drain {
                            self.ch_held[self.host_inj[h] as usize] = true;
                        }
                        if self.host_itb[h] {
                            let e = self.itb_q[h].pop_front().expect("sending it");
                            if !e.spilled {
                                self.itb_free[h] += e.len_in as usize;
                            }
                        }
                    } else {
                        self.host_sending[h] = (p, sent + 1);
                    }
                }
            }
            let idle = self.host_sending[h].0 == NONE
                && self.host_queue[h].is_empty()
                && self.itb_q[h].is_empty();
            let blocked = (self.host_sending[h].0 != NONE && stopped)
                || (self.host_sending[h].0 == NONE && self.ch_held[self.host_inj[h] as usize]);
            if idle || blocked {
                self.host_active[h] = false;
                self.active_hosts.swap_remove(i);
            } else {
                i += 1;
            }
        }
        if t == self.next_timeout_check {
            self.next_timeout_check = t + (self.timeout_ticks / 64).max(1);
            self.long_timeouts();
        }
        self.now += 1;
    }

    /// `g` may move a flit this tick.
    fn wake(&mut self, g: u32) {
        if !self.in_mover[g as usize] {
            self.in_mover[g as usize] = true;
            self.movers.push(g);
        }
    }

    fn timer(&mut self, g: u32, at: u64) {
        let tw = self.timer_wheel.len();
        self.timer_wheel[at as usize % tw].push(g);
    }

    /// Input `g` waits for output `out`.
    fn wait_for(&mut self, g: u32, out: u32) {
        self.in_state[g as usize] = In::Waiting(out);
        self.wait_since[g as usize] = self.now;
        self.out_waiters[out as usize].push(g);
        self.arbitrate(out);
    }

    fn arbitrate(&mut self, o: u32) {
        if !self.out_in_arb[o as usize] {
            self.out_in_arb[o as usize] = true;
            self.arb_list.push(o);
        }
    }

    /// The tail left input `g` through output `o`.
    fn release(&mut self, g: u32, o: u32) {
        self.out_conn[o as usize] = NONE;
        self.in_state[g as usize] = In::Idle;
        if self.cfg.channel_release == ChannelRelease::Drain {
            self.ch_held[self.out_ch[o as usize] as usize] = true;
        } else {
            self.free_output(o);
        }
        if !self.in_buf[g as usize].is_empty() {
            self.idle_check.push(g);
        }
    }

    fn free_output(&mut self, o: u32) {
        self.out_busy[o as usize] = false;
        if !self.out_waiters[o as usize].is_empty() {
            self.arbitrate(o);
            self.wake_unit(self.port_switch[o as usize] as usize);
        }
    }

    /// The tail that was sent into channel `c` has left the buffer at its far end (or
    /// reached a host, or a failed link): under [`ChannelRelease::Drain`] the sender may
    /// start its next packet.
    fn drained(&mut self, c: u32) {
        if !std::mem::replace(&mut self.ch_held[c as usize], false) {
            return;
        }
        let o = self.ch_out_port[c as usize];
        if o != NONE {
            self.free_output(o);
        }
        let h = self.ch_inj_host[c as usize];
        if h != NONE {
            self.activate_host(h);
        }
    }

    /// Connects input `g` to output `o`: the route byte is stripped here and the first
    /// following byte may leave at `ready`.
    fn connect(&mut self, g: u32, o: u32, ready: u64) {
        let gi = g as usize;
        self.out_busy[o as usize] = true;
        self.out_rr[o as usize] = (g - self.base[self.port_switch[gi] as usize]) as u8;
        self.in_state[gi] = In::Connected(o);
        if let Some(f) = self.in_buf[gi].pop_front() {
            self.pkts[pkt_of(f) as usize].remaining -= 1;
        }
        self.in_slack[gi].depart();
        self.flow(g);
        self.in_marked[gi] = true;
        self.in_ready[gi] = ready;
        self.out_conn[o as usize] = g;
        if ready > self.now {
            self.timer(g, ready);
        } else {
            self.wake(g);
        }
    }

    /// The shared routing units: finish the turns that end now, start new ones.
    fn shared_units(&mut self) {
        let t = self.now;
        self.ru_done = t;
        let w = self.ru_wheel.len();
        let mut due = std::mem::take(&mut self.ru_wheel[t as usize % w]);
        for &s in &due {
            self.end_turn(s as usize);
            self.ru_start.push(s);
        }
        due.clear();
        self.ru_wheel[t as usize % w] = due;
        let mut starts = std::mem::take(&mut self.ru_start);
        for &s in &starts {
            let s = s as usize;
            if self.ru_current[s] != NONE || self.ru_dormant[s] || self.ru_pending[s].is_empty() {
                continue;
            }
            let ports = self.topo.switches()[s].ports as u32;
            let rr = self.ru_rr[s] as u32;
            let base = self.base[s];
            let g = *self.ru_pending[s]
                .iter()
                .min_by_key(|&&g| (g - base + ports - rr - 1) % ports)
                .expect("non-empty");
            self.ru_current[s] = g;
            let end = t + self.route_ticks.max(1);
            self.ru_wheel[end as usize % w].push(s as u32);
        }
        starts.clear();
        self.ru_start = starts;
    }

    /// Switch `s`'s routing unit ends its turn: the input connects if its output is free
    /// and kept for it (or for nobody, while nobody else asks); otherwise it asks for
    /// the output and waits for its next turn.
    fn end_turn(&mut self, s: usize) {
        let t = self.now;
        let g = std::mem::replace(&mut self.ru_current[s], NONE);
        self.ru_rr[s] = (g - self.base[s]) as u8;
        let f = self.in_buf[g as usize][0];
        let out = self.ru_out[g as usize];
        let oi = out as usize;
        let waiters = &mut self.out_waiters[oi];
        let asked = waiters.iter().position(|&x| x == g);
        let mine = self.out_reserved[oi] == g
            || (self.out_reserved[oi] == NONE && waiters.len() == asked.is_some() as usize);
        if !self.out_busy[oi] && mine {
            if let Some(i) = asked {
                waiters.swap_remove(i);
            }
            self.out_reserved[oi] = NONE;
            self.route(g, pkt_of(f), false);
            let pending = &mut self.ru_pending[s];
            if let Some(i) = pending.iter().position(|&x| x == g) {
                pending.swap_remove(i);
            }
            self.connect(g, out, t);
        } else {
            if asked.is_none() {
                waiters.push(g);
            }
            if !self.out_busy[oi] {
                self.arbitrate(out);
            }
            let hopeless = self.ru_pending[s].iter().all(|&x| {
                let o = self.ru_out[x as usize] as usize;
                self.out_busy[o] && self.out_waiters[o].contains(&x)
            });
            if hopeless && self.cfg.unit_fast_forward {
                self.ru_dormant[s] = true;
                self.ru_t0[s] = t;
            }
        }
    }

    /// Brings a dormant unit back to where its turns would have taken it by now: turn k
    /// after it fell dormant at `t0` serves the k-th waiting input in round-robin order
    /// and ends at `t0 + (k + 1) * 150 ns`; every turn ended so far changed nothing but
    /// the round-robin position.
    fn wake_unit(&mut self, s: usize) {
        if !std::mem::replace(&mut self.ru_dormant[s], false) {
            return;
        }
        self.ru_wakes += 1;
        let d = self.route_ticks.max(1);
        let t0 = self.ru_t0[s];
        let last = if self.ru_done == self.now {
            self.now
        } else {
            self.now - 1
        };
        let n = last.saturating_sub(t0) / d;
        let ports = self.topo.switches()[s].ports as u32;
        let (base, rr) = (self.base[s], self.ru_rr[s] as u32);
        let mut order = std::mem::take(&mut self.ru_pending[s]);
        order.sort_unstable_by_key(|&g| (g - base + ports - rr - 1) % ports);
        let len = order.len() as u64;
        if n > 0 {
            self.ru_rr[s] = (order[((n - 1) % len) as usize] - base) as u8;
        }
        self.ru_current[s] = order[(n % len) as usize];
        self.ru_pending[s] = order;
        let w = self.ru_wheel.len();
        self.ru_wheel[((t0 + (n + 1) * d) % w as u64) as usize].push(s as u32);
    }

    fn alternative(&self, p: u32) -> AltRef<'a> {
        let pk = &self.pkts[p as usize];
        let (s, d) = (pk.src_switch, pk.dst_switch);
        let table: &'a RouteTable = self.tables[pk.epoch as usize];
        if pk.longer {
            table.longer(s, d).at(pk.alt as usize)
        } else {
            table.alternatives(s, d).at(pk.alt as usize)
        }
    }

    /// The output port for packet `p` at the switch of input `g`: the next hop of its
    /// alternative, the port of an in-transit host where the alternative is split, or the
    /// destination host's port. The packet's progress is recorded unless `peek`.
    fn route(&mut self, g: u32, p: u32, peek: bool) -> u32 {
        let s = self.port_switch[g as usize];
        let a = self.alternative(p);
        let pk = &self.pkts[p as usize];
        let hop = pk.hop as usize;
        let eject = hop < a.ports.len()
            && !pk.in_itb_leg
            && a.splits.get(pk.splits_done as usize) == Some(&pk.hop);
        let port = if eject {
            let hs = &self.itb_hosts[pk.epoch as usize][s as usize];
            let h = hs[(pk.src as usize + pk.dst as usize) % hs.len()];
            self.topo.hosts()[h as usize].port
        } else if hop < a.ports.len() {
            a.ports[hop]
        } else {
            let dst = self.topo.hosts()[pk.dst as usize];
            debug_assert_eq!(s, dst.switch);
            debug_assert!(matches!(self.topo.port(s, dst.port), PortUse::Host(_)));
            dst.port
        };
        if !peek {
            let pk = &mut self.pkts[p as usize];
            if eject {
                pk.in_itb_leg = true;
            } else if hop < a.ports.len() {
                if pk.in_itb_leg {
                    pk.in_itb_leg = false;
                    pk.splits_done += 1;
                }
                pk.hop += 1;
            }
        }
        self.base[s as usize] + port as u32
    }

    /// A flit of a packet passing through host `h`'s in-transit buffer.
    fn itb_arrive(&mut self, h: u32, f: Flit) {
        let t = self.now;
        let p = pkt_of(f);
        let q = &mut self.itb_q[h as usize];
        if f & HEAD != 0 {
            let len_in = self.pkts[p as usize].remaining;
            let fits = self.itb_free[h as usize] >= len_in as usize;
            if fits {
                self.itb_free[h as usize] -= len_in as usize;
                self.itb_peak = self
                    .itb_peak
                    .max(self.cfg.itb_pool - self.itb_free[h as usize]);
            } else {
                self.itb_spills += 1;
            }
            q.push_back(Itb {
                pkt: p,
                header_at: t,
                received: 0,
                len_in,
                tail_at: u64::MAX,
                spilled: !fits,
            });
        }
        // One ejection channel: the packet arriving is the newest one.
        let e = self.itb_q[h as usize]
            .back_mut()
            .expect("a packet's head comes first");
        debug_assert_eq!(e.pkt, p);
        e.received += 1;
        if f & TAIL != 0 {
            e.tail_at = t;
        }
        self.activate_host(h);
    }

    fn deliver(&mut self, p: u32) {
        let t = self.now;
        let pk = &self.pkts[p as usize];
        self.delivered_by_src[pk.src as usize] += 1;
        self.delivered_by_dst[pk.dst as usize] += 1;
        if pk.measured {
            self.itbs_delivered += pk.splits_done as u64;
            self.delivered_measured += 1;
        }
        self.wire_flits_delivered += pk.wire_len as u64;
        self.delivered_payload += pk.payload as u64;
        if pk.tag != NO_TAG {
            self.arrivals.push((pk.tag, pk.dst));
        }
        self.last_latency = t - pk.generated;
        if t >= self.measure_from && t < self.measure_to {
            let b = ((t - self.measure_from) * 10 / (self.measure_to - self.measure_from)) as usize;
            self.batch_flits[b.min(9)] += pk.payload as u64;
            self.messages_in_window += 1;
        }
        if pk.measured {
            self.latencies.push(t - pk.generated);
            let span = self.measure_to - self.measure_from;
            let b = ((pk.generated - self.measure_from) * 10 / span).min(9) as usize;
            self.lat_batches[b].0 += t - pk.generated;
            self.lat_batches[b].1 += 1;
        }
        self.free.push(p);
    }

    /// Fails link `link` of the topology, both directions, now. A worm crossing it
    /// finishes first; from then on whatever is sent into the link is lost (counted in
    /// [`Self::lost`]) and no STOP comes back, so nothing upstream blocks on it.
    pub fn fail_link(&mut self, link: usize) {
        let first = 2 * self.topo.num_hosts();
        self.cut(first + 2 * link);
        self.cut(first + 2 * link + 1);
    }

    /// Packet `p` is lost: its slot is free.
    fn lose(&mut self, p: u32) {
        self.lost += 1;
        self.free.push(p);
    }

    /// The long-period time-out: a packet whose header has waited at a switch input for
    /// `block_timeout` (routed, its output held by others) is dropped; the input discards
    /// it up to its tail, which frees the buffers behind it. Checked every 1/64 of the
    /// time-out, so it fires up to that much late.
    fn long_timeouts(&mut self) {
        let t = self.now;
        for g in 0..self.in_state.len() {
            if !matches!(self.in_state[g], In::Waiting(_) | In::Pending)
                || t < self.wait_since[g] + self.timeout_ticks
            {
                continue;
            }
            if let In::Waiting(o) = self.in_state[g] {
                let waiters = &mut self.out_waiters[o as usize];
                if let Some(k) = waiters.iter().position(|&x| x as usize == g) {
                    waiters.swap_remove(k);
                }
            } else {
                // A header between turns of its switch's routing unit; one in its turn
                // now is looked at on the next check.
                let s = self.port_switch[g] as usize;
                self.wake_unit(s);
                if self.ru_current[s] == g as u32 {
                    continue;
                }
                let pending = &mut self.ru_pending[s];
                if let Some(k) = pending.iter().position(|&x| x as usize == g) {
                    pending.swap_remove(k);
                }
                let o = self.ru_out[g] as usize;
                if let Some(k) = self.out_waiters[o].iter().position(|&x| x as usize == g) {
                    self.out_waiters[o].swap_remove(k);
                }
                if self.out_reserved[o] == g as u32 {
                    self.out_reserved[o] = NONE;
                    self.arbitrate(o as u32);
                }
            }
            self.in_state[g] = In::Discard;
            self.wake(g as u32);
            self.timeouts += 1;
        }
    }

    /// Switches host `h` off now: it generates nothing more, the packet it is sending
    /// (its own or an in-transit one) finishes, what waits in its memory and in-transit
    /// buffer is lost, and its link from the switch fails like [`Self::fail_link`].
    /// Until the routes change, others go on sending to it (those messages are lost);
    /// after [`Self::set_routes`], nobody does.
    pub fn fail_host(&mut self, h: u32) {
        if std::mem::replace(&mut self.host_off[h as usize], true) {
            return;
        }
        // Channels are laid out host by host, injection first, ejection second.
        self.cut(2 * h as usize + 1);
        self.activate_host(h);
    }

    /// Host `h` is not on the network when the run starts (call before the first step):
    /// it neither sends nor accepts, and the first route table does not know it; it may
    /// [`Self::join_host`] later.
    pub fn start_off(&mut self, h: u32) {
        let hi = h as usize;
        self.host_off[hi] = true;
        self.known_off[hi] = true;
        self.make_void(2 * h + 1);
        self.gen.retain(|Reverse((_, x))| *x != h);
        for hosts in self.itb_hosts[0].iter_mut() {
            hosts.retain(|&x| x != h);
        }
    }

    /// Host `h`, off, is plugged in and switched on now: it accepts packets from now on
    /// and starts sending once the routes are replaced by a table that knows it
    /// ([`Self::set_routes`]).
    pub fn join_host(&mut self, h: u32) {
        let hi = h as usize;
        if !self.host_off[hi] {
            return;
        }
        self.host_off[hi] = false;
        let c = 2 * hi + 1;
        self.ch_dying[c] = false;
        self.ch_sink[c] = Sink::Host(h);
    }

    /// Fails switch `s` now: every link on it fails and every host on it is cut off
    /// (switched off, as far as the network is concerned). Worms inside it finish first,
    /// as on a failed link.
    pub fn fail_switch(&mut self, s: u32) {
        for u in self.topo.ports_of(s) {
            match *u {
                PortUse::Link { link, .. } => self.fail_link(link as usize),
                PortUse::Host(h) => {
                    self.fail_host(h);
                    self.cut(2 * h as usize);
                }
                PortUse::Free => {}
            }
        }
    }

    /// Channel `c` fails once the worm on it, if any, has passed.
    fn cut(&mut self, c: usize) {
        let o = self.ch_out_port[c];
        let h = self.ch_inj_host[c];
        let worm = (o != NONE && self.out_conn[o as usize] != NONE)
            || (h != NONE && self.host_sending[h as usize].0 != NONE)
            || !self.ch_pipe[c].is_empty();
        if worm {
            self.ch_dying[c] = true;
        } else {
            self.make_void(c as u32);
        }
    }

    /// A host off and idle: what waits in its memory and its in-transit buffer (whole
    /// packets; one still arriving is reaped when its tail is in) is lost.
    fn reap(&mut self, h: usize) {
        while let Some(p) = self.host_queue[h].pop_front() {
            self.dropped += 1;
            self.free.push(p);
        }
        let mut k = 0;
        while k < self.itb_q[h].len() {
            let e = self.itb_q[h][k];
            if e.tail_at == u64::MAX {
                k += 1;
                continue;
            }
            self.itb_q[h].remove(k);
            if !e.spilled {
                self.itb_free[h] += e.len_in as usize;
            }
            self.lose(e.pkt);
        }
    }

    fn make_void(&mut self, c: u32) {
        self.ch_dying[c as usize] = false;
        self.ch_sink[c as usize] = Sink::Void;
        self.ch_stopped[c as usize] = false;
        let o = self.ch_out_port[c as usize];
        if o != NONE && self.out_conn[o as usize] != NONE {
            self.wake(self.out_conn[o as usize]);
        }
    }

    /// From now on new messages take routes from `table` (after a remap); messages
    /// already generated keep theirs.
    pub fn set_routes(&mut self, table: &'a RouteTable) -> Result<(), ConfigError> {
        if table.num_switches() != self.topo.num_switches() {
            return Err(ConfigError::Routes(
                table.num_switches(),
                self.topo.num_switches(),
            ));
        }
        if self.tables.len() >= u8::MAX as usize {
            return Err(ConfigError::TooManyRemaps);
        }
        self.tables.push(table);
        let topo = self.topo;
        let off = &self.host_off;
        self.itb_hosts.push(
            (0..topo.num_switches() as u32)
                .map(|s| topo.hosts_on(s).filter(|&h| !off[h as usize]).collect())
                .collect(),
        );
        // A host that joined starts sending once it has the map with routes.
        for h in 0..topo.num_hosts() {
            if self.known_off[h] && !self.host_off[h] {
                let gap = self.next_gap();
                self.gen.push(Reverse((self.now + gap, h as u32)));
            }
        }
        self.known_off.clone_from(&self.host_off);
        // Interfaces look routes up when a message leaves host memory: what waits there
        // takes the new routes (mixing old and new routes beyond the packets already in
        // the network could close a dependency cycle).
        let epoch = (self.tables.len() - 1) as u8;
        for h in 0..self.topo.num_hosts() as u32 {
            let queue = std::mem::take(&mut self.host_queue[h as usize]);
            let mut kept = VecDeque::with_capacity(queue.len());
            for p in queue {
                let (dst, ds) = {
                    let pk = &self.pkts[p as usize];
                    (pk.dst, pk.dst_switch)
                };
                let choice = if self.known_off[dst as usize] {
                    None
                } else {
                    self.choose(h, ds)
                };
                let Some((alt, longer, hops, splits)) = choice else {
                    self.refused += 1;
                    self.free.push(p);
                    continue;
                };
                let pk = &mut self.pkts[p as usize];
                pk.wire_len = crate::wire_bytes(pk.payload as usize, hops, splits + 1) as u32;
                pk.remaining = pk.wire_len;
                pk.alt = alt;
                pk.longer = longer;
                pk.epoch = epoch;
                kept.push_back(p);
            }
            self.host_queue[h as usize] = kept;
        }
        Ok(())
    }

    /// Packets lost in failed links and in the in-transit buffers of hosts switched off,
    /// so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Long-period time-outs that fired (each dropped a packet).
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }

    /// Messages lost in the memory of hosts switched off before they were sent.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Messages not sent because the routes in force have no way to their destination
    /// (it is known to be off).
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Payload bytes delivered since the start of the run.
    pub fn delivered_payload(&self) -> u64 {
        self.delivered_payload
    }

    /// Flit time in picoseconds (a tick).
    /// Dormant routing units woken so far (see `Config::unit_fast_forward`).
    pub fn unit_wakes(&self) -> u64 {
        self.ru_wakes
    }

    pub fn tick(&self) -> u64 {
        self.cfg.flit
    }

    /// The first tick of the measurement and the first after it.
    pub fn measure_window(&self) -> (u64, u64) {
        (self.measure_from, self.measure_to)
    }

    pub fn now_ticks(&self) -> u64 {
        self.now
    }

    /// Stops the traffic process: only [`Self::inject`]ed messages travel.
    pub fn quiet(&mut self) {
        self.gen.clear();
    }

    /// Messages delivered so far, by source host.
    pub fn delivered_by_source(&self) -> &[u64] {
        &self.delivered_by_src
    }

    /// Messages delivered so far, by destination host.
    pub fn delivered_by_destination(&self) -> &[u64] {
        &self.delivered_by_dst
    }

    /// Generation-to-delivery time of the last message delivered, in ticks.
    pub fn last_latency_ticks(&self) -> u64 {
        self.last_latency
    }

    /// Bytes that found a full slack buffer so far.
    pub fn slack_overflows(&self) -> u64 {
        self.overflows
    }

    /// The fullest slack buffer right now, bytes.
    pub fn max_slack_level(&self) -> usize {
        self.in_slack
            .iter()
            .map(SlackBuffer::level)
            .max()
            .unwrap_or(0)
    }

    /// Messages generated and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.pkts.len() - self.free.len()
    }

    /// Messages waiting in host memory.
    pub fn queued(&self) -> u64 {
        self.host_queue.iter().map(|q| q.len() as u64).sum()
    }

    /// Runs warm-up and measurement and reports.
    pub fn run(mut self) -> Results {
        while self.now < self.measure_from {
            self.step();
        }
        self.queue_at_start = self.queued();
        while self.now < self.measure_to {
            self.step();
        }
        self.results()
    }

    fn results(&mut self) -> Results {
        let flit_ns = self.cfg.flit as f64 / 1000.0;
        let n = self.topo.num_switches() as f64;
        let window_ns = (self.measure_to - self.measure_from) as f64 * flit_ns;
        let total: u64 = self.batch_flits.iter().sum();
        let accepted = total as f64 / window_ns / n;
        let per_batch: Vec<f64> = self
            .batch_flits
            .iter()
            .map(|&f| f as f64 / (window_ns / 10.0) / n)
            .collect();
        let min = per_batch.iter().copied().fold(f64::INFINITY, f64::min);
        let max = per_batch.iter().copied().fold(0.0, f64::max);
        // Latencies are in arrival order until sorted.
        let mser_truncated = crate::steady::mser5(&self.latencies)
            .map_or(f64::NAN, |d| d as f64 / self.latencies.len() as f64);
        self.latencies.sort_unstable();
        let lat = &self.latencies;
        let q = |x: f64| {
            if lat.is_empty() {
                f64::NAN
            } else {
                lat[((lat.len() - 1) as f64 * x).round() as usize] as f64 * flit_ns
            }
        };
        let avg = if lat.is_empty() {
            f64::NAN
        } else {
            lat.iter().sum::<u64>() as f64 / lat.len() as f64 * flit_ns
        };
        let undelivered = self.generated_measured - lat.len() as u64;
        let queue_growth = self.queued().saturating_sub(self.queue_at_start);
        let generated = self.generated_bytes as f64 / window_ns / n;
        // Saturated: the network delivered clearly less than was generated, or the source
        // queues grew by more than a message per host over the measurement.
        let saturated = accepted < 0.95 * generated || queue_growth > self.topo.num_hosts() as u64;
        let links = self.topo.links().len();
        let meas_ticks = (self.measure_to - self.measure_from) as f64;
        let means: Vec<f64> = self
            .lat_batches
            .iter()
            .filter(|b| b.1 > 0)
            .map(|b| b.0 as f64 / b.1 as f64 * flit_ns)
            .collect();
        let ci95 = if means.len() == 10 {
            let m = means.iter().sum::<f64>() / 10.0;
            let var = means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 9.0;
            2.262 * (var / 10.0).sqrt()
        } else {
            f64::NAN
        };
        let max_busy = self
            .ch_busy_ticks
            .iter()
            .zip(&self.ch_is_link)
            .filter(|(_, l)| **l)
            .map(|(b, _)| *b)
            .max()
            .unwrap_or(0);
        let link_busy: u64 = self
            .ch_busy_ticks
            .iter()
            .zip(&self.ch_is_link)
            .filter(|(_, l)| **l)
            .map(|(b, _)| b)
            .sum();
        Results {
            switch_model: self.cfg.switch_model,
            channel_release: self.cfg.channel_release,
            switches: self.topo.num_switches(),
            hosts: self.topo.num_hosts(),
            msg_bytes: self.cfg.msg_bytes,
            seed: self.cfg.seed,
            offered: self.cfg.load,
            generated,
            accepted,
            messages_delivered: self.messages_in_window,
            avg_latency_ns: avg,
            p50_latency_ns: q(0.5),
            p99_latency_ns: q(0.99),
            latency_ci95_ns: ci95,
            accepted_batches: (min, max),
            mser_truncated,
            undelivered,
            saturated,
            slack_overflows: self.overflows,
            itbs_per_message: if self.delivered_measured == 0 {
                0.0
            } else {
                self.itbs_delivered as f64 / self.delivered_measured as f64
            },
            itb_pool_peak: self.itb_peak,
            itb_spills: self.itb_spills,
            link_utilization: if links == 0 {
                0.0
            } else {
                link_busy as f64 / (2 * links) as f64 / meas_ticks
            },
            max_link_utilization: max_busy as f64 / meas_ticks,
            flit_hops: self.flit_hops,
            wire_flits_delivered: self.wire_flits_delivered,
            ticks: self.now,
        }
    }
}

//! What a run is asked ([`Config`], the switch readings) and what it reports
//! ([`Results`]). Plain data: nothing here steps the model.

use crate::traffic::Traffic;
use crate::Ticks;
use myrix_fabric::named::{name_of, Named};
use myrix_link::{Picos, MS, NS, US};

/// Model parameters; the defaults are the minimal-routing study's.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// One flit (byte) time: 6.25 ns at 160 MB/s.
    pub flit: Picos,
    /// Cable propagation delay, ns per metre (1.5 ns/ft).
    pub ns_per_m: f64,
    /// Header arrival to first byte out of a switch: 150 ns.
    pub switch_latency: Picos,
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
    pub warmup: Picos,
    /// Time measured after the warm-up.
    pub measure: Picos,
    /// Delay from a message's generation to its first byte entering the link, besides
    /// queueing (the interface's own overhead).
    pub send_overhead: Picos,
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
    pub itb_latency: Picos,
    /// In-transit buffer pool per interface, bytes (90 KB).
    pub itb_pool: usize,
    /// Extra delay when a packet does not fit in the pool and goes through host memory:
    /// re-injection then starts this long after its last byte arrived.
    pub itb_spill: Picos,
    /// The long-period time-out: a packet whose header has waited this long at a switch
    /// input is dropped there (the seed's ~50 ms; it breaks deadlocks, e.g. while old and
    /// new routes mix after a remap). Zero: never.
    pub block_timeout: Picos,
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
    pub fn name(self) -> &'static str {
        name_of(&self)
    }
}

impl Named for SwitchModel {
    const WHAT: &'static str = "switch model";
    fn table() -> &'static [(&'static str, SwitchModel)] {
        &[
            ("route-then-request", SwitchModel::RouteThenRequest),
            ("hold-output", SwitchModel::HoldOutput),
            ("shared-unit", SwitchModel::SharedUnit),
        ]
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
    pub fn name(self) -> &'static str {
        name_of(&self)
    }
}

impl Named for ChannelRelease {
    const WHAT: &'static str = "channel release";
    fn table() -> &'static [(&'static str, ChannelRelease)] {
        &[
            ("send", ChannelRelease::Send),
            ("drain", ChannelRelease::Drain),
        ]
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            flit: Picos(6_250),
            ns_per_m: 1.5 / 0.3048,
            switch_latency: 150 * NS,
            slack: (80, 56, 40),
            msg_bytes: 32,
            msg_mix: Vec::new(),
            load: 0.01,
            traffic: Traffic::Uniform,
            seed: 1,
            warmup: 100 * US,
            measure: 400 * US,
            send_overhead: Picos::ZERO,
            // The study's reading (see README, "Against the paper"): with these two its
            // saturation figures come out; the others stay selectable.
            switch_model: SwitchModel::SharedUnit,
            channel_release: ChannelRelease::Drain,
            unit_fast_forward: true,
            itb_latency: 475 * NS,
            itb_pool: 90 * 1024,
            itb_spill: 5 * US,
            block_timeout: 50 * MS,
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
    /// Ticks simulated, warm-up included.
    pub ticks: Ticks,
}

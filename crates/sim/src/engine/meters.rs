//! What the run counts (deliveries, latencies, losses, batches of the measurement
//! window) and the [`Results`] computed from it at the end. Meters only observe: nothing
//! here may change what the model does.

use super::config::Results;
use super::ids::PacketId;
use super::packets::NO_TAG;
use super::Sim;
use crate::Ticks;

#[derive(Default)]
pub(crate) struct Meters {
    /// The first tick of the measurement and the first after it.
    pub measure_from: u64,
    pub measure_to: u64,
    /// Latencies of the measured messages, ticks, in arrival order.
    pub latencies: Vec<u64>,
    /// Payload delivered per tenth of the measurement window.
    pub batch_flits: [u64; 10],
    /// Latency sums and counts per tenth of the window, by generation time.
    pub lat_batches: [(u64, u64); 10],
    pub generated_measured: u64,
    pub generated_bytes: u64,
    pub messages_in_window: u64,
    pub overflows: u64,
    pub flit_hops: u64,
    pub queue_at_start: u64,
    pub delivered_by_src: Vec<u64>,
    pub delivered_by_dst: Vec<u64>,
    pub last_latency: u64,
    pub wire_flits_delivered: u64,
    /// Payload bytes delivered since the start.
    pub delivered_payload: u64,
    pub itbs_delivered: u64,
    pub delivered_measured: u64,
    /// Packets lost in failed links.
    pub lost: u64,
    /// Messages lost in the memory of a host switched off, and messages not sent because
    /// their destination was known to be off.
    pub dropped: u64,
    pub refused: u64,
    /// Messages not made because their source's queue was full (`Hosts::queue_cap`).
    pub source_full: u64,
    /// Long-period time-outs that fired.
    pub timeouts: u64,
    /// Tagged packets arrived, with their destination, not yet taken.
    pub arrivals: Vec<(u64, u32)>,
}

impl Meters {
    pub fn new(hosts: usize, measure_from: u64, measure_to: u64) -> Meters {
        Meters {
            measure_from,
            measure_to,
            delivered_by_src: vec![0; hosts],
            delivered_by_dst: vec![0; hosts],
            ..Meters::default()
        }
    }

    /// `t` is within the measurement window.
    #[inline]
    pub fn measuring(&self, t: u64) -> bool {
        t >= self.measure_from && t < self.measure_to
    }
}

impl Sim<'_> {
    /// Packet `p`'s tail reached its destination.
    pub(super) fn deliver(&mut self, p: PacketId) {
        let t = self.now;
        let pk = &self.pkts[p];
        let m = &mut self.meters;
        m.delivered_by_src[pk.src as usize] += 1;
        m.delivered_by_dst[pk.dst as usize] += 1;
        if pk.measured {
            m.itbs_delivered += pk.splits_done as u64;
            m.delivered_measured += 1;
        }
        m.wire_flits_delivered += pk.wire_len as u64;
        m.delivered_payload += pk.payload as u64;
        if pk.tag != NO_TAG {
            m.arrivals.push((pk.tag, pk.dst));
        }
        m.last_latency = t - pk.generated;
        if m.measuring(t) {
            let b = ((t - m.measure_from) * 10 / (m.measure_to - m.measure_from)) as usize;
            m.batch_flits[b.min(9)] += pk.payload as u64;
            m.messages_in_window += 1;
        }
        if pk.measured {
            m.latencies.push(t - pk.generated);
            let span = m.measure_to - m.measure_from;
            let b = ((pk.generated - m.measure_from) * 10 / span).min(9) as usize;
            m.lat_batches[b].0 += t - pk.generated;
            m.lat_batches[b].1 += 1;
        }
        self.pkts.free(p);
    }

    pub(super) fn results(&mut self) -> Results {
        let queued = self.hosts.queued();
        let m = &mut self.meters;
        let flit_ns = self.cfg.flit.as_nanos_f64();
        let n = self.topo.num_switches() as f64;
        let window_ns = (m.measure_to - m.measure_from) as f64 * flit_ns;
        let total: u64 = m.batch_flits.iter().sum();
        let accepted = total as f64 / window_ns / n;
        let per_batch: Vec<f64> = m
            .batch_flits
            .iter()
            .map(|&f| f as f64 / (window_ns / 10.0) / n)
            .collect();
        let min = per_batch.iter().copied().fold(f64::INFINITY, f64::min);
        let max = per_batch.iter().copied().fold(0.0, f64::max);
        // Latencies are in arrival order until sorted.
        let mser_truncated = crate::steady::mser5(&m.latencies)
            .map_or(f64::NAN, |d| d as f64 / m.latencies.len() as f64);
        m.latencies.sort_unstable();
        let lat = &m.latencies;
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
        let undelivered = m.generated_measured - lat.len() as u64;
        let queue_growth = queued.saturating_sub(m.queue_at_start);
        let generated = m.generated_bytes as f64 / window_ns / n;
        // Saturated: the network delivered clearly less than was generated, or the source
        // queues grew by more than a message per host over the measurement.
        // A source queue at its cap (past saturation) says so too.
        let saturated = accepted < 0.95 * generated
            || queue_growth > self.topo.num_hosts() as u64
            || m.source_full > 0;
        let links = self.topo.links().len();
        let meas_ticks = (m.measure_to - m.measure_from) as f64;
        let means: Vec<f64> = m
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
        let busy = self.ch.link_busy_ticks();
        let max_busy = busy.iter().copied().max().unwrap_or(0);
        let link_busy: u64 = busy.iter().sum();
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
            messages_delivered: m.messages_in_window,
            avg_latency_ns: avg,
            p50_latency_ns: q(0.5),
            p99_latency_ns: q(0.99),
            latency_ci95_ns: ci95,
            accepted_batches: (min, max),
            mser_truncated,
            undelivered,
            saturated,
            slack_overflows: m.overflows,
            itbs_per_message: if m.delivered_measured == 0 {
                0.0
            } else {
                m.itbs_delivered as f64 / m.delivered_measured as f64
            },
            itb_pool_peak: self.itb.peak,
            itb_spills: self.itb.spills,
            link_utilization: if links == 0 {
                0.0
            } else {
                link_busy as f64 / (2 * links) as f64 / meas_ticks
            },
            max_link_utilization: max_busy as f64 / meas_ticks,
            flit_hops: m.flit_hops,
            wire_flits_delivered: m.wire_flits_delivered,
            ticks: Ticks(self.now),
        }
    }
}

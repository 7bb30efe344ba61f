//! Host interfaces: the traffic process (when each host generates its next message),
//! host memory queues, the packet being sent (its own or an in-transit one), and whether
//! a host is on. The send phase touches only the active hosts, never all of them.

use super::config::ChannelRelease;
use super::ids::{ChannelId, PacketId};
use super::packets::flit;
use super::Sim;
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Messages the host memory queues hold together, at most (a few hundred MiB of
/// packet slots).
const MAX_QUEUED: usize = 1 << 22;

/// Per host, except `rr` (per host and destination switch).
pub(crate) struct Hosts {
    /// Messages waiting in host memory.
    pub queue: Vec<VecDeque<PacketId>>,
    /// The most messages a host's memory queue holds: past saturation the queues would
    /// otherwise grow without end (gigabytes a minute); a message beyond it is not made
    /// and the run reports saturation.
    pub queue_cap: usize,
    /// The packet being sent and the bytes sent so far (`NONE` when idle).
    pub sending: Vec<(PacketId, u32)>,
    /// The packet being sent comes from the in-transit buffer.
    pub from_itb: Vec<bool>,
    /// In the `active` list.
    pub is_active: Vec<bool>,
    /// Hosts that may send this tick.
    pub active: Vec<u32>,
    /// Hosts switched off (or cut off with their switch): they generate nothing and
    /// accept nothing.
    pub off: Vec<bool>,
    /// Hosts the current route table knows to be off: nobody sends to them.
    pub known_off: Vec<bool>,
    /// The hosts on each host's switch (for local traffic).
    pub same_switch: Vec<Vec<u32>>,
    /// Round-robin position of `rrmit` per host and destination switch.
    pub rr: Vec<u8>,
    /// The next message of each host, by tick.
    pub gen: BinaryHeap<Reverse<(u64, u32)>>,
    /// Message sizes as cumulative weights: (payload bytes, cumulative weight).
    pub mix_cdf: Vec<(usize, f64)>,
}

impl Hosts {
    pub fn new(topo: &myrix_fabric::Topology, mix_cdf: Vec<(usize, f64)>) -> Hosts {
        let nh = topo.num_hosts();
        Hosts {
            queue: (0..nh).map(|_| VecDeque::new()).collect(),
            queue_cap: (MAX_QUEUED / nh.max(1)).clamp(1024, 65536),
            sending: vec![(PacketId::NONE, 0); nh],
            from_itb: vec![false; nh],
            is_active: vec![false; nh],
            active: Vec::new(),
            off: vec![false; nh],
            known_off: vec![false; nh],
            same_switch: topo
                .hosts()
                .iter()
                .map(|h| topo.hosts_on(h.switch).collect())
                .collect(),
            rr: vec![0; nh * topo.num_switches()],
            gen: BinaryHeap::new(),
            mix_cdf,
        }
    }

    pub fn queued(&self) -> u64 {
        self.queue.iter().map(|q| q.len() as u64).sum()
    }
}

impl Sim<'_> {
    pub(super) fn next_gap(&mut self) -> u64 {
        // Exponential inter-arrival, at least one tick.
        let u: f64 = self.rng.gen_range(f64::MIN_POSITIVE..1.0);
        (-u.ln() * self.timing.mean_gap).ceil().max(1.0) as u64
    }

    /// Phase 3: new messages.
    pub(super) fn generate(&mut self) {
        let t = self.now;
        while let Some(&Reverse((at, h))) = self.hosts.gen.peek() {
            if at > t {
                break;
            }
            self.hosts.gen.pop();
            if self.hosts.off[h as usize] {
                continue;
            }
            let n = self.topo.num_hosts() as u32;
            let dst = self.cfg.traffic.destination(
                h,
                n,
                &self.hosts.same_switch[h as usize],
                &mut self.rng,
            );
            self.new_packet(h, dst);
            let gap = self.next_gap();
            self.hosts.gen.push(Reverse((t + gap, h)));
        }
    }

    #[inline]
    pub(super) fn activate_host(&mut self, h: u32) {
        if !self.hosts.is_active[h as usize] {
            self.hosts.is_active[h as usize] = true;
            self.hosts.active.push(h);
        }
    }

    /// Phase 7: host interfaces send, in-transit packets first; a stopped one waits
    /// for GO.
    pub(super) fn host_sends(&mut self) {
        let t = self.now;
        let mut i = 0;
        while i < self.hosts.active.len() {
            let h = self.hosts.active[i] as usize;
            let inj = ChannelId::host_inject(h as u32);
            if self.hosts.off[h] && self.hosts.sending[h].0.is_none() {
                self.reap(h);
                self.hosts.is_active[h] = false;
                self.hosts.active.swap_remove(i);
                continue;
            }
            let held = self.ch.held[inj];
            if self.hosts.sending[h].0.is_none() && !held {
                if let Some(e) = self.itb.q[h].front() {
                    let start = if e.spilled {
                        e.tail_at.saturating_add(self.timing.spill)
                    } else {
                        e.header_at + self.timing.itb
                    };
                    if t >= start {
                        self.hosts.sending[h] = (e.pkt, 0);
                        self.hosts.from_itb[h] = true;
                        // The type byte that marked the in-transit host is consumed.
                        self.pkts[e.pkt].remaining = e.len_in - 1;
                    }
                }
            }
            if self.hosts.sending[h].0.is_none() && !held {
                if let Some(&p) = self.hosts.queue[h].front() {
                    if t >= self.pkts[p].generated + self.timing.send {
                        self.hosts.queue[h].pop_front();
                        self.hosts.sending[h] = (p, 0);
                        self.hosts.from_itb[h] = false;
                    }
                }
            }
            let (p, sent) = self.hosts.sending[h];
            let stopped = self.ch.stopped[inj];
            if p.is_some() && !stopped {
                let (len, ready) = if self.hosts.from_itb[h] {
                    // Cut-through: byte `sent` of the re-injected packet is byte `sent + 1`
                    // of what arrived.
                    let e = self.itb.q[h][0];
                    (e.len_in - 1, e.received >= sent + 2)
                } else {
                    (self.pkts[p].wire_len, true)
                };
                if ready {
                    self.send(inj, flit(p, sent == 0, sent + 1 == len));
                    if sent + 1 == len {
                        self.hosts.sending[h] = (PacketId::NONE, 0);
                        if self.cfg.channel_release == ChannelRelease::Drain {
                            self.ch.held[inj] = true;
                        }
                        if self.hosts.from_itb[h] {
                            let e = self.itb.q[h].pop_front().expect("sending it");
                            if !e.spilled {
                                self.itb.free[h] += e.len_in as usize;
                            }
                        }
                    } else {
                        self.hosts.sending[h] = (p, sent + 1);
                    }
                }
            }
            let sending = self.hosts.sending[h].0.is_some();
            let idle = !sending && self.hosts.queue[h].is_empty() && self.itb.q[h].is_empty();
            let blocked = (sending && stopped) || (!sending && self.ch.held[inj]);
            if idle || blocked {
                self.hosts.is_active[h] = false;
                self.hosts.active.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }
}

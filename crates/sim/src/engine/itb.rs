//! In-transit buffers in the host interfaces: the packets passing through each one,
//! its pool, and which hosts serve as in-transit hosts on each switch for each route
//! table. Re-injection itself is the host send phase's; this module only receives.

use super::ids::PacketId;
use super::packets::{pkt_of, Flit, HEAD, TAIL};
use super::Sim;
use myrix_fabric::Topology;
use std::collections::VecDeque;

/// A packet passing through an interface's in-transit buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Itb {
    pub pkt: PacketId,
    pub header_at: u64,
    /// Bytes arrived so far, type byte included, of `len_in`.
    pub received: u32,
    pub len_in: u32,
    pub tail_at: u64,
    pub spilled: bool,
}

pub(crate) struct InTransit {
    /// Per host: packets passing through, oldest first.
    pub q: Vec<VecDeque<Itb>>,
    /// Per host: free bytes of the pool.
    pub free: Vec<usize>,
    pub peak: usize,
    pub spills: u64,
    /// In-transit hosts by route-table epoch and switch: a table computed after hosts
    /// went off splits only at the hosts still on.
    pub hosts: Vec<Vec<Vec<u32>>>,
}

impl InTransit {
    pub fn new(topo: &Topology, pool: usize) -> InTransit {
        let nh = topo.num_hosts();
        InTransit {
            q: (0..nh).map(|_| VecDeque::new()).collect(),
            free: vec![pool; nh],
            peak: 0,
            spills: 0,
            hosts: vec![(0..topo.num_switches() as u32)
                .map(|s| topo.hosts_on(s).collect())
                .collect()],
        }
    }
}

impl Sim<'_> {
    /// A flit of a packet passing through host `h`'s in-transit buffer.
    pub(super) fn itb_arrive(&mut self, h: u32, f: Flit) {
        let t = self.now;
        let p = pkt_of(f);
        let hi = h as usize;
        if f & HEAD != 0 {
            let len_in = self.pkts[p].remaining;
            let fits = self.itb.free[hi] >= len_in as usize;
            if fits {
                self.itb.free[hi] -= len_in as usize;
                self.itb.peak = self.itb.peak.max(self.cfg.itb_pool - self.itb.free[hi]);
            } else {
                self.itb.spills += 1;
            }
            self.itb.q[hi].push_back(Itb {
                pkt: p,
                header_at: t,
                received: 0,
                len_in,
                tail_at: u64::MAX,
                spilled: !fits,
            });
        }
        // One ejection channel: the packet arriving is the newest one.
        let e = self.itb.q[hi]
            .back_mut()
            .expect("a packet's head comes first");
        debug_assert_eq!(e.pkt, p);
        e.received += 1;
        if f & TAIL != 0 {
            e.tail_at = t;
        }
        self.activate_host(h);
    }
}

//! Failures and changes under load: links, switches and hosts failing, a host joining,
//! route tables replaced after a remap (tables and in-transit hosts by epoch), the
//! long-period time-out, and the packets these lose. A failure never cuts through a
//! worm: a channel dies once the packet on it has passed.

use super::channels::Sink;
use super::config::ConfigError;
use super::ids::{ChannelId, PacketId, PortId};
use super::ports::In;
use super::Sim;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::PortUse;
use std::cmp::Reverse;
use std::collections::VecDeque;

impl<'a> Sim<'a> {
    /// Fails link `link` of the topology, both directions, now. A worm crossing it
    /// finishes first; from then on whatever is sent into the link is lost (counted in
    /// [`Self::lost`]) and no STOP comes back, so nothing upstream blocks on it.
    pub fn fail_link(&mut self, link: usize) {
        let nh = self.topo.num_hosts();
        self.cut(ChannelId::link(nh, link, false));
        self.cut(ChannelId::link(nh, link, true));
    }

    /// Packet `p` is lost: its slot is free.
    pub(super) fn lose(&mut self, p: PacketId) {
        self.meters.lost += 1;
        self.pkts.free(p);
    }

    /// The long-period time-out: a packet whose header has waited at a switch input for
    /// `block_timeout` (routed, its output held by others) is dropped; the input discards
    /// it up to its tail, which frees the buffers behind it. Checked every 1/64 of the
    /// time-out, so it fires up to that much late.
    pub(super) fn long_timeouts(&mut self) {
        let t = self.now;
        for g in (0..self.inp.state.len() as u32).map(PortId) {
            if !matches!(self.inp.state[g], In::Waiting(_) | In::Pending)
                || t < self.inp.wait_since[g] + self.timing.timeout
            {
                continue;
            }
            if let In::Waiting(o) = self.inp.state[g] {
                let waiters = &mut self.out.waiters[o];
                if let Some(k) = waiters.iter().position(|&x| x == g) {
                    waiters.swap_remove(k);
                }
            } else {
                // A header between turns of its switch's routing unit; one in its turn
                // now is looked at on the next check.
                let s = self.ports.switch_of(g) as usize;
                self.wake_unit(s);
                if self.units.current[s] == g {
                    continue;
                }
                let pending = &mut self.units.pending[s];
                if let Some(k) = pending.iter().position(|&x| x == g) {
                    pending.swap_remove(k);
                }
                let o = self.units.out[g];
                if let Some(k) = self.out.waiters[o].iter().position(|&x| x == g) {
                    self.out.waiters[o].swap_remove(k);
                }
                if self.out.reserved[o] == g {
                    self.out.reserved[o] = PortId::NONE;
                    self.arbitrate(o);
                }
            }
            self.inp.state[g] = In::Discard;
            self.wake(g);
            self.meters.timeouts += 1;
        }
    }

    /// Switches host `h` off now: it generates nothing more, the packet it is sending
    /// (its own or an in-transit one) finishes, what waits in its memory and in-transit
    /// buffer is lost, and its link from the switch fails like [`Self::fail_link`].
    /// Until the routes change, others go on sending to it (those messages are lost);
    /// after [`Self::set_routes`], nobody does.
    pub fn fail_host(&mut self, h: u32) {
        if std::mem::replace(&mut self.hosts.off[h as usize], true) {
            return;
        }
        self.cut(ChannelId::host_eject(h));
        self.activate_host(h);
    }

    /// Host `h` is not on the network when the run starts (call before the first step):
    /// it neither sends nor accepts, and the first route table does not know it; it may
    /// [`Self::join_host`] later.
    pub fn start_off(&mut self, h: u32) {
        let hi = h as usize;
        self.hosts.off[hi] = true;
        self.hosts.known_off[hi] = true;
        self.make_void(ChannelId::host_eject(h));
        self.hosts.gen.retain(|Reverse((_, x))| *x != h);
        for hosts in self.itb.hosts[0].iter_mut() {
            hosts.retain(|&x| x != h);
        }
    }

    /// Host `h`, off, is plugged in and switched on now: it accepts packets from now on
    /// and starts sending once the routes are replaced by a table that knows it
    /// ([`Self::set_routes`]).
    pub fn join_host(&mut self, h: u32) {
        let hi = h as usize;
        if !self.hosts.off[hi] {
            return;
        }
        self.hosts.off[hi] = false;
        let c = ChannelId::host_eject(h);
        self.ch.dying[c] = false;
        self.ch.sink[c] = Sink::Host(h);
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
                    self.cut(ChannelId::host_inject(h));
                }
                PortUse::Free => {}
            }
        }
    }

    /// Channel `c` fails once the worm on it, if any, has passed.
    fn cut(&mut self, c: ChannelId) {
        let o = self.ch.out_port[c];
        let worm = (o.is_some() && self.out.conn[o].is_some())
            || self
                .ch
                .injecting_host(c)
                .is_some_and(|h| self.hosts.sending[h as usize].0.is_some())
            || !self.ch.pipe[c].is_empty();
        if worm {
            self.ch.dying[c] = true;
        } else {
            self.make_void(c);
        }
    }

    /// A host off and idle: what waits in its memory and its in-transit buffer (whole
    /// packets; one still arriving is reaped when its tail is in) is lost.
    pub(super) fn reap(&mut self, h: usize) {
        while let Some(p) = self.hosts.queue[h].pop_front() {
            self.meters.dropped += 1;
            self.pkts.free(p);
        }
        let mut k = 0;
        while k < self.itb.q[h].len() {
            let e = self.itb.q[h][k];
            if e.tail_at == u64::MAX {
                k += 1;
                continue;
            }
            self.itb.q[h].remove(k);
            if !e.spilled {
                self.itb.free[h] += e.len_in as usize;
            }
            self.lose(e.pkt);
        }
    }

    pub(super) fn make_void(&mut self, c: ChannelId) {
        self.ch.dying[c] = false;
        self.ch.sink[c] = Sink::Void;
        self.ch.stopped[c] = false;
        let o = self.ch.out_port[c];
        if o.is_some() && self.out.conn[o].is_some() {
            self.wake(self.out.conn[o]);
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
        let off = &self.hosts.off;
        self.itb.hosts.push(
            (0..topo.num_switches() as u32)
                .map(|s| topo.hosts_on(s).filter(|&h| !off[h as usize]).collect())
                .collect(),
        );
        // A host that joined starts sending once it has the map with routes.
        for h in 0..topo.num_hosts() {
            if self.hosts.known_off[h] && !self.hosts.off[h] {
                let gap = self.next_gap();
                self.hosts.gen.push(Reverse((self.now + gap, h as u32)));
            }
        }
        self.hosts.known_off.clone_from(&self.hosts.off);
        // Interfaces look routes up when a message leaves host memory: what waits there
        // takes the new routes (mixing old and new routes beyond the packets already in
        // the network could close a dependency cycle).
        let epoch = (self.tables.len() - 1) as u8;
        for h in 0..self.topo.num_hosts() as u32 {
            let queue = std::mem::take(&mut self.hosts.queue[h as usize]);
            let mut kept = VecDeque::with_capacity(queue.len());
            for p in queue {
                let (dst, ds) = {
                    let pk = &self.pkts[p];
                    (pk.dst, pk.dst_switch)
                };
                let choice = if self.hosts.known_off[dst as usize] {
                    None
                } else {
                    self.choose(h, ds)
                };
                let Some((alt, longer, hops, splits)) = choice else {
                    self.meters.refused += 1;
                    self.pkts.free(p);
                    continue;
                };
                let pk = &mut self.pkts[p];
                pk.wire_len = crate::wire_bytes(pk.payload as usize, hops, splits + 1) as u32;
                pk.remaining = pk.wire_len;
                pk.alt = alt;
                pk.longer = longer;
                pk.epoch = epoch;
                kept.push_back(p);
            }
            self.hosts.queue[h as usize] = kept;
        }
        Ok(())
    }
}

//! Switch ports: where each switch's ports are numbered ([`Ports`]), the input side
//! (buffers, slack, routing state: [`Inputs`]) and the output side (who holds it, who
//! waits, round robin: [`Outputs`]); the phases that move headers and flits through
//! switches. Work lists only: no phase may scan every port per tick.

use super::config::{ChannelRelease, SwitchModel};
use super::ids::{ChannelId, IdVec, PortId};
use super::packets::{pkt_of, Flit, HEAD, TAIL};
use super::wheels::Wheel;
use super::Sim;
use myrix_fabric::Topology;
use myrix_link::slack::SlackBuffer;
use std::collections::VecDeque;

/// Port numbering: switch `s`'s port `p` is `PortId(base[s] + p)`.
pub(crate) struct Ports {
    base: Vec<u32>,
    /// Ports per switch.
    count: Vec<u32>,
    switch: IdVec<PortId, u32>,
}

impl Ports {
    pub fn new(topo: &Topology) -> Ports {
        let (mut base, mut count, mut switch) = (Vec::new(), Vec::new(), Vec::new());
        for (s, sw) in topo.switches().iter().enumerate() {
            base.push(switch.len() as u32);
            count.push(sw.ports as u32);
            switch.extend(std::iter::repeat_n(s as u32, sw.ports as usize));
        }
        Ports {
            base,
            count,
            switch: IdVec::from_vec(switch),
        }
    }

    pub fn len(&self) -> usize {
        self.switch.len()
    }

    #[inline]
    pub fn port(&self, s: u32, p: u8) -> PortId {
        PortId(self.base[s as usize] + p as u32)
    }

    #[inline]
    pub fn switch_of(&self, g: PortId) -> u32 {
        self.switch[g]
    }

    /// `g`'s port number on its switch `s`.
    #[inline]
    pub fn local(&self, s: usize, g: PortId) -> u32 {
        g.0 - self.base[s]
    }

    /// How far after port number `rr` port `g` of switch `s` comes in round-robin
    /// order (0: right after it).
    #[inline]
    pub fn rr_distance(&self, s: usize, g: PortId, rr: u32) -> u32 {
        let ports = self.count[s];
        (g.0 - self.base[s] + ports - rr - 1) % ports
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum In {
    Idle,
    /// Routing unit busy until this tick.
    Routing(u64),
    /// Header at the front, waiting for the switch's shared routing unit.
    Pending,
    Waiting(PortId),
    Connected(PortId),
    /// The packet whose header was blocked here past the long-period time-out is being
    /// dropped, up to its tail.
    Discard,
}

/// The input side of every port.
pub(crate) struct Inputs {
    pub buf: IdVec<PortId, VecDeque<Flit>>,
    pub slack: IdVec<PortId, SlackBuffer>,
    pub state: IdVec<PortId, In>,
    /// The channel feeding the input.
    pub from: IdVec<PortId, ChannelId>,
    /// The next forwarded flit is the head of the new hop.
    pub marked: IdVec<PortId, bool>,
    /// First tick the connected input may forward.
    pub ready: IdVec<PortId, u64>,
    pub mover: IdVec<PortId, bool>,
    /// Since when each input's header has waited for its output.
    pub wait_since: IdVec<PortId, u64>,
    /// Inputs that may move a flit this tick.
    pub movers: Vec<PortId>,
    /// Inputs that may have a new header at the front.
    pub idle_check: Vec<PortId>,
    /// Routing timers (and connected inputs' first byte), by tick.
    pub timers: Wheel<PortId>,
}

impl Inputs {
    pub fn new(
        n: usize,
        slack: SlackBuffer,
        from: IdVec<PortId, ChannelId>,
        timers: usize,
    ) -> Inputs {
        let cap = slack.capacity();
        Inputs {
            buf: IdVec::from_vec((0..n).map(|_| VecDeque::with_capacity(cap)).collect()),
            slack: IdVec::filled(slack, n),
            state: IdVec::filled(In::Idle, n),
            from,
            marked: IdVec::filled(false, n),
            ready: IdVec::filled(0, n),
            mover: IdVec::filled(false, n),
            wait_since: IdVec::filled(0, n),
            movers: Vec::new(),
            idle_check: Vec::new(),
            timers: Wheel::new(timers),
        }
    }
}

/// The output side of every port.
pub(crate) struct Outputs {
    /// The channel the output sends into.
    pub ch: IdVec<PortId, ChannelId>,
    pub busy: IdVec<PortId, bool>,
    /// The port number of the input served last.
    pub rr: IdVec<PortId, u8>,
    /// The input connected to it.
    pub conn: IdVec<PortId, PortId>,
    pub waiters: IdVec<PortId, Vec<PortId>>,
    pub in_arb: IdVec<PortId, bool>,
    /// Shared routing unit: the input a free output is kept for until that input's next
    /// turn (the output's round-robin choice among the inputs that asked for it).
    pub reserved: IdVec<PortId, PortId>,
    /// Outputs to arbitrate this tick.
    pub arb_list: Vec<PortId>,
}

impl Outputs {
    pub fn new(ch: IdVec<PortId, ChannelId>) -> Outputs {
        let n = ch.len();
        Outputs {
            ch,
            busy: IdVec::filled(false, n),
            rr: IdVec::filled(0, n),
            conn: IdVec::filled(PortId::NONE, n),
            waiters: IdVec::filled(Vec::new(), n),
            in_arb: IdVec::filled(false, n),
            reserved: IdVec::filled(PortId::NONE, n),
            arb_list: Vec::new(),
        }
    }
}

impl Sim<'_> {
    /// Phase 4a: routing timers due now.
    pub(super) fn routing_timers(&mut self) {
        let t = self.now;
        let (slot, due) = self.inp.timers.take(t);
        for &g in &due {
            match self.inp.state[g] {
                In::Routing(ready) if ready == t => {
                    let f = self.inp.buf[g][0];
                    let out = self.route(g, pkt_of(f), false);
                    self.wait_for(g, out);
                }
                In::Connected(_) if self.inp.ready[g] == t => self.wake(g),
                _ => {}
            }
        }
        self.inp.timers.put_back(slot, due);
    }

    /// Phase 4b: headers newly at the front of an input go to the routing unit.
    pub(super) fn new_headers(&mut self) {
        let t = self.now;
        let mut idle = std::mem::take(&mut self.inp.idle_check);
        for &g in &idle {
            if self.inp.state[g] != In::Idle {
                continue;
            }
            let Some(&f) = self.inp.buf[g].front() else {
                continue;
            };
            debug_assert!(f & HEAD != 0, "a packet starts with its route byte");
            // The routing unit sees the header now; the first byte may leave
            // `route_ticks` after it arrived.
            match self.cfg.switch_model {
                SwitchModel::RouteThenRequest => {
                    self.inp.state[g] = In::Routing(t + self.timing.route);
                    self.timer(g, t + self.timing.route);
                }
                SwitchModel::HoldOutput => {
                    let out = self.route(g, pkt_of(f), false);
                    self.wait_for(g, out);
                }
                SwitchModel::SharedUnit => {
                    self.inp.state[g] = In::Pending;
                    self.inp.wait_since[g] = t;
                    self.units.out[g] = self.route(g, pkt_of(f), true);
                    let s = self.ports.switch_of(g);
                    self.wake_unit(s as usize);
                    if self.units.current[s as usize].is_none() {
                        self.units.start.push(s);
                    }
                    self.units.pending[s as usize].push(g);
                }
            }
        }
        idle.clear();
        self.inp.idle_check = idle;
    }

    /// Phase 5: a free output with waiters goes to the waiting input next after the
    /// last one served (demand-slotted round robin).
    pub(super) fn arbitration(&mut self) {
        let t = self.now;
        let mut arb = std::mem::take(&mut self.out.arb_list);
        for &o in &arb {
            self.out.in_arb[o] = false;
            if self.out.busy[o] || self.out.waiters[o].is_empty() {
                continue;
            }
            let s = self.ports.switch_of(o) as usize;
            let rr = self.out.rr[o] as u32;
            let ports = &self.ports;
            let (k, _) = self.out.waiters[o]
                .iter()
                .enumerate()
                .min_by_key(|(_, &g)| ports.rr_distance(s, g, rr))
                .expect("non-empty");
            if self.cfg.switch_model == SwitchModel::SharedUnit {
                // The input takes it when its turn at the routing unit next ends.
                if self.out.reserved[o].is_none() {
                    self.out.reserved[o] = self.out.waiters[o][k];
                }
                continue;
            }
            let g = self.out.waiters[o].swap_remove(k);
            let hold = self.cfg.switch_model == SwitchModel::HoldOutput;
            self.connect(g, o, if hold { t + self.timing.route } else { t });
        }
        arb.clear();
        self.out.arb_list = arb;
    }

    /// Phase 6, the crossbar: every mover sends one flit; the blocked leave the list
    /// until an arrival, a GO or a timer wakes them.
    pub(super) fn crossbar(&mut self) {
        let t = self.now;
        let mut i = 0;
        while i < self.inp.movers.len() {
            let g = self.inp.movers[i];
            let keep = match self.inp.state[g] {
                In::Connected(o) => {
                    let c = self.out.ch[o];
                    if self.ch.stopped[c] || t < self.inp.ready[g] {
                        false
                    } else if let Some(f) = self.inp.buf[g].pop_front() {
                        self.inp.slack[g].depart();
                        self.flow(g);
                        let head = std::mem::take(&mut self.inp.marked[g]);
                        let out = (f & !HEAD) | if head { HEAD } else { 0 };
                        self.send(c, out);
                        if f & TAIL != 0 {
                            self.drained(self.inp.from[g]);
                            self.release(g, o);
                            false
                        } else {
                            true
                        }
                    } else {
                        false
                    }
                }
                In::Discard => match self.inp.buf[g].pop_front() {
                    Some(f) => {
                        self.inp.slack[g].depart();
                        self.flow(g);
                        if f & TAIL != 0 {
                            self.drained(self.inp.from[g]);
                            self.inp.state[g] = In::Idle;
                            self.lose(pkt_of(f));
                            if !self.inp.buf[g].is_empty() {
                                self.inp.idle_check.push(g);
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
                self.inp.mover[g] = false;
                self.inp.movers.swap_remove(i);
            }
        }
    }

    /// `g` may move a flit this tick.
    #[inline]
    pub(super) fn wake(&mut self, g: PortId) {
        if !self.inp.mover[g] {
            self.inp.mover[g] = true;
            self.inp.movers.push(g);
        }
    }

    fn timer(&mut self, g: PortId, at: u64) {
        self.inp.timers.push(at, g);
    }

    /// Input `g` waits for output `out`.
    fn wait_for(&mut self, g: PortId, out: PortId) {
        self.inp.state[g] = In::Waiting(out);
        self.inp.wait_since[g] = self.now;
        self.out.waiters[out].push(g);
        self.arbitrate(out);
    }

    pub(super) fn arbitrate(&mut self, o: PortId) {
        if !self.out.in_arb[o] {
            self.out.in_arb[o] = true;
            self.out.arb_list.push(o);
        }
    }

    /// The tail left input `g` through output `o`.
    fn release(&mut self, g: PortId, o: PortId) {
        self.out.conn[o] = PortId::NONE;
        self.inp.state[g] = In::Idle;
        if self.cfg.channel_release == ChannelRelease::Drain {
            self.ch.held[self.out.ch[o]] = true;
        } else {
            self.free_output(o);
        }
        if !self.inp.buf[g].is_empty() {
            self.inp.idle_check.push(g);
        }
    }

    pub(super) fn free_output(&mut self, o: PortId) {
        self.out.busy[o] = false;
        if !self.out.waiters[o].is_empty() {
            self.arbitrate(o);
            self.wake_unit(self.ports.switch_of(o) as usize);
        }
    }

    /// Connects input `g` to output `o`: the route byte is stripped here and the first
    /// following byte may leave at `ready`.
    pub(super) fn connect(&mut self, g: PortId, o: PortId, ready: u64) {
        self.out.busy[o] = true;
        let s = self.ports.switch_of(g) as usize;
        self.out.rr[o] = self.ports.local(s, g) as u8;
        self.inp.state[g] = In::Connected(o);
        if let Some(f) = self.inp.buf[g].pop_front() {
            self.pkts[pkt_of(f)].remaining -= 1;
        }
        self.inp.slack[g].depart();
        self.flow(g);
        self.inp.marked[g] = true;
        self.inp.ready[g] = ready;
        self.out.conn[o] = g;
        if ready > self.now {
            self.timer(g, ready);
        } else {
            self.wake(g);
        }
    }
}

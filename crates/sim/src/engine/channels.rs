//! Directed channels: the cable delay line with its flits in flight, STOP/GO, whether
//! a packet still holds it, failure; their two timing wheels (flits and STOP/GO
//! symbols arriving), and the phases that deliver what arrives. A channel never looks
//! at the packet it carries beyond the flit flags.

use super::ids::{ChannelId, IdVec, PortId};
use super::packets::{pkt_of, Flit, TAIL};
use super::ports::{In, Ports};
use super::wheels::Wheel;
use super::Sim;
use myrix_fabric::Topology;
use myrix_link::symbol::Control;
use std::collections::VecDeque;

/// Where a channel delivers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sink {
    Input(PortId),
    Host(u32),
    /// A failed link: what is sent into it is lost, and nothing comes back.
    Void,
}

pub(crate) struct Channels {
    /// Cable delay, ticks.
    pub delay: IdVec<ChannelId, u32>,
    pub sink: IdVec<ChannelId, Sink>,
    /// Flits in flight with their arrival tick.
    pub pipe: IdVec<ChannelId, VecDeque<(u64, Flit)>>,
    /// The sender has been told to STOP.
    pub stopped: IdVec<ChannelId, bool>,
    /// Under [`ChannelRelease::Drain`](super::ChannelRelease::Drain): a tail was sent into the channel and has not yet
    /// left the buffer at its far end, so its sender may not start another packet.
    pub held: IdVec<ChannelId, bool>,
    /// The channel's link has failed; it becomes [`Sink::Void`] once the worm on it has
    /// passed (the model cuts links between packets, not through one).
    pub dying: IdVec<ChannelId, bool>,
    /// Ticks it carried a flit during the measurement.
    pub busy_ticks: IdVec<ChannelId, u64>,
    /// The output port that sends into it (`NONE`: a host's injection channel).
    pub out_port: IdVec<ChannelId, PortId>,
    /// The first switch-to-switch channel (the ones before belong to hosts).
    pub first_link: usize,
    /// Flits arriving, by tick.
    pub flits: Wheel<ChannelId>,
    /// STOP (true) or GO reaching the sender, by tick.
    pub symbols: Wheel<(ChannelId, bool)>,
}

/// The channels of `topo` laid out as [`ChannelId`]'s constructors say, with `delay(m)`
/// ticks for a cable of `m` metres; also each output's channel and each input's.
pub(crate) struct Wiring {
    pub channels: Channels,
    pub out_ch: IdVec<PortId, ChannelId>,
    pub in_from: IdVec<PortId, ChannelId>,
}

impl Channels {
    pub fn wire(topo: &Topology, ports: &Ports, delay: impl Fn(f64) -> u32) -> Wiring {
        let np = ports.len();
        let nh = topo.num_hosts();
        let (mut delays, mut sinks) = (Vec::new(), Vec::new());
        let mut out_ch = IdVec::filled(ChannelId::NONE, np);
        let mut in_from = IdVec::filled(ChannelId::NONE, np);
        let mut add = |d: u32, sink: Sink| {
            delays.push(d);
            sinks.push(sink);
            ChannelId((delays.len() - 1) as u32)
        };
        for (h, host) in topo.hosts().iter().enumerate() {
            let g = ports.port(host.switch, host.port);
            let d = delay(host.length_m);
            let inj = add(d, Sink::Input(g));
            debug_assert_eq!(inj, ChannelId::host_inject(h as u32));
            in_from[g] = inj;
            out_ch[g] = add(d, Sink::Host(h as u32));
        }
        for (i, l) in topo.links().iter().enumerate() {
            let ga = ports.port(l.a.switch, l.a.port);
            let gb = ports.port(l.b.switch, l.b.port);
            let d = delay(l.length_m);
            let ab = add(d, Sink::Input(gb));
            let ba = add(d, Sink::Input(ga));
            debug_assert_eq!(ba, ChannelId::link(nh, i, true));
            out_ch[ga] = ab;
            in_from[gb] = ab;
            out_ch[gb] = ba;
            in_from[ga] = ba;
        }
        let n = delays.len();
        let mut out_port = IdVec::filled(PortId::NONE, n);
        for (g, &c) in out_ch.iter().enumerate() {
            if c.is_some() {
                out_port[c] = PortId(g as u32);
            }
        }
        let wheel = delays.iter().copied().max().unwrap_or(1) as usize + 1;
        let channels = Channels {
            delay: IdVec::from_vec(delays),
            sink: IdVec::from_vec(sinks),
            pipe: IdVec::from_vec((0..n).map(|_| VecDeque::new()).collect()),
            stopped: IdVec::filled(false, n),
            held: IdVec::filled(false, n),
            dying: IdVec::filled(false, n),
            busy_ticks: IdVec::filled(0, n),
            out_port,
            first_link: 2 * nh,
            flits: Wheel::new(wheel),
            symbols: Wheel::new(wheel),
        };
        Wiring {
            channels,
            out_ch,
            in_from,
        }
    }

    /// The host a channel is the injection channel of.
    #[inline]
    pub fn injecting_host(&self, c: ChannelId) -> Option<u32> {
        (c.0 % 2 == 0 && (c.0 as usize) < self.first_link).then_some(c.0 / 2)
    }

    /// Busy ticks of the switch-to-switch channels.
    pub fn link_busy_ticks(&self) -> &[u64] {
        &self.busy_ticks.as_slice()[self.first_link..]
    }
}

impl Sim<'_> {
    /// Phase 1: flits arriving at inputs, at hosts, in failed links.
    pub(super) fn arrivals(&mut self) {
        let t = self.now;
        let (slot, arriving) = self.ch.flits.take(t);
        for &c in &arriving {
            let (at, f) = self.ch.pipe[c].pop_front().expect("scheduled arrival");
            debug_assert_eq!(at, t);
            match self.ch.sink[c] {
                Sink::Host(h) => {
                    let p = pkt_of(f);
                    if self.pkts[p].dst != h {
                        self.itb_arrive(h, f);
                    } else if f & TAIL != 0 {
                        self.deliver(p);
                    }
                    if f & TAIL != 0 {
                        self.drained(c);
                        if self.ch.dying[c] {
                            self.make_void(c);
                        }
                    }
                }
                Sink::Input(g) => {
                    if self.inp.slack[g].arrive() {
                        self.inp.buf[g].push_back(f);
                    } else {
                        self.meters.overflows += 1;
                    }
                    self.flow(g);
                    match self.inp.state[g] {
                        In::Idle => self.inp.idle_check.push(g),
                        In::Connected(_) | In::Discard => self.wake(g),
                        _ => {}
                    }
                    if f & TAIL != 0 && self.ch.dying[c] {
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
        self.ch.flits.put_back(slot, arriving);
    }

    /// Phase 2: STOP/GO reaching senders; GO wakes whoever sends on that channel.
    pub(super) fn flow_control(&mut self) {
        let t = self.now;
        let (slot, symbols) = self.ch.symbols.take(t);
        for &(c, stop) in &symbols {
            if matches!(self.ch.sink[c], Sink::Void) {
                continue;
            }
            self.ch.stopped[c] = stop;
            if !stop {
                let o = self.ch.out_port[c];
                if o.is_some() && self.out.conn[o].is_some() {
                    self.wake(self.out.conn[o]);
                }
                if let Some(h) = self.ch.injecting_host(c) {
                    self.activate_host(h);
                }
            }
        }
        self.ch.symbols.put_back(slot, symbols);
    }

    /// Puts flit `f` into channel `c`.
    #[inline]
    pub(super) fn send(&mut self, c: ChannelId, f: Flit) {
        let t = self.now + self.ch.delay[c] as u64;
        self.ch.pipe[c].push_back((t, f));
        self.ch.flits.push(t, c);
        self.meters.flit_hops += 1;
        if self.meters.measuring(self.now) {
            self.ch.busy_ticks[c] += 1;
        }
    }

    /// Input `g`'s slack buffer crossed a watermark: STOP or GO goes back up its channel.
    #[inline]
    pub(super) fn flow(&mut self, g: PortId) {
        if let Some(req) = self.inp.slack[g].take_request() {
            let c = self.inp.from[g];
            let t = self.now + self.ch.delay[c] as u64;
            self.ch.symbols.push(t, (c, req == Control::Stop));
        }
    }

    /// The tail that was sent into channel `c` has left the buffer at its far end (or
    /// reached a host, or a failed link): under
    /// [`ChannelRelease::Drain`](super::ChannelRelease::Drain) the sender may
    /// start its next packet.
    pub(super) fn drained(&mut self, c: ChannelId) {
        if !std::mem::replace(&mut self.ch.held[c], false) {
            return;
        }
        let o = self.ch.out_port[c];
        if o.is_some() {
            self.free_output(o);
        }
        if let Some(h) = self.ch.injecting_host(c) {
            self.activate_host(h);
        }
    }
}

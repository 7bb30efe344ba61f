//! Packets: their slots (reused through a free list), the flit encoding, which route
//! alternative a new message takes, and the output a header asks for at each switch.
//! A flit is a `u32`; nothing here may allocate per flit.

use super::ids::{PacketId, PortId};
use super::Sim;
use myrix_fabric::itb::{AltRef, Policy, RouteTable};
use myrix_fabric::PortUse;
use rand::Rng;
use std::ops::{Index, IndexMut};

/// A flit: packet slot in the high bits, head and tail flags in the low two.
pub(crate) type Flit = u32;
pub(crate) const HEAD: u32 = 1;
pub(crate) const TAIL: u32 = 2;

#[inline]
pub(crate) const fn flit(pkt: PacketId, head: bool, tail: bool) -> Flit {
    pkt.0 << 2 | (head as u32) | ((tail as u32) << 1)
}

#[inline]
pub(crate) const fn pkt_of(f: Flit) -> PacketId {
    PacketId(f >> 2)
}

/// The tag of generated traffic (see [`Sim::inject_frame`]).
pub(crate) const NO_TAG: u64 = u64::MAX;

pub(crate) struct Packet {
    pub src: u32,
    pub dst: u32,
    pub generated: u64,
    /// Bytes on the wire at injection: every sub-route's route bytes and type byte,
    /// the payload and the CRC.
    pub wire_len: u32,
    /// The packet's length where its head is now (each switch strips a route byte,
    /// each in-transit host its type byte).
    pub remaining: u32,
    pub src_switch: u32,
    pub dst_switch: u32,
    /// The alternative chosen, and whether from `pit`'s one-link-longer set.
    pub alt: u8,
    pub longer: bool,
    /// Next hop of the alternative to take.
    pub hop: u16,
    /// In-transit hosts passed; `in_itb_leg` while between ejection and re-injection.
    pub splits_done: u8,
    pub in_itb_leg: bool,
    pub measured: bool,
    pub payload: u32,
    /// The route table the packet was routed with (tables change on a remap).
    pub epoch: u8,
    /// The caller's name for a packet it injected with [`Sim::inject_frame`]
    /// (`NO_TAG` for generated traffic): its delivery is reported under it.
    pub tag: u64,
}

/// Packet slots; a freed slot is reused by the next packet.
#[derive(Default)]
pub(crate) struct Packets {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl Packets {
    pub fn add(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(i) => {
                self.slots[i.0 as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                PacketId((self.slots.len() - 1) as u32)
            }
        }
    }

    pub fn free(&mut self, p: PacketId) {
        self.free.push(p);
    }

    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Index<PacketId> for Packets {
    type Output = Packet;
    #[inline]
    fn index(&self, p: PacketId) -> &Packet {
        &self.slots[p.0 as usize]
    }
}

impl IndexMut<PacketId> for Packets {
    #[inline]
    fn index_mut(&mut self, p: PacketId) -> &mut Packet {
        &mut self.slots[p.0 as usize]
    }
}

/// What [`Sim::choose`] picked: alternative, from the longer set, links, splits.
pub(crate) type Choice = (u8, bool, usize, usize);

impl<'a> Sim<'a> {
    /// The alternative the policy picks now for a message from host `src` to switch
    /// `ds` in the route table in force, with its hops and in-transit hosts; `None` when
    /// the table has none (the destination's switch is gone).
    pub(super) fn choose(&mut self, src: u32, ds: u32) -> Option<Choice> {
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
                let c = &mut self.hosts.rr[src as usize * table.num_switches() + ds as usize];
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

    pub(super) fn new_packet(&mut self, src: u32, dst: u32) {
        self.new_packet_of(src, dst, None, NO_TAG);
    }

    /// A packet of `payload` bytes (or one drawn from the configured sizes) from `src` to
    /// `dst`, queued at `src`; false when the interface refuses it.
    pub(super) fn new_packet_of(
        &mut self,
        src: u32,
        dst: u32,
        payload: Option<usize>,
        tag: u64,
    ) -> bool {
        let hosts = self.topo.hosts();
        let (ss, ds) = (hosts[src as usize].switch, hosts[dst as usize].switch);
        let epoch = (self.tables.len() - 1) as u8;
        if self.hosts.known_off[dst as usize] || self.hosts.off[src as usize] {
            // Not in the current map: the interface refuses the send.
            self.meters.refused += 1;
            return false;
        }
        if self.hosts.queue[src as usize].len() >= self.hosts.queue_cap {
            self.meters.source_full += 1;
            return false;
        }
        let Some((alt, is_longer, hops, splits)) = self.choose(src, ds) else {
            self.meters.refused += 1;
            return false;
        };
        let mix = &self.hosts.mix_cdf;
        let payload = if let Some(n) = payload {
            n
        } else if mix.len() == 1 {
            mix[0].0
        } else {
            let u: f64 = self.rng.gen();
            mix.iter()
                .find(|m| u < m.1)
                .unwrap_or(&mix[mix.len() - 1])
                .0
        };
        let measured = self.meters.measuring(self.now);
        if measured {
            self.meters.generated_bytes += payload as u64;
        }
        let wire_len = crate::wire_bytes(payload, hops, splits + 1) as u32;
        self.meters.generated_measured += measured as u64;
        let id = self.pkts.add(Packet {
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
        });
        self.hosts.queue[src as usize].push_back(id);
        self.activate_host(src);
        true
    }

    #[inline]
    fn alternative(&self, p: PacketId) -> AltRef<'a> {
        let pk = &self.pkts[p];
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
    pub(super) fn route(&mut self, g: PortId, p: PacketId, peek: bool) -> PortId {
        let s = self.ports.switch_of(g);
        let a = self.alternative(p);
        let pk = &self.pkts[p];
        let hop = pk.hop as usize;
        let eject = hop < a.ports.len()
            && !pk.in_itb_leg
            && a.splits.get(pk.splits_done as usize) == Some(&pk.hop);
        let port = if eject {
            let hs = &self.itb.hosts[pk.epoch as usize][s as usize];
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
            let pk = &mut self.pkts[p];
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
        self.ports.port(s, port)
    }
}

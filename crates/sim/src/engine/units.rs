//! The shared routing unit of [`SwitchModel::SharedUnit`](super::SwitchModel): one per
//! switch, serving the inputs with a header in round-robin turns; and sleeping units,
//! whose turns could change nothing, brought back to their place in the cycle when
//! something changes. A unit must never be scanned per tick: turns end on a wheel.

use super::ids::{IdVec, PortId};
use super::packets::pkt_of;
use super::wheels::Wheel;
use super::Sim;

/// Per switch, except `out` (per input port).
pub(crate) struct Units {
    /// The input whose turn it is.
    pub current: Vec<PortId>,
    /// The port number of the input served last.
    pub rr: Vec<u8>,
    /// Turns ending, by tick (a ring as long as a turn): no per-tick scan of the units.
    pub ends: Wheel<u32>,
    /// Inputs with a header waiting for turns.
    pub pending: Vec<Vec<PortId>>,
    /// The output a pending input's header asks for (looked up once, not every turn).
    pub out: IdVec<PortId, PortId>,
    /// Switches whose idle unit may start a turn this tick.
    pub start: Vec<u32>,
    /// A unit whose every waiting header asks for a busy output would only take turns
    /// that change nothing: it is left dormant from `t0` on and its place in the
    /// cycle worked out when something changes (`wake_unit`), so that saturated
    /// networks cost work per flit, not per turn.
    pub dormant: Vec<bool>,
    pub t0: Vec<u64>,
    /// The last tick whose turn ends have been processed.
    pub done: u64,
    pub wakes: u64,
}

impl Units {
    pub fn new(switches: usize, ports: usize, turn_ticks: u64) -> Units {
        Units {
            current: vec![PortId::NONE; switches],
            rr: vec![0; switches],
            ends: Wheel::new(turn_ticks.max(1) as usize + 1),
            pending: vec![Vec::new(); switches],
            out: IdVec::filled(PortId::NONE, ports),
            start: Vec::new(),
            dormant: vec![false; switches],
            t0: vec![0; switches],
            done: 0,
            wakes: 0,
        }
    }
}

impl Sim<'_> {
    /// Phase 4c: finish the turns that end now, start new ones.
    pub(super) fn shared_units(&mut self) {
        let t = self.now;
        self.units.done = t;
        let (slot, due) = self.units.ends.take(t);
        for &s in &due {
            self.end_turn(s as usize);
            self.units.start.push(s);
        }
        self.units.ends.put_back(slot, due);
        let mut starts = std::mem::take(&mut self.units.start);
        for &s in &starts {
            let s = s as usize;
            let u = &mut self.units;
            if u.current[s].is_some() || u.dormant[s] || u.pending[s].is_empty() {
                continue;
            }
            let rr = u.rr[s] as u32;
            let ports = &self.ports;
            let g = *u.pending[s]
                .iter()
                .min_by_key(|&&g| ports.rr_distance(s, g, rr))
                .expect("non-empty");
            u.current[s] = g;
            let end = t + self.timing.route.max(1);
            u.ends.push(end, s as u32);
        }
        starts.clear();
        self.units.start = starts;
    }

    /// Switch `s`'s routing unit ends its turn: the input connects if its output is free
    /// and kept for it (or for nobody, while nobody else asks); otherwise it asks for
    /// the output and waits for its next turn.
    fn end_turn(&mut self, s: usize) {
        let t = self.now;
        let g = std::mem::replace(&mut self.units.current[s], PortId::NONE);
        self.units.rr[s] = self.ports.local(s, g) as u8;
        let f = self.inp.buf[g][0];
        let out = self.units.out[g];
        let waiters = &mut self.out.waiters[out];
        let asked = waiters.iter().position(|&x| x == g);
        let reserved = self.out.reserved[out];
        let mine =
            reserved == g || (reserved.is_none() && waiters.len() == asked.is_some() as usize);
        if !self.out.busy[out] && mine {
            if let Some(i) = asked {
                waiters.swap_remove(i);
            }
            self.out.reserved[out] = PortId::NONE;
            self.route(g, pkt_of(f), false);
            let pending = &mut self.units.pending[s];
            if let Some(i) = pending.iter().position(|&x| x == g) {
                pending.swap_remove(i);
            }
            self.connect(g, out, t);
        } else {
            if asked.is_none() {
                waiters.push(g);
            }
            if !self.out.busy[out] {
                self.arbitrate(out);
            }
            let (units, outs) = (&self.units, &self.out);
            let hopeless = units.pending[s].iter().all(|&x| {
                let o = units.out[x];
                outs.busy[o] && outs.waiters[o].contains(&x)
            });
            if hopeless && self.cfg.unit_fast_forward {
                self.units.dormant[s] = true;
                self.units.t0[s] = t;
            }
        }
    }

    /// Brings a dormant unit back to where its turns would have taken it by now: turn k
    /// after it fell dormant at `t0` serves the k-th waiting input in round-robin order
    /// and ends at `t0 + (k + 1) * 150 ns`; every turn ended so far changed nothing but
    /// the round-robin position.
    pub(super) fn wake_unit(&mut self, s: usize) {
        if !std::mem::replace(&mut self.units.dormant[s], false) {
            return;
        }
        let u = &mut self.units;
        u.wakes += 1;
        let d = self.timing.route.max(1);
        let t0 = u.t0[s];
        let last = if u.done == self.now {
            self.now
        } else {
            self.now - 1
        };
        let n = last.saturating_sub(t0) / d;
        let rr = u.rr[s] as u32;
        let ports = &self.ports;
        let mut order = std::mem::take(&mut u.pending[s]);
        order.sort_unstable_by_key(|&g| ports.rr_distance(s, g, rr));
        let len = order.len() as u64;
        if n > 0 {
            u.rr[s] = ports.local(s, order[((n - 1) % len) as usize]) as u8;
        }
        u.current[s] = order[(n % len) as usize];
        u.pending[s] = order;
        u.ends.push(t0 + (n + 1) * d, s as u32);
    }
}

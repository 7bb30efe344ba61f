//! Two ports joined by a cable, each with its own clock: a bench for the link layer.
//!
//! Time here runs in femtoseconds so that clocks a few ppm apart stay exact; the ports
//! see it in picoseconds. The bench is deterministic: no threads, no wall clock. It is
//! for tests, the `myrix` tour and benchmarks; the network simulator has its own engine.
//!
//! ```
//! use myrix_link::duplex::Duplex;
//! use myrix_link::port::{Port, PortConfig, Received};
//! use myrix_link::{NS, US};
//!
//! let port = || Port::new(PortConfig::default()).unwrap();
//! // Two ports, 50 ns of cable, clocks +100 ppm and -100 ppm off nominal.
//! let mut d = Duplex::new(port(), port(), 100.0, -100.0, 50 * NS);
//! // Until both ports are in sync, the send data stream is dropped, as the spec says.
//! assert!(d.bring_up(10 * US));
//! d.a.send(b"hello").unwrap();
//! d.run_until(5 * US);
//! assert_eq!(d.b.recv_packet(), Some(Received::Packet(b"hello".to_vec())));
//! ```

use crate::code::CodeGroup;
use crate::port::{Port, CODE_GROUP_PERIOD};
use crate::Picos;

/// Femtoseconds per picosecond: the bench's own clock runs in `u64` femtoseconds.
const FS_PER_PS: u64 = 1000;

/// A femtosecond time as the ports see it, truncated to picoseconds.
#[inline]
fn picos(fs: u64) -> Picos {
    Picos(fs / FS_PER_PS)
}
use std::collections::VecDeque;

/// Which end of the cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// Rewrites a code-group in flight: `(side it is sent by, index among that side's
/// code-groups, code-group) -> code-group`. For bit errors.
pub type Fault = Box<dyn FnMut(Side, u64, CodeGroup) -> CodeGroup>;

pub struct Duplex {
    pub a: Port,
    pub b: Port,
    period_fs: [u64; 2],
    next_fs: [u64; 2],
    delay_fs: u64,
    /// Code-groups on the cable, towards A and towards B, with arrival times.
    inflight: [VecDeque<(u64, CodeGroup)>; 2],
    sent: [u64; 2],
    pub fault: Option<Fault>,
}

impl Duplex {
    /// `ppm_a`, `ppm_b`: each clock's offset from the 4 ns nominal period, in ppm
    /// (positive = slower clock). `delay`: one-way cable delay.
    pub fn new(a: Port, b: Port, ppm_a: f64, ppm_b: f64, delay: Picos) -> Duplex {
        let period = |ppm: f64| {
            (CODE_GROUP_PERIOD.0 as f64 * FS_PER_PS as f64 * (1.0 + ppm * 1e-6)).round() as u64
        };
        Duplex {
            a,
            b,
            period_fs: [period(ppm_a), period(ppm_b)],
            next_fs: [0, period(ppm_b) / 2],
            delay_fs: delay.0 * FS_PER_PS,
            inflight: [VecDeque::new(), VecDeque::new()],
            sent: [0, 0],
            fault: None,
        }
    }

    /// Simulated time reached, in picoseconds.
    pub fn now(&self) -> Picos {
        picos(self.next_fs[0].min(self.next_fs[1]))
    }

    /// Code-groups sent by each side so far.
    pub fn sent(&self, side: Side) -> u64 {
        self.sent[side as usize]
    }

    /// Advances whichever port's clock ticks next by one code-group; says which.
    pub fn step(&mut self) -> Side {
        let i = if self.next_fs[0] <= self.next_fs[1] {
            0
        } else {
            1
        };
        let t = self.next_fs[i];
        let (port, side) = if i == 0 {
            (&mut self.a, Side::A)
        } else {
            (&mut self.b, Side::B)
        };
        let incoming = &mut self.inflight[i];
        while incoming.front().is_some_and(|(at, _)| *at <= t) {
            port.handle_receive(incoming.pop_front().unwrap().1);
        }
        let mut cg = port.tick(picos(t));
        if let Some(f) = self.fault.as_mut() {
            cg = f(side, self.sent[i], cg);
        }
        self.sent[i] += 1;
        self.inflight[1 - i].push_back((t + self.delay_fs, cg));
        self.next_fs[i] += self.period_fs[i];
        side
    }

    /// Runs until simulated time `until`.
    pub fn run_until(&mut self, until: Picos) {
        while self.now() < until {
            self.step();
        }
    }

    /// Runs until both ports are in sync, for at most `within` more; true if they are.
    pub fn bring_up(&mut self, within: Picos) -> bool {
        use crate::sync::State::InSync;
        let limit = self.now() + within;
        self.run_while_not(limit, |d| d.a.state() == InSync && d.b.state() == InSync)
    }

    /// Runs until `done` holds, or `limit` passes; true if `done` held.
    pub fn run_while_not(
        &mut self,
        limit: Picos,
        mut done: impl FnMut(&mut Duplex) -> bool,
    ) -> bool {
        while self.now() < limit {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }
}

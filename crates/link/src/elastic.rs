//! The receiver's elastic FIFO: crosses from the remote sender's clock to the local one.
//!
//! Two ports' clocks may differ by up to 200 ppm, two code-groups in every 10 000. The
//! FIFO absorbs the difference by dropping (when it runs full) or repeating (when it runs
//! empty) whole IDLE or BEAT pairs, and nothing else: both pairs are disparity-neutral
//! (each of their two code-groups flips the running disparity), so a dropped or repeated
//! pair leaves the code-group stream valid. Packet bytes are never dropped or repeated.

use crate::code::{encode, CodeGroup, Octet, Rd, K28_5};
use crate::symbol::Control;
use std::collections::VecDeque;

fn both(o: Octet) -> [u16; 2] {
    [
        encode(o, Rd::Neg).unwrap().0.bits(),
        encode(o, Rd::Pos).unwrap().0.bits(),
    ]
}

/// Sizes in code-groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElasticConfig {
    pub capacity: usize,
    /// Below this level a fill pair at the head is repeated.
    pub low: usize,
    /// Above this level an arriving fill pair is dropped.
    pub high: usize,
}

impl Default for ElasticConfig {
    fn default() -> Self {
        ElasticConfig {
            capacity: 64,
            low: 8,
            high: 24,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElasticStats {
    pub dropped_pairs: u64,
    pub repeated_pairs: u64,
    /// Code-groups lost to a full FIFO (clock skew beyond what fill symbols absorb).
    pub overflows: u64,
    /// Reads from an empty FIFO after start-up.
    pub underflows: u64,
}

#[derive(Clone, Debug)]
pub struct ElasticFifo {
    cfg: ElasticConfig,
    q: VecDeque<(CodeGroup, bool)>, // (code-group, opens a fill pair)
    started: bool,
    comma: [u16; 2],
    fill: [u16; 4],
    pub stats: ElasticStats,
}

impl ElasticFifo {
    pub fn new(cfg: ElasticConfig) -> Self {
        let [i0, i1] = both(Octet::D(Control::Idle.second().unwrap()));
        let [b0, b1] = both(Octet::D(Control::Beat.second().unwrap()));
        ElasticFifo {
            cfg,
            q: VecDeque::with_capacity(cfg.capacity + 2),
            started: false,
            comma: both(Octet::K(K28_5)),
            fill: [i0, i1, b0, b1],
            stats: ElasticStats::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn clear(&mut self) {
        self.q.clear();
        self.started = false;
    }

    /// A code-group arrives at the remote clock.
    pub fn push(&mut self, cg: CodeGroup) {
        let after_comma = self
            .q
            .back()
            .is_some_and(|(c, _)| self.comma.contains(&c.bits()));
        if after_comma && self.fill.contains(&cg.bits()) {
            if self.q.len() > self.cfg.high {
                self.q.pop_back();
                self.stats.dropped_pairs += 1;
                return;
            }
            if let Some(last) = self.q.back_mut() {
                last.1 = true;
            }
        }
        if self.q.len() >= self.cfg.capacity {
            self.stats.overflows += 1;
            return;
        }
        self.q.push_back((cg, false));
    }

    /// A code-group is read at the local clock; `None` before the FIFO has filled to its
    /// mid level once, or on underflow.
    pub fn pop(&mut self) -> Option<CodeGroup> {
        if !self.started {
            if self.q.len() < (self.cfg.low + self.cfg.high) / 2 {
                return None;
            }
            self.started = true;
        }
        if self.q.len() < self.cfg.low && self.q.len() >= 2 && self.q[0].1 {
            let (a, b) = (self.q[0], self.q[1]);
            self.q.insert(2, a);
            self.q.insert(3, b);
            self.stats.repeated_pairs += 1;
        }
        match self.q.pop_front() {
            Some((cg, _)) => Some(cg),
            None => {
                self.stats.underflows += 1;
                None
            }
        }
    }
}

//! The original Myrinet channel: 9-bit characters at 80 M/s (one per 12.5 ns).
//!
//! A character is a data byte or one of five control symbols. The paper fixes only the
//! Idle code (all zeros: "discarded by not being detected"); the rest is ours: data
//! characters carry the byte in bits 0–7 with bit 8 set, so no data character is ever
//! all zeros, and the four other control symbols are codes with bit 8 clear, at Hamming
//! distance 4 from one another and 2 from Idle.
//!
//! A [`ClassicPort`] is both ends' logic of one full-duplex link end: a sender that honours
//! STOP/GO, emits a non-Idle character at least every [`ClassicConfig::heartbeat`] (the
//! carrier-sense rule), and gives up on a packet blocked longer than the long-period
//! timeout (≈ 50 ms) by dropping its remainder and sending FRES; and a receiver with the
//! slack buffer (80 B, STOP at 56, GO at 40 by default) that reports an open link when no
//! non-Idle character arrives for a while. Sans-IO: one character in, one out per tick.

use crate::slack::{BadWatermarks, SlackBuffer};
use crate::{Picos, MS, NS};
use std::collections::VecDeque;

/// Character period: 12.5 ns.
pub const CHAR_PERIOD: Picos = Picos(12_500);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Char {
    Data(u8),
    Idle,
    Stop,
    Go,
    Gap,
    /// Forward reset: the sender gave up on a blocked packet.
    Fres,
}

const DATA_BIT: u16 = 0x100;
const STOP: u16 = 0x003;
const GO: u16 = 0x00c;
const GAP: u16 = 0x030;
const FRES: u16 = 0x0c0;

/// A 9-bit value that is no character.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("undefined 9-bit character {0:#05x}")]
pub struct UndefinedChar(pub u16);

impl Char {
    pub const fn bits(self) -> u16 {
        match self {
            Char::Data(d) => DATA_BIT | d as u16,
            Char::Idle => 0,
            Char::Stop => STOP,
            Char::Go => GO,
            Char::Gap => GAP,
            Char::Fres => FRES,
        }
    }

    pub fn from_bits(b: u16) -> Result<Char, UndefinedChar> {
        match b {
            _ if b > 0x1ff => Err(UndefinedChar(b)),
            _ if b & DATA_BIT != 0 => Ok(Char::Data(b as u8)),
            0 => Ok(Char::Idle),
            STOP => Ok(Char::Stop),
            GO => Ok(Char::Go),
            GAP => Ok(Char::Gap),
            FRES => Ok(Char::Fres),
            _ => Err(UndefinedChar(b)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassicConfig {
    /// Slack buffer capacity, STOP and GO watermarks (bytes).
    pub slack: (usize, usize, usize),
    /// The sender emits a non-Idle character at least this often.
    pub heartbeat: Picos,
    /// The receiver reports an open link after this long without a non-Idle character.
    pub carrier_timeout: Picos,
    /// A packet blocked this long is cut off with FRES.
    pub blocked_timeout: Picos,
}

impl Default for ClassicConfig {
    fn default() -> Self {
        ClassicConfig {
            slack: (80, 56, 40),
            heartbeat: 800 * NS,
            carrier_timeout: 4_000 * NS,
            blocked_timeout: 50 * MS,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassicEvent {
    /// No non-Idle character for the carrier timeout: the link looks open.
    LinkDown,
    LinkUp,
    /// Our packet was blocked past the long-period timeout; its rest was dropped.
    Timeout {
        dropped_bytes: usize,
    },
}

/// The receive data stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassicRx {
    Byte(u8),
    End,
    /// The upstream sender timed out (FRES): the packet stops here.
    Reset,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassicStats {
    pub undefined: u64,
    pub fres_received: u64,
    pub fres_sent: u64,
    pub packets_sent: u64,
    pub stop_sent: u64,
    pub go_sent: u64,
}

#[derive(Debug)]
pub struct ClassicPort {
    cfg: ClassicConfig,
    queue: VecDeque<Vec<u8>>,
    cursor: usize,
    /// When the packet in progress was last able to move.
    blocked_since: Option<Picos>,
    stopped: bool,
    last_non_idle_tx: Picos,
    fres_owed: bool,
    slack: SlackBuffer,
    rx: VecDeque<ClassicRx>,
    rx_in_packet: bool,
    last_non_idle_rx: Picos,
    down: bool,
    events: VecDeque<ClassicEvent>,
    pub stats: ClassicStats,
}

impl ClassicPort {
    pub fn new(cfg: ClassicConfig) -> Result<Self, BadWatermarks> {
        let (c, s, g) = cfg.slack;
        Ok(ClassicPort {
            cfg,
            queue: VecDeque::new(),
            cursor: 0,
            blocked_since: None,
            stopped: false,
            last_non_idle_tx: Picos::ZERO,
            fres_owed: false,
            slack: SlackBuffer::new(c, s, g)?,
            rx: VecDeque::new(),
            rx_in_packet: false,
            last_non_idle_rx: Picos::ZERO,
            down: false,
            events: VecDeque::new(),
            stats: ClassicStats::default(),
        })
    }

    pub fn slack(&self) -> &SlackBuffer {
        &self.slack
    }
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Queues a packet (at least one byte) on the send stream.
    pub fn send(&mut self, packet: &[u8]) {
        if !packet.is_empty() {
            self.queue.push_back(packet.to_vec());
        }
    }

    /// A 9-bit character from the wire.
    pub fn handle_receive(&mut self, now: Picos, bits: u16) {
        let c = match Char::from_bits(bits) {
            Ok(c) => c,
            Err(_) => {
                self.stats.undefined += 1;
                return;
            }
        };
        if c != Char::Idle {
            self.last_non_idle_rx = now;
            if std::mem::take(&mut self.down) {
                self.events.push_back(ClassicEvent::LinkUp);
            }
        }
        match c {
            Char::Data(d) => {
                self.rx_in_packet = true;
                if self.slack.arrive() {
                    self.rx.push_back(ClassicRx::Byte(d));
                }
            }
            Char::Gap if self.rx_in_packet => {
                self.rx_in_packet = false;
                self.rx.push_back(ClassicRx::End);
            }
            Char::Fres => {
                self.stats.fres_received += 1;
                if self.rx_in_packet {
                    self.rx_in_packet = false;
                    self.rx.push_back(ClassicRx::Reset);
                }
            }
            Char::Stop => self.stopped = true,
            Char::Go => self.stopped = false,
            Char::Gap | Char::Idle => {}
        }
    }

    /// One character period starting at `now`: returns the character to send.
    pub fn tick(&mut self, now: Picos) -> u16 {
        if !self.down && now.saturating_sub(self.last_non_idle_rx) > self.cfg.carrier_timeout {
            self.down = true;
            self.events.push_back(ClassicEvent::LinkDown);
        }
        let c = self.next_char(now);
        if c != Char::Idle {
            self.last_non_idle_tx = now;
        }
        c.bits()
    }

    fn next_char(&mut self, now: Picos) -> Char {
        if let Some(f) = self.slack.take_request() {
            if f == crate::symbol::Control::Stop {
                self.stats.stop_sent += 1;
                return Char::Stop;
            }
            self.stats.go_sent += 1;
            return Char::Go;
        }
        if std::mem::take(&mut self.fres_owed) {
            self.stats.fres_sent += 1;
            return Char::Fres;
        }
        let in_packet = self.cursor > 0;
        if let Some(p) = self.queue.front() {
            if self.stopped {
                let since = *self.blocked_since.get_or_insert(now);
                if in_packet && now - since >= self.cfg.blocked_timeout {
                    let dropped_bytes = p.len() - self.cursor;
                    self.queue.pop_front();
                    self.cursor = 0;
                    self.blocked_since = None;
                    self.events
                        .push_back(ClassicEvent::Timeout { dropped_bytes });
                    self.stats.fres_sent += 1;
                    return Char::Fres;
                }
            } else {
                self.blocked_since = None;
                if self.cursor < p.len() {
                    let d = p[self.cursor];
                    self.cursor += 1;
                    return Char::Data(d);
                }
                self.queue.pop_front();
                self.cursor = 0;
                self.stats.packets_sent += 1;
                return Char::Gap;
            }
        }
        if now.saturating_sub(self.last_non_idle_tx) >= self.cfg.heartbeat {
            // Carrier sense: GAP is harmless between packets; inside a (blocked) packet
            // repeat the flow-control state instead, which is as harmless.
            return if in_packet {
                if self.slack.is_stopped() {
                    Char::Stop
                } else {
                    Char::Go
                }
            } else {
                Char::Gap
            };
        }
        Char::Idle
    }

    pub fn poll_event(&mut self) -> Option<ClassicEvent> {
        self.events.pop_front()
    }

    /// Next item of the receive stream; a byte read frees its slack-buffer slot.
    pub fn read(&mut self) -> Option<ClassicRx> {
        let item = self.rx.pop_front()?;
        if let ClassicRx::Byte(_) = item {
            self.slack.depart();
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_round_trip_and_idle_is_all_zeros() {
        assert_eq!(Char::Idle.bits(), 0);
        for c in (0..=255).map(Char::Data).chain([
            Char::Idle,
            Char::Stop,
            Char::Go,
            Char::Gap,
            Char::Fres,
        ]) {
            assert_eq!(Char::from_bits(c.bits()), Ok(c));
            assert!(c.bits() < 0x200);
        }
        assert!(Char::from_bits(0x001).is_err());
        assert!(Char::from_bits(0x200).is_err());
        // Control codes are 4 bits apart.
        let ctl = [STOP, GO, GAP, FRES];
        for a in ctl {
            for b in ctl {
                assert!(a == b || (a ^ b).count_ones() == 4);
            }
        }
    }
}

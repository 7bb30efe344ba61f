//! A Myrinet-2000 port: sender, receiver and synchronization state machine together.
//!
//! The port is driven from outside, sans-IO:
//!
//! * [`Port::handle_receive`] takes a code-group off the wire, at the *remote* clock; it
//!   goes into the [elastic FIFO](crate::elastic).
//! * [`Port::tick`] is one period of the *local* clock (4 ns nominal): the receiver takes
//!   one code-group from the FIFO, the timers run, and the sender returns one code-group.
//! * The send data stream is [`Port::send`] (or [`Port::write`] + [`Port::finish`]); the
//!   receive data stream is [`Port::read`] / [`Port::recv_packet`]. Bytes waiting in the
//!   receive stream sit in the slack buffer: when the consumer does not read, STOP goes
//!   out on the reverse channel, and GO when it drains.
//!
//! Time only ever comes in as arguments. The port never blocks and never allocates per
//! code-group (a received packet is one allocation, when it is read).

use crate::code::CodeGroup;
use crate::elastic::{ElasticConfig, ElasticFifo};
use crate::framing::{Extras, Framer, Pair};
use crate::slack::{BadWatermarks, SlackBuffer};
use crate::symbol::{Control, LinkError, SymbolDecoder, SymbolEncoder, Unit};
use crate::sync::{RxAction, State, SyncMachine, Transition, TxAction};
use crate::{Picos, US};
use std::collections::VecDeque;

/// Nominal code-group period: 4 ns.
pub const CODE_GROUP_PERIOD: Picos = Picos(4_000);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// Emit BEAT and watch for the remote's.
    pub beat: bool,
    /// BEAT period: 10 µs, within the specification's ±10 %.
    pub beat_interval: Picos,
    /// Missing-BEAT report after this long without one: 25 µs.
    pub beat_timeout: Picos,
    /// A BEAT or IDLE goes out at least this often, even inside a packet: below 25 µs so
    /// the remote's elastic FIFO always has something to drop or repeat.
    pub fill_interval: Picos,
    /// Receive slack buffer: capacity, STOP and GO watermarks, in bytes.
    pub slack: (usize, usize, usize),
    pub elastic: ElasticConfig,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            beat: false,
            beat_interval: 10 * US,
            beat_timeout: 25 * US,
            fill_interval: 20 * US,
            // The 200 m fibre plan of `SlackPlan::for_cable` (650 B in flight).
            slack: (2448, 1424, 1024),
            elastic: ElasticConfig::default(),
        }
    }
}

/// Something the port wants its owner to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    State(Transition),
    /// No BEAT for [`PortConfig::beat_timeout`].
    MissingBeat,
    BeatRestored,
}

/// One item of the receive data stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxItem {
    Byte(u8),
    /// End of packet; `clean` is false if a code-group error hit it.
    End {
        clean: bool,
    },
    /// The packet was cut off: the port left RX_GO mid-packet.
    Terminated,
}

/// A packet read whole from the receive stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    Packet(Vec<u8>),
    /// Ended, but a code-group error hit it (its bytes as far as they were recovered).
    Damaged(Vec<u8>),
    Terminated(Vec<u8>),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    pub cg_sent: u64,
    pub cg_received: u64,
    pub packets_received: u64,
    pub packets_terminated: u64,
    pub code_errors: u64,
    pub last_error: Option<LinkError>,
    pub undefined_controls: u64,
    pub rx_bytes_dropped: u64,
    pub stop_sent: u64,
    pub go_sent: u64,
    pub stop_received: u64,
    pub go_received: u64,
    pub beats_sent: u64,
    pub beats_received: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("a Myrinet packet has at least one byte")]
    Empty,
}

#[derive(Debug)]
pub struct Port {
    cfg: PortConfig,
    sync: SyncMachine,
    enc: SymbolEncoder,
    dec: SymbolDecoder,
    fifo: ElasticFifo,
    framer: Framer,
    tx_second: Option<CodeGroup>,
    stopped_by_remote: bool,
    rx: VecDeque<RxItem>,
    assembly: Vec<u8>,
    rx_in_packet: bool,
    rx_damaged: bool,
    slack: SlackBuffer,
    last_beat_tx: Picos,
    last_fill_tx: Picos,
    last_beat_rx: Option<Picos>,
    beat_missing: bool,
    events: VecDeque<Event>,
    pub stats: PortStats,
}

impl Port {
    /// A port just out of reset.
    pub fn new(cfg: PortConfig) -> Result<Port, BadWatermarks> {
        let (c, s, g) = cfg.slack;
        Ok(Port {
            cfg,
            sync: SyncMachine::new(),
            enc: SymbolEncoder::new(),
            dec: SymbolDecoder::new(),
            fifo: ElasticFifo::new(cfg.elastic),
            framer: Framer::new(),
            tx_second: None,
            stopped_by_remote: false,
            rx: VecDeque::new(),
            assembly: Vec::new(),
            rx_in_packet: false,
            rx_damaged: false,
            slack: SlackBuffer::new(c, s, g)?,
            last_beat_tx: Picos::ZERO,
            last_fill_tx: Picos::ZERO,
            last_beat_rx: None,
            beat_missing: false,
            events: VecDeque::new(),
            stats: PortStats::default(),
        })
    }

    pub fn config(&self) -> &PortConfig {
        &self.cfg
    }
    pub fn state(&self) -> State {
        self.sync.state()
    }
    pub fn tx_action(&self) -> TxAction {
        self.sync.state().tx_action(self.stopped_by_remote)
    }
    pub fn slack(&self) -> &SlackBuffer {
        &self.slack
    }
    pub fn elastic(&self) -> &ElasticFifo {
        &self.fifo
    }
    pub fn framer(&self) -> &Framer {
        &self.framer
    }

    /// Resets the port: the sync machine goes to LOST, the receiver and FIFO are cleared,
    /// the packet being sent and the packet being received are cut off.
    pub fn reset(&mut self) {
        if let Some(t) = self.sync.reset() {
            self.transition(t);
        }
        self.dec = SymbolDecoder::new();
        self.fifo.clear();
        self.stopped_by_remote = false;
    }

    /// Queues a whole packet on the send data stream.
    pub fn send(&mut self, packet: &[u8]) -> Result<(), SendError> {
        if packet.is_empty() {
            return Err(SendError::Empty);
        }
        self.framer.push_packet(packet.to_vec());
        Ok(())
    }

    /// Writes part of a packet, for a source slower than the link.
    pub fn write(&mut self, bytes: &[u8]) {
        self.framer.write(bytes);
    }
    /// Ends the packet being written.
    pub fn finish(&mut self) {
        self.framer.finish();
    }

    /// A code-group from the wire, at the remote's clock.
    pub fn handle_receive(&mut self, cg: CodeGroup) {
        self.fifo.push(cg);
    }

    /// One local code-group period starting at `now`: receive one, send one.
    pub fn tick(&mut self, now: Picos) -> CodeGroup {
        if let Some(cg) = self.fifo.pop() {
            self.receive(now, cg);
        }
        self.check_beat(now);
        self.stats.cg_sent += 1;
        if let Some(cg) = self.tx_second.take() {
            return cg;
        }
        let action = self.tx_action();
        let active = matches!(action, TxAction::Go | TxAction::Stop | TxAction::Regain);
        let mut x = Extras::default();
        if active {
            x.flow = self.slack.take_request();
            if self.cfg.beat && now.saturating_sub(self.last_beat_tx) >= self.cfg.beat_interval {
                x.keepalive = Some(Control::Beat);
            } else if now.saturating_sub(self.last_fill_tx) >= self.cfg.fill_interval {
                x.keepalive = Some(Control::Idle);
            }
        }
        let pair = self.framer.next_pair(action, x);
        // A symbol chosen over the keepalive leaves it due; only count what went out.
        let sent = |c| pair == Pair::Ctl(c);
        if sent(Control::Beat) {
            self.last_beat_tx = now;
            self.stats.beats_sent += 1;
        }
        if sent(Control::Idle) || sent(Control::Beat) {
            self.last_fill_tx = now;
        }
        if let Some(f) = x.flow {
            if sent(f) {
                match f {
                    Control::Stop => self.stats.stop_sent += 1,
                    _ => self.stats.go_sent += 1,
                }
            }
        }
        let mut out = [CodeGroup::default(); 2];
        let mut n = 0;
        let units = match pair {
            Pair::Ctl(c) => [Some(Unit::Ctl(c)), None],
            Pair::Two(a, b) => [Some(a), Some(b)],
        };
        for u in units.into_iter().flatten() {
            self.enc.encode(u, |cg, _, _| {
                out[n] = cg;
                n += 1;
            });
        }
        self.tx_second = Some(out[1]);
        out[0]
    }

    fn check_beat(&mut self, now: Picos) {
        if !self.cfg.beat || self.sync.state() != State::InSync {
            return;
        }
        let last = *self.last_beat_rx.get_or_insert(now);
        if !self.beat_missing && now.saturating_sub(last) > self.cfg.beat_timeout {
            self.beat_missing = true;
            self.events.push_back(Event::MissingBeat);
        }
    }

    fn receive(&mut self, now: Picos, cg: CodeGroup) {
        self.stats.cg_received += 1;
        self.dec.hunting = self.sync.state() == State::Lost;
        let step = self.dec.push(cg);
        if step.error {
            self.stats.code_errors += 1;
            if let Some(Err(e)) = step.unit {
                self.stats.last_error = Some(e);
            }
        }
        if let Some(t) = self.sync.on_code_group(step.error) {
            self.transition(t);
        }
        let go = self.sync.state().rx_action() == RxAction::Go;
        match step.unit {
            Some(Ok(Unit::Data(d))) if go => self.deliver(d),
            Some(Ok(Unit::Data(_))) => self.stats.rx_bytes_dropped += 1,
            Some(Ok(Unit::Ctl(Control::Gap))) if self.rx_in_packet => {
                self.end_packet(RxItem::End {
                    clean: !self.rx_damaged,
                });
            }
            Some(Ok(Unit::Ctl(Control::Gap))) => {}
            Some(Ok(Unit::Ctl(c))) => self.control(now, c),
            Some(Err(LinkError::UndefinedControl(_))) => self.stats.undefined_controls += 1,
            Some(Err(LinkError::Code(crate::code::CodeError::Disparity(
                crate::code::Octet::D(d),
            )))) if go => {
                // The byte is known; the packet is still marked damaged.
                self.rx_damaged = true;
                self.deliver(d);
            }
            Some(Err(_)) => self.rx_damaged |= self.rx_in_packet,
            None => {}
        }
        if step.pair_done {
            if let Some(t) = self.sync.on_pair(step.pair_comma, step.pair_lost) {
                self.transition(t);
            }
        }
    }

    fn deliver(&mut self, d: u8) {
        if !self.rx_in_packet {
            self.rx_in_packet = true;
            self.rx_damaged = false;
        }
        if self.slack.arrive() {
            self.rx.push_back(RxItem::Byte(d));
        } else {
            self.rx_damaged = true;
        }
    }

    fn end_packet(&mut self, item: RxItem) {
        self.rx_in_packet = false;
        self.rx.push_back(item);
        match item {
            RxItem::Terminated => self.stats.packets_terminated += 1,
            _ => self.stats.packets_received += 1,
        }
    }

    fn control(&mut self, now: Picos, c: Control) {
        match c {
            Control::Stop => {
                self.stats.stop_received += 1;
                self.stopped_by_remote = true;
            }
            Control::Go => {
                self.stats.go_received += 1;
                self.stopped_by_remote = false;
            }
            Control::Beat => {
                self.stats.beats_received += 1;
                self.last_beat_rx = Some(now);
                if std::mem::take(&mut self.beat_missing) {
                    self.events.push_back(Event::BeatRestored);
                }
            }
            Control::Lost | Control::Sync | Control::Idle | Control::Ilgl | Control::Gap => {}
        }
    }

    fn transition(&mut self, t: Transition) {
        self.events.push_back(Event::State(t));
        if t.from.rx_action() == RxAction::Go && self.rx_in_packet {
            self.end_packet(RxItem::Terminated);
        }
        match t.to {
            State::Lost => {
                self.stopped_by_remote = false;
                self.last_beat_rx = None;
                self.beat_missing = false;
            }
            State::InSync => {
                self.framer.enter_go();
                self.stopped_by_remote = false;
            }
            State::Sync | State::Regain => {}
        }
        if matches!(t.to, State::Regain | State::InSync) {
            // Tell the remote where our receive buffer stands, whatever it heard before.
            self.slack.reannounce();
        }
    }

    /// Next state change or BEAT report.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Next item of the receive data stream; reading a byte frees its slack-buffer slot.
    pub fn read(&mut self) -> Option<RxItem> {
        let item = self.rx.pop_front()?;
        if let RxItem::Byte(_) = item {
            self.slack.depart();
        }
        Some(item)
    }

    /// Bytes waiting in the receive stream (the slack buffer's level).
    pub fn rx_level(&self) -> usize {
        self.slack.level()
    }

    /// Moves whatever has arrived into the packet being assembled (freeing its slack, as
    /// a DMA engine draining the receive stream would) and returns the packet once it
    /// has ended.
    pub fn recv_packet(&mut self) -> Option<Received> {
        while let Some(item) = self.read() {
            let data = std::mem::take(&mut self.assembly);
            match item {
                RxItem::Byte(b) => {
                    self.assembly = data;
                    self.assembly.push(b);
                }
                RxItem::End { clean: true } => return Some(Received::Packet(data)),
                RxItem::End { clean: false } => return Some(Received::Damaged(data)),
                RxItem::Terminated => return Some(Received::Terminated(data)),
            }
        }
        None
    }
}

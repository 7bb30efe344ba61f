//! Packets as code-group pairs: what a Myrinet-2000 sender puts on the line next.
//!
//! Data travels two bytes to a pair. A packet of odd length ends with one GAP (sharing a
//! pair with its last byte), one of even length with two; between packets the line
//! carries GAP pairs. Control symbols take a whole pair, so they can only appear between
//! pairs of data, within packets or between them. When the source has no byte ready in
//! the middle of a packet the sender fills with IDLE.
//!
//! The [`Framer`] holds the send data stream and chooses the next pair given the sync
//! machine's TX action; it never encodes code-groups (see [`crate::symbol`]).

use crate::symbol::{Control, Unit};
use crate::sync::TxAction;
use std::collections::VecDeque;

/// What one pair carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pair {
    /// A control symbol (COMMA + data code-group).
    Ctl(Control),
    /// Two single code-groups: data bytes and/or GAPs.
    Two(Unit, Unit),
}

impl Pair {
    pub const GAPS: Pair = Pair::Two(Unit::GAP, Unit::GAP);
}

#[derive(Debug)]
struct TxPacket {
    data: Vec<u8>,
    /// The source has written the whole packet.
    complete: bool,
}

/// Symbols the port wants on the line besides data, in priority order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras {
    /// STOP or GO from the local slack buffer.
    pub flow: Option<Control>,
    /// BEAT or IDLE that a timer says is due.
    pub keepalive: Option<Control>,
}

/// The send data stream and the position in its front packet.
#[derive(Debug, Default)]
pub struct Framer {
    queue: VecDeque<TxPacket>,
    cursor: usize,
    in_packet: bool,
    end_owed: bool,
    gap_owed: bool,
    /// Packets dropped because the port was not in sync.
    pub dropped: u64,
    /// Packets whose last byte has been framed.
    pub sent: u64,
}

impl Framer {
    pub fn new() -> Self {
        Framer::default()
    }

    /// Queues a whole packet.
    pub fn push_packet(&mut self, data: Vec<u8>) {
        self.queue.push_back(TxPacket {
            data,
            complete: true,
        });
    }

    /// Appends bytes to the packet the source is writing (opening one if needed); the
    /// packet ends at [`Self::finish`]. Models a source slower than the link.
    pub fn write(&mut self, bytes: &[u8]) {
        match self.queue.back_mut() {
            Some(p) if !p.complete => p.data.extend_from_slice(bytes),
            _ => self.queue.push_back(TxPacket {
                data: bytes.to_vec(),
                complete: false,
            }),
        }
    }

    /// Ends the packet being written.
    pub fn finish(&mut self) {
        if let Some(p) = self.queue.back_mut() {
            p.complete = true;
        }
    }

    /// Packets queued, including one in progress.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn in_packet(&self) -> bool {
        self.in_packet
    }

    fn drop_front(&mut self) {
        if self.queue.pop_front().is_some() {
            self.dropped += 1;
        }
        self.cursor = 0;
        self.in_packet = false;
        self.end_owed = false;
    }

    /// Drops everything the source has handed over (TX_LOST, TX_SYNC, TX_REGAIN).
    fn drop_arriving(&mut self) {
        while !self.queue.is_empty() {
            self.drop_front();
        }
    }

    /// The TX action became GO or STOP from REGAIN: drop the packet in progress and owe
    /// the line a GAP.
    pub fn enter_go(&mut self) {
        if self.in_packet || self.queue.front().is_some_and(|p| !p.complete) {
            self.drop_front();
        }
        self.gap_owed = true;
    }

    /// The next pair to send.
    pub fn next_pair(&mut self, action: TxAction, x: Extras) -> Pair {
        match action {
            TxAction::Lost => {
                self.drop_arriving();
                Pair::Ctl(Control::Lost)
            }
            TxAction::Sync => {
                self.drop_arriving();
                Pair::Ctl(Control::Sync)
            }
            TxAction::Regain => {
                self.drop_arriving();
                Pair::Ctl(x.flow.or(x.keepalive).unwrap_or(Control::Idle))
            }
            TxAction::Go | TxAction::Stop => {
                if std::mem::take(&mut self.gap_owed) {
                    return Pair::GAPS;
                }
                if let Some(c) = x.flow.or(x.keepalive) {
                    return Pair::Ctl(c);
                }
                if action == TxAction::Stop {
                    return if self.in_packet {
                        Pair::Ctl(Control::Idle)
                    } else {
                        Pair::GAPS
                    };
                }
                self.data_pair()
            }
        }
    }

    fn data_pair(&mut self) -> Pair {
        if std::mem::take(&mut self.end_owed) {
            // An even-length packet's last pair has gone: its two GAPs follow.
            self.finish_front();
            return Pair::GAPS;
        }
        let Some(p) = self.queue.front() else {
            return Pair::GAPS;
        };
        let (c, len) = (self.cursor, p.data.len());
        if len - c >= 2 {
            let pair = Pair::Two(Unit::Data(p.data[c]), Unit::Data(p.data[c + 1]));
            self.cursor += 2;
            self.in_packet = true;
            self.end_owed = p.complete && self.cursor == len;
            return pair;
        }
        if !p.complete {
            // The source is slower than the link: hold the odd byte, fill with IDLE.
            return if self.in_packet {
                Pair::Ctl(Control::Idle)
            } else {
                Pair::GAPS
            };
        }
        let pair = if len - c == 1 {
            Pair::Two(Unit::Data(p.data[c]), Unit::GAP)
        } else {
            Pair::GAPS
        };
        self.finish_front();
        pair
    }

    fn finish_front(&mut self) {
        self.queue.pop_front();
        self.cursor = 0;
        self.in_packet = false;
        self.sent += 1;
    }
}

/// One finding of [`decode_stream`], with the position of the code-group it ends at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A packet, from the code-group of its first byte; `damaged` if an error was found
    /// inside it (its bytes are those that could be recovered).
    Packet {
        start: usize,
        bytes: Vec<u8>,
        damaged: bool,
    },
    Control {
        at: usize,
        symbol: Control,
    },
    Error {
        at: usize,
        error: crate::symbol::LinkError,
    },
    /// The stream ended inside a packet, or in the middle of a pair.
    Truncated {
        at: usize,
        bytes_in_packet: usize,
    },
}

/// Decodes a recorded code-group stream (aligned to a pair boundary at its start, running
/// disparity taken from the first code-group) into packets, control symbols and errors.
/// For test vectors and the `myrix link decode` command; a live port uses
/// [`crate::port::Port`].
pub fn decode_stream(cgs: &[crate::code::CodeGroup]) -> Vec<Found> {
    let mut dec = crate::symbol::SymbolDecoder::new();
    let mut out = Vec::new();
    let mut cur: Option<(usize, Vec<u8>, bool)> = None;
    for (i, &cg) in cgs.iter().enumerate() {
        match dec.push(cg).unit {
            Some(Ok(Unit::Data(d))) => cur.get_or_insert_with(|| (i, Vec::new(), false)).1.push(d),
            Some(Ok(Unit::Ctl(Control::Gap))) => {
                if let Some((start, bytes, damaged)) = cur.take() {
                    out.push(Found::Packet {
                        start,
                        bytes,
                        damaged,
                    });
                }
            }
            Some(Ok(Unit::Ctl(symbol))) => out.push(Found::Control { at: i - 1, symbol }),
            Some(Err(error)) => {
                if let Some(c) = cur.as_mut() {
                    c.2 = true;
                }
                out.push(Found::Error { at: i, error })
            }
            None => {}
        }
    }
    if let Some((_, bytes, _)) = cur {
        out.push(Found::Truncated {
            at: cgs.len(),
            bytes_in_packet: bytes.len(),
        });
    } else if cgs.len() % 2 == 1 {
        out.push(Found::Truncated {
            at: cgs.len(),
            bytes_in_packet: 0,
        });
    }
    out
}

/// The units of one framed packet: its bytes, then one GAP (odd length) or two (even).
pub fn frame_packet(bytes: &[u8]) -> impl Iterator<Item = Unit> + '_ {
    let gaps = if bytes.len() % 2 == 1 { 1 } else { 2 };
    bytes
        .iter()
        .map(|&b| Unit::Data(b))
        .chain(std::iter::repeat_n(Unit::GAP, gaps))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(f: &mut Framer, action: TxAction, n: usize) -> Vec<Pair> {
        (0..n)
            .map(|_| f.next_pair(action, Extras::default()))
            .collect()
    }

    const D: fn(u8) -> Unit = Unit::Data;

    #[test]
    fn odd_packets_end_with_one_gap_even_with_two_then_gap_fill() {
        let mut f = Framer::new();
        f.push_packet(vec![1, 2, 3]);
        f.push_packet(vec![4, 5]);
        assert_eq!(
            pairs(&mut f, TxAction::Go, 5),
            [
                Pair::Two(D(1), D(2)),
                Pair::Two(D(3), Unit::GAP),
                Pair::Two(D(4), D(5)),
                Pair::GAPS,
                Pair::GAPS, // redundant GAPs between packets
            ]
        );
        assert_eq!(f.sent, 2);
    }

    #[test]
    fn stop_and_go_go_out_inside_a_packet_and_stop_action_fills_with_idle() {
        let mut f = Framer::new();
        f.push_packet(vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(
            f.next_pair(TxAction::Go, Extras::default()),
            Pair::Two(D(1), D(2))
        );
        let flow = Extras {
            flow: Some(Control::Stop),
            keepalive: None,
        };
        assert_eq!(f.next_pair(TxAction::Go, flow), Pair::Ctl(Control::Stop));
        // The remote said STOP: mid-packet the sender holds and sends IDLE.
        assert_eq!(
            pairs(&mut f, TxAction::Stop, 2),
            [Pair::Ctl(Control::Idle); 2]
        );
        let go = Extras {
            flow: Some(Control::Go),
            keepalive: None,
        };
        assert_eq!(f.next_pair(TxAction::Stop, go), Pair::Ctl(Control::Go));
        assert_eq!(
            pairs(&mut f, TxAction::Go, 3),
            [Pair::Two(D(3), D(4)), Pair::Two(D(5), D(6)), Pair::GAPS]
        );
        // Between packets a stopped sender sends GAPs.
        f.push_packet(vec![7]);
        assert_eq!(f.next_pair(TxAction::Stop, Extras::default()), Pair::GAPS);
    }

    #[test]
    fn a_slow_source_holds_the_odd_byte_and_fills_with_idle() {
        let mut f = Framer::new();
        f.write(&[1, 2, 3]);
        assert_eq!(
            f.next_pair(TxAction::Go, Extras::default()),
            Pair::Two(D(1), D(2))
        );
        assert_eq!(
            f.next_pair(TxAction::Go, Extras::default()),
            Pair::Ctl(Control::Idle)
        );
        f.write(&[4]);
        assert_eq!(
            f.next_pair(TxAction::Go, Extras::default()),
            Pair::Two(D(3), D(4))
        );
        f.finish();
        assert_eq!(f.next_pair(TxAction::Go, Extras::default()), Pair::GAPS);
        assert_eq!(f.sent, 1);
    }

    #[test]
    fn not_in_sync_drops_the_send_stream_and_regain_to_go_owes_a_gap() {
        let mut f = Framer::new();
        f.push_packet(vec![1, 2, 3]);
        assert_eq!(
            f.next_pair(TxAction::Lost, Extras::default()),
            Pair::Ctl(Control::Lost)
        );
        assert_eq!(
            f.next_pair(TxAction::Sync, Extras::default()),
            Pair::Ctl(Control::Sync)
        );
        assert_eq!(f.dropped, 1);
        // TX_REGAIN drops what the source writes; the packet still arriving when the
        // action becomes GO is dropped too, and a GAP goes out first.
        f.write(&[9, 9]);
        assert_eq!(
            f.next_pair(TxAction::Regain, Extras::default()),
            Pair::Ctl(Control::Idle)
        );
        assert_eq!(f.dropped, 2);
        f.write(&[8, 8]);
        f.enter_go();
        assert_eq!(f.next_pair(TxAction::Go, Extras::default()), Pair::GAPS);
        assert_eq!(f.dropped, 3);
        f.push_packet(vec![5]);
        assert_eq!(
            f.next_pair(TxAction::Go, Extras::default()),
            Pair::Two(D(5), Unit::GAP)
        );
    }

    #[test]
    fn decode_stream_reports_truncation() {
        let mut enc = crate::symbol::SymbolEncoder::new();
        let mut cgs = Vec::new();
        for u in [D(1), D(2), D(3)] {
            enc.encode(u, |cg, _, _| cgs.push(cg));
        }
        assert_eq!(
            decode_stream(&cgs),
            [Found::Truncated {
                at: 3,
                bytes_in_packet: 3
            }]
        );
    }
}

//! Myrinet-2000 control symbols and the code-group pairs that carry them.
//!
//! Every control symbol except GAP is a COMMA (K28.5) followed by a data code-group; GAP
//! is K29.7 alone. The line always carries code-group *pairs*: a COMMA only ever opens a
//! pair. This module turns [`Unit`]s (a data byte, a GAP, a control symbol) into
//! code-groups and back, tracks pair alignment, and classifies the errors the port's
//! synchronization machine counts. It never decides what to send: see [`crate::framing`].

use crate::code::{self, CodeError, CodeGroup, Octet, Rd, K28_5, K29_7};
use core::fmt;

/// A Myrinet-2000 control symbol (ANSI/VITA 26-1998 §6.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Control {
    /// This port's receiver has lost synchronization. K28.5 D5.1.
    Lost,
    /// Sent by a port in sync to a port that is not. K28.5 D5.6.
    Sync,
    /// Packet delimiter. K29.7 alone.
    Gap,
    /// Stop sending data. K28.5 D4.1.
    Stop,
    /// Resume sending data. K28.5 D4.6.
    Go,
    /// Optional link-continuity heartbeat. K28.5 D10.4.
    Beat,
    /// Filler within packets; clock-compensation slack. K28.5 D21.4.
    Idle,
    /// Emitted by repeaters for an undefined control character. K28.5 D16.1.
    Ilgl,
}

impl Control {
    pub const ALL: [Control; 8] = [
        Control::Lost,
        Control::Sync,
        Control::Gap,
        Control::Stop,
        Control::Go,
        Control::Beat,
        Control::Idle,
        Control::Ilgl,
    ];

    /// The data octet that follows the COMMA; `None` for GAP.
    pub const fn second(self) -> Option<u8> {
        // Octet = y << 5 | x for Dx.y.
        match self {
            Control::Lost => Some(1 << 5 | 5),
            Control::Sync => Some(6 << 5 | 5),
            Control::Gap => None,
            Control::Stop => Some(1 << 5 | 4),
            Control::Go => Some(6 << 5 | 4),
            Control::Beat => Some(4 << 5 | 10),
            Control::Idle => Some(4 << 5 | 21),
            Control::Ilgl => Some(1 << 5 | 16),
        }
    }

    pub fn from_second(d: u8) -> Option<Control> {
        Control::ALL.into_iter().find(|c| c.second() == Some(d))
    }

    pub const fn name(self) -> &'static str {
        match self {
            Control::Lost => "LOST",
            Control::Sync => "SYNC",
            Control::Gap => "GAP",
            Control::Stop => "STOP",
            Control::Go => "GO",
            Control::Beat => "BEAT",
            Control::Idle => "IDLE",
            Control::Ilgl => "ILGL",
        }
    }

    /// Code-groups this symbol occupies on the line.
    pub const fn width(self) -> usize {
        match self {
            Control::Gap => 1,
            _ => 2,
        }
    }
}

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One thing on the line: a data byte, or a control symbol (GAP included).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Unit {
    Data(u8),
    Ctl(Control),
}

impl Unit {
    pub const GAP: Unit = Unit::Ctl(Control::Gap);
}

/// A code-group-level error, as the synchronization machine counts them.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{0}")]
    Code(CodeError),
    /// A valid special code-group Myrinet does not use (anything but K28.5 and K29.7).
    #[error("unused special code-group {0}")]
    UnusedSpecial(Octet),
    /// A COMMA in the second position of a pair.
    #[error("unaligned COMMA")]
    UnalignedComma,
    /// COMMA followed by a data code-group that names no control symbol.
    #[error("undefined control symbol K28.5 {0}")]
    UndefinedControl(Octet),
}

/// Turns units into code-groups, keeping running disparity and pair alignment.
#[derive(Clone, Debug)]
pub struct SymbolEncoder {
    rd: Rd,
    odd: bool,
}

impl Default for SymbolEncoder {
    fn default() -> Self {
        SymbolEncoder::new()
    }
}

impl SymbolEncoder {
    pub const fn new() -> Self {
        SymbolEncoder {
            rd: Rd::Neg,
            odd: false,
        }
    }
    pub fn rd(&self) -> Rd {
        self.rd
    }
    /// True when the next code-group opens a pair.
    pub fn at_pair_start(&self) -> bool {
        !self.odd
    }

    fn put(&mut self, o: Octet) -> CodeGroup {
        let (cg, rd) = code::encode(o, self.rd).expect("only K28.5 and K29.7 are sent");
        self.rd = rd;
        self.odd = !self.odd;
        cg
    }

    /// Encodes one unit: one code-group for data and GAP, two for the others. `out` gets
    /// each code-group, the octet it encodes and the running disparity after it.
    ///
    /// # Panics
    /// If a two-code-group symbol would start in the second half of a pair: framing
    /// upstream guarantees it never does, and a COMMA there would break the link.
    pub fn encode(&mut self, u: Unit, mut out: impl FnMut(CodeGroup, Octet, Rd)) {
        match u {
            Unit::Data(d) => {
                let o = Octet::D(d);
                out(self.put(o), o, self.rd);
            }
            Unit::Ctl(Control::Gap) => {
                let o = Octet::K(K29_7);
                out(self.put(o), o, self.rd);
            }
            Unit::Ctl(c) => {
                assert!(!self.odd, "{c} must open a code-group pair");
                let k = Octet::K(K28_5);
                out(self.put(k), k, self.rd);
                let d = Octet::D(c.second().unwrap_or(0));
                out(self.put(d), d, self.rd);
            }
        }
    }
}

/// What the decoder made of one received code-group.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct RxStep {
    /// A unit completed by this code-group, or an error.
    pub unit: Option<Result<Unit, LinkError>>,
    /// This code-group was an error in the sense of `local_sync_lost`.
    pub error: bool,
    /// This code-group closed a pair; then `pair_comma` and `pair_lost` describe it.
    pub pair_done: bool,
    /// The pair just closed opened with a COMMA.
    pub pair_comma: bool,
    /// The pair just closed was a LOST symbol.
    pub pair_lost: bool,
}

/// Turns received code-groups into units, tracking running disparity and pair alignment.
///
/// While `hunting` (the port is out of sync), a COMMA seen in the second position moves
/// the pair boundary to it instead of counting as an error: that is how the receiver
/// finds even/odd alignment.
#[derive(Clone, Debug, Default)]
pub struct SymbolDecoder {
    rd: Option<Rd>,
    odd: bool,
    comma_open: bool,
    pair_comma: bool,
    pub hunting: bool,
}

impl SymbolDecoder {
    pub fn new() -> Self {
        SymbolDecoder::default()
    }

    pub fn push(&mut self, cg: CodeGroup) -> RxStep {
        // The first code-group after reset sets the disparity rather than being judged by it.
        let rd = self.rd.unwrap_or(match code::decode(cg, Rd::Neg).0 {
            Err(CodeError::Disparity(_)) => Rd::Pos,
            _ => Rd::Neg,
        });
        let (res, next) = code::decode(cg, rd);
        self.rd = Some(next);
        let mut step = RxStep::default();

        let is_comma = res == Ok(Octet::K(K28_5));
        if is_comma && self.odd {
            if self.hunting {
                self.odd = false; // realign: this COMMA opens a pair
                self.pair_comma = false;
            } else {
                step.error = true;
                step.unit = Some(Err(LinkError::UnalignedComma));
                self.comma_open = false;
                self.close_half(&mut step);
                return step;
            }
        }
        let unit = if !self.odd {
            self.pair_comma = is_comma;
            self.comma_open = is_comma;
            match res {
                Ok(Octet::K(K28_5)) => None,
                r => Some(self.single(r)),
            }
        } else if self.comma_open {
            self.comma_open = false;
            Some(match res {
                Ok(Octet::D(d)) => match Control::from_second(d) {
                    Some(c) => Ok(Unit::Ctl(c)),
                    None => Err(LinkError::UndefinedControl(Octet::D(d))),
                },
                Ok(k @ Octet::K(_)) => Err(LinkError::UnusedSpecial(k)),
                Err(e) => Err(LinkError::Code(e)),
            })
        } else {
            Some(self.single(res))
        };
        if let Some(Err(e)) = unit {
            // Undefined control symbols are reported but are not code-group errors.
            step.error = !matches!(e, LinkError::UndefinedControl(_));
        }
        step.unit = unit;
        self.close_half(&mut step);
        step
    }

    fn close_half(&mut self, step: &mut RxStep) {
        if self.odd {
            step.pair_done = true;
            step.pair_comma = self.pair_comma;
            step.pair_lost = step.pair_comma && step.unit == Some(Ok(Unit::Ctl(Control::Lost)));
        }
        self.odd = !self.odd;
    }

    fn single(&self, r: Result<Octet, CodeError>) -> Result<Unit, LinkError> {
        match r {
            Ok(Octet::D(d)) => Ok(Unit::Data(d)),
            Ok(Octet::K(K29_7)) => Ok(Unit::GAP),
            Ok(k @ Octet::K(_)) => Err(LinkError::UnusedSpecial(k)),
            Err(e) => Err(LinkError::Code(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(units: &[Unit]) -> Vec<Result<Unit, LinkError>> {
        let mut enc = SymbolEncoder::new();
        let mut dec = SymbolDecoder::new();
        let mut out = Vec::new();
        for &u in units {
            enc.encode(u, |cg, _, _| {
                if let Some(r) = dec.push(cg).unit {
                    out.push(r);
                }
            });
        }
        out
    }

    #[test]
    fn every_control_symbol_round_trips() {
        let units: Vec<Unit> = Control::ALL
            .iter()
            .flat_map(|&c| {
                if c == Control::Gap {
                    vec![Unit::GAP, Unit::GAP]
                } else {
                    vec![Unit::Ctl(c)]
                }
            })
            .collect();
        let got: Vec<Unit> = roundtrip(&units).into_iter().map(Result::unwrap).collect();
        assert_eq!(got, units);
    }

    #[test]
    fn seed_table_code_groups() {
        let names: Vec<(Control, &str)> = Control::ALL
            .iter()
            .filter_map(|&c| Some((c, Octet::D(c.second()?).to_string())))
            .map(|(c, s)| (c, Box::leak(s.into_boxed_str()) as &str))
            .collect();
        let expect = [
            (Control::Lost, "D5.1"),
            (Control::Sync, "D5.6"),
            (Control::Stop, "D4.1"),
            (Control::Go, "D4.6"),
            (Control::Beat, "D10.4"),
            (Control::Idle, "D21.4"),
            (Control::Ilgl, "D16.1"),
        ];
        assert_eq!(names, expect);
    }

    #[test]
    fn unaligned_comma_is_an_error_unless_hunting() {
        let mut enc = SymbolEncoder::new();
        let mut cgs = Vec::new();
        enc.encode(Unit::Data(7), |cg, _, _| cgs.push(cg));
        enc.encode(Unit::Data(9), |cg, _, _| cgs.push(cg));
        enc.encode(Unit::Ctl(Control::Idle), |cg, _, _| cgs.push(cg));
        // Drop the first code-group: the COMMA now arrives in the second position.
        let mut dec = SymbolDecoder::new();
        let steps: Vec<RxStep> = cgs[1..].iter().map(|&cg| dec.push(cg)).collect();
        assert_eq!(steps[1].unit, Some(Err(LinkError::UnalignedComma)));
        assert!(steps[1].error);
        let mut dec = SymbolDecoder {
            hunting: true,
            ..SymbolDecoder::new()
        };
        let steps: Vec<RxStep> = cgs[1..].iter().map(|&cg| dec.push(cg)).collect();
        assert_eq!(steps[2].unit, Some(Ok(Unit::Ctl(Control::Idle))));
        assert!(steps[2].pair_done && steps[2].pair_comma);
    }

    #[test]
    fn unused_special_is_an_error() {
        let mut dec = SymbolDecoder::new();
        let (cg, _) = code::encode(Octet::K(0x1c), Rd::Neg).unwrap(); // K28.0
        let s = dec.push(cg);
        assert!(s.error);
        assert_eq!(s.unit, Some(Err(LinkError::UnusedSpecial(Octet::K(0x1c)))));
    }
}

//! The 8b/10b transmission code of IEEE 802.3 §36.2.4, as Myrinet-2000 uses it.
//!
//! This module is the one place where octets become code-groups and back. It knows
//! nothing of Myrinet symbols, packets or ports (see [`crate::symbol`]).
//!
//! A [`CodeGroup`] holds the ten bits `abcdei fghj` with `a` in bit 9, so that reading the
//! number from most to least significant bit gives transmission order. The encoding tables
//! are built at compile time from the standard's 5b/6b and 3b/4b sub-block tables; the
//! tests check every result against a full table transcribed separately
//! (`tests/table36.txt`).
//!
//! Running disparity after a received code-group follows §36.2.4.4: it is computed from the
//! code-group's own bits (sub-block by sub-block), also for invalid code-groups, so one
//! error does not cascade into disparity errors.

use core::fmt;

/// Running disparity: the sign of the ones-minus-zeros balance of the line so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rd {
    /// RD−, the state after reset.
    Neg,
    /// RD+.
    Pos,
}

impl Rd {
    #[inline]
    const fn bit(self) -> u32 {
        match self {
            Rd::Neg => 0,
            Rd::Pos => 1,
        }
    }
    #[inline]
    const fn from_bit(b: u32) -> Rd {
        if b & 1 == 0 {
            Rd::Neg
        } else {
            Rd::Pos
        }
    }
    /// `-` or `+`, as the standard's tables write it.
    pub const fn sign(self) -> char {
        match self {
            Rd::Neg => '-',
            Rd::Pos => '+',
        }
    }
}

/// Ten transmitted bits, `a` in bit 9 … `j` in bit 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CodeGroup(u16);

impl CodeGroup {
    /// Keeps the low ten bits of `bits`.
    pub const fn new(bits: u16) -> CodeGroup {
        CodeGroup(bits & 0x3ff)
    }
    pub const fn bits(self) -> u16 {
        self.0
    }
    /// Flips bit `i` (0 = `j`, 9 = `a`): a bit error on the line.
    pub const fn flip(self, i: u32) -> CodeGroup {
        CodeGroup((self.0 ^ (1 << (i % 10))) & 0x3ff)
    }
    /// Parses `abcdeifghj` or `abcdei fghj`.
    pub fn parse(s: &str) -> Option<CodeGroup> {
        let mut v: u16 = 0;
        let mut n = 0;
        for (i, c) in s.chars().enumerate() {
            match c {
                '0' | '1' => {
                    v = (v << 1) | (c as u16 - '0' as u16);
                    n += 1;
                }
                ' ' if i == 6 && n == 6 => {}
                _ => return None,
            }
            if n > 10 {
                return None;
            }
        }
        (n == 10).then_some(CodeGroup(v))
    }
}

impl fmt::Display for CodeGroup {
    /// `abcdei fghj`, e.g. `001111 1010` for K28.5 at RD−.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:06b} {:04b}", self.0 >> 4, self.0 & 0xf)
    }
}

impl fmt::Debug for CodeGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodeGroup({self})")
    }
}

/// What a code-group stands for: a data octet `Dx.y` or a special octet `Kx.y`.
///
/// The octet is `HGF EDCBA`; `x` is `EDCBA` and `y` is `HGF`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Octet {
    D(u8),
    K(u8),
}

/// The twelve special code-groups of Table 36-2, as octets.
pub const SPECIALS: [u8; 12] = [
    0x1c, 0x3c, 0x5c, 0x7c, 0x9c, 0xbc, 0xdc, 0xfc, // K28.0 … K28.7
    0xf7, 0xfb, 0xfd, 0xfe, // K23.7 K27.7 K29.7 K30.7
];

/// K28.5, the COMMA.
pub const K28_5: u8 = 0xbc;
/// K29.7, Myrinet's GAP.
pub const K29_7: u8 = 0xfd;

impl fmt::Display for Octet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (c, v) = match *self {
            Octet::D(v) => ('D', v),
            Octet::K(v) => ('K', v),
        };
        write!(f, "{c}{}.{}", v & 0x1f, v >> 5)
    }
}

impl Octet {
    /// Parses `D21.5` or `K28.5`.
    pub fn parse(s: &str) -> Option<Octet> {
        let (kind, rest) = s.split_at_checked(1)?;
        let (x, y) = rest.split_once('.')?;
        let (x, y): (u8, u8) = (x.parse().ok()?, y.parse().ok()?);
        if x > 31 || y > 7 {
            return None;
        }
        let v = (y << 5) | x;
        match kind {
            "D" => Some(Octet::D(v)),
            "K" if SPECIALS.contains(&v) => Some(Octet::K(v)),
            _ => None,
        }
    }
}

/// Why a received code-group could not be taken at face value.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
pub enum CodeError {
    /// In neither column of the standard's tables.
    #[error("invalid code-group")]
    Invalid,
    /// A valid code-group, but from the column of the other running disparity. The
    /// octet it stands for is still reported.
    #[error("running-disparity error ({0})")]
    Disparity(Octet),
}

/// Asked to encode a `Kx.y` that is not one of the twelve special code-groups.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("K{}.{} is not a special code-group", .0 & 0x1f, .0 >> 5)]
pub struct NoSuchSpecial(pub u8);

// ---- tables -------------------------------------------------------------------------

// 5b/6b sub-block (EDCBA -> abcdei), [RD- column, RD+ column]; Table 36-1a/b.
const SIX: [[u8; 2]; 32] = [
    [0b100111, 0b011000], // D.0
    [0b011101, 0b100010],
    [0b101101, 0b010010],
    [0b110001, 0b110001],
    [0b110101, 0b001010],
    [0b101001, 0b101001],
    [0b011001, 0b011001],
    [0b111000, 0b000111], // D.7
    [0b111001, 0b000110],
    [0b100101, 0b100101],
    [0b010101, 0b010101],
    [0b110100, 0b110100],
    [0b001101, 0b001101],
    [0b101100, 0b101100],
    [0b011100, 0b011100],
    [0b010111, 0b101000], // D.15
    [0b011011, 0b100100],
    [0b100011, 0b100011],
    [0b010011, 0b010011],
    [0b110010, 0b110010],
    [0b001011, 0b001011],
    [0b101010, 0b101010],
    [0b011010, 0b011010],
    [0b111010, 0b000101], // D.23
    [0b110011, 0b001100],
    [0b100110, 0b100110],
    [0b010110, 0b010110],
    [0b110110, 0b001001],
    [0b001110, 0b001110],
    [0b101110, 0b010001],
    [0b011110, 0b100001],
    [0b101011, 0b010100], // D.31
];
const SIX_K28: [u8; 2] = [0b001111, 0b110000];

// 3b/4b sub-block (HGF -> fghj) for data, [RD-, RD+]; index 7 is the primary D.x.P7.
const FOUR_D: [[u8; 2]; 8] = [
    [0b1011, 0b0100],
    [0b1001, 0b1001],
    [0b0101, 0b0101],
    [0b1100, 0b0011],
    [0b1101, 0b0010],
    [0b1010, 0b1010],
    [0b0110, 0b0110],
    [0b1110, 0b0001],
];
// D.x.A7, used instead of P7 to avoid a run of five equal bits.
const FOUR_A7: [u8; 2] = [0b0111, 0b1000];
// 3b/4b for special code-groups, [RD-, RD+].
const FOUR_K: [[u8; 2]; 8] = [
    [0b1011, 0b0100],
    [0b0110, 0b1001],
    [0b1010, 0b0101],
    [0b1100, 0b0011],
    [0b1101, 0b0010],
    [0b0101, 0b1010],
    [0b1001, 0b0110],
    [0b0111, 0b1000],
];

/// Running disparity at the end of a sub-block of `n` bits (§36.2.4.4).
const fn sub_rd(bits: u32, n: u32, rd: u32) -> u32 {
    let ones = bits.count_ones();
    if ones * 2 > n {
        1
    } else if ones * 2 < n {
        0
    } else if (n == 6 && bits == 0b000111) || (n == 4 && bits == 0b0011) {
        1
    } else if (n == 6 && bits == 0b111000) || (n == 4 && bits == 0b1100) {
        0
    } else {
        rd
    }
}

/// Running disparity after code-group `cg` received at `rd`, from its bits alone.
const fn rd_after(cg: u32, rd: u32) -> u32 {
    let mid = sub_rd(cg >> 4, 6, rd);
    sub_rd(cg & 0xf, 4, mid)
}

const fn encode_raw(octet: u8, k: bool, rd: u32) -> u32 {
    let x = (octet & 0x1f) as usize;
    let y = (octet >> 5) as usize;
    let six = if k && x == 28 {
        SIX_K28[rd as usize]
    } else {
        SIX[x][rd as usize]
    } as u32;
    let mid = sub_rd(six, 6, rd) as usize;
    let four = if k {
        FOUR_K[y][mid]
    } else if y == 7
        && ((mid == 0 && (x == 17 || x == 18 || x == 20))
            || (mid == 1 && (x == 11 || x == 13 || x == 14)))
    {
        FOUR_A7[mid]
    } else {
        FOUR_D[y][mid]
    } as u32;
    (six << 4) | four
}

/// `ENC[octet]`: bits 0–9 the code-group at RD−, 16–25 at RD+, bit 31 set when the
/// code-group flips the running disparity (the same at either RD for 8b/10b). The bulk
/// encoder carries the disparity as the shift (0 or 16) that selects the column.
static ENC: [u32; 256] = build_enc();

const fn build_enc() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let n = encode_raw(i as u8, false, 0);
        let p = encode_raw(i as u8, false, 1);
        let flips = rd_after(n, 0);
        t[i] = n | (p << 16) | (flips << 31);
        i += 1;
    }
    t
}

// DEC entry bits.
const DEC_K: u16 = 1 << 8;
const DEC_VALID_NEG: u16 = 1 << 9; // shifted by rd: bit 9 + rd
const DEC_AFTER_NEG: u32 = 11; // bit 11 + rd = rd after, when received at rd

/// `DEC[code-group]`: bits 0–7 the octet, bit 8 K, bit 9/10 valid at RD−/RD+,
/// bit 11/12 the running disparity after it when received at RD−/RD+.
static DEC: [u16; 1024] = build_dec();

const fn build_dec() -> [u16; 1024] {
    let mut t = [0u16; 1024];
    let mut cg = 0;
    while cg < 1024 {
        t[cg] = ((rd_after(cg as u32, 0) << DEC_AFTER_NEG) | (rd_after(cg as u32, 1) << 12)) as u16;
        cg += 1;
    }
    let mut o = 0;
    while o < 256 {
        let mut rd = 0;
        while rd < 2 {
            let cg = encode_raw(o as u8, false, rd) as usize;
            t[cg] |= o as u16 | (DEC_VALID_NEG << rd);
            rd += 1;
        }
        o += 1;
    }
    let mut s = 0;
    while s < SPECIALS.len() {
        let mut rd = 0;
        while rd < 2 {
            let cg = encode_raw(SPECIALS[s], true, rd) as usize;
            t[cg] |= SPECIALS[s] as u16 | DEC_K | (DEC_VALID_NEG << rd);
            rd += 1;
        }
        s += 1;
    }
    t
}

/// `FAST[code-group]` for the data path: bits 0–7 the octet; bit 8/9 set when the
/// code-group is *not* a valid data code-group at RD−/RD+; bits 10 and 11 both set when
/// a valid data code-group flips the running disparity (the same at either RD it is
/// valid at). The disparity is then carried as the mask `0x100 << rd`: one AND tests
/// validity and one XOR moves the disparity on. Errors fall back to [`decode`].
static FAST: [u16; 1024] = build_fast();

const fn build_fast() -> [u16; 1024] {
    let mut t = [0b11 << 8; 1024];
    let mut o = 0;
    while o < 256 {
        let mut rd = 0;
        while rd < 2 {
            let cg = encode_raw(o as u8, false, rd) as usize;
            let flip = (rd_after(cg as u32, rd) ^ rd) as u16;
            t[cg] = (t[cg] & !(1 << (8 + rd)) & 0x300) | o as u16 | (flip * 0xc00);
            rd += 1;
        }
        o += 1;
    }
    t
}

// ---- one code-group at a time -------------------------------------------------------

/// The code-group for data octet `d` at running disparity `rd`, and the RD after it.
#[inline]
pub fn encode_data(d: u8, rd: Rd) -> (CodeGroup, Rd) {
    let e = ENC[d as usize];
    let cg = (e >> (16 * rd.bit())) & 0x3ff;
    (CodeGroup(cg as u16), Rd::from_bit(rd.bit() ^ (e >> 31)))
}

/// The code-group for an octet at `rd`, and the RD after it.
pub fn encode(o: Octet, rd: Rd) -> Result<(CodeGroup, Rd), NoSuchSpecial> {
    match o {
        Octet::D(d) => Ok(encode_data(d, rd)),
        Octet::K(k) if SPECIALS.contains(&k) => {
            let cg = encode_raw(k, true, rd.bit());
            Ok((CodeGroup(cg as u16), Rd::from_bit(rd_after(cg, rd.bit()))))
        }
        Octet::K(k) => Err(NoSuchSpecial(k)),
    }
}

/// Decodes one code-group received at `rd`; returns the result and the RD after it.
#[inline]
pub fn decode(cg: CodeGroup, rd: Rd) -> (Result<Octet, CodeError>, Rd) {
    let e = DEC[cg.0 as usize];
    let after = Rd::from_bit((e as u32) >> (DEC_AFTER_NEG + rd.bit()));
    let octet = if e & DEC_K != 0 {
        Octet::K(e as u8)
    } else {
        Octet::D(e as u8)
    };
    let res = if e & (DEC_VALID_NEG << rd.bit()) != 0 {
        Ok(octet)
    } else if e & (DEC_VALID_NEG << (rd.bit() ^ 1)) != 0 {
        Err(CodeError::Disparity(octet))
    } else {
        Err(CodeError::Invalid)
    };
    (res, after)
}

// ---- bulk: the data path ------------------------------------------------------------

/// Encodes data octets into `out` (which must be at least as long), starting at `rd`;
/// returns the RD after the last code-group.
///
/// The code-group lookups do not depend on one another; only a one-bit XOR chain carries
/// the disparity, so this runs at table-lookup speed.
pub fn encode_slice(data: &[u8], out: &mut [CodeGroup], rd: Rd) -> Rd {
    let mut shift = 16 * rd.bit();
    for (d, o) in data.iter().zip(out.iter_mut()) {
        let e = ENC[*d as usize];
        *o = CodeGroup(((e >> shift) & 0x3ff) as u16);
        shift ^= (e >> 27) & 16;
    }
    Rd::from_bit(shift >> 4)
}

/// The first error met by [`decode_slice`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SliceError {
    /// Position of the offending code-group.
    pub index: usize,
    /// `Ok(Octet::K(_))` when the code-group was a valid special, not data.
    pub error: Result<Octet, CodeError>,
}

/// Decodes a stream of data code-groups into `out`, starting at `rd`.
///
/// Returns the RD after the last code-group, or the first code-group that is not a valid
/// data code-group at its running disparity. Errors are collected without branching and
/// located afterwards, so the clean path stays tight.
pub fn decode_slice(cgs: &[CodeGroup], out: &mut [u8], rd: Rd) -> Result<Rd, SliceError> {
    #[inline(always)]
    fn one(cg: CodeGroup, o: &mut u8, m: &mut u16, bad: &mut u16) {
        let e = FAST[cg.0 as usize];
        *o = e as u8;
        *bad |= e & *m;
        *m ^= (e >> 2) & 0x300;
    }
    let start = rd.bit();
    let mut m: u16 = 0x100 << start;
    let mut bad: u16 = 0;
    let n = cgs.len().min(out.len());
    let (cgs, out) = (&cgs[..n], &mut out[..n]);
    let mut cc = cgs.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (c, o) in (&mut cc).zip(&mut oc) {
        for i in 0..8 {
            one(c[i], &mut o[i], &mut m, &mut bad);
        }
    }
    for (c, o) in cc.remainder().iter().zip(oc.into_remainder()) {
        one(*c, o, &mut m, &mut bad);
    }
    if bad == 0 {
        return Ok(Rd::from_bit((m >> 9) as u32));
    }
    let mut rd = Rd::from_bit(start);
    for (index, cg) in cgs.iter().enumerate() {
        let (res, next) = decode(*cg, rd);
        if !matches!(res, Ok(Octet::D(_))) {
            return Err(SliceError { index, error: res });
        }
        rd = next;
    }
    unreachable!("an error flagged in the fast pass is found in the slow pass")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_and_gap_match_the_seed() {
        assert_eq!(
            encode(Octet::K(K28_5), Rd::Neg).unwrap().0.to_string(),
            "001111 1010"
        );
        assert_eq!(
            encode(Octet::K(K28_5), Rd::Pos).unwrap().0.to_string(),
            "110000 0101"
        );
        assert_eq!(
            encode(Octet::K(K29_7), Rd::Neg).unwrap().0.to_string(),
            "101110 1000"
        );
    }

    #[test]
    fn decode_inverts_encode_for_every_octet_at_both_disparities() {
        for rd in [Rd::Neg, Rd::Pos] {
            for o in (0..=255u8)
                .map(Octet::D)
                .chain(SPECIALS.iter().map(|&k| Octet::K(k)))
            {
                let (cg, after) = encode(o, rd).unwrap();
                assert_eq!(decode(cg, rd), (Ok(o), after), "{o} at {rd:?}");
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for v in 0..=255u8 {
            let o = Octet::D(v);
            assert_eq!(Octet::parse(&o.to_string()), Some(o));
        }
        assert_eq!(Octet::parse("K28.5"), Some(Octet::K(K28_5)));
        assert_eq!(Octet::parse("K1.0"), None);
        assert_eq!(Octet::parse("D32.0"), None);
        assert_eq!(Octet::parse(""), None);
    }

    #[test]
    fn code_group_parse() {
        assert_eq!(
            CodeGroup::parse("001111 1010"),
            Some(CodeGroup(0b0011111010))
        );
        assert_eq!(
            CodeGroup::parse("0011111010"),
            Some(CodeGroup(0b0011111010))
        );
        assert_eq!(CodeGroup::parse("00111 1010"), None);
        assert_eq!(CodeGroup::parse("00111110101"), None);
        assert_eq!(CodeGroup::parse("001111101x"), None);
    }

    #[test]
    fn bulk_agrees_with_single() {
        let data: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let mut cgs = vec![CodeGroup::default(); data.len()];
        let end = encode_slice(&data, &mut cgs, Rd::Neg);
        let mut rd = Rd::Neg;
        for (d, cg) in data.iter().zip(&cgs) {
            let (c, n) = encode_data(*d, rd);
            assert_eq!(c, *cg);
            rd = n;
        }
        assert_eq!(rd, end);
        let mut back = vec![0u8; data.len()];
        assert_eq!(decode_slice(&cgs, &mut back, Rd::Neg), Ok(end));
        assert_eq!(back, data);
        cgs[100] = cgs[100].flip(3);
        let err = decode_slice(&cgs, &mut back, Rd::Neg).unwrap_err();
        assert!(err.index >= 100, "{err:?}");
    }
}

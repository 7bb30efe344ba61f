//! The layout of the active messages of windows spanning nodes: the request rings
//! origins put into a target's request segment, and the reply areas targets put
//! into an origin's reply segment. Plain encoding and decoding, no IO; a record
//! from a peer is checked before anything acts on it.
//!
//! **Request ring** (one per origin, in the target's request segment, written by that
//! origin only): [`SLOTS`] slots of [`SLOT`] bytes; record `k` of the origin lies in
//! slot `k % SLOTS`. A slot is a 32-byte header and up to [`DATA`] bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | tag: `k + 1` (the record is there once the tag reads so) |
//! | 8 | kind ([`Kind`]) |
//! | 9 | op (index in [`OPS`]) |
//! | 10 | basic type (index in `Basic::ALL`) |
//! | 12..16 | data length |
//! | 16..24 | byte offset in the target's window |
//!
//! A slot is one put of at most 1440 bytes, one frame of the network controller,
//! whose first 8 bytes are stored last: the tag appears after the rest of the slot.
//!
//! **Reply area** (one per target, in the origin's reply segment, written by that
//! target only): word 0 how many of the origin's records were applied, word 1 how many
//! locks were granted to it; from byte 64, [`SLOTS`] result slots of [`DATA`] bytes:
//! the old values a fetching record `k` read are in result slot `k % SLOTS`, put
//! before the counters.

use crate::datatype::Basic;
use crate::op::BuiltinOp;

/// Bytes of a request slot: one frame of the network controller (1448 data bytes
/// per write), a multiple of 16.
pub const SLOT: usize = 1440;
pub const HDR: usize = 32;
/// Data bytes of a record (a multiple of 16: whole elements of every type).
pub const DATA: usize = SLOT - HDR;
/// Slots per ring: records an origin may have unapplied at one target.
pub const SLOTS: usize = 32;
/// Bytes of one origin's ring.
pub const RING: usize = SLOT * SLOTS;
/// Bytes of one target's reply area.
pub const AREA: usize = 64 + SLOTS * DATA;

/// The ops a record may carry, by index.
pub const OPS: [BuiltinOp; 14] = [
    BuiltinOp::Max,
    BuiltinOp::Min,
    BuiltinOp::Sum,
    BuiltinOp::Prod,
    BuiltinOp::Land,
    BuiltinOp::Band,
    BuiltinOp::Lor,
    BuiltinOp::Bor,
    BuiltinOp::Lxor,
    BuiltinOp::Bxor,
    BuiltinOp::Maxloc,
    BuiltinOp::Minloc,
    BuiltinOp::Replace,
    BuiltinOp::NoOp,
];

/// What a record asks of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `data` combined into the window at `off` with `op`.
    Acc = 1,
    /// The same, and the old values are sent back.
    FetchAcc = 2,
    /// Compare-and-swap of one element: `data` is the new value then the compare value.
    Cas = 3,
    LockShared = 4,
    LockExclusive = 5,
    UnlockShared = 6,
    UnlockExclusive = 7,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Acc,
            2 => Kind::FetchAcc,
            3 => Kind::Cas,
            4 => Kind::LockShared,
            5 => Kind::LockExclusive,
            6 => Kind::UnlockShared,
            7 => Kind::UnlockExclusive,
            _ => return None,
        })
    }
    /// Whether the record sends old values back.
    pub fn fetches(self) -> bool {
        matches!(self, Kind::FetchAcc | Kind::Cas)
    }
}

/// A record's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub tag: u64,
    pub kind: Kind,
    pub op: BuiltinOp,
    pub basic: Basic,
    pub len: usize,
    pub off: u64,
}

fn op_index(op: BuiltinOp) -> u8 {
    OPS.iter().position(|&o| o == op).unwrap_or(0) as u8
}

/// Writes record `k`'s slot into `slot` (at least `HDR + data.len()` bytes; the data
/// must fit a slot); returns the slot's length.
pub fn encode(
    slot: &mut [u8],
    k: u64,
    kind: Kind,
    op: BuiltinOp,
    basic: Basic,
    off: u64,
    data: &[u8],
) -> usize {
    assert!(data.len() <= DATA, "record data larger than a slot");
    slot[0..8].copy_from_slice(&k.wrapping_add(1).to_le_bytes());
    slot[8] = kind as u8;
    slot[9] = op_index(op);
    slot[10] = basic.index() as u8;
    slot[11] = 0;
    slot[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
    slot[16..24].copy_from_slice(&off.to_le_bytes());
    slot[24..32].fill(0);
    slot[HDR..HDR + data.len()].copy_from_slice(data);
    HDR + data.len()
}

/// Why a record from a peer is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRecord(pub &'static str);

/// Reads the header of a slot whose tag said it is there (`hdr`: its first 32 bytes).
pub fn decode(hdr: &[u8; HDR]) -> Result<Head, BadRecord> {
    let kind = Kind::from_u8(hdr[8]).ok_or(BadRecord("unknown record kind"))?;
    let op = *OPS.get(hdr[9] as usize).ok_or(BadRecord("unknown op"))?;
    let basic = *Basic::ALL
        .get(hdr[10] as usize)
        .ok_or(BadRecord("unknown type"))?;
    let len = u32::from_le_bytes(hdr[12..16].try_into().expect("4")) as usize;
    if len > DATA {
        return Err(BadRecord("record longer than a slot"));
    }
    let w = basic.size().max(1);
    let elems = if kind == Kind::Cas { 2 * w } else { w };
    if kind != Kind::LockShared
        && kind != Kind::LockExclusive
        && kind != Kind::UnlockShared
        && kind != Kind::UnlockExclusive
        && (len % w != 0 || (kind == Kind::Cas && len != elems))
    {
        return Err(BadRecord("record length is not whole elements"));
    }
    Ok(Head {
        tag: u64::from_le_bytes(hdr[0..8].try_into().expect("8")),
        kind,
        op,
        basic,
        len,
        off: u64::from_le_bytes(hdr[16..24].try_into().expect("8")),
    })
}

/// Offset of origin `o`'s ring in a request segment.
pub fn ring_at(o: usize) -> usize {
    o * RING
}

/// Offset of record `k`'s slot in a ring.
pub fn slot_at(k: u64) -> usize {
    (k % SLOTS as u64) as usize * SLOT
}

/// Offset of target `t`'s reply area in a reply segment.
pub fn area_at(t: usize) -> usize {
    t * AREA
}

/// Offset, in a reply area, of record `k`'s result slot.
pub fn result_at(k: u64) -> usize {
    64 + (k % SLOTS as u64) as usize * DATA
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_ones_are_refused() {
        let mut slot = [0u8; SLOT];
        let n = encode(
            &mut slot,
            41,
            Kind::FetchAcc,
            BuiltinOp::Sum,
            Basic::Int,
            96,
            &[1, 0, 0, 0, 2, 0, 0, 0],
        );
        assert_eq!(n, HDR + 8);
        let h = decode(slot[..HDR].try_into().unwrap()).unwrap();
        assert_eq!(
            h,
            Head {
                tag: 42,
                kind: Kind::FetchAcc,
                op: BuiltinOp::Sum,
                basic: Basic::Int,
                len: 8,
                off: 96
            }
        );
        let mut bad = slot;
        bad[8] = 99;
        assert!(decode(bad[..HDR].try_into().unwrap()).is_err());
        let mut bad = slot;
        bad[12] = 7; // 7 bytes of 4-byte ints
        assert!(decode(bad[..HDR].try_into().unwrap()).is_err());
        let mut bad = slot;
        bad[10] = 255;
        assert!(decode(bad[..HDR].try_into().unwrap()).is_err());
        let mut bad = slot;
        bad[12..16].copy_from_slice(&(DATA as u32 + 16).to_le_bytes());
        assert!(decode(bad[..HDR].try_into().unwrap()).is_err());
        assert_eq!(SLOT % 16, 0);
        assert_eq!(DATA % 16, 0);
        assert_eq!(result_at(SLOTS as u64 + 1), 64 + DATA);
    }

    proptest::proptest! {
        /// Any header decodes or is refused without panicking; what decodes re-encodes
        /// to the same header, and every record encoded decodes back.
        #[test]
        fn any_header_is_safe_and_records_round_trip(
            hdr in proptest::array::uniform32(proptest::prelude::any::<u8>()),
            k in 0u64..u64::MAX - 1,
            off in proptest::prelude::any::<u64>(),
            elems in 0usize..=DATA / 16,
            kind in 1u8..=7,
            op in 0usize..OPS.len(),
            basic in 0usize..Basic::ALL.len(),
        ) {
            if let Ok(h) = decode(&hdr) {
                let mut slot = vec![0u8; SLOT];
                encode(&mut slot, h.tag.wrapping_sub(1), h.kind, h.op, h.basic, h.off, &vec![0; h.len]);
                proptest::prop_assert_eq!(decode(slot[..HDR].try_into().unwrap()), Ok(h));
            }
            let kind = Kind::from_u8(kind).unwrap();
            let b = Basic::ALL[basic];
            let len = if kind == Kind::Cas { 2 * b.size().max(1) } else { elems * b.size().max(1) };
            proptest::prop_assume!(len <= DATA);
            let mut slot = vec![0u8; SLOT];
            let n = encode(&mut slot, k, kind, OPS[op], b, off, &vec![7; len]);
            proptest::prop_assert_eq!(n, HDR + len);
            let h = decode(slot[..HDR].try_into().unwrap()).unwrap();
            proptest::prop_assert_eq!((h.tag, h.kind, h.op, h.basic, h.len, h.off), (k + 1, kind, OPS[op], b, len, off));
        }
    }
}

//! The codec against the standard: every data and special code-group at both running
//! disparities, read from `table36.txt` (a transcription of IEEE 802.3 Tables 36-1a and
//! 36-2 made apart from this crate's tables), plus the properties that define 8b/10b.

use myrix_link::code::{decode, encode, CodeError, CodeGroup, Octet, Rd, SPECIALS};

struct Row {
    octet: Octet,
    neg: CodeGroup,
    pos: CodeGroup,
}

fn rows() -> Vec<Row> {
    include_str!("table36.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "{l}");
            let octet = Octet::parse(f[0]).unwrap();
            let v = u8::from_str_radix(f[1], 16).unwrap();
            assert!(matches!(octet, Octet::D(x) | Octet::K(x) if x == v), "{l}");
            Row {
                octet,
                neg: CodeGroup::parse(&format!("{} {}", f[2], f[3])).unwrap(),
                pos: CodeGroup::parse(&format!("{} {}", f[4], f[5])).unwrap(),
            }
        })
        .collect()
}

#[test]
fn table_has_all_256_data_and_12_special_code_groups() {
    let rows = rows();
    assert_eq!(
        rows.iter()
            .filter(|r| matches!(r.octet, Octet::D(_)))
            .count(),
        256
    );
    let ks: Vec<u8> = rows
        .iter()
        .filter_map(|r| match r.octet {
            Octet::K(k) => Some(k),
            _ => None,
        })
        .collect();
    assert_eq!(ks, SPECIALS);
}

#[test]
fn encoder_agrees_with_the_table_at_both_disparities() {
    for r in rows() {
        assert_eq!(
            encode(r.octet, Rd::Neg).unwrap().0,
            r.neg,
            "{} at RD-",
            r.octet
        );
        assert_eq!(
            encode(r.octet, Rd::Pos).unwrap().0,
            r.pos,
            "{} at RD+",
            r.octet
        );
    }
}

#[test]
fn decoder_agrees_with_the_table_and_flags_the_wrong_column() {
    for r in rows() {
        assert_eq!(decode(r.neg, Rd::Neg).0, Ok(r.octet));
        assert_eq!(decode(r.pos, Rd::Pos).0, Ok(r.octet));
        if r.neg != r.pos {
            assert_eq!(decode(r.neg, Rd::Pos).0, Err(CodeError::Disparity(r.octet)));
            assert_eq!(decode(r.pos, Rd::Neg).0, Err(CodeError::Disparity(r.octet)));
        }
    }
}

#[test]
fn every_other_code_group_is_invalid() {
    let rows = rows();
    let valid: std::collections::HashSet<u16> = rows
        .iter()
        .flat_map(|r| [r.neg.bits(), r.pos.bits()])
        .collect();
    // 268 octets, some neutral code-groups serve both columns.
    for bits in 0..1024u16 {
        let cg = CodeGroup::new(bits);
        if !valid.contains(&bits) {
            assert_eq!(decode(cg, Rd::Neg).0, Err(CodeError::Invalid), "{cg}");
            assert_eq!(decode(cg, Rd::Pos).0, Err(CodeError::Invalid), "{cg}");
        }
    }
}

fn ones(cg: CodeGroup) -> u32 {
    cg.bits().count_ones()
}

/// Properties that define the code, independent of any table: they catch a wrong entry
/// in the transcription itself.
#[test]
fn table_obeys_the_code_properties() {
    let rows = rows();
    for r in &rows {
        // RD- column: disparity 0 or +2; RD+ column: 0 or -2; a flip iff non-neutral.
        assert!(matches!(ones(r.neg), 5 | 6), "{}", r.octet);
        assert!(matches!(ones(r.pos), 4 | 5), "{}", r.octet);
        assert_eq!(
            ones(r.neg) == 5,
            r.neg == r.pos || ones(r.pos) == 5,
            "{}",
            r.octet
        );
    }
    // No run of more than five equal bits, and no comma (0011111 / 1100000) outside
    // K28.1, K28.5, K28.7, across any legal pair of data code-groups.
    let mut seq = Vec::new();
    for a in rows.iter().filter(|r| matches!(r.octet, Octet::D(_))) {
        for (cg, rd) in [(a.neg, Rd::Neg), (a.pos, Rd::Pos)] {
            let after = decode(cg, rd).1;
            for b in rows.iter().filter(|r| matches!(r.octet, Octet::D(_))) {
                let next = if after == Rd::Neg { b.neg } else { b.pos };
                seq.push(((cg.bits() as u32) << 10) | next.bits() as u32);
            }
        }
    }
    for s in seq {
        let bits: Vec<u32> = (0..20).rev().map(|i| (s >> i) & 1).collect();
        let mut run = 1;
        for w in bits.windows(2) {
            run = if w[0] == w[1] { run + 1 } else { 1 };
            assert!(run <= 5, "run of {run} in {s:020b}");
        }
        for w in bits.windows(7) {
            let v: u32 = w.iter().fold(0, |a, b| (a << 1) | b);
            assert!(v != 0b0011111 && v != 0b1100000, "comma in data {s:020b}");
        }
    }
    for r in rows.iter().filter(|r| matches!(r.octet, Octet::K(_))) {
        let has_comma = [r.neg, r.pos].iter().all(|cg| {
            let b = cg.bits() as u32;
            (0..=3).any(|i| matches!((b >> i) & 0x7f, 0b0011111 | 0b1100000))
        });
        let expected = matches!(r.octet, Octet::K(0x3c | 0xbc | 0xfc));
        assert_eq!(has_comma, expected, "{}", r.octet);
    }
}

//! Pack/unpack of random nested datatypes against a naive model: the type map
//! computed entry by entry (offset, basic type), gathered byte by byte.

use myrix_mpi::datatype::{Basic, Datatype};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Spec {
    Basic(Basic),
    Contig(usize, Box<Spec>),
    Vector(usize, usize, isize, Box<Spec>),
    Hvector(usize, usize, isize, Box<Spec>),
    Indexed(Vec<(usize, isize)>, Box<Spec>),
    Hindexed(Vec<(usize, isize)>, Box<Spec>),
    IndexedBlock(usize, Vec<isize>, Box<Spec>),
    Struct(Vec<(usize, isize, Spec)>),
    Resized(isize, isize, Box<Spec>),
}

fn spec() -> impl Strategy<Value = Spec> {
    let leaf = prop_oneof![
        Just(Basic::Int),
        Just(Basic::Char),
        Just(Basic::Double),
        Just(Basic::Short),
        Just(Basic::DoubleInt),
    ]
    .prop_map(Spec::Basic);
    leaf.prop_recursive(3, 24, 4, |inner| {
        let b = inner.clone().prop_map(Box::new);
        prop_oneof![
            (0..4usize, b.clone()).prop_map(|(n, t)| Spec::Contig(n, t)),
            (0..4usize, 0..3usize, -4..5isize, b.clone())
                .prop_map(|(c, l, s, t)| Spec::Vector(c, l, s, t)),
            (0..4usize, 0..3usize, -40..41isize, b.clone())
                .prop_map(|(c, l, s, t)| Spec::Hvector(c, l, s, t)),
            (
                prop::collection::vec((0..3usize, -3..6isize), 0..4),
                b.clone()
            )
                .prop_map(|(v, t)| Spec::Indexed(v, t)),
            (
                prop::collection::vec((0..3usize, -30..60isize), 0..4),
                b.clone()
            )
                .prop_map(|(v, t)| Spec::Hindexed(v, t)),
            (
                0..3usize,
                prop::collection::vec(-3..6isize, 0..4),
                b.clone()
            )
                .prop_map(|(l, v, t)| Spec::IndexedBlock(l, v, t)),
            prop::collection::vec((0..3usize, -30..60isize, inner.clone()), 1..4)
                .prop_map(Spec::Struct),
            (-8..8isize, 0..48isize, b).prop_map(|(lb, e, t)| Spec::Resized(lb, e, t)),
        ]
    })
}

/// The datatype and its type map (offset, bytes) of basic entries, pairs split.
fn build(s: &Spec) -> (Datatype, Vec<(isize, usize)>) {
    let rep = |map: &[(isize, usize)], at: isize, out: &mut Vec<(isize, usize)>| {
        out.extend(map.iter().map(|&(o, l)| (o + at, l)));
    };
    match s {
        Spec::Basic(b) => {
            let m = match b.pair_parts() {
                Some((v, i, off)) => vec![(0, v.size()), (off as isize, i.size())],
                None => vec![(0, b.size())],
            };
            (Datatype::basic(*b), m)
        }
        Spec::Contig(n, t) => {
            let (d, m) = build(t);
            let mut out = vec![];
            for k in 0..*n {
                rep(&m, k as isize * d.extent(), &mut out);
            }
            (Datatype::contiguous(*n, &d).unwrap(), out)
        }
        Spec::Vector(c, l, st, t) | Spec::Hvector(c, l, st, t) => {
            let (d, m) = build(t);
            let bytes = if matches!(s, Spec::Vector(..)) {
                st * d.extent()
            } else {
                *st
            };
            let mut out = vec![];
            for j in 0..*c {
                for k in 0..*l {
                    rep(&m, j as isize * bytes + k as isize * d.extent(), &mut out);
                }
            }
            let nd = if matches!(s, Spec::Vector(..)) {
                Datatype::vector(*c, *l, *st, &d)
            } else {
                Datatype::hvector(*c, *l, *st, &d)
            };
            (nd.unwrap(), out)
        }
        Spec::Indexed(v, t) | Spec::Hindexed(v, t) => {
            let (d, m) = build(t);
            let scale = if matches!(s, Spec::Indexed(..)) {
                d.extent()
            } else {
                1
            };
            let mut out = vec![];
            for &(l, disp) in v {
                for k in 0..l {
                    rep(&m, disp * scale + k as isize * d.extent(), &mut out);
                }
            }
            let (ls, ds): (Vec<usize>, Vec<isize>) = v.iter().copied().unzip();
            let nd = if matches!(s, Spec::Indexed(..)) {
                Datatype::indexed(&ls, &ds, &d)
            } else {
                Datatype::hindexed(&ls, &ds, &d)
            };
            (nd.unwrap(), out)
        }
        Spec::IndexedBlock(l, v, t) => {
            let (d, m) = build(t);
            let mut out = vec![];
            for &disp in v {
                for k in 0..*l {
                    rep(&m, disp * d.extent() + k as isize * d.extent(), &mut out);
                }
            }
            (Datatype::indexed_block(*l, v, &d).unwrap(), out)
        }
        Spec::Struct(v) => {
            let mut out = vec![];
            let (mut ls, mut ds, mut ts) = (vec![], vec![], vec![]);
            for (l, disp, t) in v {
                let (d, m) = build(t);
                for k in 0..*l {
                    rep(&m, disp + k as isize * d.extent(), &mut out);
                }
                ls.push(*l);
                ds.push(*disp);
                ts.push(d);
            }
            (Datatype::create_struct(&ls, &ds, &ts).unwrap(), out)
        }
        Spec::Resized(lb, e, t) => {
            let (d, m) = build(t);
            (d.resized(*lb, *e).unwrap(), m)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn pack_unpack_match_the_type_map(s in spec(), count in 0..4usize, cut in 0..64usize) {
        let (dt, map) = build(&s);
        let size: usize = map.iter().map(|e| e.1).sum();
        prop_assert_eq!(dt.size(), size);
        if size > 0 {
            let lo = map.iter().map(|e| e.0).min().unwrap();
            let hi = map.iter().map(|e| e.0 + e.1 as isize).max().unwrap();
            prop_assert_eq!((dt.true_lb(), dt.true_extent()), (lo, hi - lo));
        }
        // A buffer covering every element's map, base in the middle.
        let ext = dt.extent();
        let span = |k: usize| (k as isize * ext + dt.true_lb(), k as isize * ext + dt.true_lb() + dt.true_extent());
        let lo = (0..count.max(1)).map(|k| span(k).0).min().unwrap().min(0);
        let hi = (0..count.max(1)).map(|k| span(k).1).max().unwrap().max(0);
        let len = (hi - lo) as usize;
        let mem: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let at = |k: usize, off: isize| (k as isize * ext + off - lo) as usize;
        let mut expect = vec![];
        for k in 0..count {
            for &(o, l) in &map {
                expect.extend_from_slice(&mem[at(k, o)..at(k, o) + l]);
            }
        }
        let mut packed = vec![0u8; expect.len()];
        // SAFETY: mem covers every element's map from base = mem + (-lo).
        let n = unsafe { dt.pack(mem.as_ptr().offset(-lo), count, &mut packed) };
        prop_assert_eq!(n, expect.len());
        prop_assert_eq!(&packed, &expect);
        // In two pieces, cut anywhere.
        let cut = cut.min(packed.len());
        let mut pieces = vec![0u8; packed.len()];
        let (a, b) = pieces.split_at_mut(cut);
        // SAFETY: as above.
        unsafe {
            prop_assert_eq!(dt.pack_at(mem.as_ptr().offset(-lo), count, 0, a), cut);
            prop_assert_eq!(dt.pack_at(mem.as_ptr().offset(-lo), count, cut, b), packed.len() - cut);
        }
        prop_assert_eq!(&pieces, &packed);
        // Unpacking a prefix writes exactly the first `cut` bytes of the map.
        let mut dst = vec![0u8; len];
        // SAFETY: dst has mem's shape.
        let n = unsafe { dt.unpack(&packed[..cut], dst.as_mut_ptr().offset(-lo), count) };
        prop_assert_eq!(n, cut);
        let mut model = vec![0u8; len];
        let mut pos = 0;
        'outer: for k in 0..count {
            for &(o, l) in &map {
                for i in 0..l {
                    if pos == cut { break 'outer; }
                    model[at(k, o) + i] = packed[pos];
                    pos += 1;
                }
            }
        }
        prop_assert_eq!(&dst, &model);
        // Element counts.
        prop_assert_eq!(dt.elements(count * size).map(|e| e as u64), Some(count as u64 * dt.elements_per()));
    }
}

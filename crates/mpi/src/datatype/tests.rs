use super::*;

fn int() -> Datatype {
    Datatype::basic(Basic::Int)
}

#[test]
fn vector_bounds_and_map() {
    let v = Datatype::vector(3, 2, 4, &int()).unwrap();
    assert_eq!(v.size(), 24);
    assert_eq!((v.lb(), v.extent()), (0, 40));
    assert_eq!((v.true_lb(), v.true_extent()), (0, 40));
    assert_eq!(
        v.runs(),
        &[Run {
            off: 0,
            len: 8,
            reps: 3,
            stride: 16
        }]
    );
    assert!(!v.is_contiguous());
    assert_eq!(v.uniform_basic(), Some(Basic::Int));
    assert_eq!(v.elements(24), Some(6));
    assert_eq!(v.elements(12), Some(3));
    assert_eq!(v.elements(13), None);
}

#[test]
fn negative_stride_vector() {
    let v = Datatype::vector(3, 1, -2, &int()).unwrap();
    assert_eq!((v.lb(), v.extent()), (-16, 20));
    let src: Vec<i32> = (0..10).collect();
    let mut out = [0u8; 12];
    // SAFETY: the map reaches src[4 - 4 .. 4 + 1].
    let n = unsafe { v.pack(src.as_ptr().add(4).cast(), 1, &mut out) };
    assert_eq!(n, 12);
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, vec![4, 2, 0]);
}

#[test]
fn struct_pads_to_alignment_and_resized_overrides() {
    let t = Datatype::create_struct(
        &[1, 1],
        &[0, 8],
        &[Datatype::basic(Basic::Double), Datatype::basic(Basic::Char)],
    )
    .unwrap();
    assert_eq!((t.size(), t.extent(), t.true_extent()), (9, 16, 9));
    let r = t.resized(-4, 32).unwrap();
    assert_eq!((r.lb(), r.extent(), r.size()), (-4, 32, 9));
    let c = Datatype::contiguous(2, &r).unwrap();
    assert_eq!(
        (c.lb(), c.extent(), c.true_lb(), c.true_extent()),
        (-4, 64, 0, 41)
    );
    // A struct containing a resized type keeps its explicit bounds (no padding).
    let s = Datatype::create_struct(&[1, 1], &[0, 100], &[r.clone(), int()]).unwrap();
    assert_eq!((s.lb(), s.extent()), (-4, 32));
    assert_eq!(s.true_extent(), 104);
}

#[test]
fn pair_types() {
    let d = Datatype::basic(Basic::DoubleInt);
    assert_eq!((d.size(), d.extent()), (12, 16));
    assert_eq!(d.elements(12), Some(2));
    assert_eq!(d.elements(8), Some(1));
    assert_eq!(d.elements(10), None);
    assert!(!d.is_contiguous());
    let two = Datatype::basic(Basic::TwoInt);
    assert!(two.is_contiguous());
    assert_eq!(two.uniform_basic(), Some(Basic::TwoInt));
}

#[test]
fn huge_counts_are_refused() {
    let i = int();
    assert_eq!(
        Datatype::contiguous(usize::MAX, &i).unwrap_err(),
        TypeError::Overflow
    );
    assert_eq!(
        Datatype::vector(1 << 40, 1, 1 << 40, &i).unwrap_err(),
        TypeError::Overflow
    );
    // Large but representable: one run, no allocation per element.
    let big = Datatype::contiguous(1 << 40, &i).unwrap();
    assert_eq!(big.runs().len(), 1);
    assert!(big.is_contiguous());
    // A map that cannot be merged and is too large to hold.
    let gap = Datatype::vector(2, 1, 3, &i).unwrap();
    let v = Datatype::vector(3, 1, 2, &gap).unwrap();
    assert_eq!(
        Datatype::contiguous(1 << 30, &v).unwrap_err(),
        TypeError::TooComplex
    );
    assert_eq!(
        Datatype::indexed(&[1, 2], &[0], &i).unwrap_err(),
        TypeError::Lengths
    );
}

#[test]
fn partial_unpack_and_pack_pieces() {
    let v = Datatype::vector(4, 1, 2, &Datatype::basic(Basic::Short)).unwrap();
    let src: Vec<i16> = (0..8).collect();
    let mut packed = [0u8; 16];
    // SAFETY: two elements of v span 7 + 8 shorts... extent 14 bytes each: 2 * 14 <= 16 * 2.
    let n = unsafe { v.pack(src.as_ptr().cast(), 2, &mut packed) };
    assert_eq!(n, 16);
    let mut pieces = [0u8; 16];
    for k in 0..4 {
        // SAFETY: as above.
        let n = unsafe { v.pack_at(src.as_ptr().cast(), 2, k * 4, &mut pieces[k * 4..k * 4 + 4]) };
        assert_eq!(n, 4);
    }
    assert_eq!(packed, pieces);
    let mut dst = [-1i16; 16];
    // SAFETY: dst holds 2 extents; 5 bytes: 2 shorts and half of one.
    let n = unsafe { v.unpack(&packed[..5], dst.as_mut_ptr().cast(), 2) };
    assert_eq!(n, 5);
    assert_eq!(&dst[..4], &[0, -1, 2, -1]);
    assert_eq!(dst[4].to_ne_bytes()[0], 4i16.to_ne_bytes()[0]);
}

#[test]
fn for_each_basic_names_the_signature_types() {
    let pair = Datatype::basic(Basic::DoubleInt);
    let v = Datatype::vector(3, 2, 4, &Datatype::basic(Basic::Short)).unwrap();
    let s = Datatype::create_struct(&[1, 2, 1], &[0, 8, 32], &[int(), pair, v]).unwrap();
    let mut seen = Vec::new();
    s.for_each_basic(&mut |b| {
        if !seen.contains(&b) {
            seen.push(b)
        }
    });
    seen.sort_by_key(|b| b.index());
    let mut want = vec![Basic::Int, Basic::Double, Basic::Short];
    want.sort_by_key(|b| b.index());
    assert_eq!(seen, want);
    let mut one = Vec::new();
    Datatype::basic(Basic::Float).for_each_basic(&mut |b| one.push(b));
    assert_eq!(one, vec![Basic::Float]);
}

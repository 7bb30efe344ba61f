//! Group algebra against set semantics, for random groups and arguments (including
//! invalid ones, which must be refused, never panic).

use myrix_mpi::group::{Compare, Group};
use proptest::prelude::*;
use std::collections::HashSet;

/// A group: a random permutation of a random subset of 0..20.
fn group() -> impl Strategy<Value = Group> {
    proptest::sample::subsequence((0u32..20).collect::<Vec<_>>(), 0..20)
        .prop_shuffle()
        .prop_map(|v| Group::new(v).unwrap())
}

proptest! {
    #[test]
    fn set_operations(a in group(), b in group()) {
        let sa: HashSet<u32> = a.ranks().iter().copied().collect();
        let sb: HashSet<u32> = b.ranks().iter().copied().collect();
        let u = a.union(&b);
        prop_assert_eq!(&u.ranks()[..a.size()], a.ranks());
        prop_assert_eq!(u.ranks().iter().copied().collect::<HashSet<_>>(), &sa | &sb);
        prop_assert_eq!(u.size(), (&sa | &sb).len());
        let i = a.intersection(&b);
        prop_assert!(i.ranks().iter().all(|r| sb.contains(r)));
        prop_assert_eq!(i.size(), (&sa & &sb).len());
        let d = a.difference(&b);
        prop_assert_eq!(d.ranks().iter().copied().collect::<HashSet<_>>(), &sa - &sb);
        // Order of a kept in intersection and difference.
        let pos = |g: &Group| g.ranks().iter().map(|&r| a.rank_of(r).unwrap()).collect::<Vec<_>>();
        prop_assert!(pos(&i).windows(2).all(|w| w[0] < w[1]));
        prop_assert!(pos(&d).windows(2).all(|w| w[0] < w[1]));
        let all: Vec<i32> = (0..a.size() as i32).collect();
        let t = a.translate_ranks(&all, &b).unwrap();
        for (k, x) in t.iter().enumerate() {
            prop_assert_eq!(*x, b.rank_of(a.ranks()[k]));
        }
        let c = a.compare(&b);
        prop_assert_eq!(c == Compare::Ident, a.ranks() == b.ranks());
        prop_assert_eq!(c != Compare::Unequal, sa == sb);
    }

    #[test]
    fn incl_excl_and_ranges(a in group(), which in proptest::collection::vec(-3i32..25, 0..30),
                            ranges in proptest::collection::vec((-2i32..22, -2i32..22, -4i32..5), 0..4)) {
        let n = a.size() as i32;
        let valid = which.iter().all(|&r| (0..n).contains(&r))
            && which.iter().collect::<HashSet<_>>().len() == which.len();
        match a.incl(&which) {
            Ok(g) => {
                prop_assert!(valid);
                prop_assert_eq!(g.ranks().to_vec(), which.iter().map(|&r| a.ranks()[r as usize]).collect::<Vec<_>>());
            }
            Err(_) => prop_assert!(!valid),
        }
        match a.excl(&which) {
            Ok(g) => {
                prop_assert!(valid);
                prop_assert_eq!(g.size(), a.size() - which.len());
                let gone: HashSet<u32> = which.iter().map(|&r| a.ranks()[r as usize]).collect();
                prop_assert!(g.ranks().iter().all(|r| !gone.contains(r)));
            }
            Err(_) => prop_assert!(!valid),
        }
        // Ranges against a plain expansion.
        let mut expanded = Vec::new();
        let mut ok = true;
        for &(f, l, s) in &ranges {
            if s == 0 || !(0..n).contains(&f) || !(0..n).contains(&l) || (s > 0 && f > l) || (s < 0 && f < l) {
                ok = false;
                break;
            }
            let mut r = f;
            while (s > 0 && r <= l) || (s < 0 && r >= l) {
                expanded.push(r);
                r += s;
            }
        }
        ok = ok && expanded.iter().collect::<HashSet<_>>().len() == expanded.len();
        match a.range_incl(&ranges) {
            Ok(g) => {
                prop_assert!(ok);
                prop_assert_eq!(g, a.incl(&expanded).unwrap());
            }
            Err(_) => prop_assert!(!ok),
        }
        prop_assert_eq!(a.range_excl(&ranges).is_ok(), ok);
    }
}

//! MPI groups: ordered lists of distinct MPI_COMM_WORLD ranks, and their algebra
//! (incl, excl, ranges, union, intersection, difference, translation, comparison).
//!
//! A group is only a list; it never communicates. Every argument that comes from a
//! program (ranks, ranges) is checked and refused with a [`GroupError`]; nothing here
//! panics on bad input, and range arguments cannot make it allocate more than the
//! group's size.

use std::collections::HashSet;

/// Why a group operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    #[error("rank {rank} is not in a group of size {size}")]
    RankOutOfRange { rank: i64, size: usize },
    #[error("rank {0} is named twice")]
    Duplicate(i64),
    #[error("a range has stride 0")]
    ZeroStride,
    #[error("a range (first {first}, last {last}, stride {stride}) runs the wrong way")]
    BadRange { first: i32, last: i32, stride: i32 },
    #[error("more than {0} ranks")]
    TooMany(usize),
}

/// How two groups compare (MPI_IDENT, MPI_SIMILAR, MPI_UNEQUAL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// The same members in the same order.
    Ident,
    /// The same members in another order.
    Similar,
    Unequal,
}

/// An ordered set of world ranks; a member's rank in the group is its position.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Group {
    ranks: Vec<u32>,
}

impl Group {
    /// The group of `ranks` (world ranks, in group order); refused if one repeats.
    pub fn new(ranks: Vec<u32>) -> Result<Group, GroupError> {
        let mut seen = HashSet::with_capacity(ranks.len());
        for &r in &ranks {
            if !seen.insert(r) {
                return Err(GroupError::Duplicate(i64::from(r)));
            }
        }
        Ok(Group { ranks })
    }

    /// MPI_GROUP_EMPTY.
    pub fn empty() -> Group {
        Group::default()
    }

    /// World ranks `0..n` in order (the group of MPI_COMM_WORLD).
    pub fn world(n: u32) -> Group {
        Group {
            ranks: (0..n).collect(),
        }
    }

    pub fn size(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The world ranks of the members, in group order.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// The world rank of group rank `i`.
    pub fn world_rank(&self, i: usize) -> Option<u32> {
        self.ranks.get(i).copied()
    }

    /// The group rank of world rank `w` (None: not a member, MPI_UNDEFINED).
    pub fn rank_of(&self, w: u32) -> Option<usize> {
        self.ranks.iter().position(|&x| x == w)
    }

    fn check(&self, r: i32) -> Result<usize, GroupError> {
        usize::try_from(r)
            .ok()
            .filter(|&i| i < self.ranks.len())
            .ok_or(GroupError::RankOutOfRange {
                rank: i64::from(r),
                size: self.ranks.len(),
            })
    }

    /// The distinct, valid group ranks of `which`, in that order.
    fn checked(&self, which: &[i32]) -> Result<Vec<usize>, GroupError> {
        let mut seen = vec![false; self.ranks.len()];
        let mut out = Vec::with_capacity(which.len().min(self.ranks.len()));
        for &r in which {
            let i = self.check(r)?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(GroupError::Duplicate(i64::from(r)));
            }
            out.push(i);
        }
        Ok(out)
    }

    /// MPI_Group_incl: members `which` (group ranks), in that order.
    pub fn incl(&self, which: &[i32]) -> Result<Group, GroupError> {
        let idx = self.checked(which)?;
        Ok(Group {
            ranks: idx.into_iter().map(|i| self.ranks[i]).collect(),
        })
    }

    /// MPI_Group_excl: every member but `which`, in group order.
    pub fn excl(&self, which: &[i32]) -> Result<Group, GroupError> {
        let mut drop = vec![false; self.ranks.len()];
        for i in self.checked(which)? {
            drop[i] = true;
        }
        Ok(Group {
            ranks: self
                .ranks
                .iter()
                .zip(&drop)
                .filter(|(_, &d)| !d)
                .map(|(&r, _)| r)
                .collect(),
        })
    }

    /// The group ranks `(first, last, stride)` triples name, in order; each must be
    /// valid, and none named twice.
    fn expand(&self, ranges: &[(i32, i32, i32)]) -> Result<Vec<i32>, GroupError> {
        let mut out = Vec::new();
        for &(first, last, stride) in ranges {
            if stride == 0 {
                return Err(GroupError::ZeroStride);
            }
            self.check(first)?;
            self.check(last)?;
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return Err(GroupError::BadRange {
                    first,
                    last,
                    stride,
                });
            }
            let mut r = i64::from(first);
            let (last, stride) = (i64::from(last), i64::from(stride));
            while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
                if out.len() >= self.ranks.len() {
                    // More ranks than members: one must repeat.
                    return Err(GroupError::Duplicate(r));
                }
                out.push(r as i32); // within first..=last, both i32
                r += stride;
            }
        }
        Ok(out)
    }

    /// MPI_Group_range_incl.
    pub fn range_incl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group, GroupError> {
        self.incl(&self.expand(ranges)?)
    }

    /// MPI_Group_range_excl.
    pub fn range_excl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group, GroupError> {
        self.excl(&self.expand(ranges)?)
    }

    /// MPI_Group_union: the members of `self`, then those of `other` not in `self`.
    pub fn union(&self, other: &Group) -> Group {
        let mine: HashSet<u32> = self.ranks.iter().copied().collect();
        let mut ranks = self.ranks.clone();
        ranks.extend(other.ranks.iter().filter(|r| !mine.contains(r)));
        Group { ranks }
    }

    /// MPI_Group_intersection: the members of `self` also in `other`, in `self`'s order.
    pub fn intersection(&self, other: &Group) -> Group {
        let theirs: HashSet<u32> = other.ranks.iter().copied().collect();
        Group {
            ranks: self
                .ranks
                .iter()
                .copied()
                .filter(|r| theirs.contains(r))
                .collect(),
        }
    }

    /// MPI_Group_difference: the members of `self` not in `other`, in `self`'s order.
    pub fn difference(&self, other: &Group) -> Group {
        let theirs: HashSet<u32> = other.ranks.iter().copied().collect();
        Group {
            ranks: self
                .ranks
                .iter()
                .copied()
                .filter(|r| !theirs.contains(r))
                .collect(),
        }
    }

    /// MPI_Group_translate_ranks: the rank in `other` of each of `which` (group ranks
    /// of `self`); `None` where the member is not in `other`.
    pub fn translate_ranks(
        &self,
        which: &[i32],
        other: &Group,
    ) -> Result<Vec<Option<usize>>, GroupError> {
        which
            .iter()
            .map(|&r| Ok(other.rank_of(self.ranks[self.check(r)?])))
            .collect()
    }

    /// MPI_Group_compare.
    pub fn compare(&self, other: &Group) -> Compare {
        if self.ranks == other.ranks {
            return Compare::Ident;
        }
        if self.ranks.len() == other.ranks.len() {
            let mut a = self.ranks.clone();
            let mut b = other.ranks.clone();
            a.sort_unstable();
            b.sort_unstable();
            if a == b {
                return Compare::Similar;
            }
        }
        Compare::Unequal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        let w = Group::world(6);
        let g = w.incl(&[4, 1, 3]).unwrap();
        assert_eq!(g.ranks(), &[4, 1, 3]);
        assert_eq!(g.rank_of(1), Some(1));
        assert_eq!(g.rank_of(0), None);
        assert_eq!(w.excl(&[0, 5]).unwrap().ranks(), &[1, 2, 3, 4]);
        assert_eq!(
            w.incl(&[1, 1]),
            Err(GroupError::Duplicate(1)),
            "duplicates refused"
        );
        assert!(matches!(
            w.incl(&[6]),
            Err(GroupError::RankOutOfRange { .. })
        ));
        assert!(matches!(
            w.excl(&[-1]),
            Err(GroupError::RankOutOfRange { .. })
        ));
        assert_eq!(w.range_incl(&[(5, 0, -2)]).unwrap().ranks(), &[5, 3, 1]);
        assert_eq!(w.range_incl(&[(0, 4, 3)]).unwrap().ranks(), &[0, 3]);
        assert_eq!(w.range_excl(&[(0, 5, 2)]).unwrap().ranks(), &[1, 3, 5]);
        assert_eq!(w.range_incl(&[(0, 1, 0)]), Err(GroupError::ZeroStride));
        assert!(matches!(
            w.range_incl(&[(3, 1, 1)]),
            Err(GroupError::BadRange { .. })
        ));
        assert!(matches!(
            w.range_incl(&[(0, 2, 1), (2, 3, 1)]),
            Err(GroupError::Duplicate(2))
        ));
        assert!(matches!(
            w.range_incl(&[(0, 6, 1)]),
            Err(GroupError::RankOutOfRange { .. })
        ));
        let a = w.incl(&[0, 1, 2]).unwrap();
        let b = w.incl(&[2, 3, 1]).unwrap();
        assert_eq!(a.union(&b).ranks(), &[0, 1, 2, 3]);
        assert_eq!(a.intersection(&b).ranks(), &[1, 2]);
        assert_eq!(a.difference(&b).ranks(), &[0]);
        assert_eq!(
            a.translate_ranks(&[0, 1, 2], &b).unwrap(),
            vec![None, Some(2), Some(0)]
        );
        assert_eq!(a.compare(&a.clone()), Compare::Ident);
        assert_eq!(a.compare(&w.incl(&[2, 0, 1]).unwrap()), Compare::Similar);
        assert_eq!(a.compare(&b), Compare::Unequal);
        assert_eq!(Group::new(vec![3, 3]), Err(GroupError::Duplicate(3)));
        assert!(Group::empty().is_empty());
    }

    #[test]
    fn huge_ranges_do_not_allocate() {
        let w = Group::world(4);
        assert!(w.range_incl(&[(0, 3, 1); 1000]).is_err());
        assert!(w.range_incl(&[(i32::MIN, i32::MAX, 1)]).is_err());
    }
}

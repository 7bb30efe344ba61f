//! MPI_Type_create_subarray and MPI_Type_create_darray: the part of an
//! n-dimensional array (C or Fortran order) that a sub-box, or one process of a
//! block / cyclic distribution, holds — built from `hindexed` levels, one per
//! dimension from the fastest-varying out, each resized to the whole dimension's
//! extent so the next level steps over full rows. Argument checks are
//! [`GridError`]s; nothing here panics on any input.

use super::{Datatype, TypeError};

/// How one dimension of a distributed array is split over the process grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distrib {
    /// The whole dimension (its process-grid size must be 1).
    None,
    /// Blocks of the given size (`None`: ceil(gsize / psize)).
    Block(Option<usize>),
    /// Round-robin blocks of the given size (`None`: 1).
    Cyclic(Option<usize>),
}

/// Why a subarray or darray is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GridError {
    /// Inconsistent arguments (MPI_ERR_ARG).
    Arg(&'static str),
    /// The type could not be built.
    Type(TypeError),
}

impl From<TypeError> for GridError {
    fn from(e: TypeError) -> Self {
        GridError::Type(e)
    }
}

/// One dimension: its full size and the runs `(first index, length)` taken.
struct Dim {
    size: usize,
    runs: Vec<(usize, usize)>,
}

/// Builds the type of the runs of every dimension; `dims` in memory order,
/// fastest-varying first.
fn build(dims: &[Dim], old: &Datatype) -> Result<Datatype, GridError> {
    let mut t = old.clone();
    let mut step = old.extent() as i128;
    for d in dims {
        let lens: Vec<usize> = d.runs.iter().map(|r| r.1).collect();
        let disps = d
            .runs
            .iter()
            .map(|r| isize::try_from(r.0 as i128 * step).map_err(|_| TypeError::Overflow))
            .collect::<Result<Vec<_>, _>>()?;
        let inner = t.resized(0, isize::try_from(step).map_err(|_| TypeError::Overflow)?)?;
        t = Datatype::hindexed(&lens, &disps, &inner)?;
        step = step
            .checked_mul(d.size as i128)
            .ok_or(TypeError::Overflow)?;
    }
    let ext = isize::try_from(step).map_err(|_| TypeError::Overflow)?;
    Ok(t.resized(0, ext)?)
}

fn in_memory_order(mut dims: Vec<Dim>, c_order: bool) -> Vec<Dim> {
    if c_order {
        dims.reverse();
    }
    dims
}

impl Datatype {
    /// MPI_Type_create_subarray: the box of `subsizes` at `starts` in an array of
    /// `sizes` elements of `old` (`c_order`: the last dimension varies fastest);
    /// extent: the whole array.
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        c_order: bool,
        old: &Datatype,
    ) -> Result<Datatype, GridError> {
        if sizes.is_empty() || sizes.len() != subsizes.len() || sizes.len() != starts.len() {
            return Err(GridError::Arg(
                "ndims must be positive and match the arrays",
            ));
        }
        let mut dims = Vec::with_capacity(sizes.len());
        for i in 0..sizes.len() {
            let (n, s, a) = (sizes[i], subsizes[i], starts[i]);
            if n == 0 || s == 0 || s > n || a > n - s {
                return Err(GridError::Arg(
                    "need 1 <= subsize <= size and start <= size - subsize",
                ));
            }
            dims.push(Dim {
                size: n,
                runs: vec![(a, s)],
            });
        }
        build(&in_memory_order(dims, c_order), old)
    }

    /// MPI_Type_create_darray: what process `rank` of a row-major grid of `psizes`
    /// processes holds of an array of `gsizes` elements distributed by `distribs`.
    pub fn darray(
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distrib],
        psizes: &[usize],
        c_order: bool,
        old: &Datatype,
    ) -> Result<Datatype, GridError> {
        let n = gsizes.len();
        if n == 0 || distribs.len() != n || psizes.len() != n {
            return Err(GridError::Arg(
                "ndims must be positive and match the arrays",
            ));
        }
        if psizes.contains(&0)
            || psizes.iter().try_fold(1usize, |a, &p| a.checked_mul(p)) != Some(size)
        {
            return Err(GridError::Arg(
                "the process grid's size is not the group size",
            ));
        }
        if rank >= size {
            return Err(GridError::Arg("rank out of range"));
        }
        // Process coordinates: row-major whatever the array order.
        let mut coords = vec![0; n];
        let mut r = rank;
        for i in (0..n).rev() {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
        let mut dims = Vec::with_capacity(n);
        for i in 0..n {
            let (g, p, c) = (gsizes[i], psizes[i], coords[i]);
            if g == 0 {
                return Err(GridError::Arg("global sizes must be positive"));
            }
            let runs = match distribs[i] {
                Distrib::None if p != 1 => {
                    return Err(GridError::Arg(
                        "MPI_DISTRIBUTE_NONE needs a process-grid size of 1",
                    ))
                }
                Distrib::None => vec![(0, g)],
                Distrib::Block(b) => {
                    let b = b.unwrap_or(g.div_ceil(p));
                    if b == 0 || b.checked_mul(p).is_none_or(|t| t < g) {
                        return Err(GridError::Arg(
                            "block size times processes must cover the dimension",
                        ));
                    }
                    let start = (c * b).min(g);
                    let len = b.min(g - start);
                    if len == 0 {
                        Vec::new()
                    } else {
                        vec![(start, len)]
                    }
                }
                Distrib::Cyclic(b) => {
                    let b = b.unwrap_or(1);
                    if b == 0 {
                        return Err(GridError::Arg("cyclic block size must be positive"));
                    }
                    let period = b.checked_mul(p).ok_or(TypeError::Overflow)?;
                    let mut v = Vec::new();
                    let mut s = c * b;
                    while s < g {
                        v.push((s, b.min(g - s)));
                        s += period;
                    }
                    v
                }
            };
            dims.push(Dim { size: g, runs });
        }
        build(&in_memory_order(dims, c_order), old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Basic;

    fn ints(t: &Datatype, total: usize) -> Vec<i32> {
        let src: Vec<i32> = (0..total as i32).collect();
        let mut out = vec![0u8; t.size()];
        // SAFETY: src holds the whole array the type spans.
        unsafe { t.pack(src.as_ptr().cast(), 1, &mut out) };
        out.chunks_exact(4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn subarray_picks_the_box_in_c_and_fortran_order() {
        let int = Datatype::basic(Basic::Int);
        // 4x5 array, 2x3 box at (1,2), C order: rows 1..3, columns 2..5.
        let t = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], true, &int).unwrap();
        assert_eq!(t.extent(), 4 * 5 * 4);
        assert_eq!(t.lb(), 0);
        assert_eq!(ints(&t, 20), vec![7, 8, 9, 12, 13, 14]);
        // Fortran order: the first index varies fastest (column-major 4x5).
        let t = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], false, &int).unwrap();
        assert_eq!(ints(&t, 20), vec![9, 10, 13, 14, 17, 18]);
        assert!(Datatype::subarray(&[4], &[5], &[0], true, &int).is_err());
        assert!(Datatype::subarray(&[4], &[2], &[3], true, &int).is_err());
        assert!(Datatype::subarray(&[], &[], &[], true, &int).is_err());
    }

    #[test]
    fn darray_block_and_cyclic_cover_the_array_once() {
        let int = Datatype::basic(Basic::Int);
        for (d, p) in [
            (
                [Distrib::Block(None), Distrib::Cyclic(Some(2))],
                [2usize, 3usize],
            ),
            ([Distrib::Cyclic(None), Distrib::None], [3, 1]),
            ([Distrib::Block(Some(4)), Distrib::Block(None)], [2, 2]),
        ] {
            let size = p[0] * p[1];
            let mut seen = vec![0; 7 * 9];
            for r in 0..size {
                let t = Datatype::darray(size, r, &[7, 9], &d, &p, true, &int).unwrap();
                assert_eq!(t.extent(), 7 * 9 * 4);
                for v in ints(&t, 63) {
                    seen[v as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{d:?} {p:?}: {seen:?}");
        }
        // Block of 7 rows on 2 processes: rank 0 has rows 0..4.
        let t = Datatype::darray(2, 0, &[7], &[Distrib::Block(None)], &[2], true, &int).unwrap();
        assert_eq!(ints(&t, 7), vec![0, 1, 2, 3]);
        let t =
            Datatype::darray(2, 1, &[7], &[Distrib::Cyclic(Some(2))], &[2], false, &int).unwrap();
        assert_eq!(ints(&t, 7), vec![2, 3, 6]);
        assert!(Datatype::darray(3, 0, &[7], &[Distrib::Block(None)], &[2], true, &int).is_err());
        assert!(
            Datatype::darray(2, 0, &[7], &[Distrib::Block(Some(3))], &[2], true, &int).is_err()
        );
        assert!(Datatype::darray(2, 0, &[7], &[Distrib::None], &[2], true, &int).is_err());
    }
}

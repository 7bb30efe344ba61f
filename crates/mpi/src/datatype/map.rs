//! The flattened type map: where the bytes of one element of a datatype are, as a
//! list of runs in type-map (packing) order. A run is `reps` blocks of `len` bytes,
//! the first at `off`, the next ones `stride` bytes apart; adjacent blocks are merged
//! into one, and blocks at a fixed stride into one run, as the map is built. Packing
//! is then a loop of copies over the runs, never a walk of the constructor tree.
//!
//! Building never allocates more than [`MAX_RUNS`] runs nor does more than
//! [`MAX_STEPS`] steps: a type whose map would be larger is refused.

use super::TypeError;

/// The most runs one datatype's map may hold (32 bytes each).
pub const MAX_RUNS: usize = 1 << 20;
/// The most runs appended while building one datatype (merged or not).
pub const MAX_STEPS: usize = 1 << 26;

/// `reps` blocks of `len` bytes at `off + i * stride` (`i < reps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub off: isize,
    pub len: usize,
    pub reps: usize,
    pub stride: isize,
}

impl Run {
    pub fn bytes(&self) -> usize {
        self.len * self.reps
    }
}

/// A map being built.
pub struct Builder {
    pub runs: Vec<Run>,
    steps: usize,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            runs: Vec::new(),
            steps: 0,
        }
    }

    /// Appends `r`, merging it into the last run when the blocks continue it.
    /// Offsets are known to fit the type's bounds (checked before building).
    fn push(&mut self, r: Run) -> Result<(), TypeError> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(TypeError::TooComplex);
        }
        if r.len == 0 || r.reps == 0 {
            return Ok(());
        }
        if let Some(last) = self.runs.last_mut() {
            let end = |x: &Run| x.off as i128 + x.reps as i128 * x.stride as i128;
            if last.reps == 1 && r.reps == 1 && last.off as i128 + last.len as i128 == r.off as i128
            {
                last.len += r.len;
                return Ok(());
            }
            if last.len == r.len {
                if last.reps == 1 && r.reps == 1 {
                    last.stride = r.off - last.off;
                    last.reps = 2;
                    return Ok(());
                }
                if last.reps >= 2 && r.reps == 1 && end(last) == r.off as i128 {
                    last.reps += 1;
                    return Ok(());
                }
                if last.reps >= 2
                    && r.reps >= 2
                    && last.stride == r.stride
                    && end(last) == r.off as i128
                {
                    last.reps += r.reps;
                    return Ok(());
                }
                if last.reps == 1
                    && r.reps >= 2
                    && r.off as i128 - last.off as i128 == r.stride as i128
                {
                    last.reps = r.reps + 1;
                    last.stride = r.stride;
                    return Ok(());
                }
            }
        }
        if self.runs.len() >= MAX_RUNS {
            return Err(TypeError::TooComplex);
        }
        self.runs.push(r);
        Ok(())
    }

    /// Appends `n` copies of the map `of` (whose element holds `size` bytes), the
    /// `k`-th shifted by `disp + k * stride`.
    pub fn repeat(
        &mut self,
        disp: isize,
        n: usize,
        stride: isize,
        of: &[Run],
    ) -> Result<(), TypeError> {
        if n == 0 || of.is_empty() {
            return Ok(());
        }
        let at = |k: usize, off: isize| -> isize {
            // In the type's bounds, which were checked to fit an isize.
            (disp as i128 + k as i128 * stride as i128 + off as i128) as isize
        };
        if let [u] = of {
            if n == 1 {
                return self.push(Run {
                    off: at(0, u.off),
                    ..*u
                });
            }
            if u.reps == 1 {
                if stride as i128 == u.len as i128 {
                    return self.push(Run {
                        off: at(0, u.off),
                        len: u.len * n,
                        reps: 1,
                        stride: 0,
                    });
                }
                return self.push(Run {
                    off: at(0, u.off),
                    len: u.len,
                    reps: n,
                    stride,
                });
            }
            if u.reps as i128 * u.stride as i128 == stride as i128 {
                return self.push(Run {
                    off: at(0, u.off),
                    reps: u.reps * n,
                    ..*u
                });
            }
        }
        for k in 0..n {
            for u in of {
                self.push(Run {
                    off: at(k, u.off),
                    ..*u
                })?;
            }
        }
        Ok(())
    }
}

/// Where each run starts in one element's packed bytes (the sums of the runs' bytes
/// before it), for a map of more than one run; empty for one run (nothing to skip).
pub fn starts(runs: &[Run]) -> Box<[usize]> {
    if runs.len() < 2 {
        return Box::new([]);
    }
    let mut at = 0usize;
    runs.iter()
        .map(|r| {
            let s = at;
            // The sum is one element's size, which fits a usize (checked when built).
            at += r.bytes();
            s
        })
        .collect()
}

/// Calls `f(memory offset, stream offset, len)` for the blocks holding packed bytes
/// `skip .. skip + max` of `count` elements of a type with map `runs` (whose
/// [`starts`] are `starts`, or empty: then found by a walk from the first run),
/// `size` bytes and extent `extent`; stream offsets count from `skip`. Returns the
/// bytes visited (less than `max` when the elements end first, or if an element's
/// address would not fit an `isize`).
#[allow(clippy::too_many_arguments)]
pub fn walk(
    runs: &[Run],
    starts: &[usize],
    size: usize,
    extent: isize,
    count: usize,
    skip: usize,
    max: usize,
    mut f: impl FnMut(isize, usize, usize),
) -> usize {
    if size == 0 || max == 0 {
        return 0;
    }
    let total = (count as u128) * (size as u128);
    let end = total.min(skip as u128 + max as u128);
    if (skip as u128) >= end {
        return 0;
    }
    let mut pos = skip as u128; // stream position
    let mut elem = (pos / size as u128) as usize;
    let mut within = (pos % size as u128) as usize;
    while pos < end {
        let Some(base) = (elem as i128)
            .checked_mul(extent as i128)
            .and_then(|b| isize::try_from(b).ok())
        else {
            break;
        };
        // A piece that starts inside an element (a long message's later pool blocks):
        // its run by binary search, so an irregular map of many runs (an indexed
        // type) costs O(log runs) per piece, not O(runs), which made a 1 MiB
        // message of 50 000 runs quadratic (session 31).
        let mut first = 0;
        if within > 0 && starts.len() == runs.len() {
            first = starts.partition_point(|&s| s <= within) - 1;
            within -= starts[first];
        }
        for r in &runs[first..] {
            if pos >= end {
                break;
            }
            let bytes = r.bytes();
            if within >= bytes {
                within -= bytes;
                continue;
            }
            let mut rep = within / r.len;
            let mut inner = within % r.len;
            within = 0;
            // The blocks in machine words (a vector of doubles is one 8-byte block
            // after another: this loop is the gather's and the scatter's cost per
            // block). `left <= max` and `done <= max` fit a usize; the offsets are
            // those of the map's bytes, which the caller's promise puts in the
            // address space, so the wrapping sums are the true ones.
            let mut left = (end - pos) as usize;
            let mut done = (pos - skip as u128) as usize;
            let mut at = base
                .wrapping_add(r.off)
                .wrapping_add((rep as isize).wrapping_mul(r.stride));
            while rep < r.reps && left > 0 {
                let len = (r.len - inner).min(left);
                f(at.wrapping_add(inner as isize), done, len);
                done += len;
                left -= len;
                inner = 0;
                rep += 1;
                at = at.wrapping_add(r.stride);
            }
            pos = skip as u128 + done as u128;
        }
        elem += 1;
        within = 0;
    }
    (pos - skip as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(off: isize, len: usize) -> Run {
        Run {
            off,
            len,
            reps: 1,
            stride: 0,
        }
    }

    #[test]
    fn adjacent_and_strided_blocks_merge() {
        let mut b = Builder::new();
        for k in 0..4 {
            b.push(one(k * 4, 4)).unwrap();
        }
        assert_eq!(b.runs, vec![one(0, 16)]);
        let mut b = Builder::new();
        for k in 0..5 {
            b.push(one(k * 12, 4)).unwrap();
        }
        assert_eq!(
            b.runs,
            vec![Run {
                off: 0,
                len: 4,
                reps: 5,
                stride: 12
            }]
        );
    }

    #[test]
    fn repeat_of_one_run_is_closed_form() {
        let mut b = Builder::new();
        let v = [Run {
            off: 0,
            len: 8,
            reps: 3,
            stride: 16,
        }];
        b.repeat(0, usize::MAX / 64, 48, &v).unwrap();
        assert_eq!(b.runs.len(), 1);
        assert_eq!(b.runs[0].reps, 3 * (usize::MAX / 64));
    }

    #[test]
    fn walk_skips_into_the_middle_of_a_block() {
        let runs = [
            one(0, 4),
            Run {
                off: 8,
                len: 2,
                reps: 2,
                stride: 4,
            },
        ];
        let mut seen = Vec::new();
        let n = walk(&runs, &[], 8, 16, 2, 5, 100, |m, s, l| seen.push((m, s, l)));
        assert_eq!(n, 11);
        assert_eq!(
            seen,
            vec![(9, 0, 1), (12, 1, 2), (16, 3, 4), (24, 7, 2), (28, 9, 2)]
        );
        let mut indexed = Vec::new();
        let n = walk(&runs, &starts(&runs), 8, 16, 2, 5, 100, |m, s, l| {
            indexed.push((m, s, l))
        });
        assert_eq!((n, indexed), (11, seen));
    }

    /// An irregular map (blocks of 1, 2, 3, 4, 1, ... doubles with one-double holes,
    /// bench/mpi/pingpong.c's `-t indexed`): a walk that finds its first run by the
    /// starts visits the same blocks as one from the first run, from every skip.
    #[test]
    fn walk_by_starts_visits_what_the_plain_walk_does() {
        let mut b = Builder::new();
        let mut at = 0;
        for k in 0..40 {
            let len = (k % 4 + 1) * 8;
            b.push(one(at, len)).unwrap();
            at += len as isize + 8;
        }
        let size: usize = b.runs.iter().map(Run::bytes).sum();
        assert!(b.runs.len() > 8, "the blocks did not merge");
        let st = starts(&b.runs);
        assert_eq!(st.len(), b.runs.len());
        for skip in 0..3 * size {
            for max in [1, 7, 64, 1000] {
                let (mut plain, mut fast) = (Vec::new(), Vec::new());
                let a = walk(&b.runs, &[], size, at, 3, skip, max, |m, s, l| {
                    plain.push((m, s, l))
                });
                let c = walk(&b.runs, &st, size, at, 3, skip, max, |m, s, l| {
                    fast.push((m, s, l))
                });
                assert_eq!((a, &plain), (c, &fast), "skip {skip}, max {max}");
                assert_eq!(a, max.min(3 * size - skip));
            }
        }
    }
}

//! MPI datatypes: the predefined ones ([`Basic`]) and the derived ones the type
//! constructors build, each an immutable, shared [`Datatype`] holding its bounds
//! (lb, extent, true lb/extent), its size, its signature (for element counts and
//! reductions) and a flattened map of its bytes, so that [`Datatype::pack`] and
//! [`Datatype::unpack`] are copy loops.
//!
//! Every constructor checks its arguments: sizes, bounds and counts that do not fit
//! (`isize`/`usize`) are [`TypeError::Overflow`], maps too large to hold are
//! [`TypeError::TooComplex`]; nothing wraps and nothing allocates in proportion to a
//! count. Handles, commit state and names belong to the C layer, not here.

mod basic;
pub mod external;
mod grid;
pub mod longdouble;
mod map;

pub use basic::{Basic, Class, Info, Num};
pub use grid::{Distrib, GridError};
pub use map::{Run, MAX_RUNS};

use std::sync::{Arc, OnceLock};

/// Why a constructor refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("the datatype's size or bounds do not fit the address space")]
    Overflow,
    #[error("the datatype's map is too large (more than {MAX_RUNS} runs)")]
    TooComplex,
    #[error("argument arrays of different lengths")]
    Lengths,
}

/// A datatype: cheap to clone (shared), never changed once built.
#[derive(Clone)]
pub struct Datatype(Arc<Inner>);

struct Inner {
    size: usize,
    lb: isize,
    ub: isize,
    true_lb: isize,
    true_ub: isize,
    /// lb and ub were set explicitly (MPI_Type_create_resized), directly or in a
    /// component: they then bound the type instead of its data.
    marked: bool,
    align: usize,
    runs: Box<[Run]>,
    /// Where each run of `runs` starts in one element's packed bytes, when there are
    /// several ([`map::starts`]): a piece of a long message that begins inside an
    /// element finds its run by binary search, not by a walk from the first.
    starts: Box<[usize]>,
    /// Basic elements in one element of this type.
    elems: u64,
    /// The signature: components in order, each repeated.
    parts: Box<[(Datatype, usize)]>,
    basic: Option<Basic>,
    uniform: Option<Basic>,
}

impl std::fmt::Debug for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = &self.0;
        f.debug_struct("Datatype")
            .field("basic", &i.basic)
            .field("size", &i.size)
            .field("lb", &i.lb)
            .field("extent", &self.extent())
            .field("true_lb", &i.true_lb)
            .field("true_extent", &self.true_extent())
            .field("runs", &i.runs.len())
            .finish()
    }
}

/// `n` copies of `ty`, the first at `disp`, the next `stride` bytes apart.
struct Place<'a> {
    disp: i128,
    n: usize,
    stride: i128,
    ty: &'a Datatype,
}

impl Place<'_> {
    /// The lowest and highest displacement of a copy.
    fn span(&self) -> (i128, i128) {
        let last = self.disp + (self.n as i128 - 1) * self.stride;
        (self.disp.min(last), self.disp.max(last))
    }
}

fn fits(v: i128) -> Result<isize, TypeError> {
    isize::try_from(v).map_err(|_| TypeError::Overflow)
}

fn round_up(v: i128, align: usize) -> i128 {
    let a = align.max(1) as i128;
    v.div_euclid(a) * a + if v.rem_euclid(a) == 0 { 0 } else { a }
}

impl Datatype {
    /// A predefined type; pairs take their parts from `known` (the simple types,
    /// already built).
    fn from_basic(b: Basic, known: &[Option<Datatype>]) -> Datatype {
        let info = b.info();
        let mut runs = vec![Run {
            off: 0,
            len: info.size,
            reps: 1,
            stride: 0,
        }];
        let mut parts: Vec<(Datatype, usize)> = Vec::new();
        let mut elems = 1;
        if let Some((v, i, off)) = b.pair_parts() {
            let vs = v.size();
            runs = if off == vs {
                vec![Run {
                    off: 0,
                    len: info.size,
                    reps: 1,
                    stride: 0,
                }]
            } else {
                vec![
                    Run {
                        off: 0,
                        len: vs,
                        reps: 1,
                        stride: 0,
                    },
                    Run {
                        off: off as isize,
                        len: i.size(),
                        reps: 1,
                        stride: 0,
                    },
                ]
            };
            let part = |x: Basic| {
                known[x.index()]
                    .clone()
                    .unwrap_or_else(|| Datatype::from_basic(x, &[]))
            };
            parts = vec![(part(v), 1), (part(i), 1)];
            elems = 2;
        }
        let true_ub = runs.last().map_or(0, |r| r.off + r.len as isize);
        Datatype(Arc::new(Inner {
            size: info.size,
            lb: 0,
            ub: info.extent as isize,
            true_lb: 0,
            true_ub,
            marked: false,
            align: info.align,
            starts: map::starts(&runs),
            runs: runs.into(),
            elems,
            parts: parts.into(),
            basic: Some(b),
            uniform: Some(b),
        }))
    }

    /// A predefined type (shared: every call returns the same object).
    pub fn basic(b: Basic) -> Datatype {
        static ALL: OnceLock<Vec<Datatype>> = OnceLock::new();
        ALL.get_or_init(|| {
            let mut v: Vec<Option<Datatype>> = Basic::ALL
                .iter()
                .map(|&b| (!b.is_pair()).then(|| Datatype::from_basic(b, &[])))
                .collect();
            for b in Basic::ALL.into_iter().filter(|b| b.is_pair()) {
                v[b.index()] = Some(Datatype::from_basic(b, &v));
            }
            v.into_iter().flatten().collect()
        })[b.index()]
        .clone()
    }

    /// The general constructor: copies of components placed in type-map order.
    /// `epsilon` pads the extent to the alignment of the components (MPI_Type_create_struct).
    fn build(places: &[Place<'_>], epsilon: bool) -> Result<Datatype, TypeError> {
        let mut size: u128 = 0;
        let mut elems: u64 = 0;
        let (mut lb, mut ub) = (i128::MAX, i128::MIN);
        let (mut mlb, mut mub) = (i128::MAX, i128::MIN);
        let (mut tlb, mut tub) = (i128::MAX, i128::MIN);
        let mut marked = false;
        let mut align = 1;
        for p in places.iter().filter(|p| p.n > 0) {
            let t = &p.ty.0;
            align = align.max(t.align);
            size += p.n as u128 * t.size as u128;
            elems = (p.n as u64)
                .checked_mul(t.elems)
                .and_then(|e| e.checked_add(elems))
                .ok_or(TypeError::Overflow)?;
            let (lo, hi) = p.span();
            if t.marked {
                marked = true;
                mlb = mlb.min(lo + t.lb as i128);
                mub = mub.max(hi + t.ub as i128);
            }
            if t.size > 0 {
                if !t.marked {
                    lb = lb.min(lo + t.lb as i128);
                    ub = ub.max(hi + t.ub as i128);
                }
                tlb = tlb.min(lo + t.true_lb as i128);
                tub = tub.max(hi + t.true_ub as i128);
            }
        }
        if size > isize::MAX as u128 {
            return Err(TypeError::Overflow);
        }
        if marked {
            (lb, ub) = (mlb, mub);
        } else if lb > ub {
            (lb, ub) = (0, 0);
        } else if epsilon {
            ub = lb + round_up(ub - lb, align);
        }
        if tlb > tub {
            (tlb, tub) = (0, 0);
        }
        let (lb, ub, true_lb, true_ub) = (fits(lb)?, fits(ub)?, fits(tlb)?, fits(tub)?);
        fits(ub as i128 - lb as i128)?;
        fits(true_ub as i128 - true_lb as i128)?;
        let mut b = map::Builder::new();
        for p in places.iter().filter(|p| p.n > 0 && p.ty.0.size > 0) {
            // Every copy lies within the checked true bounds, so these fit.
            b.repeat(fits(p.disp)?, p.n, fits(p.stride)?, &p.ty.0.runs)?;
        }
        let data: Vec<&Place> = places
            .iter()
            .filter(|p| p.n > 0 && p.ty.0.size > 0)
            .collect();
        let uniform = match data.split_first() {
            Some((first, rest)) => first
                .ty
                .0
                .uniform
                .filter(|u| rest.iter().all(|p| p.ty.0.uniform == Some(*u))),
            None => None,
        };
        let parts: Vec<(Datatype, usize)> = data.iter().map(|p| (p.ty.clone(), p.n)).collect();
        Ok(Datatype(Arc::new(Inner {
            size: size as usize,
            lb,
            ub,
            true_lb,
            true_ub,
            marked,
            align,
            starts: map::starts(&b.runs),
            runs: b.runs.into(),
            elems,
            parts: parts.into(),
            basic: None,
            uniform,
        })))
    }

    /// `n` copies of `old`, `stride` bytes apart (the shape of contiguous and of
    /// each (h)vector block).
    fn repeat(n: usize, stride: i128, old: &Datatype) -> Result<Datatype, TypeError> {
        Datatype::build(
            &[Place {
                disp: 0,
                n,
                stride,
                ty: old,
            }],
            false,
        )
    }

    /// MPI_Type_contiguous.
    pub fn contiguous(count: usize, old: &Datatype) -> Result<Datatype, TypeError> {
        Datatype::repeat(count, old.extent() as i128, old)
    }

    /// MPI_Type_vector: `count` blocks of `blocklen` elements, `stride` elements apart.
    pub fn vector(
        count: usize,
        blocklen: usize,
        stride: isize,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        Datatype::hvector_i128(count, blocklen, stride as i128 * old.extent() as i128, old)
    }

    /// MPI_Type_create_hvector: as [`Datatype::vector`] with a stride in bytes.
    pub fn hvector(
        count: usize,
        blocklen: usize,
        stride: isize,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        Datatype::hvector_i128(count, blocklen, stride as i128, old)
    }

    fn hvector_i128(
        count: usize,
        blocklen: usize,
        stride: i128,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let block = Datatype::contiguous(blocklen, old)?;
        Datatype::repeat(count, stride, &block)
    }

    fn indexed_i128(
        blocklens: &[usize],
        disps: impl Iterator<Item = i128>,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let e = old.extent() as i128;
        let places: Vec<Place> = blocklens
            .iter()
            .zip(disps)
            .map(|(&n, disp)| Place {
                disp,
                n,
                stride: e,
                ty: old,
            })
            .collect();
        Datatype::build(&places, false)
    }

    /// MPI_Type_indexed: blocks of `blocklens[i]` elements at `disps[i]` extents.
    pub fn indexed(
        blocklens: &[usize],
        disps: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        if blocklens.len() != disps.len() {
            return Err(TypeError::Lengths);
        }
        let e = old.extent() as i128;
        Datatype::indexed_i128(blocklens, disps.iter().map(|&d| d as i128 * e), old)
    }

    /// MPI_Type_create_hindexed: as [`Datatype::indexed`] with displacements in bytes.
    pub fn hindexed(
        blocklens: &[usize],
        disps: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        if blocklens.len() != disps.len() {
            return Err(TypeError::Lengths);
        }
        Datatype::indexed_i128(blocklens, disps.iter().map(|&d| d as i128), old)
    }

    /// MPI_Type_create_indexed_block.
    pub fn indexed_block(
        blocklen: usize,
        disps: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let e = old.extent() as i128;
        let places: Vec<Place> = disps
            .iter()
            .map(|&d| Place {
                disp: d as i128 * e,
                n: blocklen,
                stride: e,
                ty: old,
            })
            .collect();
        Datatype::build(&places, false)
    }

    /// MPI_Type_create_hindexed_block.
    pub fn hindexed_block(
        blocklen: usize,
        disps: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let e = old.extent() as i128;
        let places: Vec<Place> = disps
            .iter()
            .map(|&d| Place {
                disp: d as i128,
                n: blocklen,
                stride: e,
                ty: old,
            })
            .collect();
        Datatype::build(&places, false)
    }

    /// MPI_Type_create_struct: blocks of `blocklens[i]` elements of `types[i]` at
    /// byte displacements `disps[i]`; the extent is padded to the alignment of the
    /// components unless a component has explicit bounds.
    pub fn create_struct(
        blocklens: &[usize],
        disps: &[isize],
        types: &[Datatype],
    ) -> Result<Datatype, TypeError> {
        if blocklens.len() != disps.len() || blocklens.len() != types.len() {
            return Err(TypeError::Lengths);
        }
        let places: Vec<Place> = blocklens
            .iter()
            .zip(disps)
            .zip(types)
            .map(|((&n, &d), ty)| Place {
                disp: d as i128,
                n,
                stride: ty.extent() as i128,
                ty,
            })
            .collect();
        Datatype::build(&places, true)
    }

    /// MPI_Type_create_resized: the same data with lower bound `lb` and extent `extent`.
    pub fn resized(&self, lb: isize, extent: isize) -> Result<Datatype, TypeError> {
        let ub = fits(lb as i128 + extent as i128)?;
        let i = &self.0;
        Ok(Datatype(Arc::new(Inner {
            size: i.size,
            lb,
            ub,
            true_lb: i.true_lb,
            true_ub: i.true_ub,
            marked: true,
            align: i.align,
            runs: i.runs.clone(),
            starts: i.starts.clone(),
            elems: i.elems,
            parts: vec![(self.clone(), 1)].into(),
            basic: None,
            uniform: i.uniform,
        })))
    }

    /// MPI_Type_dup: the same type (datatypes are immutable, so it is shared).
    pub fn dup(&self) -> Result<Datatype, TypeError> {
        Ok(self.clone())
    }

    /// Bytes of data in one element (MPI_Type_size).
    pub fn size(&self) -> usize {
        self.0.size
    }
    pub fn extent(&self) -> isize {
        self.0.ub - self.0.lb
    }
    pub fn lb(&self) -> isize {
        self.0.lb
    }
    pub fn ub(&self) -> isize {
        self.0.ub
    }
    pub fn true_lb(&self) -> isize {
        self.0.true_lb
    }
    pub fn true_extent(&self) -> isize {
        self.0.true_ub - self.0.true_lb
    }
    /// The largest alignment of the basic types in this type.
    pub fn align(&self) -> usize {
        self.0.align
    }
    /// The predefined type this is, if it is one.
    pub fn as_basic(&self) -> Option<Basic> {
        self.0.basic
    }
    /// Basic elements in one element (pairs count two).
    pub fn elements_per(&self) -> u64 {
        self.0.elems
    }
    /// The flattened map of one element.
    pub fn runs(&self) -> &[Run] {
        &self.0.runs
    }
    /// The same object (not merely an equal type).
    pub fn same(&self, other: &Datatype) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether `count` elements are one block of `count * size` bytes at
    /// `buf + true_lb` (any count: the extent equals the size).
    pub fn is_contiguous(&self) -> bool {
        let i = &self.0;
        i.size == 0
            || (matches!(&*i.runs, [r] if r.reps == 1 && r.len == i.size)
                && self.extent() == i.size as isize)
    }

    /// Packs the first `out.len()` bytes (at most `count * size`) of `count`
    /// elements at `base`; returns the bytes written.
    ///
    /// # Safety
    /// Every byte of the `count` elements' map at `base` is readable (`base` may be
    /// NULL with absolute displacements: MPI_BOTTOM) and does not overlap `out`.
    pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) -> usize {
        // SAFETY: forwarded contract.
        unsafe { self.pack_at(base, count, 0, out) }
    }

    /// Packs bytes `skip .. skip + out.len()` of the packed form of `count` elements
    /// (a piece of a long message); returns the bytes written.
    ///
    /// # Safety
    /// As [`Datatype::pack`].
    pub unsafe fn pack_at(
        &self,
        base: *const u8,
        count: usize,
        skip: usize,
        out: &mut [u8],
    ) -> usize {
        // SAFETY: forwarded contract; `out` is writable for its length.
        unsafe { self.pack_raw(base, count, skip, out.as_mut_ptr(), out.len()) }
    }

    /// [`Datatype::pack_at`] into `n` bytes at `dst` (a pool block or staging
    /// buffer of the channel, written in place: no slice of shared memory is made).
    ///
    /// # Safety
    /// As [`Datatype::pack`], and `dst` is writable for `n` bytes.
    pub unsafe fn pack_raw(
        &self,
        base: *const u8,
        count: usize,
        skip: usize,
        dst: *mut u8,
        n: usize,
    ) -> usize {
        if self.is_contiguous() {
            let total = (count as u128 * self.0.size as u128).saturating_sub(skip as u128);
            let n = total.min(n as u128) as usize;
            let src = addr(base, self.0.true_lb as i128 + skip as i128);
            // SAFETY: the caller's contract: the n bytes from skip are readable and
            // do not overlap dst, which holds n bytes.
            unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
            n
        } else {
            map::walk(
                &self.0.runs,
                &self.0.starts,
                self.0.size,
                self.extent(),
                count,
                skip,
                n,
                |m, s, len| {
                    // SAFETY: the block is part of the map (readable by the caller's
                    // contract); s + len <= n by the walk.
                    unsafe { copy_block(addr(base, m as i128), dst.add(s), len) }
                },
            )
        }
    }

    /// Unpacks `data`, the packed form (or its first bytes: a partial message) of up
    /// to `count` elements, into memory at `base`; returns the bytes used.
    ///
    /// # Safety
    /// Every byte of the `count` elements' map at `base` is writable and does not
    /// overlap `data`.
    pub unsafe fn unpack(&self, data: &[u8], base: *mut u8, count: usize) -> usize {
        // SAFETY: forwarded contract.
        unsafe { self.unpack_at(data, base, count, 0) }
    }

    /// Unpacks `data` as bytes `skip ..` of the packed form of `count` elements.
    ///
    /// # Safety
    /// As [`Datatype::unpack`].
    pub unsafe fn unpack_at(&self, data: &[u8], base: *mut u8, count: usize, skip: usize) -> usize {
        // SAFETY: forwarded contract; `data` is readable for its length.
        unsafe { self.unpack_raw(data.as_ptr(), data.len(), base, count, skip) }
    }

    /// [`Datatype::unpack_at`] of `n` bytes at `src` (a pool block of the channel,
    /// read in place).
    ///
    /// # Safety
    /// As [`Datatype::unpack`], and `src` is readable for `n` bytes.
    pub unsafe fn unpack_raw(
        &self,
        src: *const u8,
        n: usize,
        base: *mut u8,
        count: usize,
        skip: usize,
    ) -> usize {
        if self.is_contiguous() {
            let total = (count as u128 * self.0.size as u128).saturating_sub(skip as u128);
            let n = total.min(n as u128) as usize;
            let dst = addr(base, self.0.true_lb as i128 + skip as i128).cast_mut();
            // SAFETY: the caller's contract: writable, no overlap; src holds n bytes.
            unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
            return n;
        }
        map::walk(
            &self.0.runs,
            &self.0.starts,
            self.0.size,
            self.extent(),
            count,
            skip,
            n,
            |m, s, len| {
                // SAFETY: the block is part of the map (writable by the caller's
                // contract); s + len <= n by the walk.
                unsafe { copy_block(src.add(s), addr(base, m as i128).cast_mut(), len) }
            },
        )
    }

    /// The basic elements in `bytes` of packed data (MPI_Get_elements); `None`
    /// when the bytes end inside a basic element (MPI_UNDEFINED).
    pub fn elements(&self, bytes: usize) -> Option<usize> {
        let size = self.0.size;
        if size == 0 {
            return (bytes == 0).then_some(0);
        }
        let full = (bytes / size) as u128 * self.0.elems as u128;
        let part = self.partial(bytes % size)? as u128;
        usize::try_from(full + part).ok()
    }

    /// Elements in the first `rem` (< size) bytes of one element.
    fn partial(&self, mut rem: usize) -> Option<u64> {
        if rem == 0 {
            return Some(0);
        }
        let mut acc = 0u64;
        for (t, n) in self.0.parts.iter() {
            let s = t.0.size;
            if s == 0 {
                continue;
            }
            let chunk = s as u128 * *n as u128;
            if rem as u128 >= chunk {
                acc += *n as u64 * t.0.elems;
                rem -= chunk as usize;
                if rem == 0 {
                    return Some(acc);
                }
                continue;
            }
            acc += (rem / s) as u64 * t.0.elems;
            return Some(acc + t.partial(rem % s)?);
        }
        None
    }

    /// Calls `f` for the basic types one element's type signature is made of (a pair
    /// type gives its two halves): each at least once, maybe more, in no promised
    /// order. Visits each part once, whatever its count, so it is cheap on any type.
    pub fn for_each_basic(&self, f: &mut impl FnMut(Basic)) {
        match self.0.basic {
            Some(b) => match b.pair_parts() {
                Some((v, i, _)) => {
                    f(v);
                    f(i);
                }
                None => f(b),
            },
            None => {
                for (part, _) in self.0.parts.iter() {
                    part.for_each_basic(f);
                }
            }
        }
    }

    /// The one basic type every element of this type is made of, if there is one
    /// (what a predefined reduction needs).
    pub fn uniform_basic(&self) -> Option<Basic> {
        self.0.uniform
    }
}

/// `base + off` as a pointer: within `base`'s object when `base` is not NULL, an
/// absolute address when it is (MPI_BOTTOM).
/// One block of a map: blocks of up to 16 bytes (a vector of doubles, a column) are
/// two overlapping loads and stores, not a call into the C library's `memcpy` per
/// block (which cost the strided ping-pong about half its time; docs/mpi-p2p.md).
///
/// # Safety
/// As `copy_nonoverlapping`.
#[inline(always)]
unsafe fn copy_block(s: *const u8, d: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: each access covers `[0, k)` or `[n - k, n)` with `k <= n`, inside both
    // ranges by the caller's promise.
    unsafe {
        match n {
            8 => wr(d.cast::<u64>(), rd(s.cast::<u64>())),
            9..=16 => {
                let (a, b) = (rd(s.cast::<u64>()), rd(s.add(n - 8).cast::<u64>()));
                wr(d.cast::<u64>(), a);
                wr(d.add(n - 8).cast::<u64>(), b);
            }
            4..=7 => {
                let (a, b) = (rd(s.cast::<u32>()), rd(s.add(n - 4).cast::<u32>()));
                wr(d.cast::<u32>(), a);
                wr(d.add(n - 4).cast::<u32>(), b);
            }
            1..=3 => {
                *d = *s;
                *d.add(n / 2) = *s.add(n / 2);
                *d.add(n - 1) = *s.add(n - 1);
            }
            _ => std::ptr::copy_nonoverlapping(s, d, n),
        }
    }
}

fn addr(base: *const u8, off: i128) -> *const u8 {
    if base.is_null() {
        // An absolute address the program took with MPI_Get_address.
        std::ptr::with_exposed_provenance(off as usize)
    } else {
        base.wrapping_offset(off as isize)
    }
}

#[cfg(test)]
mod tests;

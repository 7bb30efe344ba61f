//! File views (MPI_File_set_view / get_view): a displacement, an etype and a
//! filetype tiled from the displacement on, and a data representation
//! ([`datarep`](super::datarep)).
//! The filetype's layout is its flattened map (`Datatype::runs`, the same map
//! packing uses): a view position (in bytes of the view's data stream) is found in
//! its tile by a binary search over the runs' byte prefix, then the walk goes on
//! block by block. Also MPI_File_get_type_extent and MPI_File_get_byte_offset.
//!
//! An etype or filetype must keep its blocks at non-negative offsets that never
//! decrease (the standard's "monotonically nondecreasing"), and not overlap in a
//! file open for writing: anything else is MPI_ERR_IO (ROMIO's class), never a
//! silently wrong layout.

use super::*;
use crate::datatype;
use crate::ffi::{mpi_fn, put};
use crate::type_decode::Recipe;
use myrix_mpi::datatype::Datatype;
use std::ffi::CStr;
use std::os::raw::c_char;

/// How get_view hands a type back: a predefined handle as it is, a derived type as
/// a new handle on the same layout and recipe.
#[derive(Clone)]
pub(crate) enum Saved {
    Predefined(MPI_Datatype),
    Derived(Arc<Datatype>, Arc<Recipe>),
}

impl Saved {
    fn of(h: MPI_Datatype) -> Result<Saved, c_int> {
        if datatype::predefined(h).is_some() {
            return Ok(Saved::Predefined(h));
        }
        let (dt, _, recipe) = datatype::parts(h).ok_or(MPI_ERR_TYPE)?;
        Ok(Saved::Derived(dt, recipe))
    }

    fn handle(&self) -> Result<MPI_Datatype, c_int> {
        match self {
            Saved::Predefined(h) => Ok(*h),
            Saved::Derived(dt, r) => datatype::insert_parts(dt.clone(), true, r.clone()),
        }
    }
}

/// A view.
pub struct View {
    pub(crate) disp: u64,
    etype_h: Saved,
    ftype_h: Saved,
    /// Bytes of one etype (> 0).
    pub(crate) esize: u64,
    /// Data bytes of one filetype tile (> 0, a multiple of `esize`).
    fsize: u64,
    /// The filetype's extent: tiles lie this far apart (> 0).
    fext: u64,
    /// The tile's blocks, or `None` when the filetype is one contiguous block.
    runs: Option<Vec<myrix_mpi::datatype::Run>>,
    /// Data bytes before each run of `runs`.
    before: Vec<u64>,
    /// Where the contiguous filetype's data starts (its true lb).
    first: u64,
    /// How data is represented in the file.
    pub(crate) rep: super::datarep::Rep,
}

impl View {
    /// The view every file starts with: displacement 0, etype and filetype
    /// MPI_BYTE.
    pub(crate) fn bytes() -> View {
        View {
            disp: 0,
            etype_h: Saved::Predefined(MPI_BYTE),
            ftype_h: Saved::Predefined(MPI_BYTE),
            esize: 1,
            fsize: 1,
            fext: 1,
            runs: None,
            before: Vec::new(),
            first: 0,
            rep: super::datarep::Rep::Native,
        }
    }

    /// A view of `ftype` (handle `fh_`) tiled from `disp`, counted in `etype`s.
    fn new(
        disp: u64,
        etype: MPI_Datatype,
        ftype: MPI_Datatype,
        writable: bool,
    ) -> Result<View, c_int> {
        let et = datatype::lookup_committed(etype)?;
        let ft = datatype::lookup_committed(ftype)?;
        let saved = (Saved::of(etype)?, Saved::of(ftype)?);
        View::of_types(disp, &et, &ft, writable, saved)
    }

    /// [`View::new`] on the types themselves.
    fn of_types(
        disp: u64,
        et: &Datatype,
        ft: &Datatype,
        writable: bool,
        (etype_h, ftype_h): (Saved, Saved),
    ) -> Result<View, c_int> {
        check_layout(et, writable)?;
        check_layout(ft, writable)?;
        let esize = et.size() as u64;
        let fsize = ft.size() as u64;
        if esize == 0 || fsize == 0 || fsize % esize != 0 || ft.extent() <= 0 {
            return Err(MPI_ERR_TYPE);
        }
        let fext = ft.extent() as u64;
        let mut v = View {
            disp,
            etype_h,
            ftype_h,
            esize,
            fsize,
            fext,
            runs: None,
            before: Vec::new(),
            first: 0,
            rep: super::datarep::Rep::Native,
        };
        if ft.is_contiguous() {
            v.first = u64::try_from(ft.true_lb()).map_err(|_| MPI_ERR_IO)?;
            return Ok(v);
        }
        let runs = ft.runs().to_vec();
        v.before = runs
            .iter()
            .scan(0u64, |acc, r| {
                let b = *acc;
                *acc += r.bytes() as u64;
                Some(b)
            })
            .collect();
        v.runs = Some(runs);
        Ok(v)
    }

    /// Calls `f(file offset, len)` for the file blocks holding view bytes
    /// `s .. s + n` in order, adjacent blocks merged; stops early when `f` says
    /// `false` (end of file).
    pub(crate) fn blocks(
        &self,
        s: u64,
        n: u64,
        mut f: impl FnMut(u64, u64) -> Result<bool, c_int>,
    ) -> Result<(), c_int> {
        if n == 0 {
            return Ok(());
        }
        let too_far = |v: i128| u64::try_from(v).ok().filter(|&v| v <= i64::MAX as u64);
        let Some(runs) = &self.runs else {
            let start = self.disp as i128 + self.first as i128 + s as i128;
            let start = too_far(start).ok_or(MPI_ERR_ARG)?;
            too_far(start as i128 + n as i128).ok_or(MPI_ERR_ARG)?;
            f(start, n)?;
            return Ok(());
        };
        let mut pending: Option<(u64, u64)> = None;
        let (mut tile, mut within) = (s / self.fsize, s % self.fsize);
        let mut left = n;
        while left > 0 {
            let base = self.disp as i128 + tile as i128 * self.fext as i128;
            let i = self.before.partition_point(|&b| b <= within) - 1;
            let mut rem = within - self.before[i];
            for r in &runs[i..] {
                let len = r.len as u64;
                let (mut rep, mut inner) = (rem / len, rem % len);
                rem = 0;
                while rep < r.reps as u64 && left > 0 {
                    let take = (len - inner).min(left);
                    let off = base + r.off as i128 + rep as i128 * r.stride as i128 + inner as i128;
                    let off = too_far(off).ok_or(MPI_ERR_ARG)?;
                    pending = match pending {
                        Some((o, l)) if o + l == off => Some((o, l + take)),
                        Some((o, l)) => {
                            if !f(o, l)? {
                                return Ok(());
                            }
                            Some((off, take))
                        }
                        None => Some((off, take)),
                    };
                    left -= take;
                    inner = 0;
                    rep += 1;
                }
                if left == 0 {
                    break;
                }
            }
            tile += 1;
            within = 0;
        }
        if let Some((o, l)) = pending {
            f(o, l)?;
        }
        Ok(())
    }

    /// The file offset of view byte `s` (MPI_File_get_byte_offset).
    pub(crate) fn file_offset(&self, s: u64) -> Result<u64, c_int> {
        let mut at = None;
        self.blocks(s, 1, |o, _| {
            at = Some(o);
            Ok(false)
        })?;
        at.ok_or(MPI_ERR_ARG)
    }

    /// The view bytes lying before file offset `off`: where, in the view, the file
    /// ends when it is `off` bytes long.
    pub(crate) fn stream_before(&self, off: u64) -> u64 {
        let Some(rel) = off.checked_sub(self.disp) else {
            return 0;
        };
        let Some(runs) = &self.runs else {
            return rel.saturating_sub(self.first).min(u64::MAX / 2);
        };
        let (tile, r) = (rel / self.fext, (rel % self.fext) as i128);
        let mut part = 0u64;
        for run in runs {
            let (o, len, stride) = (run.off as i128, run.len as i128, run.stride.max(1) as i128);
            if r <= o {
                break;
            }
            let m = ((r - o + stride - 1) / stride).min(run.reps as i128);
            let last = o + (m - 1) * stride;
            part += ((m - 1) * len + len.min(r - last)) as u64;
        }
        tile.saturating_mul(self.fsize).saturating_add(part)
    }
}

/// The standard's rule for an etype's or filetype's blocks: at non-negative
/// offsets that never decrease, and, in a file open for writing, that never
/// overlap (within a tile or with the next tile). MPI_ERR_IO otherwise, as ROMIO
/// answers.
fn check_layout(t: &Datatype, writable: bool) -> Result<(), c_int> {
    let runs = t.runs();
    let (mut start, mut end) = (i128::MIN, i128::MIN);
    for r in runs {
        let (off, len, reps, stride) = (
            r.off as i128,
            r.len as i128,
            r.reps as i128,
            r.stride as i128,
        );
        let decreasing = off < 0 || off < start || (reps > 1 && stride < 0);
        let overlapping = off < end || (reps > 1 && stride < len);
        if decreasing || (writable && overlapping) {
            return Err(MPI_ERR_IO);
        }
        start = off + (reps - 1) * stride;
        end = end.max(start + len);
    }
    let first = runs.first().map_or(0, |r| r.off as i128);
    if writable && t.size() > 0 && end > first + t.extent() as i128 {
        return Err(MPI_ERR_IO);
    }
    Ok(())
}

/// `disp` of MPI_File_set_view on `f`: MPI_DISPLACEMENT_CURRENT (only for
/// MPI_MODE_SEQUENTIAL files) is where the shared file pointer is, in bytes.
fn displacement(f: &FileObj, disp: MPI_Offset, name: &str) -> Result<u64, c_int> {
    // Every rank of a sequential file asks, whatever its own disp, so that rank 0's
    // answer is always awaited by all.
    let current = if f.amode & MPI_MODE_SEQUENTIAL != 0 {
        let v = f.state().view.clone();
        let at = on_root(f, name, || {
            shared::get(f).and_then(|p| p.checked_mul(v.esize).ok_or(MPI_ERR_ARG))
        })?;
        Some(v.file_offset(at).unwrap_or(at))
    } else {
        None
    };
    if disp == MPI_DISPLACEMENT_CURRENT {
        return current.ok_or(MPI_ERR_ARG);
    }
    u64::try_from(disp).map_err(|_| MPI_ERR_ARG)
}

/// The representation `datarep` names (`MPI_ERR_UNSUPPORTED_DATAREP` if none).
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string.
unsafe fn check_datarep(datarep: *const c_char) -> Result<super::datarep::Rep, c_int> {
    if datarep.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: a NUL-terminated string by the C contract.
    let d = unsafe { CStr::from_ptr(datarep) }.to_bytes();
    super::datarep::Rep::by_name(d)
}

mpi_fn! {
    /// Collective: checks alike everywhere, then resets the individual and shared
    /// file pointers to 0.
    fn MPI_File_set_view / PMPI_File_set_view(fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) -> c_int {
        let name = "MPI_File_set_view";
        let r = lookup(fh).and_then(|f| {
            // SAFETY: the C contract for datarep.
            let mine = unsafe { check_datarep(datarep) }.and_then(|rep| {
                let hints = crate::info::pairs_or_empty(info)?;
                if f.state().split.is_some() {
                    return Err(MPI_ERR_IO);
                }
                Ok((rep, hints))
            });
            let (rep, hints) = match &mine {
                Ok((rep, hints)) => (rep.clone(), Ok(hints.clone())),
                Err(e) => (super::datarep::Rep::Native, Err(*e)),
            };
            agree(&f.cref, mine.map(|_| ()), name)?;
            let d = displacement(&f, disp, name);
            let writable = f.amode & MPI_MODE_RDONLY == 0;
            let v = d.and_then(|d| View::new(d, etype, filetype, writable)).and_then(|mut v| {
                rep.check_type(&*datatype::lookup(etype)?)?;
                rep.check_type(&*datatype::lookup(filetype)?)?;
                v.rep = rep;
                Ok(v)
            });
            let ok = v.as_ref().map(|_| ()).map_err(|&e| e);
            agree(&f.cref, ok, name)?;
            let v = v?;
            {
                let mut st = f.state();
                st.view = Arc::new(v);
                st.pos = 0;
                open::merge_hints(&mut st.info, hints.unwrap_or_default());
            }
            on_root(&f, name, || shared::set(&f, 0).map(|()| 0))?;
            Ok(())
        });
        finish(fh, name, r)
    }
}

mpi_fn! {
    fn MPI_File_get_view / PMPI_File_get_view(fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if disp.is_null() || etype.is_null() || filetype.is_null() || datarep.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let v = f.state().view.clone();
            let e = v.etype_h.handle()?;
            let t = match v.ftype_h.handle() {
                Ok(t) => t,
                Err(c) => {
                    if matches!(v.etype_h, Saved::Derived(..)) {
                        datatype::forget(e);
                    }
                    return Err(c);
                }
            };
            // SAFETY: non-NULL out-parameters of the C caller; datarep holds
            // MPI_MAX_DATAREP_STRING bytes by the standard.
            unsafe {
                put(disp, v.disp as MPI_Offset)?;
                put(etype, e)?;
                put(filetype, t)?;
                super::datarep::put_name(&v.rep, datarep)?;
            }
            Ok(())
        });
        finish(fh, "MPI_File_get_view", r)
    }
}

/// The extent of `dt` in the file under the view's representation.
fn type_extent(fh: MPI_File, dt: MPI_Datatype) -> Result<i64, c_int> {
    let rep = lookup(fh)?.state().view.rep.clone();
    rep.extent(&*datatype::lookup(dt)?)
}

mpi_fn! {
    fn MPI_File_get_type_extent / PMPI_File_get_type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
        let r = type_extent(fh, datatype).and_then(|e| {
            // SAFETY: NULL or an MPI_Aint.
            unsafe { put(extent, e as MPI_Aint) }
        });
        finish(fh, "MPI_File_get_type_extent", r)
    }
}

mpi_fn! {
    fn MPI_File_get_type_extent_c / PMPI_File_get_type_extent_c(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) -> c_int {
        let r = type_extent(fh, datatype).and_then(|e| {
            // SAFETY: NULL or an MPI_Count.
            unsafe { put(extent, e) }
        });
        finish(fh, "MPI_File_get_type_extent_c", r)
    }
}

mpi_fn! {
    fn MPI_File_get_byte_offset / PMPI_File_get_byte_offset(fh: MPI_File, offset: MPI_Offset, disp: *mut MPI_Offset) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if f.amode & MPI_MODE_SEQUENTIAL != 0 {
                return Err(MPI_ERR_UNSUPPORTED_OPERATION);
            }
            let o = u64::try_from(offset).map_err(|_| MPI_ERR_ARG)?;
            let v = f.state().view.clone();
            let s = o.checked_mul(v.esize).ok_or(MPI_ERR_ARG)?;
            let b = v.file_offset(s)?;
            // SAFETY: NULL or an MPI_Offset.
            unsafe { put(disp, b as MPI_Offset) }
        });
        finish(fh, "MPI_File_get_byte_offset", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_mpi::datatype::Basic;

    fn view(disp: u64, ft: &Datatype, writable: bool) -> Result<View, c_int> {
        let byte = Datatype::basic(Basic::Byte);
        let s = || Saved::Predefined(MPI_BYTE);
        View::of_types(disp, &byte, ft, writable, (s(), s()))
    }

    fn blocks(v: &View, s: u64, n: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        v.blocks(s, n, |o, l| {
            out.push((o, l));
            Ok(true)
        })
        .unwrap();
        out
    }

    /// The file offset of every view byte, one by one, from the type's own map
    /// walked by hand: the reference the block walk must match.
    fn by_hand(disp: u64, ft: &Datatype, n: u64) -> Vec<u64> {
        let mut tile = Vec::new();
        for r in ft.runs() {
            for k in 0..r.reps as isize {
                for b in 0..r.len as isize {
                    tile.push((r.off + k * r.stride + b) as u64);
                }
            }
        }
        (0..n)
            .map(|s| {
                let (t, w) = (s / tile.len() as u64, s % tile.len() as u64);
                disp + t * ft.extent() as u64 + tile[w as usize]
            })
            .collect()
    }

    #[test]
    fn blocks_follow_the_filetype_map_from_any_position() {
        let int = Datatype::basic(Basic::Int);
        // 3 blocks of 2 ints, 5 ints apart, then a hole to an extent of 64 bytes.
        let vec = Datatype::vector(3, 2, 5, &int).unwrap();
        let ft = vec.resized(0, 64).unwrap();
        let v = view(100, &ft, true).unwrap();
        let want = by_hand(100, &ft, 200);
        for s in [0u64, 1, 7, 8, 23, 24, 25, 70] {
            let n = 200 - s;
            let got: Vec<u64> = blocks(&v, s, n)
                .into_iter()
                .flat_map(|(o, l)| o..o + l)
                .collect();
            assert_eq!(got, want[s as usize..], "from {s}");
        }
        // Adjacent blocks merge: a tile's first block is 8 bytes.
        assert_eq!(blocks(&v, 0, 8), vec![(100, 8)]);
        assert_eq!(v.file_offset(8).unwrap(), 120);
        assert_eq!(v.file_offset(24).unwrap(), 164);
    }

    #[test]
    fn the_end_of_the_file_maps_back_to_a_view_position() {
        let int = Datatype::basic(Basic::Int);
        let ft = Datatype::vector(2, 1, 2, &int)
            .unwrap()
            .resized(0, 16)
            .unwrap();
        let v = view(4, &ft, true).unwrap();
        // Data at file bytes 4..8, 12..16, 20..24, 28..32, ...
        for (size, want) in [
            (0, 0),
            (4, 0),
            (6, 2),
            (8, 4),
            (12, 4),
            (14, 6),
            (20, 8),
            (33, 16),
        ] {
            assert_eq!(v.stream_before(size), want, "file of {size} bytes");
        }
    }

    #[test]
    fn decreasing_or_overlapping_blocks_are_refused_as_romio_does() {
        let int = Datatype::basic(Basic::Int);
        let backwards = Datatype::indexed(&[1, 1], &[3, 0], &int).unwrap();
        assert_eq!(view(0, &backwards, false).err(), Some(MPI_ERR_IO));
        let overlap = Datatype::indexed(&[3, 1], &[0, 1], &int).unwrap();
        assert_eq!(view(0, &overlap, true).err(), Some(MPI_ERR_IO));
        // Overlap is allowed in a file no one writes.
        assert!(view(0, &overlap, false).is_ok());
        let negative = Datatype::indexed(&[1, 1], &[-2, 2], &int).unwrap();
        assert_eq!(view(0, &negative, false).err(), Some(MPI_ERR_IO));
    }
}

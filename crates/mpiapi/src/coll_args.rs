//! What the C collectives share: argument checks (counts, roots, buffers, in-place),
//! packing to and from the contiguous bytes `myrix_mpi::coll` works on, and
//! reductions of packed elements through `op`. Never panics on bad arguments.

use crate::abi::*;
use crate::comm::CommRef;
use crate::{datatype, op};
use myrix_mpi::coll::{CollError, ReduceOp};
use myrix_mpi::datatype::Datatype;
use std::borrow::Cow;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub(crate) type Dt = Arc<Datatype>;

/// The MPI error code of a collective's failure (reported on stderr when it is
/// not the program's fault).
pub fn coll_code(e: &CollError, name: &str) -> c_int {
    match e {
        CollError::Root { .. } => MPI_ERR_ROOT,
        CollError::Args(_) => MPI_ERR_ARG,
        CollError::Length { .. } | CollError::Truncated { .. } => MPI_ERR_TRUNCATE,
        CollError::Transport(why) => {
            crate::ffi::say!("myrix MPI: {name}: {why}");
            MPI_ERR_OTHER
        }
        CollError::Unavailable(why) => {
            crate::ffi::say!("myrix MPI: {name}: point-to-point not yet available: {why}");
            MPI_ERR_UNSUPPORTED_OPERATION
        }
    }
}

/// A communicator for one collective: MPI_COMM_WORLD's and MPI_COMM_SELF's
/// borrowed, and any other's from its record once a collective made one
/// (`coll_cache.rs`; no lock nor reference count on the hot path), else from the
/// table. The borrow is for the call (a communicator is not freed during a call on
/// it): nothing keeps it.
pub(crate) fn comm_ref(comm: MPI_Comm, name: &str) -> Result<Cow<'static, CommRef>, c_int> {
    if let Some(c) = crate::comm::predefined_ref(comm) {
        crate::runtime::check(name)?;
        return Ok(Cow::Borrowed(c));
    }
    if let Some(f) = super::shm::known(comm) {
        crate::runtime::check(name)?;
        return Ok(Cow::Borrowed(&f.cref));
    }
    let c = crate::comm::lookup(comm, name)?;
    super::shm::note(comm, &c);
    Ok(Cow::Owned(c))
}

pub(crate) fn count(c: c_int) -> Result<usize, c_int> {
    usize::try_from(c).map_err(|_| MPI_ERR_COUNT)
}

pub(crate) fn in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

pub(crate) fn check_root(root: c_int, c: &CommRef) -> Result<usize, c_int> {
    usize::try_from(root)
        .ok()
        .filter(|&r| r < c.ranks.len())
        .ok_or(MPI_ERR_ROOT)
}

pub(crate) fn bytes(n: usize, t: &Datatype) -> Result<usize, c_int> {
    t.size().checked_mul(n).ok_or(MPI_ERR_COUNT)
}

/// The address of element `i` of an array of `t` at `buf` (no access).
pub(crate) fn elem(buf: *const c_void, i: isize, t: &Dt) -> Result<*mut u8, c_int> {
    let off = i.checked_mul(t.extent()).ok_or(MPI_ERR_COUNT)?;
    Ok(buf.cast::<u8>().wrapping_offset(off).cast_mut())
}

/// A buffer for `n` elements of `t` must not be NULL (unless `t` has absolute
/// addresses: MPI_BOTTOM).
pub(crate) fn need(buf: *const c_void, n: usize, t: &Datatype) -> Result<(), c_int> {
    if n > 0 && t.size() > 0 && buf.is_null() && t.true_lb() == 0 {
        Err(MPI_ERR_BUFFER)
    } else {
        Ok(())
    }
}

/// `n` elements of `t` at `buf`, packed.
///
/// # Safety
/// `buf` holds `n` elements of `t` (the C contract).
pub(crate) unsafe fn pack(buf: *const u8, n: usize, t: &Dt) -> Result<Vec<u8>, c_int> {
    need(buf.cast(), n, t)?;
    let mut v = vec![0u8; bytes(n, t)?];
    if !v.is_empty() {
        // SAFETY: the caller's contract; v holds n elements' bytes.
        unsafe { t.pack(buf, n, &mut v) };
    }
    Ok(v)
}

/// Stores packed `data` as `n` elements of `t` at `buf`.
///
/// # Safety
/// `buf` is valid for writing `n` elements of `t` (the C contract).
pub(crate) unsafe fn unpack(data: &[u8], buf: *mut u8, n: usize, t: &Dt) -> Result<(), c_int> {
    if data.is_empty() {
        return Ok(());
    }
    need(buf.cast_const().cast(), n, t)?;
    // SAFETY: the caller's contract.
    unsafe { t.unpack(data, buf, n) };
    Ok(())
}

/// The memory of `n` elements of `t` at `buf` when it is their packed form (a
/// contiguous type), else None.
///
/// # Safety
/// `buf` holds `n` elements of `t` (the C contract), and nothing else refers to them
/// while the slice lives.
#[inline]
pub(crate) unsafe fn contig<'a>(
    buf: *const c_void,
    n: usize,
    t: &Datatype,
) -> Result<Option<&'a mut [u8]>, c_int> {
    if !t.is_contiguous() {
        return Ok(None);
    }
    let len = bytes(n, t)?;
    if len == 0 {
        return Ok(Some(&mut []));
    }
    need(buf, n, t)?;
    let p = buf.cast::<u8>().wrapping_offset(t.true_lb()).cast_mut();
    // SAFETY: a contiguous type's n elements are len bytes at buf + true_lb.
    Ok(Some(unsafe { std::slice::from_raw_parts_mut(p, len) }))
}

/// Bytes per element of a predefined type whose elements are their own packed
/// form (contiguous from the buffer's start); None for derived types, invalid
/// handles and predefined types with a gap (MPI_DOUBLE_INT…). Remembered per
/// handle (predefined types are 0x200..0x300 in the ABI): on the rooted calls' hot
/// path one load instead of the type's table, `Datatype` and `contig` (about 50
/// instructions a call, callgrind).
#[inline]
pub(crate) fn plain_size(dt: MPI_Datatype) -> Option<usize> {
    // 0: not asked yet; u32::MAX: no; else the size + 1.
    static SEEN: [AtomicU32; 256] = [const { AtomicU32::new(0) }; 256];
    let slot = SEEN.get(dt.checked_sub(0x200)?)?;
    match slot.load(Ordering::Relaxed) {
        0 => plain_size_slow(dt, slot),
        u32::MAX => None,
        s => Some(s as usize - 1),
    }
}

#[cold]
fn plain_size_slow(dt: MPI_Datatype, slot: &AtomicU32) -> Option<usize> {
    let size = datatype::predefined_ref(dt)
        .filter(|t| t.is_contiguous() && t.true_lb() == 0)
        .map(|t| t.size())
        .filter(|&s| s < u32::MAX as usize - 1);
    slot.store(size.map_or(u32::MAX, |s| s as u32 + 1), Ordering::Relaxed);
    size
}

/// The `len` bytes at `buf` (elements of a [`plain_size`] type); None when `buf`
/// is NULL and `len` is not 0 (the general path then reports MPI_ERR_BUFFER).
///
/// # Safety
/// `buf` holds `len` bytes (the C contract), and nothing else refers to them while
/// the slice lives.
#[inline]
pub(crate) unsafe fn raw<'a>(buf: *const c_void, len: usize) -> Option<&'a mut [u8]> {
    if len == 0 {
        return Some(&mut []);
    }
    if buf.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>().cast_mut(), len) })
}

/// `n` ints at `p`.
///
/// # Safety
/// `p` is NULL or valid for `n` ints.
pub(crate) unsafe fn ints<'a>(p: *const c_int, n: usize) -> Result<&'a [c_int], c_int> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, n ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Per-rank counts (elements) from C, and the same in packed bytes.
pub(crate) fn counts(cs: &[c_int], t: &Dt) -> Result<(Vec<usize>, Vec<usize>), c_int> {
    let el: Vec<usize> = cs.iter().map(|&c| count(c)).collect::<Result<_, _>>()?;
    let by = el.iter().map(|&n| bytes(n, t)).collect::<Result<_, _>>()?;
    Ok((el, by))
}

/// Packs block `i` (`el[i]` elements at element `displs[i]` of `buf`) for each rank.
///
/// # Safety
/// `buf` holds those blocks (the C contract).
pub(crate) unsafe fn pack_blocks(
    buf: *const c_void,
    el: &[usize],
    displs: &[c_int],
    t: &Dt,
) -> Result<Vec<u8>, c_int> {
    let mut v = Vec::new();
    for (&n, &d) in el.iter().zip(displs) {
        // SAFETY: the caller's contract for block i.
        v.extend(unsafe { pack(elem(buf, d as isize, t)?, n, t) }?);
    }
    Ok(v)
}

/// Unpacks packed `data` (blocks of `by[i]` bytes end to end) into block `i`
/// (`el[i]` elements at element `displs[i]`) of `buf`, skipping block `skip`.
///
/// # Safety
/// `buf` is valid for writing those blocks (the C contract).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn unpack_blocks(
    data: &[u8],
    buf: *mut c_void,
    el: &[usize],
    by: &[usize],
    displs: &[c_int],
    t: &Dt,
    skip: Option<usize>,
) -> Result<(), c_int> {
    let mut at = 0;
    for i in 0..el.len() {
        let chunk = data.get(at..at + by[i]).ok_or(MPI_ERR_INTERN)?;
        at += by[i];
        if Some(i) != skip {
            // SAFETY: the caller's contract for block i.
            unsafe { unpack(chunk, elem(buf, displs[i] as isize, t)?, el[i], t) }?;
        }
    }
    Ok(())
}

/// The displacements, in elements, of `n` blocks of `each` elements end to end.
pub(crate) fn regular(n: usize, each: usize) -> Result<Vec<c_int>, c_int> {
    (0..n)
        .map(|i| {
            i.checked_mul(each)
                .and_then(|d| c_int::try_from(d).ok())
                .ok_or(MPI_ERR_COUNT)
        })
        .collect()
}

/// An op on a datatype, ready to combine packed elements.
pub(crate) struct Reduction {
    pub(crate) op: op::OpRef,
    pub(crate) dt: MPI_Datatype,
    pub(crate) t: Dt,
    pub(crate) commutative: bool,
}

pub(crate) fn reduction(opx: MPI_Op, dt: MPI_Datatype) -> Result<Reduction, c_int> {
    let t = datatype::lookup(dt)?;
    let o = op::lookup(opx)?;
    // Refuses an op the type does not support before anything is sent.
    op::check(&o, dt)?;
    Ok(Reduction {
        commutative: o.commutative(),
        op: o,
        dt,
        t,
    })
}

impl Reduction {
    /// `inout = input op inout` on packed whole elements.
    pub(crate) fn apply(&self, input: &[u8], inout: &mut [u8]) -> Result<(), c_int> {
        op::apply_packed(&self.op, self.dt, input, inout)
    }

    /// Runs a collective with this reduction; the first error the op met wins.
    pub(crate) fn run(
        &self,
        name: &str,
        f: impl FnOnce(&mut ReduceOp) -> Result<(), CollError>,
    ) -> Result<(), c_int> {
        let mut err = None;
        let r = {
            let mut g = |input: &[u8], inout: &mut [u8]| {
                if err.is_none() {
                    err = self.apply(input, inout).err();
                }
            };
            let mut rop = ReduceOp {
                op: &mut g,
                commutative: self.commutative,
            };
            f(&mut rop)
        };
        r.map_err(|e| coll_code(&e, name))?;
        err.map_or(Ok(()), Err)
    }
}

pub(crate) fn run(name: &str, r: Result<(), CollError>) -> Result<(), c_int> {
    r.map_err(|e| coll_code(&e, name))
}

/// The checks every rank can make alone, run at the entry of each blocking
/// collective before any step, whatever path (intercommunicator, by levels, flat)
/// then runs it. A program whose ranks all pass the same bad value (a negative
/// count, MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_IN_PLACE where the standard forbids
/// it) then gets the error on every rank at once under MPI_ERRORS_RETURN; were the
/// value noticed only inside a path, after a rank had started its steps, the others
/// could wait for it forever. Only values significant at every rank are checked
/// here (a gather's receive side, significant at the root alone, is the paths'
/// business), and nothing that needs the communicator, so the hot paths pay a few
/// comparisons.
pub(crate) mod entry {
    use super::in_place;
    use crate::abi::*;
    use std::os::raw::{c_int, c_void};

    pub(crate) fn count(c: c_int) -> Result<(), c_int> {
        if c < 0 {
            Err(MPI_ERR_COUNT)
        } else {
            Ok(())
        }
    }

    pub(crate) fn dtype(t: MPI_Datatype) -> Result<(), c_int> {
        if t == MPI_DATATYPE_NULL {
            Err(MPI_ERR_TYPE)
        } else {
            Ok(())
        }
    }

    fn op(o: MPI_Op) -> Result<(), c_int> {
        if o == MPI_OP_NULL {
            Err(MPI_ERR_OP)
        } else {
            Ok(())
        }
    }

    /// A buffer that may not be MPI_IN_PLACE.
    pub(crate) fn not_in_place(p: *const c_void) -> Result<(), c_int> {
        if in_place(p) {
            Err(MPI_ERR_BUFFER)
        } else {
            Ok(())
        }
    }

    /// A side (`n` elements of `t`) that every rank passes, unless it is MPI_IN_PLACE
    /// (where the standard allows it, the paths check it).
    pub(crate) fn side(buf: *const c_void, n: c_int, t: MPI_Datatype) -> Result<(), c_int> {
        if in_place(buf) {
            return Ok(());
        }
        count(n)?;
        dtype(t)
    }

    /// MPI_Bcast's count and type (a NULL or in-place buffer: `coll_stand.rs`).
    pub(crate) fn bcast_sizes(n: c_int, t: MPI_Datatype) -> Result<(), c_int> {
        count(n)?;
        dtype(t)
    }

    /// MPI_Reduce: count, type and op at every rank (which buffer may be in place
    /// depends on the root: the paths check it).
    pub(crate) fn reduce(n: c_int, t: MPI_Datatype, o: MPI_Op) -> Result<(), c_int> {
        count(n)?;
        dtype(t)?;
        op(o)
    }

    /// The same memory as both send and receive buffer (not MPI_IN_PLACE): erroneous,
    /// and a path would read what it is writing. Refused before any step, so the
    /// program can post a correct call (MPICH's errors/coll/noalias tests).
    fn aliased(send: *const c_void, recv: *const c_void) -> bool {
        send == recv && !send.is_null() && !in_place(send)
    }

    /// MPI_Allreduce, Scan, Exscan, Reduce_scatter(_block) (`n` 0 for the v-form,
    /// whose counts the paths check): the receive buffer is never in place, nor the
    /// send buffer's memory.
    pub(crate) fn all(
        send: *const c_void,
        recv: *const c_void,
        n: c_int,
        t: MPI_Datatype,
        o: MPI_Op,
    ) -> Result<(), c_int> {
        not_in_place(recv)?;
        if n > 0 && aliased(send, recv) {
            return Err(MPI_ERR_BUFFER);
        }
        reduce(n, t, o)
    }

    /// A v-form's buffers aliased (Reduce_scatter, Alltoallv, Alltoallw and their
    /// nonblocking forms): refused whatever the counts, which only a path reads.
    pub(crate) fn v_aliased(send: *const c_void, recv: *const c_void) -> Result<(), c_int> {
        if aliased(send, recv) {
            Err(MPI_ERR_BUFFER)
        } else {
            Ok(())
        }
    }

    /// A rooted call's buffers aliased at the root, where both are significant
    /// (MPI_Reduce, Gather(v), Scatter(v)); the communicator is looked up only when
    /// the two pointers are equal.
    pub(crate) fn root_aliased(
        send: *const c_void,
        recv: *const c_void,
        nonempty: bool,
        root: c_int,
        comm: MPI_Comm,
    ) -> Result<(), c_int> {
        if !nonempty || !aliased(send, recv) {
            return Ok(());
        }
        let Ok(c) = super::comm_ref(comm, "") else {
            return Ok(());
        };
        match super::check_root(root, &c) {
            Ok(r) if c.inter.is_none() && r == c.rank as usize => Err(MPI_ERR_BUFFER),
            _ => Ok(()),
        }
    }

    /// MPI_Allgather(v), Alltoall(v): the receive buffer is never in place, the send
    /// side is checked unless in place; `rn` 0 for the v-forms.
    pub(crate) fn exchange(
        send: *const c_void,
        sn: c_int,
        st: MPI_Datatype,
        recv: *const c_void,
        rn: c_int,
        rt: MPI_Datatype,
    ) -> Result<(), c_int> {
        not_in_place(recv)?;
        if (sn > 0 || rn > 0) && aliased(send, recv) {
            return Err(MPI_ERR_BUFFER);
        }
        side(send, sn, st)?;
        count(rn)?;
        dtype(rt)
    }

    /// MPI_Allgather(v) and their nonblocking forms: a send buffer sharing memory with
    /// the receive blocks (`&recvbuf[rank]` passed instead of MPI_IN_PLACE) is
    /// erroneous, and the paths copy as if apart; refused on every path before any
    /// step (MPICH's errors/coll/noalias2 and noalias3). The regular form's blocks are
    /// taken as one run; the v-form's each on its own. Handles and arrays the call
    /// reports on later are skipped here.
    ///
    /// # Safety
    /// The v-form's arrays hold one int per rank (the C contract).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn send_apart(
        send: *const c_void,
        sn: c_int,
        st: MPI_Datatype,
        recv: *const c_void,
        rn: c_int,
        v: Option<(*const c_int, *const c_int)>,
        rt: MPI_Datatype,
        comm: MPI_Comm,
    ) -> Result<(), c_int> {
        if in_place(send) || sn <= 0 {
            return Ok(());
        }
        let Ok(c) = super::comm_ref(comm, "") else {
            return Ok(());
        };
        let (Ok(s), Ok(r)) = (crate::datatype::lookup(st), crate::datatype::lookup(rt)) else {
            return Ok(());
        };
        let n = c.ranks.len();
        let mine = span(send, sn as usize, &s, 0);
        let hit = match v {
            _ if c.inter.is_some() => false,
            None => usize::try_from(rn)
                .ok()
                .and_then(|k| k.checked_mul(n))
                .is_some_and(|k| meets(mine, span(recv, k, &r, 0))),
            Some((cs, ds)) => {
                // SAFETY: one int per rank in each array (the caller's contract).
                let (Ok(cs), Ok(ds)) =
                    (unsafe { super::ints(cs, n) }, unsafe { super::ints(ds, n) })
                else {
                    return Ok(());
                };
                cs.iter().zip(ds).any(|(&k, &d)| {
                    usize::try_from(k).is_ok_and(|k| meets(mine, span(recv, k, &r, d as isize)))
                })
            }
        };
        if hit {
            Err(MPI_ERR_BUFFER)
        } else {
            Ok(())
        }
    }

    /// The addresses `[lo, hi)` that `n` elements of `t` touch, starting `at` extents
    /// from `p`; None when empty or beyond the address space.
    fn span(p: *const c_void, n: usize, t: &super::Datatype, at: isize) -> Option<(isize, isize)> {
        let n = isize::try_from(n).ok().filter(|&n| n > 0)?;
        let first = (p as isize).checked_add(at.checked_mul(t.extent())?)?;
        let step = (n - 1).checked_mul(t.extent())?;
        let base = first.checked_add(t.true_lb())?;
        let (lo, hi) = (
            base.checked_add(step.min(0))?,
            base.checked_add(t.true_extent())?
                .checked_add(step.max(0))?,
        );
        (hi > lo).then_some((lo, hi))
    }

    /// Whether two spans share a byte.
    fn meets(a: Option<(isize, isize)>, b: Option<(isize, isize)>) -> bool {
        matches!((a, b), (Some((a0, a1)), Some((b0, b1))) if a0 < b1 && b0 < a1)
    }
}

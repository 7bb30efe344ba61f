//! Reduction operation handles: the predefined ops by their ABI values, user ops
//! (MPI_Op_create / _c) in a [`Table`], MPI_Op_free, MPI_Op_commutative, and
//! [`apply`] / [`apply_packed`], what reductions call: `inout = in op inout`.
//!
//! User functions are called as the standard says, `(invec, inoutvec, &len,
//! &datatype)`, with no lock held (they may call MPI). Never dereferences a handle.

use crate::abi::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use myrix_mpi::datatype::Datatype;
use myrix_mpi::op::{self as core, BuiltinOp, OpError};
use std::os::raw::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// `MPI_User_function`.
pub type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
/// `MPI_User_function_c` (MPI_Count length).
pub type UserFnC =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);

/// What an op handle stands for.
#[derive(Clone, Copy, Debug)]
pub enum OpRef {
    Builtin(BuiltinOp),
    User { f: UserFn, commute: bool },
    UserC { f: UserFnC, commute: bool },
}

impl OpRef {
    pub fn commutative(&self) -> bool {
        match *self {
            OpRef::Builtin(b) => core::is_commutative(b),
            OpRef::User { commute, .. } | OpRef::UserC { commute, .. } => commute,
        }
    }
}

static OPS: Mutex<Table<OpRef>> = Mutex::new(Table::new(base::OP));

fn ops() -> MutexGuard<'static, Table<OpRef>> {
    OPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The predefined op behind an ABI handle.
pub fn builtin(op: MPI_Op) -> Option<BuiltinOp> {
    use BuiltinOp::*;
    Some(match op {
        MPI_SUM => Sum,
        MPI_MIN => Min,
        MPI_MAX => Max,
        MPI_PROD => Prod,
        MPI_BAND => Band,
        MPI_BOR => Bor,
        MPI_BXOR => Bxor,
        MPI_LAND => Land,
        MPI_LOR => Lor,
        MPI_LXOR => Lxor,
        MPI_MINLOC => Minloc,
        MPI_MAXLOC => Maxloc,
        MPI_REPLACE => Replace,
        MPI_NO_OP => NoOp,
        _ => return None,
    })
}

/// The op behind a handle (`MPI_ERR_OP` for MPI_OP_NULL, freed or unknown ones).
pub fn lookup(op: MPI_Op) -> Result<OpRef, c_int> {
    if let Some(b) = builtin(op) {
        return Ok(OpRef::Builtin(b));
    }
    ops().get(op).copied().ok_or(MPI_ERR_OP)
}

fn op_error(e: OpError) -> c_int {
    match e {
        OpError::NotDefined { .. } => MPI_ERR_OP,
        OpError::Unsupported { .. } => MPI_ERR_UNSUPPORTED_OPERATION,
        OpError::Length { .. } => MPI_ERR_INTERN,
    }
}

/// Calls a user function on `count` elements in memory layout.
///
/// # Safety
/// `input` and `inout` hold `count` elements of `dt`.
unsafe fn call_user(
    op: &OpRef,
    mut dt: MPI_Datatype,
    input: *const c_void,
    inout: *mut c_void,
    count: usize,
) -> Result<(), c_int> {
    match *op {
        OpRef::User { f, .. } => {
            let mut len = c_int::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
            // SAFETY: the standard's calling convention; the buffers are the caller's.
            unsafe { f(input.cast_mut(), inout, &mut len, &mut dt) };
        }
        OpRef::UserC { f, .. } => {
            let mut len = MPI_Count::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
            // SAFETY: as above.
            unsafe { f(input.cast_mut(), inout, &mut len, &mut dt) };
        }
        OpRef::Builtin(_) => return Err(MPI_ERR_INTERN),
    }
    Ok(())
}

/// Whether `op` is defined on `dt` (MPI_ERR_OP if not): checked before a
/// collective sends anything. User ops accept every type.
pub fn check(op: &OpRef, dt: MPI_Datatype) -> Result<(), c_int> {
    let t = datatype::lookup(dt)?;
    match *op {
        OpRef::Builtin(b) => {
            let basic = t.uniform_basic().ok_or(MPI_ERR_OP)?;
            core::reduce(b, basic, &[], &mut []).map_err(op_error)
        }
        _ => Ok(()),
    }
}

/// `inout = input op inout` for `count` elements of `dt` in memory (MPI_Reduce_local
/// and the reductions' local steps).
///
/// # Safety
/// `input` and `inout` hold `count` elements of `dt` each (their maps readable,
/// resp. writable), and do not overlap.
pub unsafe fn apply(
    op: &OpRef,
    dt: MPI_Datatype,
    input: *const c_void,
    inout: *mut c_void,
    count: c_int,
) -> Result<(), c_int> {
    let count = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    let t = datatype::lookup(dt)?;
    if count == 0 {
        return Ok(());
    }
    if input.is_null() || inout.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    let OpRef::Builtin(b) = *op else {
        // SAFETY: the caller's contract.
        return unsafe { call_user(op, dt, input, inout, count) };
    };
    let basic = t.uniform_basic().ok_or(MPI_ERR_OP)?;
    let n = count.checked_mul(t.size()).ok_or(MPI_ERR_COUNT)?;
    if t.is_contiguous() {
        let at = |p: *const c_void| p.cast::<u8>().wrapping_offset(t.true_lb());
        // SAFETY: a contiguous type's count elements are n bytes at buf + true_lb;
        // the buffers do not overlap (the caller's contract).
        let (i, io) = unsafe {
            (
                std::slice::from_raw_parts(at(input), n),
                std::slice::from_raw_parts_mut(at(inout).cast_mut(), n),
            )
        };
        return core::reduce(b, basic, i, io).map_err(op_error);
    }
    let mut a = vec![0u8; n];
    let mut c = vec![0u8; n];
    // SAFETY: the caller's contract: both maps are readable.
    unsafe {
        t.pack(input.cast(), count, &mut a);
        t.pack(inout.cast(), count, &mut c);
    }
    core::reduce(b, basic, &a, &mut c).map_err(op_error)?;
    // SAFETY: the caller's contract: inout's map is writable.
    unsafe { t.unpack(&c, inout.cast(), count) };
    Ok(())
}

/// `inout = input op inout` on packed data (as `Datatype::pack` writes it) of whole
/// elements of `dt`: what collectives over packed buffers call. A user function
/// gets the elements in memory layout (unpacked into scratch memory first unless
/// the type is contiguous).
pub fn apply_packed(
    op: &OpRef,
    dt: MPI_Datatype,
    input: &[u8],
    inout: &mut [u8],
) -> Result<(), c_int> {
    let t = datatype::lookup(dt)?;
    if input.len() != inout.len() {
        return Err(MPI_ERR_INTERN);
    }
    if t.size() == 0 || input.is_empty() {
        return Ok(());
    }
    if input.len() % t.size() != 0 {
        return Err(MPI_ERR_INTERN);
    }
    let count = input.len() / t.size();
    match *op {
        OpRef::Builtin(b) => {
            let basic = t.uniform_basic().ok_or(MPI_ERR_OP)?;
            core::reduce(b, basic, input, inout).map_err(op_error)
        }
        _ if t.is_contiguous() => {
            let at = |p: *const u8| p.wrapping_offset(-t.true_lb()).cast::<c_void>();
            // SAFETY: for a contiguous type, the packed bytes are the elements in
            // memory at buf + true_lb; the two slices are distinct.
            unsafe {
                call_user(
                    op,
                    dt,
                    at(input.as_ptr()),
                    at(inout.as_ptr()).cast_mut(),
                    count,
                )
            }
        }
        _ => {
            let (mut a, off) = scratch(&t, count)?;
            let (mut c, _) = scratch(&t, count)?;
            let pa = a.as_mut_ptr().cast::<u8>().wrapping_offset(off);
            let pc = c.as_mut_ptr().cast::<u8>().wrapping_offset(off);
            // SAFETY: the scratch buffers cover count elements' maps from pa / pc.
            unsafe {
                t.unpack(input, pa, count);
                t.unpack(inout, pc, count);
                call_user(op, dt, pa.cast(), pc.cast(), count)?;
                t.pack(pc, count, inout);
            }
            Ok(())
        }
    }
}

/// Zeroed, 16-byte aligned memory covering `count` elements of `t`, and the offset
/// of element 0 in it.
fn scratch(t: &Datatype, count: usize) -> Result<(Vec<u128>, isize), c_int> {
    let ext = t.extent() as i128;
    let last = (count as i128 - 1) * ext;
    let lo = t.true_lb() as i128 + last.min(0);
    let hi = t.true_lb() as i128 + t.true_extent() as i128 + last.max(0);
    let bytes = usize::try_from(hi - lo).map_err(|_| MPI_ERR_NO_MEM)?;
    let off = isize::try_from(-lo).map_err(|_| MPI_ERR_NO_MEM)?;
    Ok((vec![0u128; bytes.div_ceil(16)], off))
}

fn create(op: OpRef, out: *mut MPI_Op) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = ops().insert(op).ok_or(MPI_ERR_NO_MEM)?;
    // SAFETY: out is non-NULL and an MPI_Op by the C contract.
    unsafe { put(out, h) }
}

mpi_fn! {
    fn MPI_Op_create / PMPI_Op_create(user_fn: Option<UserFn>, commute: c_int, op: *mut MPI_Op) -> c_int {
        let r = user_fn
            .ok_or(MPI_ERR_ARG)
            .and_then(|f| create(OpRef::User { f, commute: commute != 0 }, op));
        finish(MPI_COMM_WORLD, "MPI_Op_create", r)
    }
}

mpi_fn! {
    fn MPI_Op_create_c / PMPI_Op_create_c(user_fn: Option<UserFnC>, commute: c_int, op: *mut MPI_Op) -> c_int {
        let r = user_fn
            .ok_or(MPI_ERR_ARG)
            .and_then(|f| create(OpRef::UserC { f, commute: commute != 0 }, op));
        finish(MPI_COMM_WORLD, "MPI_Op_create_c", r)
    }
}

mpi_fn! {
    /// Frees a user op (predefined ops cannot be freed: MPI_ERR_OP).
    fn MPI_Op_free / PMPI_Op_free(op: *mut MPI_Op) -> c_int {
        let r = if op.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL, an MPI_Op by the C contract.
            let h = unsafe { op.read() };
            ops()
                .remove(h)
                .ok_or(MPI_ERR_OP)
                // SAFETY: as above.
                .and_then(|_| unsafe { put(op, MPI_OP_NULL) })
        };
        finish(MPI_COMM_WORLD, "MPI_Op_free", r)
    }
}

mpi_fn! {
    fn MPI_Op_commutative / PMPI_Op_commutative(op: MPI_Op, commute: *mut c_int) -> c_int {
        // SAFETY: commute is NULL or an int.
        let r = lookup(op).and_then(|o| unsafe { put(commute, o.commutative() as c_int) });
        finish(MPI_COMM_WORLD, "MPI_Op_commutative", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn add_ints(
        a: *mut c_void,
        b: *mut c_void,
        len: *mut c_int,
        _: *mut MPI_Datatype,
    ) {
        // SAFETY: called by apply with len ints in each buffer.
        unsafe {
            for i in 0..*len as usize {
                *b.cast::<i32>().add(i) += *a.cast::<i32>().add(i);
            }
        }
    }

    #[test]
    fn builtin_and_user_ops_apply() {
        let sum = lookup(MPI_SUM).unwrap();
        let a = [1i32, 2, 3];
        let mut b = [10i32, 20, 30];
        // SAFETY: three ints each.
        unsafe { apply(&sum, MPI_INT, a.as_ptr().cast(), b.as_mut_ptr().cast(), 3).unwrap() };
        assert_eq!(b, [11, 22, 33]);
        assert_eq!(lookup(MPI_OP_NULL).unwrap_err(), MPI_ERR_OP);
        // SAFETY: as above.
        let e = unsafe {
            apply(
                &lookup(MPI_LAND).unwrap(),
                MPI_DOUBLE,
                a.as_ptr().cast(),
                b.as_mut_ptr().cast(),
                1,
            )
        };
        assert_eq!(e, Err(MPI_ERR_OP));

        let user = OpRef::User {
            f: add_ints,
            commute: true,
        };
        // SAFETY: as above.
        unsafe { apply(&user, MPI_INT, a.as_ptr().cast(), b.as_mut_ptr().cast(), 3).unwrap() };
        assert_eq!(b, [12, 24, 36]);
        let pa: Vec<u8> = a.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let mut pb: Vec<u8> = b.iter().flat_map(|x| x.to_ne_bytes()).collect();
        apply_packed(&user, MPI_INT, &pa, &mut pb).unwrap();
        apply_packed(&sum, MPI_INT, &pa, &mut pb).unwrap();
        let got: Vec<i32> = pb
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, [14, 28, 42]);
    }

    #[test]
    fn maxloc_on_pairs_in_memory() {
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct DI(f64, i32);
        let a = [DI(1.0, 5), DI(7.0, 1)];
        let mut b = [DI(1.0, 2), DI(3.0, 0)];
        // SAFETY: two DOUBLE_INT pairs each.
        unsafe {
            apply(
                &lookup(MPI_MAXLOC).unwrap(),
                MPI_DOUBLE_INT,
                a.as_ptr().cast(),
                b.as_mut_ptr().cast(),
                2,
            )
            .unwrap()
        };
        assert_eq!(b, [DI(1.0, 2), DI(7.0, 1)]);
    }
}

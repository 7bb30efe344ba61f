//! Datatype handles and the C datatype functions: the predefined types by their ABI
//! values, derived types in a [`Table`] (with their commit state and name), the type
//! constructors (int, `_c` MPI_Count variants), sizes and extents, names, MPI_Pack /
//! MPI_Unpack / MPI_Pack_size, MPI_Get_address.
//!
//! Communication takes a datatype through [`lookup_committed`] (an uncommitted
//! derived type is MPI_ERR_TYPE); a type stays alive for a pending operation after
//! MPI_Type_free because the operation holds its `Arc`. Never dereferences a handle.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::handles::{base, Table};
use crate::type_decode::*;
use myrix_mpi::datatype::{Basic, Datatype, TypeError};
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

struct Derived {
    dt: Arc<Datatype>,
    committed: bool,
    /// How it was made, for MPI_Type_get_envelope/get_contents.
    recipe: Arc<Recipe>,
}

static TYPES: Mutex<Table<Derived>> = Mutex::new(Table::new(base::DATATYPE));
/// Names set with MPI_Type_set_name (derived and predefined types).
static NAMES: Mutex<Option<HashMap<MPI_Datatype, String>>> = Mutex::new(None);

fn types() -> MutexGuard<'static, Table<Derived>> {
    TYPES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The predefined type behind an ABI handle.
pub fn predefined(dt: MPI_Datatype) -> Option<Basic> {
    use Basic::*;
    Some(match dt {
        MPI_AINT => Aint,
        MPI_COUNT => Count,
        MPI_OFFSET => Offset,
        MPI_PACKED => Packed,
        MPI_SHORT => Short,
        MPI_INT => Int,
        MPI_LONG => Long,
        MPI_LONG_LONG => LongLong,
        MPI_UNSIGNED_SHORT => UnsignedShort,
        MPI_UNSIGNED => Unsigned,
        MPI_UNSIGNED_LONG => UnsignedLong,
        MPI_UNSIGNED_LONG_LONG => UnsignedLongLong,
        MPI_FLOAT => Float,
        MPI_C_FLOAT_COMPLEX => FloatComplex,
        MPI_CXX_FLOAT_COMPLEX => CxxFloatComplex,
        MPI_DOUBLE => Double,
        MPI_C_DOUBLE_COMPLEX => DoubleComplex,
        MPI_CXX_DOUBLE_COMPLEX => CxxDoubleComplex,
        MPI_LOGICAL => FLogical,
        MPI_INTEGER => FInteger,
        MPI_REAL => FReal,
        MPI_COMPLEX => FComplex,
        MPI_DOUBLE_PRECISION => FDoublePrecision,
        MPI_DOUBLE_COMPLEX => FDoubleComplex,
        MPI_CHARACTER => FCharacter,
        MPI_LONG_DOUBLE => LongDouble,
        MPI_C_LONG_DOUBLE_COMPLEX => LongDoubleComplex,
        MPI_CXX_LONG_DOUBLE_COMPLEX => CxxLongDoubleComplex,
        MPI_FLOAT_INT => FloatInt,
        MPI_DOUBLE_INT => DoubleInt,
        MPI_LONG_INT => LongInt,
        MPI_2INT => TwoInt,
        MPI_SHORT_INT => ShortInt,
        MPI_LONG_DOUBLE_INT => LongDoubleInt,
        MPI_2REAL => F2Real,
        MPI_2DOUBLE_PRECISION => F2DoublePrecision,
        MPI_2INTEGER => F2Integer,
        MPI_C_BOOL => CBool,
        MPI_CXX_BOOL => CxxBool,
        MPI_WCHAR => WChar,
        MPI_INT8_T => Int8,
        MPI_UINT8_T => Uint8,
        MPI_CHAR => Char,
        MPI_SIGNED_CHAR => SignedChar,
        MPI_UNSIGNED_CHAR => UnsignedChar,
        MPI_BYTE => Byte,
        MPI_INT16_T => Int16,
        MPI_UINT16_T => Uint16,
        MPI_INT32_T => Int32,
        MPI_UINT32_T => Uint32,
        MPI_INT64_T => Int64,
        MPI_UINT64_T => Uint64,
        MPI_LOGICAL1 => FLogical1,
        MPI_INTEGER1 => FInteger1,
        MPI_LOGICAL2 => FLogical2,
        MPI_INTEGER2 => FInteger2,
        MPI_LOGICAL4 => FLogical4,
        MPI_INTEGER4 => FInteger4,
        MPI_REAL4 => FReal4,
        MPI_LOGICAL8 => FLogical8,
        MPI_INTEGER8 => FInteger8,
        MPI_REAL8 => FReal8,
        MPI_COMPLEX8 => FComplex8,
        MPI_COMPLEX16 => FComplex16,
        _ => return None,
    })
}

fn basics() -> &'static [Arc<Datatype>] {
    static ALL: OnceLock<Vec<Arc<Datatype>>> = OnceLock::new();
    ALL.get_or_init(|| {
        Basic::ALL
            .iter()
            .map(|&b| Arc::new(Datatype::basic(b)))
            .collect()
    })
}

fn basic_arc(b: Basic) -> Arc<Datatype> {
    basics()[b.index()].clone()
}

/// A predefined type by its handle, without a lock or a reference count (the hot
/// path of point-to-point); `None` for derived types and invalid handles.
#[inline]
pub fn predefined_ref(dt: MPI_Datatype) -> Option<&'static Datatype> {
    predefined(dt).map(|b| &*basics()[b.index()])
}

/// The datatype behind a handle: predefined, or derived and not freed
/// (`MPI_ERR_TYPE` otherwise, MPI_DATATYPE_NULL included).
pub fn lookup(dt: MPI_Datatype) -> Result<Arc<Datatype>, c_int> {
    if let Some(b) = predefined(dt) {
        return Ok(basic_arc(b));
    }
    types().get(dt).map(|d| d.dt.clone()).ok_or(MPI_ERR_TYPE)
}

/// Whether a valid handle may be used for communication (predefined, or committed).
pub fn committed(dt: MPI_Datatype) -> bool {
    predefined(dt).is_some() || types().get(dt).is_some_and(|d| d.committed)
}

/// [`lookup`] for communication: an uncommitted derived type is `MPI_ERR_TYPE`.
pub fn lookup_committed(dt: MPI_Datatype) -> Result<Arc<Datatype>, c_int> {
    let t = lookup(dt)?;
    if committed(dt) {
        Ok(t)
    } else {
        Err(MPI_ERR_TYPE)
    }
}

fn type_error(e: TypeError) -> c_int {
    match e {
        TypeError::Overflow => MPI_ERR_ARG,
        TypeError::TooComplex => MPI_ERR_NO_MEM,
        TypeError::Lengths => MPI_ERR_ARG,
    }
}

/// A derived type's layout, commit state and recipe (the decoder's view).
pub(crate) fn parts(h: MPI_Datatype) -> Option<(Arc<Datatype>, bool, Arc<Recipe>)> {
    let t = types();
    let d = t.get(h)?;
    Some((d.dt.clone(), d.committed, d.recipe.clone()))
}

/// A new handle on an existing layout (MPI_Type_get_contents' inner types).
pub(crate) fn insert_parts(
    dt: Arc<Datatype>,
    committed: bool,
    recipe: Arc<Recipe>,
) -> Result<MPI_Datatype, c_int> {
    let d = Derived {
        dt,
        committed,
        recipe,
    };
    types().insert(d).ok_or(MPI_ERR_NO_MEM)
}

/// Drops a handle made by [`insert_parts`] that is not handed out after all.
pub(crate) fn forget(h: MPI_Datatype) {
    types().remove(h);
}

/// Stores a new derived type made by `recipe` and writes its handle.
///
/// # Safety
/// `out` is NULL or valid for an MPI_Datatype.
pub(crate) unsafe fn store(
    out: *mut MPI_Datatype,
    made: Result<Datatype, TypeError>,
    recipe: Recipe,
) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let dt = made.map_err(type_error)?;
    let h = insert_parts(Arc::new(dt), false, Arc::new(recipe))?;
    // SAFETY: the caller's contract for out.
    unsafe { put(out, h) }
}

/// A C count (`int` or MPI_Count) as a `usize`; negative is `err`.
fn count<T: TryInto<usize>>(n: T, err: c_int) -> Result<usize, c_int> {
    n.try_into().map_err(|_| err)
}

/// A displacement as an `isize` (MPI_Count on the `_c` variants).
fn disp<T: TryInto<isize>>(d: T) -> Result<isize, c_int> {
    d.try_into().map_err(|_| MPI_ERR_ARG)
}

/// The `n` elements of a C array (NULL with `n > 0` is `MPI_ERR_ARG`).
///
/// # Safety
/// `p` is NULL or valid for `n` elements.
unsafe fn array<'a, T>(p: *const T, n: usize) -> Result<&'a [T], c_int> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Block lengths: each non-negative (`MPI_ERR_ARG` otherwise).
fn lengths<T: Copy + TryInto<usize>>(v: &[T]) -> Result<Vec<usize>, c_int> {
    v.iter().map(|&x| count(x, MPI_ERR_ARG)).collect()
}

fn disps<T: Copy + TryInto<isize>>(v: &[T]) -> Result<Vec<isize>, c_int> {
    v.iter().map(|&x| disp(x)).collect()
}

/// The bodies of the constructors, shared by the `int` and `MPI_Count` variants.
#[path = "datatype_make.rs"]
mod make;

const W: MPI_Comm = MPI_COMM_WORLD;

mpi_fn! {
    fn MPI_Type_contiguous / PMPI_Type_contiguous(n: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let rc = Recipe::new::<c_int>(MPI_COMBINER_CONTIGUOUS).int(n).ty(old);
        // SAFETY: the C contract for newtype.
        let r = rc.and_then(|rc| count(n, MPI_ERR_COUNT).and_then(|n| unsafe { make::contiguous(n, old, newtype, rc) }));
        finish(W, "MPI_Type_contiguous", r)
    }
}

mpi_fn! {
    fn MPI_Type_contiguous_c / PMPI_Type_contiguous_c(n: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let rc = Recipe::new::<MPI_Count>(MPI_COMBINER_CONTIGUOUS).int(n).ty(old);
        // SAFETY: the C contract for newtype.
        let r = rc.and_then(|rc| count(n, MPI_ERR_COUNT).and_then(|n| unsafe { make::contiguous(n, old, newtype, rc) }));
        finish(W, "MPI_Type_contiguous_c", r)
    }
}

macro_rules! vector_fns {
    ($($name:ident / $pname:ident ($cnt:ty, $stride:ty, $bytes:expr);)*) => {$(
        mpi_fn! {
            fn $name / $pname(n: $cnt, blocklength: $cnt, stride: $stride, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
                let r = (|| {
                    let rc = Recipe::new::<$cnt>(if $bytes { MPI_COMBINER_HVECTOR } else { MPI_COMBINER_VECTOR }).int(n).int(blocklength);
                    let rc = if $bytes { rc.addr(stride) } else { rc.int(stride) }.ty(old)?;
                    let n = count(n, MPI_ERR_COUNT)?;
                    let bl = count(blocklength, MPI_ERR_ARG)?;
                    // SAFETY: the C contract for newtype.
                    unsafe { make::vector(n, bl, disp(stride)?, $bytes, old, newtype, rc) }
                })();
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

vector_fns! {
    MPI_Type_vector / PMPI_Type_vector(c_int, c_int, false);
    MPI_Type_vector_c / PMPI_Type_vector_c(MPI_Count, MPI_Count, false);
    MPI_Type_create_hvector / PMPI_Type_create_hvector(c_int, MPI_Aint, true);
    MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c(MPI_Count, MPI_Count, true);
}

macro_rules! indexed_fns {
    ($($name:ident / $pname:ident ($cnt:ty, $bl:ty, $d:ty, $bytes:expr);)*) => {$(
        mpi_fn! {
            fn $name / $pname(n: $cnt, blocklengths: *const $bl, displacements: *const $d, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
                let r = (|| {
                    let n = count(n, MPI_ERR_COUNT)?;
                    // SAFETY: the C contract: arrays of n elements.
                    let (bls, ds) = unsafe { (array(blocklengths, n)?, array(displacements, n)?) };
                    let rc = Recipe::new::<$cnt>(if $bytes { MPI_COMBINER_HINDEXED } else { MPI_COMBINER_INDEXED }).int(n as $cnt).ints(bls);
                    let rc = if $bytes { rc.addrs(ds) } else { rc.ints(ds) }.ty(old)?;
                    // SAFETY: the C contract for newtype.
                    unsafe { make::indexed(&lengths(bls)?, &disps(ds)?, $bytes, old, newtype, rc) }
                })();
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

indexed_fns! {
    MPI_Type_indexed / PMPI_Type_indexed(c_int, c_int, c_int, false);
    MPI_Type_indexed_c / PMPI_Type_indexed_c(MPI_Count, MPI_Count, MPI_Count, false);
    MPI_Type_create_hindexed / PMPI_Type_create_hindexed(c_int, c_int, MPI_Aint, true);
    MPI_Type_create_hindexed_c / PMPI_Type_create_hindexed_c(MPI_Count, MPI_Count, MPI_Count, true);
}

macro_rules! block_fns {
    ($($name:ident / $pname:ident ($cnt:ty, $d:ty, $bytes:expr);)*) => {$(
        mpi_fn! {
            fn $name / $pname(n: $cnt, blocklength: $cnt, displacements: *const $d, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
                let r = (|| {
                    let n = count(n, MPI_ERR_COUNT)?;
                    let bl = count(blocklength, MPI_ERR_ARG)?;
                    // SAFETY: the C contract: an array of n elements.
                    let ds = unsafe { array(displacements, n)? };
                    let rc = Recipe::new::<$cnt>(if $bytes { MPI_COMBINER_HINDEXED_BLOCK } else { MPI_COMBINER_INDEXED_BLOCK }).int(n as $cnt).int(blocklength);
                    let rc = if $bytes { rc.addrs(ds) } else { rc.ints(ds) }.ty(old)?;
                    // SAFETY: the C contract for newtype.
                    unsafe { make::block(bl, &disps(ds)?, $bytes, old, newtype, rc) }
                })();
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

block_fns! {
    MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block(c_int, c_int, false);
    MPI_Type_create_indexed_block_c / PMPI_Type_create_indexed_block_c(MPI_Count, MPI_Count, false);
    MPI_Type_create_hindexed_block / PMPI_Type_create_hindexed_block(c_int, MPI_Aint, true);
    MPI_Type_create_hindexed_block_c / PMPI_Type_create_hindexed_block_c(MPI_Count, MPI_Count, true);
}

macro_rules! struct_fns {
    ($($name:ident / $pname:ident ($cnt:ty, $d:ty);)*) => {$(
        mpi_fn! {
            fn $name / $pname(n: $cnt, blocklengths: *const $cnt, displacements: *const $d, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
                let r = (|| {
                    let n = count(n, MPI_ERR_COUNT)?;
                    // SAFETY: the C contract: arrays of n elements.
                    let (bls, ds, ts) = unsafe { (array(blocklengths, n)?, array(displacements, n)?, array(types, n)?) };
                    let rc = Recipe::new::<$cnt>(MPI_COMBINER_STRUCT).int(n as $cnt).ints(bls).addrs(ds).tys(ts)?;
                    // SAFETY: the C contract for newtype.
                    unsafe { make::structure(&lengths(bls)?, &disps(ds)?, ts, newtype, rc) }
                })();
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

struct_fns! {
    MPI_Type_create_struct / PMPI_Type_create_struct(c_int, MPI_Aint);
    MPI_Type_create_struct_c / PMPI_Type_create_struct_c(MPI_Count, MPI_Count);
}

macro_rules! resized_fns {
    ($($name:ident / $pname:ident ($t:ty, $c:ty);)*) => {$(
        mpi_fn! {
            fn $name / $pname(old: MPI_Datatype, lb: $t, extent: $t, newtype: *mut MPI_Datatype) -> c_int {
                let r = (|| {
                    let rc = Recipe::new::<$c>(MPI_COMBINER_RESIZED).addr(lb).addr(extent).ty(old)?;
                    let t = lookup(old)?.resized(disp(lb)?, disp(extent)?);
                    // SAFETY: the C contract for newtype.
                    unsafe { store(newtype, t, rc) }
                })();
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

resized_fns! {
    MPI_Type_create_resized / PMPI_Type_create_resized(MPI_Aint, c_int);
    MPI_Type_create_resized_c / PMPI_Type_create_resized_c(MPI_Count, MPI_Count);
}

mpi_fn! {
    /// A new handle for the same type; it is committed if the old one is (as the
    /// standard says), and has no name.
    fn MPI_Type_dup / PMPI_Type_dup(old: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            let t = lookup(old)?;
            if newtype.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let rc = Recipe::new::<c_int>(MPI_COMBINER_DUP).ty(old)?;
            let h = insert_parts(t, committed(old), Arc::new(rc))?;
            if let Err(e) = crate::attr::copy_all(crate::attr::Kind::Type, old, h) {
                // A copy callback failed: no new type, and the handle says so.
                let _ = crate::attr::delete_all(crate::attr::Kind::Type, h);
                types().remove(h);
                // SAFETY: the C contract for newtype (checked non-NULL).
                unsafe { newtype.write(MPI_DATATYPE_NULL) };
                return Err(e);
            }
            // SAFETY: the C contract for newtype.
            unsafe { put(newtype, h) }
        })();
        finish(W, "MPI_Type_dup", r)
    }
}

/// Reads a handle through a non-NULL in/out pointer.
///
/// # Safety
/// `p` is NULL or valid for reading an MPI_Datatype.
unsafe fn read(p: *const MPI_Datatype) -> Result<MPI_Datatype, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, the caller's contract.
    Ok(unsafe { p.read() })
}

mpi_fn! {
    fn MPI_Type_commit / PMPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for datatype.
            let h = unsafe { read(datatype)? };
            if predefined(h).is_some() {
                return Ok(());
            }
            let mut t = types();
            t.get_mut(h).ok_or(MPI_ERR_TYPE)?.committed = true;
            Ok(())
        })();
        finish(W, "MPI_Type_commit", r)
    }
}

mpi_fn! {
    /// Frees a derived type's handle (operations under way keep the type itself);
    /// predefined types cannot be freed.
    fn MPI_Type_free / PMPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for datatype.
            let h = unsafe { read(datatype)? };
            if crate::type_f90::is_f90(h) {
                return Err(MPI_ERR_TYPE);
            }
            if types().get(h).is_some() {
                crate::attr::delete_all(crate::attr::Kind::Type, h)?;
            }
            types().remove(h).ok_or(MPI_ERR_TYPE)?;
            if let Some(m) = names().as_mut() {
                m.remove(&h);
            }
            // SAFETY: as above.
            unsafe { put(datatype, MPI_DATATYPE_NULL) }
        })();
        finish(W, "MPI_Type_free", r)
    }
}

/// A size or extent as an `int`/MPI_Aint out-value: too large is MPI_UNDEFINED.
fn as_int(v: usize) -> c_int {
    c_int::try_from(v).unwrap_or(MPI_UNDEFINED)
}

mpi_fn! {
    fn MPI_Type_size / PMPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int {
        // SAFETY: the C contract for size.
        let r = lookup(datatype).and_then(|t| unsafe { put(size, as_int(t.size())) });
        finish(W, "MPI_Type_size", r)
    }
}

macro_rules! count_fns {
    ($($name:ident / $pname:ident;)*) => {$(
        mpi_fn! {
            fn $name / $pname(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
                // SAFETY: the C contract for size.
                let r = lookup(datatype).and_then(|t| unsafe { put(size, t.size() as MPI_Count) });
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

count_fns! {
    MPI_Type_size_c / PMPI_Type_size_c;
    MPI_Type_size_x / PMPI_Type_size_x;
}

macro_rules! extent_fns {
    ($($name:ident / $pname:ident ($t:ty, $true:expr);)*) => {$(
        mpi_fn! {
            fn $name / $pname(datatype: MPI_Datatype, lb: *mut $t, extent: *mut $t) -> c_int {
                let r = lookup(datatype).and_then(|t| {
                    let (l, e) = if $true { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
                    if lb.is_null() || extent.is_null() {
                        return Err(MPI_ERR_ARG);
                    }
                    // SAFETY: the C contract for lb and extent.
                    unsafe { put(lb, l as $t).and_then(|()| put(extent, e as $t)) }
                });
                finish(W, stringify!($name), r)
            }
        }
    )*};
}

extent_fns! {
    MPI_Type_get_extent / PMPI_Type_get_extent(MPI_Aint, false);
    MPI_Type_get_extent_c / PMPI_Type_get_extent_c(MPI_Count, false);
    MPI_Type_get_extent_x / PMPI_Type_get_extent_x(MPI_Count, false);
    MPI_Type_get_true_extent / PMPI_Type_get_true_extent(MPI_Aint, true);
    MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c(MPI_Count, true);
    MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x(MPI_Count, true);
}

fn names() -> MutexGuard<'static, Option<HashMap<MPI_Datatype, String>>> {
    NAMES.lock().unwrap_or_else(|p| p.into_inner())
}

mpi_fn! {
    /// The name set with MPI_Type_set_name, else the predefined name, else "".
    fn MPI_Type_get_name / PMPI_Type_get_name(datatype: MPI_Datatype, type_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let r = lookup(datatype).and_then(|t| {
            let set = names().as_ref().and_then(|m| m.get(&datatype).cloned());
            let name = set.unwrap_or_else(|| t.as_basic().filter(|_| predefined(datatype).is_some()).map_or("", |b| b.name()).to_string());
            // SAFETY: type_name holds MPI_MAX_OBJECT_NAME bytes; resultlen is an int.
            unsafe { put_str(type_name, MPI_MAX_OBJECT_NAME, resultlen, &name) }
        });
        finish(W, "MPI_Type_get_name", r)
    }
}

mpi_fn! {
    /// Names a type (truncated to MPI_MAX_OBJECT_NAME - 1 bytes).
    fn MPI_Type_set_name / PMPI_Type_set_name(datatype: MPI_Datatype, type_name: *const c_char) -> c_int {
        let r = lookup(datatype).and_then(|_| {
            if type_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a NUL-terminated C string by the C contract.
            let s = unsafe { std::ffi::CStr::from_ptr(type_name) }.to_string_lossy();
            let mut s = s.into_owned();
            while s.len() > MPI_MAX_OBJECT_NAME - 1 {
                s.pop();
            }
            names().get_or_insert_with(HashMap::new).insert(datatype, s);
            Ok(())
        });
        finish(W, "MPI_Type_set_name", r)
    }
}

/// The body of MPI_Pack(_c): `incount` elements at `inbuf` packed at `*position`
/// of `outbuf` (`outsize` bytes); the position advances.
///
/// # Safety
/// The C contract: `inbuf` holds the elements, `outbuf` `outsize` bytes, `position`
/// is NULL or valid.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pack(
    inbuf: *const c_void,
    incount: usize,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: usize,
    position: *mut usize,
    comm: MPI_Comm,
    name: &str,
) -> Result<(), c_int> {
    crate::comm::lookup(comm, name)?;
    let t = lookup_committed(datatype)?;
    if position.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, the caller's contract.
    let pos = unsafe { position.read() };
    let n = incount.checked_mul(t.size()).ok_or(MPI_ERR_TRUNCATE)?;
    let end = pos
        .checked_add(n)
        .filter(|&e| e <= outsize)
        .ok_or(MPI_ERR_TRUNCATE)?;
    if n == 0 {
        return Ok(());
    }
    if outbuf.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    // SAFETY: outbuf holds outsize >= end bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(pos), n) };
    // SAFETY: the C contract for inbuf (NULL: MPI_BOTTOM, absolute displacements).
    unsafe { t.pack(inbuf.cast(), incount, out) };
    // SAFETY: as above.
    unsafe { position.write(end) };
    Ok(())
}

/// The body of MPI_Unpack(_c).
///
/// # Safety
/// As [`pack`], mirrored.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn unpack(
    inbuf: *const c_void,
    insize: usize,
    position: *mut usize,
    outbuf: *mut c_void,
    outcount: usize,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    name: &str,
) -> Result<(), c_int> {
    crate::comm::lookup(comm, name)?;
    let t = lookup_committed(datatype)?;
    if position.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, the caller's contract.
    let pos = unsafe { position.read() };
    let n = outcount.checked_mul(t.size()).ok_or(MPI_ERR_TRUNCATE)?;
    let end = pos
        .checked_add(n)
        .filter(|&e| e <= insize)
        .ok_or(MPI_ERR_TRUNCATE)?;
    if n == 0 {
        return Ok(());
    }
    if inbuf.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    // SAFETY: inbuf holds insize >= end bytes.
    let data = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), n) };
    // SAFETY: the C contract for outbuf.
    unsafe { t.unpack(data, outbuf.cast(), outcount) };
    // SAFETY: as above.
    unsafe { position.write(end) };
    Ok(())
}

mpi_fn! {
    fn MPI_Pack / PMPI_Pack(inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: MPI_Comm) -> c_int {
        let r = (|| {
            let n = count(incount, MPI_ERR_COUNT)?;
            let size = count(outsize, MPI_ERR_ARG)?;
            // SAFETY: position is NULL or an int.
            let mut pos = count(unsafe { read_int(position)? }, MPI_ERR_ARG)?;
            // SAFETY: the C contract, forwarded; pos is a local.
            unsafe { pack(inbuf, n, datatype, outbuf, size, &mut pos, comm, "MPI_Pack")? };
            // SAFETY: position is an int (checked above); pos <= outsize fits.
            unsafe { put(position, pos as c_int) }
        })();
        finish(comm, "MPI_Pack", r)
    }
}

mpi_fn! {
    fn MPI_Pack_c / PMPI_Pack_c(inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: MPI_Comm) -> c_int {
        let r = (|| {
            let n = count(incount, MPI_ERR_COUNT)?;
            let size = count(outsize, MPI_ERR_ARG)?;
            // SAFETY: position is NULL or an MPI_Count.
            let mut pos = count(unsafe { read_count(position)? }, MPI_ERR_ARG)?;
            // SAFETY: the C contract, forwarded; pos is a local.
            unsafe { pack(inbuf, n, datatype, outbuf, size, &mut pos, comm, "MPI_Pack_c")? };
            // SAFETY: position is an MPI_Count.
            unsafe { put(position, pos as MPI_Count) }
        })();
        finish(comm, "MPI_Pack_c", r)
    }
}

mpi_fn! {
    fn MPI_Unpack / PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| {
            let n = count(outcount, MPI_ERR_COUNT)?;
            let size = count(insize, MPI_ERR_ARG)?;
            // SAFETY: position is NULL or an int.
            let mut pos = count(unsafe { read_int(position)? }, MPI_ERR_ARG)?;
            // SAFETY: the C contract, forwarded; pos is a local.
            unsafe { unpack(inbuf, size, &mut pos, outbuf, n, datatype, comm, "MPI_Unpack")? };
            // SAFETY: position is an int; pos <= insize fits.
            unsafe { put(position, pos as c_int) }
        })();
        finish(comm, "MPI_Unpack", r)
    }
}

mpi_fn! {
    fn MPI_Unpack_c / PMPI_Unpack_c(inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| {
            let n = count(outcount, MPI_ERR_COUNT)?;
            let size = count(insize, MPI_ERR_ARG)?;
            // SAFETY: position is NULL or an MPI_Count.
            let mut pos = count(unsafe { read_count(position)? }, MPI_ERR_ARG)?;
            // SAFETY: the C contract, forwarded; pos is a local.
            unsafe { unpack(inbuf, size, &mut pos, outbuf, n, datatype, comm, "MPI_Unpack_c")? };
            // SAFETY: position is an MPI_Count.
            unsafe { put(position, pos as MPI_Count) }
        })();
        finish(comm, "MPI_Unpack_c", r)
    }
}

/// # Safety
/// `p` is NULL or valid for an int.
unsafe fn read_int(p: *const c_int) -> Result<c_int, c_int> {
    // SAFETY: the caller's contract; NULL is refused.
    unsafe { p.as_ref() }.copied().ok_or(MPI_ERR_ARG)
}

/// # Safety
/// `p` is NULL or valid for an MPI_Count.
unsafe fn read_count(p: *const MPI_Count) -> Result<MPI_Count, c_int> {
    // SAFETY: the caller's contract; NULL is refused.
    unsafe { p.as_ref() }.copied().ok_or(MPI_ERR_ARG)
}

fn pack_size(
    incount: usize,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    name: &str,
) -> Result<usize, c_int> {
    crate::comm::lookup(comm, name)?;
    let t = lookup(datatype)?;
    incount.checked_mul(t.size()).ok_or(MPI_ERR_VALUE_TOO_LARGE)
}

mpi_fn! {
    fn MPI_Pack_size / PMPI_Pack_size(incount: c_int, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut c_int) -> c_int {
        let r = count(incount, MPI_ERR_COUNT)
            .and_then(|n| pack_size(n, datatype, comm, "MPI_Pack_size"))
            .and_then(|s| c_int::try_from(s).map_err(|_| MPI_ERR_VALUE_TOO_LARGE))
            // SAFETY: size is NULL or an int.
            .and_then(|s| unsafe { put(size, s) });
        finish(comm, "MPI_Pack_size", r)
    }
}

mpi_fn! {
    fn MPI_Pack_size_c / PMPI_Pack_size_c(incount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut MPI_Count) -> c_int {
        let r = count(incount, MPI_ERR_COUNT)
            .and_then(|n| pack_size(n, datatype, comm, "MPI_Pack_size_c"))
            // SAFETY: size is NULL or an MPI_Count.
            .and_then(|s| unsafe { put(size, s as MPI_Count) });
        finish(comm, "MPI_Pack_size_c", r)
    }
}

mpi_fn! {
    fn MPI_Get_address / PMPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
        // SAFETY: address is NULL or an MPI_Aint. The cast exposes the address, so
        // MPI_BOTTOM-relative use of it later is sound.
        let r = unsafe { put(address, location as MPI_Aint) };
        finish(W, "MPI_Get_address", r)
    }
}

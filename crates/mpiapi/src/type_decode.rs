//! Datatype decoding: MPI_Type_get_envelope and MPI_Type_get_contents (and their
//! `_c` large-count forms).
//!
//! Every derived type keeps the [`Recipe`] it was made by: the combiner and the
//! constructor's arguments exactly as the caller passed them, so the decoder gives
//! them back as the standard asks (not a normalized layout). The inner types are
//! kept by value (the layout `Arc`, the commit state, their own recipe) because the
//! caller may free their handles before decoding; MPI_Type_get_contents hands a
//! derived inner type back as a new handle the caller frees, a predefined one as
//! its own handle.
//!
//! A type made by a `_c` constructor records its counts and displacements as large
//! counts (MPI-4.0 §5.1.13): only MPI_Type_get_envelope_c / get_contents_c can
//! describe it, the `int` forms report MPI_ERR_TYPE.

use crate::abi::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use myrix_mpi::datatype::Datatype;
use std::os::raw::c_int;
use std::sync::Arc;

pub const MPI_COMBINER_NAMED: c_int = 101;
pub const MPI_COMBINER_DUP: c_int = 102;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 103;
pub const MPI_COMBINER_VECTOR: c_int = 104;
pub const MPI_COMBINER_HVECTOR: c_int = 105;
pub const MPI_COMBINER_INDEXED: c_int = 106;
pub const MPI_COMBINER_HINDEXED: c_int = 107;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 108;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 109;
pub const MPI_COMBINER_STRUCT: c_int = 110;
pub const MPI_COMBINER_SUBARRAY: c_int = 111;
pub const MPI_COMBINER_DARRAY: c_int = 112;
pub const MPI_COMBINER_RESIZED: c_int = 116;

/// An inner type of a constructor, kept alive independently of its handle.
#[derive(Clone)]
pub enum Inner {
    /// A predefined type: given back as the same handle.
    Named(MPI_Datatype),
    /// A derived type: given back as a new handle on the same layout.
    Derived {
        dt: Arc<Datatype>,
        committed: bool,
        recipe: Arc<Recipe>,
    },
}

/// How a derived type was made: the combiner and the constructor's arguments.
///
/// `ints` are the `int` arguments, `addrs` the MPI_Aint ones, in the order the
/// standard lists them; for a `_c` constructor (`large`) both are large counts, and
/// in every `_c` constructor the integer arguments precede the address ones, so the
/// large-count array is `ints` followed by `addrs`.
pub struct Recipe {
    pub combiner: c_int,
    pub large: bool,
    pub ints: Vec<i64>,
    /// The `int` arguments of a `_c` constructor that stay `int`s (the subarray's
    /// and darray's `ndims`, `order` …); empty for every other recipe.
    pub plain: Vec<c_int>,
    pub addrs: Vec<i64>,
    pub types: Vec<Inner>,
}

/// A C integer argument (`int`, MPI_Aint or MPI_Count) as recorded.
pub trait Arg: Copy {
    fn wide(self) -> i64;
}
impl Arg for c_int {
    fn wide(self) -> i64 {
        self.into()
    }
}
impl Arg for i64 {
    fn wide(self) -> i64 {
        self
    }
}
impl Arg for isize {
    fn wide(self) -> i64 {
        self as i64
    }
}

impl Recipe {
    /// A recipe for `combiner`; `large` when the count type of the constructor is
    /// wider than `int` (the `_c` forms).
    pub fn new<C>(combiner: c_int) -> Recipe {
        Recipe {
            combiner,
            large: std::mem::size_of::<C>() > std::mem::size_of::<c_int>(),
            ints: Vec::new(),
            plain: Vec::new(),
            addrs: Vec::new(),
            types: Vec::new(),
        }
    }

    /// An argument that is an `int` in the `_c` form too.
    pub fn plain(mut self, v: &[c_int]) -> Recipe {
        self.plain.extend_from_slice(v);
        self
    }

    pub fn int<T: Arg>(mut self, v: T) -> Recipe {
        self.ints.push(v.wide());
        self
    }

    pub fn ints<T: Arg>(mut self, v: &[T]) -> Recipe {
        self.ints.extend(v.iter().map(|x| x.wide()));
        self
    }

    pub fn addr<T: Arg>(mut self, v: T) -> Recipe {
        self.addrs.push(v.wide());
        self
    }

    pub fn addrs<T: Arg>(mut self, v: &[T]) -> Recipe {
        self.addrs.extend(v.iter().map(|x| x.wide()));
        self
    }

    /// Records an inner type (an invalid handle is MPI_ERR_TYPE, as the
    /// constructor itself would say).
    pub fn ty(mut self, h: MPI_Datatype) -> Result<Recipe, c_int> {
        self.types.push(inner(h)?);
        Ok(self)
    }

    pub fn tys(mut self, hs: &[MPI_Datatype]) -> Result<Recipe, c_int> {
        for &h in hs {
            self.types.push(inner(h)?);
        }
        Ok(self)
    }

    /// (integers, addresses, large counts, datatypes) as the envelope counts them.
    fn counts(&self) -> (usize, usize, usize, usize) {
        let nt = self.types.len();
        if self.large {
            (self.plain.len(), 0, self.ints.len() + self.addrs.len(), nt)
        } else {
            (self.ints.len(), self.addrs.len(), 0, nt)
        }
    }
}

/// The inner-type record of a handle.
fn inner(h: MPI_Datatype) -> Result<Inner, c_int> {
    if datatype::predefined(h).is_some() {
        return Ok(Inner::Named(h));
    }
    let (dt, committed, recipe) = datatype::parts(h).ok_or(MPI_ERR_TYPE)?;
    Ok(Inner::Derived {
        dt,
        committed,
        recipe,
    })
}

/// A handle for an inner type given back by MPI_Type_get_contents.
fn hand_back(t: &Inner) -> Result<MPI_Datatype, c_int> {
    match t {
        Inner::Named(h) => Ok(*h),
        Inner::Derived {
            dt,
            committed,
            recipe,
        } => datatype::insert_parts(dt.clone(), *committed, recipe.clone()),
    }
}

/// The recipe of a handle: `None` for a predefined type.
fn recipe(h: MPI_Datatype) -> Result<Option<Arc<Recipe>>, c_int> {
    if datatype::predefined(h).is_some() {
        return Ok(None);
    }
    datatype::parts(h)
        .map(|(_, _, r)| Some(r))
        .ok_or(MPI_ERR_TYPE)
}

/// The envelope of a handle: (ni, na, nc, nd, combiner).
fn envelope(h: MPI_Datatype) -> Result<(usize, usize, usize, usize, c_int), c_int> {
    Ok(match recipe(h)? {
        None => (0, 0, 0, 0, MPI_COMBINER_NAMED),
        Some(r) => {
            let (ni, na, nc, nd) = r.counts();
            (ni, na, nc, nd, r.combiner)
        }
    })
}

/// Copies `v` into a caller's array of capacity `max` (too small: MPI_ERR_ARG).
///
/// # Safety
/// `p` is NULL or valid for `max` elements.
unsafe fn fill<T>(p: *mut T, max: usize, v: impl ExactSizeIterator<Item = T>) -> Result<(), c_int> {
    if v.len() > max || (v.len() > 0 && p.is_null()) {
        return Err(MPI_ERR_ARG);
    }
    for (i, x) in v.enumerate() {
        // SAFETY: i < len <= max, within the caller's array.
        unsafe { p.add(i).write(x) };
    }
    Ok(())
}

/// The body of both MPI_Type_get_contents forms. `counts` is NULL with `large`
/// false (the `int` form).
///
/// # Safety
/// Each array is NULL or valid for its `max` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn contents(
    h: MPI_Datatype,
    large: bool,
    (mi, ma, mc, md): (usize, usize, usize, usize),
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    counts: *mut MPI_Count,
    types: *mut MPI_Datatype,
) -> Result<(), c_int> {
    // The standard makes decoding a predefined type erroneous.
    let r = recipe(h)?.ok_or(MPI_ERR_TYPE)?;
    if r.large && !large {
        return Err(MPI_ERR_TYPE);
    }
    let (ni, na, nc, nd) = r.counts();
    if ni > mi || na > ma || nc > mc || nd > md {
        return Err(MPI_ERR_ARG);
    }
    if r.large {
        let all = r.ints.iter().chain(&r.addrs).copied();
        // SAFETY: the caller's contract for counts (mc elements) and ints.
        unsafe {
            fill(counts, mc, all.collect::<Vec<_>>().into_iter())?;
            fill(ints, mi, r.plain.iter().copied())?;
        }
    } else {
        // Recorded from `int` arguments, so each fits.
        let is = r.ints.iter().map(|&x| x as c_int);
        // SAFETY: the caller's contract for ints and addrs.
        unsafe {
            fill(ints, mi, is)?;
            fill(addrs, ma, r.addrs.iter().map(|&x| x as MPI_Aint))?;
        }
    }
    let mut made = Vec::with_capacity(nd);
    for t in &r.types {
        match hand_back(t) {
            Ok(x) => made.push(x),
            Err(e) => {
                for &x in &made {
                    datatype::forget(x);
                }
                return Err(e);
            }
        }
    }
    // SAFETY: the caller's contract for types (md >= nd elements).
    unsafe { fill(types, md, made.into_iter()) }
}

fn cap<T: TryInto<usize>>(v: T) -> Result<usize, c_int> {
    v.try_into().map_err(|_| MPI_ERR_ARG)
}

const W: MPI_Comm = MPI_COMM_WORLD;

mpi_fn! {
    fn MPI_Type_get_envelope / PMPI_Type_get_envelope(datatype: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) -> c_int {
        let r = (|| {
            let (ni, na, nc, nd, k) = envelope(datatype)?;
            if nc > 0 {
                return Err(MPI_ERR_TYPE);
            }
            let small = |n: usize| c_int::try_from(n).map_err(|_| MPI_ERR_TYPE);
            // SAFETY: the C contract: each out-parameter is NULL or an int.
            unsafe {
                put(num_integers, small(ni)?)?;
                put(num_addresses, small(na)?)?;
                put(num_datatypes, small(nd)?)?;
                put(combiner, k)
            }
        })();
        finish(W, "MPI_Type_get_envelope", r)
    }
}

mpi_fn! {
    fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c(datatype: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count, num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, combiner: *mut c_int) -> c_int {
        let r = (|| {
            let (ni, na, nc, nd, k) = envelope(datatype)?;
            // SAFETY: the C contract: each out-parameter is NULL or of its type.
            unsafe {
                put(num_integers, ni as MPI_Count)?;
                put(num_addresses, na as MPI_Count)?;
                put(num_large_counts, nc as MPI_Count)?;
                put(num_datatypes, nd as MPI_Count)?;
                put(combiner, k)
            }
        })();
        finish(W, "MPI_Type_get_envelope_c", r)
    }
}

mpi_fn! {
    fn MPI_Type_get_contents / PMPI_Type_get_contents(datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            let m = (cap(max_integers)?, cap(max_addresses)?, 0, cap(max_datatypes)?);
            // SAFETY: the C contract: each array holds its max elements.
            unsafe {
                contents(datatype, false, m, array_of_integers, array_of_addresses, std::ptr::null_mut(), array_of_datatypes)
            }
        })();
        finish(W, "MPI_Type_get_contents", r)
    }
}

mpi_fn! {
    fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c(datatype: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, max_large_counts: MPI_Count, max_datatypes: MPI_Count, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_large_counts: *mut MPI_Count, array_of_datatypes: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            let m = (cap(max_integers)?, cap(max_addresses)?, cap(max_large_counts)?, cap(max_datatypes)?);
            // SAFETY: the C contract: each array holds its max elements.
            unsafe {
                contents(datatype, true, m, array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes)
            }
        })();
        finish(W, "MPI_Type_get_contents_c", r)
    }
}

/// The predefined pair types of MINLOC/MAXLOC, by (value type, index type).
const VALUE_INDEX: [(MPI_Datatype, MPI_Datatype, MPI_Datatype); 9] = [
    (0x210, 0x209, 0x228), // MPI_FLOAT, MPI_INT: MPI_FLOAT_INT
    (0x214, 0x209, 0x229), // MPI_DOUBLE, MPI_INT: MPI_DOUBLE_INT
    (0x20a, 0x209, 0x22a), // MPI_LONG, MPI_INT: MPI_LONG_INT
    (0x209, 0x209, 0x22b), // MPI_INT, MPI_INT: MPI_2INT
    (0x208, 0x209, 0x22c), // MPI_SHORT, MPI_INT: MPI_SHORT_INT
    (0x220, 0x209, 0x22d), // MPI_LONG_DOUBLE, MPI_INT: MPI_LONG_DOUBLE_INT
    (0x21a, 0x21a, 0x230), // MPI_REAL: MPI_2REAL
    (0x21c, 0x21c, 0x231), // MPI_DOUBLE_PRECISION: MPI_2DOUBLE_PRECISION
    (0x219, 0x219, 0x232), // MPI_INTEGER: MPI_2INTEGER
];

mpi_fn! {
    /// MPI-4.1: the predefined type pairing `value_type` with `index_type` (the
    /// MINLOC/MAXLOC pair types), MPI_DATATYPE_NULL when there is none.
    fn MPI_Type_get_value_index / PMPI_Type_get_value_index(value_type: MPI_Datatype, index_type: MPI_Datatype, pair_type: *mut MPI_Datatype) -> c_int {
        let r = (|| {
            if datatype::predefined(value_type).is_none() && datatype::parts(value_type).is_none() {
                return Err(MPI_ERR_TYPE);
            }
            if datatype::predefined(index_type).is_none() && datatype::parts(index_type).is_none() {
                return Err(MPI_ERR_TYPE);
            }
            let pair = VALUE_INDEX
                .iter()
                .find(|p| p.0 == value_type && p.1 == index_type)
                .map_or(MPI_DATATYPE_NULL, |p| p.2);
            // SAFETY: pair_type is NULL or an MPI_Datatype.
            unsafe { put(pair_type, pair) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Type_get_value_index", r)
    }
}

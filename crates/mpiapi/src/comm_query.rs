//! What a program asks of a communicator (a child of `comm`, whose table it reads):
//! size and rank, names, its group, comparison, error handlers, the text and class
//! of an error code, and the predefined attributes (MPI_TAG_UB, MPI_UNIVERSE_SIZE,
//! MPI_APPNUM, …) with `MPI_Comm_get_attr` and `MPI_Attr_get`. Creating and freeing
//! communicators is in `comm`.

use super::{comms, lookup, rank_size, TAG_UB};
use crate::abi::*;
use crate::attr::{self, Kind};
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::runtime;
use myrix_mpi::group::{Compare, Group};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::AtomicI32;

mpi_fn! {
    fn MPI_Comm_size / PMPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
        let r = rank_size(comm, "MPI_Comm_size").and_then(|(_, s)| {
            // SAFETY: size is NULL or an int.
            unsafe { put(size, s) }
        });
        finish(comm, "MPI_Comm_size", r)
    }
}

mpi_fn! {
    fn MPI_Comm_rank / PMPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
        let r = rank_size(comm, "MPI_Comm_rank").and_then(|(me, _)| {
            // SAFETY: rank is NULL or an int.
            unsafe { put(rank, me) }
        });
        finish(comm, "MPI_Comm_rank", r)
    }
}

mpi_fn! {
    fn MPI_Comm_get_name / PMPI_Comm_get_name(comm: MPI_Comm, comm_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        // MPI 4.1: the null handle has a name too.
        if comm == MPI_COMM_NULL {
            // SAFETY: comm_name holds MPI_MAX_OBJECT_NAME bytes; resultlen is an int.
            let r = unsafe { put_str(comm_name, MPI_MAX_OBJECT_NAME, resultlen, "MPI_COMM_NULL") };
            return finish(MPI_COMM_WORLD, "MPI_Comm_get_name", r);
        }
        let r = lookup(comm, "MPI_Comm_get_name").and_then(|_| {
            let cs = comms();
            let n = match comm {
                MPI_COMM_WORLD if cs.world_name.is_empty() => "MPI_COMM_WORLD".to_string(),
                MPI_COMM_WORLD => cs.world_name.clone(),
                MPI_COMM_SELF if cs.self_name.is_empty() => "MPI_COMM_SELF".to_string(),
                MPI_COMM_SELF => cs.self_name.clone(),
                _ => cs.table.get(comm).map(|c| c.name.clone()).unwrap_or_default(),
            };
            drop(cs);
            // SAFETY: comm_name holds MPI_MAX_OBJECT_NAME bytes; resultlen is an int.
            unsafe { put_str(comm_name, MPI_MAX_OBJECT_NAME, resultlen, &n) }
        });
        finish(comm, "MPI_Comm_get_name", r)
    }
}

mpi_fn! {
    /// Names a communicator (at most MPI_MAX_OBJECT_NAME - 1 bytes are kept).
    fn MPI_Comm_set_name / PMPI_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> c_int {
        let r = lookup(comm, "MPI_Comm_set_name").and_then(|_| {
            if comm_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a NUL-terminated string by the C contract.
            let bytes = unsafe { CStr::from_ptr(comm_name) }.to_bytes();
            let bytes = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME - 1)];
            let n = String::from_utf8_lossy(bytes).into_owned();
            let mut cs = comms();
            match comm {
                MPI_COMM_WORLD => cs.world_name = n,
                MPI_COMM_SELF => cs.self_name = n,
                _ => cs.table.get_mut(comm).ok_or(MPI_ERR_COMM)?.name = n,
            }
            Ok(())
        });
        finish(comm, "MPI_Comm_set_name", r)
    }
}

mpi_fn! {
    fn MPI_Comm_group / PMPI_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
        let name = "MPI_Comm_group";
        let r = lookup(comm, name).and_then(|c| {
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let g = Group::new(c.local().to_vec()).map_err(|_| MPI_ERR_INTERN)?;
            let h = crate::group::insert(g)?;
            // SAFETY: group is an MPI_Group (checked non-NULL).
            unsafe { put(group, h) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
        let r = runtime::set_errhandler(comm, errhandler);
        finish(comm, "MPI_Comm_set_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> c_int {
        let r = runtime::errhandler(comm).ok_or(MPI_ERR_COMM).and_then(|h| {
            // SAFETY: errhandler is NULL or an MPI_Errhandler.
            unsafe { put(errhandler, h) }
        });
        finish(comm, "MPI_Comm_get_errhandler", r)
    }
}

mpi_fn! {
    /// Frees a handle from MPI_Comm_get_errhandler: the predefined handlers stay.
    fn MPI_Errhandler_free / PMPI_Errhandler_free(errhandler: *mut MPI_Errhandler) -> c_int {
        let r = if errhandler.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: non-NULL, an MPI_Errhandler by the C contract.
            match unsafe { errhandler.read() } {
                MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => {
                    // SAFETY: as above.
                    unsafe { put(errhandler, MPI_ERRHANDLER_NULL) }
                }
                h if crate::errh::is_any_user(h) => {
                    // The handler stays for the objects using it (errh.rs).
                    // SAFETY: as above.
                    unsafe { put(errhandler, MPI_ERRHANDLER_NULL) }
                }
                _ => Err(MPI_ERR_ERRHANDLER),
            }
        };
        finish(MPI_COMM_WORLD, "MPI_Errhandler_free", r)
    }
}

mpi_fn! {
    fn MPI_Error_string / PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
        let text = match crate::errh::added(errorcode) {
            Some((_, s)) => Some(s),
            None => runtime::error_text(errorcode).map(|(class, text)| format!("{class}: {text}")),
        };
        let r = text.ok_or(MPI_ERR_ARG).and_then(|t| {
            // SAFETY: string holds MPI_MAX_ERROR_STRING bytes; resultlen is an int.
            unsafe { put_str(string, MPI_MAX_ERROR_STRING, resultlen, &t) }
        });
        finish(MPI_COMM_WORLD, "MPI_Error_string", r)
    }
}

mpi_fn! {
    fn MPI_Error_class / PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
        let class = match crate::errh::added(errorcode) {
            Some((c, _)) => Some(c),
            // Every predefined code is its own class.
            None => runtime::error_text(errorcode).map(|_| errorcode),
        };
        let r = class.ok_or(MPI_ERR_ARG).and_then(|c| {
            // SAFETY: errorclass is NULL or an int.
            unsafe { put(errorclass, c) }
        });
        finish(MPI_COMM_WORLD, "MPI_Error_class", r)
    }
}

/// The values of the predefined attributes; the C program receives their addresses,
/// so they live as long as the library (an `AtomicI32` has the layout of an `int`).
static ATTR_TAG_UB: AtomicI32 = AtomicI32::new(TAG_UB);
static ATTR_IO: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static ATTR_HOST: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static ATTR_WTIME_IS_GLOBAL: AtomicI32 = AtomicI32::new(0);
static ATTR_APPNUM: AtomicI32 = AtomicI32::new(0);
static ATTR_LASTUSEDCODE: AtomicI32 = AtomicI32::new(LAST_PREDEFINED_CODE);

/// MPI_Add_error_class/code go above this: the standard has MPI_LASTUSEDCODE at
/// least MPI_ERR_LASTCODE, so added codes never fall among the ABI's reserved ones.
pub const LAST_PREDEFINED_CODE: c_int = MPI_ERR_LASTCODE;

/// Raises MPI_LASTUSEDCODE after MPI_Add_error_class/code.
pub fn set_lastusedcode(c: c_int) {
    ATTR_LASTUSEDCODE.fetch_max(c, std::sync::atomic::Ordering::SeqCst);
}
static ATTR_UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(1);

/// `(found, address)` of a predefined attribute of a predefined communicator.
fn predefined_attr(comm: MPI_Comm, key: c_int, name: &str) -> Result<&'static AtomicI32, c_int> {
    use std::sync::atomic::Ordering::SeqCst;
    let (size, appnum) = runtime::with(name, |rt| Ok((rt.job.size, rt.job.pmi().appnum())))?;
    lookup(comm, name)?;
    ATTR_UNIVERSE_SIZE.store(i32::try_from(size).unwrap_or(i32::MAX), SeqCst);
    ATTR_APPNUM.store(i32::try_from(appnum).unwrap_or(0), SeqCst);
    Ok(match key {
        MPI_TAG_UB => &ATTR_TAG_UB,
        MPI_IO => &ATTR_IO,
        MPI_HOST => &ATTR_HOST,
        MPI_WTIME_IS_GLOBAL => &ATTR_WTIME_IS_GLOBAL,
        MPI_APPNUM => &ATTR_APPNUM,
        MPI_LASTUSEDCODE => &ATTR_LASTUSEDCODE,
        MPI_UNIVERSE_SIZE => &ATTR_UNIVERSE_SIZE,
        _ => return Err(MPI_ERR_KEYVAL),
    })
}

/// The body of MPI_Comm_get_attr and MPI_Attr_get: `attribute_val` is a `void *`
/// that receives the address of the attribute's `int`.
///
/// # Safety
/// `attribute_val` is NULL or valid for a `void *`; `flag` is NULL or an int.
unsafe fn get_attr(
    comm: MPI_Comm,
    key: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    name: &str,
) -> c_int {
    let r = match predefined_attr(comm, key, name) {
        Ok(v) => {
            let addr = (v as *const AtomicI32).cast_mut().cast::<c_void>();
            // SAFETY: the caller's contract for both pointers.
            unsafe { put(attribute_val.cast::<*mut c_void>(), addr).and_then(|()| put(flag, 1)) }
        }
        Err(MPI_ERR_KEYVAL) => attr::check(Kind::Comm, key).and_then(|()| {
            // SAFETY: the caller's contract for both pointers.
            unsafe { attr::put_value(attr::get(Kind::Comm, comm, key), attribute_val, flag) }
        }),
        Err(e) => Err(e),
    };
    finish(comm, name, r)
}

mpi_fn! {
    /// The predefined attributes of MPI_COMM_WORLD and MPI_COMM_SELF (MPI_TAG_UB,
    /// MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_WTIME_IS_GLOBAL, MPI_IO, MPI_HOST,
    /// MPI_LASTUSEDCODE), then the program's (`attr.rs`).
    fn MPI_Comm_get_attr / PMPI_Comm_get_attr(comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        // SAFETY: the C contract for the pointers, forwarded.
        unsafe { get_attr(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr") }
    }
}

mpi_fn! {
    fn MPI_Attr_get / PMPI_Attr_get(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        // SAFETY: the C contract for the pointers, forwarded.
        unsafe { get_attr(comm, keyval, attribute_val, flag, "MPI_Attr_get") }
    }
}

mpi_fn! {
    /// MPI_IDENT: the same handle; MPI_CONGRUENT: the same ranks in the same order;
    /// MPI_SIMILAR: the same ranks in another order; else MPI_UNEQUAL.
    fn MPI_Comm_compare / PMPI_Comm_compare(comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) -> c_int {
        let name = "MPI_Comm_compare";
        let r = lookup(comm1, name).and_then(|a| {
            let b = lookup(comm2, name)?;
            let v = if comm1 == comm2 {
                MPI_IDENT
            } else if a.inter.is_some() || b.inter.is_some() {
                crate::intercomm::compare(&a, &b)?
            } else {
                let ga = Group::new(a.ranks.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
                let gb = Group::new(b.ranks.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
                match ga.compare(&gb) {
                    Compare::Ident => MPI_CONGRUENT,
                    Compare::Similar => MPI_SIMILAR,
                    Compare::Unequal => MPI_UNEQUAL,
                }
            };
            // SAFETY: result is NULL or an int.
            unsafe { put(result, v) }
        });
        finish(comm1, name, r)
    }
}

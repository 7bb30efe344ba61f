//! The predefined communicators (MPI_COMM_WORLD, MPI_COMM_SELF): size, rank, name,
//! error handlers, errors, and the first MPI_Barrier (through the PMI fence, until
//! RSM postboxes carry it).

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::runtime;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::AtomicI32;

/// The largest tag (the standard asks for at least 32767). The point-to-point layer
/// will carry 31-bit tags.
pub const TAG_UB: c_int = 0x7fff_ffff;

/// What point-to-point and collective calls need to know of a communicator.
#[derive(Debug, Clone)]
pub struct CommRef {
    /// The point-to-point context id; the communicator's collectives use `ctx + 1`.
    pub ctx: u32,
    /// This process's rank in the communicator.
    pub rank: u32,
    /// The world rank of each communicator rank.
    pub ranks: std::sync::Arc<[u32]>,
}

/// The communicator behind a handle (`MPI_ERR_COMM` for an invalid one). Context
/// ids: MPI_COMM_WORLD 0, MPI_COMM_SELF 2; created communicators get the next even
/// ids.
pub fn lookup(comm: MPI_Comm, name: &str) -> Result<CommRef, c_int> {
    runtime::with(name, |rt| match comm {
        MPI_COMM_WORLD => Ok(CommRef {
            ctx: 0,
            rank: rt.job.rank,
            ranks: (0..rt.job.size).collect(),
        }),
        MPI_COMM_SELF => Ok(CommRef {
            ctx: 2,
            rank: 0,
            ranks: std::sync::Arc::from([rt.job.rank]),
        }),
        _ => Err(MPI_ERR_COMM),
    })
}

/// `(rank, size)` in a predefined communicator.
fn rank_size(comm: MPI_Comm, name: &str) -> Result<(c_int, c_int), c_int> {
    runtime::with(name, |rt| match comm {
        MPI_COMM_WORLD => Ok((rt.job.rank as c_int, rt.job.size as c_int)),
        MPI_COMM_SELF => Ok((0, 1)),
        _ => Err(MPI_ERR_COMM),
    })
}

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
        let r = match comm {
            MPI_COMM_WORLD => Ok("MPI_COMM_WORLD"),
            MPI_COMM_SELF => Ok("MPI_COMM_SELF"),
            _ => Err(MPI_ERR_COMM),
        }
        .and_then(|n| {
            // SAFETY: comm_name holds MPI_MAX_OBJECT_NAME bytes; resultlen is an int.
            unsafe { put_str(comm_name, MPI_MAX_OBJECT_NAME, resultlen, n) }
        });
        finish(comm, "MPI_Comm_get_name", r)
    }
}

mpi_fn! {
    /// MPI_Barrier: MPI_COMM_WORLD through the launcher's PMI fence (a first version:
    /// correct, but a round trip through the launcher); MPI_COMM_SELF returns at once.
    fn MPI_Barrier / PMPI_Barrier(comm: MPI_Comm) -> c_int {
        let r = runtime::with("MPI_Barrier", |rt| match comm {
            MPI_COMM_WORLD => rt.job.barrier().map_err(|e| {
                eprintln!("myrix MPI: MPI_Barrier: {e}");
                MPI_ERR_OTHER
            }),
            MPI_COMM_SELF => Ok(()),
            _ => Err(MPI_ERR_COMM),
        });
        finish(comm, "MPI_Barrier", r)
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
                _ => Err(MPI_ERR_ERRHANDLER),
            }
        };
        finish(MPI_COMM_WORLD, "MPI_Errhandler_free", r)
    }
}

mpi_fn! {
    fn MPI_Error_string / PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
        let r = runtime::error_text(errorcode).ok_or(MPI_ERR_ARG).and_then(|(class, text)| {
            // SAFETY: string holds MPI_MAX_ERROR_STRING bytes; resultlen is an int.
            unsafe { put_str(string, MPI_MAX_ERROR_STRING, resultlen, &format!("{class}: {text}")) }
        });
        finish(MPI_COMM_WORLD, "MPI_Error_string", r)
    }
}

mpi_fn! {
    fn MPI_Error_class / PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
        let r = runtime::error_text(errorcode).ok_or(MPI_ERR_ARG).and_then(|_| {
            // SAFETY: errorclass is NULL or an int. Every code is its own class.
            unsafe { put(errorclass, errorcode) }
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
static ATTR_LASTUSEDCODE: AtomicI32 = AtomicI32::new(62);
static ATTR_UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(1);

/// `(found, address)` of a predefined attribute of a predefined communicator.
fn predefined_attr(comm: MPI_Comm, key: c_int, name: &str) -> Result<&'static AtomicI32, c_int> {
    use std::sync::atomic::Ordering::SeqCst;
    let (size, appnum) = runtime::with(name, |rt| Ok((rt.job.size, rt.job.pmi().appnum())))?;
    if comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF {
        return Err(MPI_ERR_COMM);
    }
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
    let r = predefined_attr(comm, key, name).and_then(|v| {
        let addr = (v as *const AtomicI32).cast_mut().cast::<c_void>();
        // SAFETY: the caller's contract for both pointers.
        unsafe { put(attribute_val.cast::<*mut c_void>(), addr).and_then(|()| put(flag, 1)) }
    });
    finish(comm, name, r)
}

mpi_fn! {
    /// The predefined attributes of MPI_COMM_WORLD and MPI_COMM_SELF (MPI_TAG_UB,
    /// MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_WTIME_IS_GLOBAL, MPI_IO, MPI_HOST,
    /// MPI_LASTUSEDCODE). User keys await MPI_Comm_create_keyval.
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
    /// Compares the predefined communicators.
    fn MPI_Comm_compare / PMPI_Comm_compare(comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) -> c_int {
        let r = runtime::with("MPI_Comm_compare", |rt| Ok(rt.job.size)).and_then(|size| {
            let known = |c| c == MPI_COMM_WORLD || c == MPI_COMM_SELF;
            if !known(comm1) || !known(comm2) {
                return Err(MPI_ERR_COMM);
            }
            let v = if comm1 == comm2 {
                MPI_IDENT
            } else if size == 1 {
                MPI_CONGRUENT
            } else {
                MPI_UNEQUAL
            };
            // SAFETY: result is NULL or an int.
            unsafe { put(result, v) }
        });
        finish(comm1, "MPI_Comm_compare", r)
    }
}

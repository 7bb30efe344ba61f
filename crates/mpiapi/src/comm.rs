//! The predefined communicators (MPI_COMM_WORLD, MPI_COMM_SELF): size, rank, name,
//! error handlers, errors, and the first MPI_Barrier (through the PMI fence, until
//! RSM postboxes carry it).

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::runtime;
use std::os::raw::{c_char, c_int};

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

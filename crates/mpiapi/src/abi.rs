//! The MPI-5.0 ABI values this library uses (the same as `include/mpi.h`). Handles
//! are pointer-sized integers here: in C they are pointers to incomplete structs,
//! passed and returned exactly as `usize` on every supported target.

#![allow(non_camel_case_types)]

use std::os::raw::c_int;

pub type Handle = usize;
pub type MPI_Comm = Handle;
pub type MPI_Errhandler = Handle;
pub type MPI_Aint = isize;

pub const MPI_COMM_NULL: Handle = 0x100;
pub const MPI_COMM_WORLD: Handle = 0x101;
pub const MPI_COMM_SELF: Handle = 0x102;

pub const MPI_ERRHANDLER_NULL: Handle = 0x140;
pub const MPI_ERRORS_ARE_FATAL: Handle = 0x141;
pub const MPI_ERRORS_ABORT: Handle = 0x142;
pub const MPI_ERRORS_RETURN: Handle = 0x143;

pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1024;
pub const MPI_THREAD_SERIALIZED: c_int = 2048;
pub const MPI_THREAD_MULTIPLE: c_int = 4096;

pub const MPI_MAX_PROCESSOR_NAME: usize = 256;
pub const MPI_MAX_ERROR_STRING: usize = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: usize = 8192;
pub const MPI_MAX_OBJECT_NAME: usize = 128;

pub const MPI_IDENT: c_int = 201;
pub const MPI_CONGRUENT: c_int = 202;
pub const MPI_UNEQUAL: c_int = 204;

pub const MPI_TAG_UB: c_int = 501;
pub const MPI_IO: c_int = 502;
pub const MPI_HOST: c_int = 503;
pub const MPI_WTIME_IS_GLOBAL: c_int = 504;
pub const MPI_APPNUM: c_int = 505;
pub const MPI_LASTUSEDCODE: c_int = 506;
pub const MPI_UNIVERSE_SIZE: c_int = 507;

pub const MPI_ANY_SOURCE: c_int = -1;
pub const MPI_PROC_NULL: c_int = -3;

pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_ARG: c_int = 13;
pub const MPI_ERR_UNKNOWN: c_int = 14;
pub const MPI_ERR_OTHER: c_int = 16;
pub const MPI_ERR_INTERN: c_int = 17;
pub const MPI_ERR_KEYVAL: c_int = 36;
pub const MPI_ERR_ERRHANDLER: c_int = 61;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 55;
pub const MPI_ERR_LASTCODE: c_int = 16383;

/// The error classes' names and meanings, by class number (0..=62).
pub const ERROR_CLASSES: [(&str, &str); 63] = [
    ("MPI_SUCCESS", "no error"),
    ("MPI_ERR_BUFFER", "invalid buffer pointer"),
    ("MPI_ERR_COUNT", "invalid count argument"),
    ("MPI_ERR_TYPE", "invalid datatype"),
    ("MPI_ERR_TAG", "invalid tag"),
    ("MPI_ERR_COMM", "invalid communicator"),
    ("MPI_ERR_RANK", "invalid rank"),
    ("MPI_ERR_REQUEST", "invalid request"),
    ("MPI_ERR_ROOT", "invalid root"),
    ("MPI_ERR_GROUP", "invalid group"),
    ("MPI_ERR_OP", "invalid operation"),
    ("MPI_ERR_TOPOLOGY", "invalid topology"),
    ("MPI_ERR_DIMS", "invalid dimension argument"),
    ("MPI_ERR_ARG", "invalid argument"),
    ("MPI_ERR_UNKNOWN", "unknown error"),
    ("MPI_ERR_TRUNCATE", "message truncated"),
    ("MPI_ERR_OTHER", "other error"),
    ("MPI_ERR_INTERN", "internal error"),
    ("MPI_ERR_PENDING", "operation pending"),
    ("MPI_ERR_IN_STATUS", "error code is in status"),
    ("MPI_ERR_ACCESS", "permission denied"),
    ("MPI_ERR_AMODE", "invalid access mode"),
    ("MPI_ERR_ASSERT", "invalid assertion"),
    ("MPI_ERR_BAD_FILE", "invalid file name"),
    ("MPI_ERR_BASE", "invalid base"),
    ("MPI_ERR_CONVERSION", "data conversion error"),
    ("MPI_ERR_DISP", "invalid displacement"),
    ("MPI_ERR_DUP_DATAREP", "data representation already defined"),
    ("MPI_ERR_FILE_EXISTS", "file exists"),
    ("MPI_ERR_FILE_IN_USE", "file in use"),
    ("MPI_ERR_FILE", "invalid file handle"),
    ("MPI_ERR_INFO_KEY", "info key too long"),
    ("MPI_ERR_INFO_NOKEY", "info key not defined"),
    ("MPI_ERR_INFO_VALUE", "info value too long"),
    ("MPI_ERR_INFO", "invalid info object"),
    ("MPI_ERR_IO", "I/O error"),
    ("MPI_ERR_KEYVAL", "invalid attribute key"),
    ("MPI_ERR_LOCKTYPE", "invalid lock type"),
    ("MPI_ERR_NAME", "service name not published"),
    ("MPI_ERR_NO_MEM", "out of memory"),
    (
        "MPI_ERR_NOT_SAME",
        "collective arguments not the same on all processes",
    ),
    ("MPI_ERR_NO_SPACE", "no space left"),
    ("MPI_ERR_NO_SUCH_FILE", "no such file"),
    ("MPI_ERR_PORT", "invalid port name"),
    ("MPI_ERR_QUOTA", "quota exceeded"),
    ("MPI_ERR_READ_ONLY", "read-only file or file system"),
    ("MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
    ("MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"),
    ("MPI_ERR_RMA_RANGE", "target memory outside the window"),
    ("MPI_ERR_RMA_SHARED", "memory cannot be shared"),
    ("MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"),
    ("MPI_ERR_SERVICE", "invalid service name"),
    ("MPI_ERR_SIZE", "invalid size"),
    ("MPI_ERR_SPAWN", "error spawning processes"),
    (
        "MPI_ERR_UNSUPPORTED_DATAREP",
        "unsupported data representation",
    ),
    ("MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported"),
    ("MPI_ERR_WIN", "invalid window"),
    ("MPI_ERR_RMA_FLAVOR", "wrong window flavor"),
    ("MPI_ERR_PROC_ABORTED", "a process aborted"),
    ("MPI_ERR_VALUE_TOO_LARGE", "value too large to store"),
    ("MPI_ERR_SESSION", "invalid session"),
    ("MPI_ERR_ERRHANDLER", "invalid error handler"),
    ("MPI_ERR_ABI", "ABI mismatch"),
];

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
pub const MPI_ERR_ABI: c_int = 62;
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

// ---- datatypes and ops (crates/mpiapi/src/{datatype,op}.rs) ----

pub type MPI_Datatype = Handle;
pub type MPI_Op = Handle;
pub type MPI_Count = i64;

pub const MPI_UNDEFINED: c_int = -32766;

pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_OP: c_int = 10;
pub const MPI_ERR_TRUNCATE: c_int = 15;
pub const MPI_ERR_NO_MEM: c_int = 39;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 59;
pub const MPI_ERR_SESSION: c_int = 60;

pub const MPI_OP_NULL: Handle = 0x20;
pub const MPI_SUM: Handle = 0x21;
pub const MPI_MIN: Handle = 0x22;
pub const MPI_MAX: Handle = 0x23;
pub const MPI_PROD: Handle = 0x24;
pub const MPI_BAND: Handle = 0x28;
pub const MPI_BOR: Handle = 0x29;
pub const MPI_BXOR: Handle = 0x2a;
pub const MPI_LAND: Handle = 0x30;
pub const MPI_LOR: Handle = 0x31;
pub const MPI_LXOR: Handle = 0x32;
pub const MPI_MINLOC: Handle = 0x38;
pub const MPI_MAXLOC: Handle = 0x39;
pub const MPI_REPLACE: Handle = 0x3c;
pub const MPI_NO_OP: Handle = 0x3d;

pub const MPI_DATATYPE_NULL: Handle = 0x200;
pub const MPI_AINT: Handle = 0x201;
pub const MPI_COUNT: Handle = 0x202;
pub const MPI_OFFSET: Handle = 0x203;
pub const MPI_PACKED: Handle = 0x207;
pub const MPI_SHORT: Handle = 0x208;
pub const MPI_INT: Handle = 0x209;
pub const MPI_LONG: Handle = 0x20a;
pub const MPI_LONG_LONG: Handle = 0x20b;
pub const MPI_UNSIGNED_SHORT: Handle = 0x20c;
pub const MPI_UNSIGNED: Handle = 0x20d;
pub const MPI_UNSIGNED_LONG: Handle = 0x20e;
pub const MPI_UNSIGNED_LONG_LONG: Handle = 0x20f;
pub const MPI_FLOAT: Handle = 0x210;
pub const MPI_C_FLOAT_COMPLEX: Handle = 0x212;
pub const MPI_CXX_FLOAT_COMPLEX: Handle = 0x213;
pub const MPI_DOUBLE: Handle = 0x214;
pub const MPI_C_DOUBLE_COMPLEX: Handle = 0x216;
pub const MPI_CXX_DOUBLE_COMPLEX: Handle = 0x217;
pub const MPI_LOGICAL: Handle = 0x218;
pub const MPI_INTEGER: Handle = 0x219;
pub const MPI_REAL: Handle = 0x21a;
pub const MPI_COMPLEX: Handle = 0x21b;
pub const MPI_DOUBLE_PRECISION: Handle = 0x21c;
pub const MPI_DOUBLE_COMPLEX: Handle = 0x21d;
pub const MPI_CHARACTER: Handle = 0x21e;
pub const MPI_LONG_DOUBLE: Handle = 0x220;
pub const MPI_C_LONG_DOUBLE_COMPLEX: Handle = 0x224;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: Handle = 0x225;
pub const MPI_FLOAT_INT: Handle = 0x228;
pub const MPI_DOUBLE_INT: Handle = 0x229;
pub const MPI_LONG_INT: Handle = 0x22a;
pub const MPI_2INT: Handle = 0x22b;
pub const MPI_SHORT_INT: Handle = 0x22c;
pub const MPI_LONG_DOUBLE_INT: Handle = 0x22d;
pub const MPI_2REAL: Handle = 0x230;
pub const MPI_2DOUBLE_PRECISION: Handle = 0x231;
pub const MPI_2INTEGER: Handle = 0x232;
pub const MPI_C_BOOL: Handle = 0x238;
pub const MPI_CXX_BOOL: Handle = 0x239;
pub const MPI_WCHAR: Handle = 0x23c;
pub const MPI_INT8_T: Handle = 0x240;
pub const MPI_UINT8_T: Handle = 0x241;
pub const MPI_CHAR: Handle = 0x243;
pub const MPI_SIGNED_CHAR: Handle = 0x244;
pub const MPI_UNSIGNED_CHAR: Handle = 0x245;
pub const MPI_BYTE: Handle = 0x247;
pub const MPI_INT16_T: Handle = 0x248;
pub const MPI_UINT16_T: Handle = 0x249;
pub const MPI_INT32_T: Handle = 0x250;
pub const MPI_UINT32_T: Handle = 0x251;
pub const MPI_INT64_T: Handle = 0x258;
pub const MPI_UINT64_T: Handle = 0x259;
pub const MPI_LOGICAL1: Handle = 0x2c0;
pub const MPI_INTEGER1: Handle = 0x2c1;
pub const MPI_LOGICAL2: Handle = 0x2c8;
pub const MPI_INTEGER2: Handle = 0x2c9;
pub const MPI_LOGICAL4: Handle = 0x2d0;
pub const MPI_INTEGER4: Handle = 0x2d1;
pub const MPI_REAL4: Handle = 0x2d2;
pub const MPI_LOGICAL8: Handle = 0x2d8;
pub const MPI_INTEGER8: Handle = 0x2d9;
pub const MPI_REAL8: Handle = 0x2da;
pub const MPI_COMPLEX8: Handle = 0x2db;
pub const MPI_COMPLEX16: Handle = 0x2e3;

// ---- Point-to-point ----

pub type MPI_Request = Handle;
pub type MPI_Message = Handle;

pub const MPI_REQUEST_NULL: Handle = 0x180;
pub const MPI_MESSAGE_NULL: Handle = 0x128;
pub const MPI_MESSAGE_NO_PROC: Handle = 0x129;

pub const MPI_ANY_TAG: c_int = -2;
pub const MPI_BSEND_OVERHEAD: usize = 512;

pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_REQUEST: c_int = 7;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_IN_STATUS: c_int = 19;
pub const MPI_ERR_PROC_ABORTED: c_int = 58;

/// `MPI_Status`: 32 bytes; the five internal ints hold the byte count (low, high
/// 32 bits) and the cancelled flag.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(non_snake_case)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub MPI_internal: [c_int; 5],
}

// ---- Groups, communicators, collectives ----

pub type MPI_Group = Handle;
pub type MPI_Info = Handle;
pub type MPI_Session = Handle;
pub const MPI_SESSION_NULL: Handle = 0x120;
pub const MPI_GROUP_NULL: Handle = 0x108;
pub const MPI_GROUP_EMPTY: Handle = 0x109;
pub const MPI_INFO_NULL: Handle = 0x130;
pub const MPI_SIMILAR: c_int = 203;
pub const MPI_COMM_TYPE_SHARED: c_int = 221;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 222;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 223;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 224;
pub const MPI_IN_PLACE: usize = 1;
pub const MPI_ERR_ROOT: c_int = 8;
pub const MPI_ERR_GROUP: c_int = 9;

// ---- One-sided communication (crates/mpiapi/src/{win,rma}.rs) ----

pub type MPI_Win = Handle;
pub const MPI_WIN_NULL: Handle = 0x110;

pub const MPI_ERR_ASSERT: c_int = 22;
pub const MPI_ERR_BASE: c_int = 24;
pub const MPI_ERR_DISP: c_int = 26;
pub const MPI_ERR_INFO: c_int = 34;
pub const MPI_ERR_LOCKTYPE: c_int = 37;
pub const MPI_ERR_RMA_ATTACH: c_int = 46;
pub const MPI_ERR_RMA_CONFLICT: c_int = 47;
pub const MPI_ERR_RMA_RANGE: c_int = 48;
pub const MPI_ERR_RMA_SHARED: c_int = 49;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SIZE: c_int = 52;
pub const MPI_ERR_WIN: c_int = 56;
pub const MPI_ERR_RMA_FLAVOR: c_int = 57;
// Dynamic processes (`dynproc.rs`).
pub const MPI_ERR_NAME: c_int = 38;
pub const MPI_ERR_PORT: c_int = 43;
pub const MPI_ERR_SERVICE: c_int = 51;
pub const MPI_ERR_SPAWN: c_int = 53;

pub const MPI_MODE_NOCHECK: c_int = 1024;
pub const MPI_MODE_NOPRECEDE: c_int = 2048;
pub const MPI_MODE_NOPUT: c_int = 4096;
pub const MPI_MODE_NOSTORE: c_int = 8192;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;

pub const MPI_LOCK_EXCLUSIVE: c_int = 301;
pub const MPI_LOCK_SHARED: c_int = 302;

pub const MPI_WIN_FLAVOR_CREATE: c_int = 311;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 312;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 313;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 314;
pub const MPI_WIN_UNIFIED: c_int = 321;
pub const MPI_WIN_SEPARATE: c_int = 322;

pub const MPI_WIN_BASE: c_int = 601;
pub const MPI_WIN_DISP_UNIT: c_int = 602;
pub const MPI_WIN_SIZE: c_int = 603;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 604;
pub const MPI_WIN_MODEL: c_int = 605;

// ---- Topologies, info, attributes (crates/mpiapi/src/{topo,info,attr}.rs) ----

pub const MPI_ERR_TOPOLOGY: c_int = 11;
pub const MPI_ERR_DIMS: c_int = 12;
pub const MPI_ERR_INFO_KEY: c_int = 31;
pub const MPI_ERR_INFO_NOKEY: c_int = 32;
pub const MPI_ERR_INFO_VALUE: c_int = 33;
pub const MPI_CART: c_int = 211;
pub const MPI_GRAPH: c_int = 212;
pub const MPI_DIST_GRAPH: c_int = 213;
/// `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` are the `int *` values 10 and 11.
pub const MPI_UNWEIGHTED: usize = 10;
pub const MPI_WEIGHTS_EMPTY: usize = 11;
pub const MPI_INFO_ENV: Handle = 0x131;
pub const MPI_MAX_INFO_KEY: usize = 256;
pub const MPI_MAX_INFO_VAL: usize = 1024;
pub const MPI_KEYVAL_INVALID: c_int = 0;

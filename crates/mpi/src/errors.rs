//! The errors of the Rust API ([`crate::world`], [`crate::comm`]): one [`Error`]
//! for every call, each with the MPI error class the C library returns for the same
//! failure ([`Error::class`]).

use crate::coll::CollError;
use crate::op::BuiltinOp;
use crate::p2p::fabric::Rank;
use crate::p2p::P2pError;
use crate::pmi::PmiError;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The launcher could not be reached (or answered nonsense).
    #[error("cannot join the job: {0}")]
    Join(PmiError),
    /// The channels to the other ranks could not be opened.
    #[error("cannot set up point-to-point: {0}")]
    Open(String),
    /// A send, receive or probe failed: a truncated message, a lost peer, the
    /// transport.
    #[error("{0}")]
    P2p(#[from] P2pError),
    /// A rank outside the communicator.
    #[error("rank {rank} is not in this communicator of {size} ranks")]
    NoSuchRank { rank: Rank, size: Rank },
    /// A message of `len` bytes received into a slice of `elem`-byte elements.
    #[error("a message of {len} bytes is not a whole number of {elem}-byte elements")]
    Partial { len: usize, elem: usize },
    /// A collective failed: a root out of range, counts or buffers that do not fit,
    /// a peer lost.
    #[error("collective: {0}")]
    Coll(#[from] CollError),
    /// A predefined operation the standard does not define on the element type
    /// (a bitwise one on floating point).
    #[error("{op:?} is not defined on {ty}")]
    Op { op: BuiltinOp, ty: &'static str },
    /// A call made while another call of this process's MPI was under way (from a
    /// reduction's closure, or inside another communicator's scope).
    #[error("another MPI call of this process is under way")]
    Busy,
    /// The launcher failed while the job ran (a fence, finalize).
    #[error("launcher: {0}")]
    Pmi(PmiError),
    /// The world was finalized: no communicator can be used any more.
    #[error("the world is finalized")]
    Finalized,
}

/// The MPI error classes the Rust API reports, with the values of the MPI-5.0
/// standard ABI (`mpi.h`'s `MPI_ERR_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorClass {
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Request = 7,
    Root = 8,
    Op = 10,
    Arg = 13,
    Truncate = 15,
    Other = 16,
    Intern = 17,
    UnsupportedOperation = 55,
    ProcAborted = 58,
}

impl ErrorClass {
    /// The class's value in `mpi.h` (the MPI-5.0 ABI).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The class's name in `mpi.h`.
    pub fn name(self) -> &'static str {
        use ErrorClass::*;
        match self {
            Buffer => "MPI_ERR_BUFFER",
            Count => "MPI_ERR_COUNT",
            Type => "MPI_ERR_TYPE",
            Tag => "MPI_ERR_TAG",
            Comm => "MPI_ERR_COMM",
            Rank => "MPI_ERR_RANK",
            Request => "MPI_ERR_REQUEST",
            Root => "MPI_ERR_ROOT",
            Op => "MPI_ERR_OP",
            Arg => "MPI_ERR_ARG",
            Truncate => "MPI_ERR_TRUNCATE",
            Other => "MPI_ERR_OTHER",
            Intern => "MPI_ERR_INTERN",
            UnsupportedOperation => "MPI_ERR_UNSUPPORTED_OPERATION",
            ProcAborted => "MPI_ERR_PROC_ABORTED",
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The class of a point-to-point failure (as the C library's `MPI_Recv` and
/// friends return it).
pub fn p2p_class(e: &P2pError) -> ErrorClass {
    match e {
        P2pError::Truncated { .. } => ErrorClass::Truncate,
        P2pError::PeerLost { .. } => ErrorClass::ProcAborted,
        P2pError::UnknownRequest => ErrorClass::Request,
        _ => ErrorClass::Other,
    }
}

/// The class of a collective's failure (as the C library's collectives return it).
pub fn coll_class(e: &CollError) -> ErrorClass {
    match e {
        CollError::Root { .. } => ErrorClass::Root,
        CollError::Args(_) => ErrorClass::Arg,
        CollError::Length { .. } | CollError::Truncated { .. } => ErrorClass::Truncate,
        CollError::Transport(_) => ErrorClass::Other,
        CollError::Unavailable(_) => ErrorClass::UnsupportedOperation,
    }
}

impl Error {
    /// The MPI error class of this error: what the C library returns for the same
    /// failure.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Join(_) | Error::Open(_) | Error::Pmi(_) => ErrorClass::Other,
            Error::P2p(e) => p2p_class(e),
            Error::NoSuchRank { .. } => ErrorClass::Rank,
            Error::Partial { .. } => ErrorClass::Truncate,
            Error::Coll(e) => coll_class(e),
            Error::Op { .. } => ErrorClass::Op,
            Error::Busy | Error::Finalized => ErrorClass::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_c_library() {
        let root = Error::Coll(CollError::Root { root: 3, size: 2 });
        assert_eq!((root.class(), root.class().code()), (ErrorClass::Root, 8));
        let t = Error::P2p(P2pError::Truncated { len: 9, cap: 8 });
        assert_eq!(t.class().name(), "MPI_ERR_TRUNCATE");
        let args = Error::Coll(CollError::Args("counts".into()));
        assert_eq!(args.class().code(), 13);
        assert_eq!(
            Error::NoSuchRank { rank: 4, size: 2 }.class(),
            ErrorClass::Rank
        );
    }
}

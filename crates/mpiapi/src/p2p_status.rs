//! What a completed point-to-point operation reports to C: `CStatus` and its
//! stores into `MPI_Status`, the engine's errors as MPI error codes, and world ranks
//! back into a communicator's. Owns no state.

use super::*;

/// A completed operation as C sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CStatus {
    pub(crate) source: c_int,
    pub(crate) tag: c_int,
    pub(crate) error: c_int,
    pub(crate) bytes: usize,
    pub(crate) cancelled: bool,
}

impl CStatus {
    /// The empty status the standard gives an inactive or null request: any
    /// source, any tag, no error, zero count.
    pub(crate) fn inactive() -> CStatus {
        CStatus {
            source: MPI_ANY_SOURCE,
            ..CStatus::empty()
        }
    }

    /// A completed operation with MPI_PROC_NULL (source MPI_PROC_NULL, any tag,
    /// zero count).
    pub(crate) fn empty() -> CStatus {
        CStatus {
            source: MPI_PROC_NULL,
            tag: MPI_ANY_TAG,
            error: MPI_SUCCESS,
            bytes: 0,
            cancelled: false,
        }
    }

    /// Stores a single completion's status: the standard leaves `MPI_ERROR` alone
    /// there (only the array calls set it, with MPI_ERR_IN_STATUS).
    ///
    /// # Safety
    /// `st` is NULL (MPI_STATUS_IGNORE) or valid for an MPI_Status.
    pub(crate) unsafe fn store(&self, st: *mut MPI_Status) {
        if st.is_null() {
            return;
        }
        // SAFETY: non-NULL and valid by the caller's contract.
        let error = unsafe { (*st).MPI_ERROR };
        // SAFETY: as above.
        unsafe { self.store_all(st) };
        // SAFETY: as above.
        unsafe { (*st).MPI_ERROR = error };
    }

    /// Stores every field, `MPI_ERROR` too (the array calls).
    ///
    /// # Safety
    /// `st` is NULL (MPI_STATUS_IGNORE) or valid for an MPI_Status.
    pub(crate) unsafe fn store_all(&self, st: *mut MPI_Status) {
        if st.is_null() {
            return;
        }
        let s = MPI_Status {
            MPI_SOURCE: self.source,
            MPI_TAG: self.tag,
            MPI_ERROR: self.error,
            MPI_internal: [
                self.bytes as u32 as c_int,
                (self.bytes as u64 >> 32) as u32 as c_int,
                c_int::from(self.cancelled),
                0,
                0,
            ],
        };
        // SAFETY: non-NULL and valid by the caller's contract.
        unsafe { st.write(s) };
    }
}

/// The count of bytes recorded in a status.
pub(crate) fn status_bytes(st: &MPI_Status) -> usize {
    (st.MPI_internal[0] as u32 as u64 | ((st.MPI_internal[1] as u32 as u64) << 32)) as usize
}

pub fn error_code(e: &P2pError) -> c_int {
    match e {
        P2pError::Truncated { .. } => MPI_ERR_TRUNCATE,
        P2pError::PeerLost { .. } => MPI_ERR_PROC_ABORTED,
        P2pError::UnknownRequest => MPI_ERR_REQUEST,
        P2pError::Fabric(_) => MPI_ERR_OTHER,
    }
}

pub(crate) fn report(name: &str, e: &P2pError) -> c_int {
    if !matches!(e, P2pError::Truncated { .. }) {
        crate::ffi::say!("myrix MPI: {name}: {e}");
    }
    error_code(e)
}

#[inline]
pub(crate) fn comm_rank_of(ranks: &[u32], world: u32) -> c_int {
    if ranks.get(world as usize) == Some(&world) {
        return world as c_int;
    }
    ranks
        .iter()
        .position(|&r| r == world)
        .map_or(MPI_ANY_SOURCE, |p| p as c_int)
}

#[inline]
pub(crate) fn cstatus(ranks: &[u32], s: &Status) -> CStatus {
    CStatus {
        source: comm_rank_of(ranks, s.source),
        tag: s.tag,
        error: s.error.as_ref().map_or(MPI_SUCCESS, error_code),
        bytes: s.len,
        cancelled: s.cancelled,
    }
}

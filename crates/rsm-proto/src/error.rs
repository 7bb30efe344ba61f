//! RSM's errors as typed values, each with RSMAPI's `RSMERR_*` number.
//!
//! Errors are what an RSMAPI program tests for, so each keeps the number `rsmapi.h`
//! gives it ([`RsmError::code`], [`RsmError::from_code`]) and the C interface returns
//! that number unchanged. `Display` says what went wrong in words a user can act on.

/// An RSM error (RSMAPI's `RSMERR_*`, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[repr(i32)]
pub enum RsmError {
    #[error("the library version is not supported")]
    BadLibraryVersion = 1,
    #[error("bad topology pointer")]
    BadTopologyPtr = 2,
    #[error("bad controller handle")]
    BadCtlrHndl = 3,
    #[error("no such controller")]
    CtlrNotPresent = 4,
    #[error("bad segment handle")]
    BadSegHndl = 5,
    #[error("the segment is already published")]
    SegAlreadyPublished = 6,
    #[error("no segment is published under that id")]
    SegNotPublished = 7,
    #[error("the segment is not published to this node")]
    SegNotPublishedToNode = 8,
    #[error("the segment is already mapped")]
    SegAlreadyMapped = 9,
    #[error("the segment is still mapped")]
    SegStillMapped = 10,
    #[error("the segment is not mapped")]
    SegNotMapped = 11,
    #[error("only the creator of the segment may do this")]
    NotCreator = 12,
    #[error("bad barrier")]
    BadBarrierPtr = 13,
    #[error("bad scatter/gather list")]
    BadSgio = 14,
    #[error("bad local memory handle")]
    BadLocalmemHndl = 15,
    #[error("bad address")]
    BadAddr = 16,
    #[error("memory is not page-aligned")]
    BadMemAlignment = 17,
    #[error("offset outside the segment")]
    BadOffset = 18,
    #[error("offset not aligned to the access size")]
    MisalignedOffset = 19,
    #[error("bad length")]
    BadLength = 20,
    #[error("bad access list")]
    BadAcl = 21,
    #[error("bad segment id")]
    BadSegid = 22,
    #[error("the segment id is in a reserved range")]
    ReservedSegid = 23,
    #[error("the segment id is in use")]
    SegidInUse = 24,
    #[error("bad barrier mode")]
    BadMode = 25,
    #[error("bad permissions")]
    BadPerms = 26,
    #[error("permission denied")]
    PermDenied = 27,
    #[error("locks are not supported")]
    LocksNotSupported = 28,
    #[error("locks are not enabled")]
    LocksNotEnabled = 29,
    #[error("the segment was not created to be rebound")]
    RebindNotAllowed = 30,
    #[error("insufficient resources")]
    InsufficientResources = 31,
    #[error("insufficient memory")]
    InsufficientMem = 32,
    #[error("mapping failed")]
    MapFailed = 33,
    #[error("the poll descriptor is in use")]
    PollfdInUse = 34,
    #[error("the barrier is not initialized")]
    BarrierUninitialized = 35,
    #[error("the barrier could not be opened")]
    BarrierOpenFailed = 36,
    #[error("the barrier is not open")]
    BarrierNotOpened = 37,
    #[error("a transfer in the barrier's scope failed")]
    BarrierFailure = 38,
    #[error("the remote node is unreachable")]
    RemoteNodeUnreachable = 39,
    #[error("the connection was aborted")]
    ConnAborted = 40,
    #[error("interrupted")]
    Interrupted = 41,
    #[error("timed out")]
    Timeout = 42,
    #[error("bad application id")]
    BadAppid = 43,
    #[error("bad configuration")]
    BadConf = 44,
    #[error("the segment is not connected")]
    SegNotConnected = 45,
}

impl RsmError {
    /// Every error, in RSMAPI's order.
    pub const ALL: [RsmError; 45] = [
        RsmError::BadLibraryVersion,
        RsmError::BadTopologyPtr,
        RsmError::BadCtlrHndl,
        RsmError::CtlrNotPresent,
        RsmError::BadSegHndl,
        RsmError::SegAlreadyPublished,
        RsmError::SegNotPublished,
        RsmError::SegNotPublishedToNode,
        RsmError::SegAlreadyMapped,
        RsmError::SegStillMapped,
        RsmError::SegNotMapped,
        RsmError::NotCreator,
        RsmError::BadBarrierPtr,
        RsmError::BadSgio,
        RsmError::BadLocalmemHndl,
        RsmError::BadAddr,
        RsmError::BadMemAlignment,
        RsmError::BadOffset,
        RsmError::MisalignedOffset,
        RsmError::BadLength,
        RsmError::BadAcl,
        RsmError::BadSegid,
        RsmError::ReservedSegid,
        RsmError::SegidInUse,
        RsmError::BadMode,
        RsmError::BadPerms,
        RsmError::PermDenied,
        RsmError::LocksNotSupported,
        RsmError::LocksNotEnabled,
        RsmError::RebindNotAllowed,
        RsmError::InsufficientResources,
        RsmError::InsufficientMem,
        RsmError::MapFailed,
        RsmError::PollfdInUse,
        RsmError::BarrierUninitialized,
        RsmError::BarrierOpenFailed,
        RsmError::BarrierNotOpened,
        RsmError::BarrierFailure,
        RsmError::RemoteNodeUnreachable,
        RsmError::ConnAborted,
        RsmError::Interrupted,
        RsmError::Timeout,
        RsmError::BadAppid,
        RsmError::BadConf,
        RsmError::SegNotConnected,
    ];

    /// RSMAPI's number (`RSMERR_*`); `RSM_SUCCESS` is 0 and is no error.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The error with RSMAPI's number `code`, if there is one.
    pub fn from_code(code: i32) -> Option<RsmError> {
        usize::try_from(code)
            .ok()
            .and_then(|c| c.checked_sub(1))
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// RSMAPI's name for the error (`RSMERR_CONN_ABORTED` …).
    pub fn name(self) -> &'static str {
        match self {
            RsmError::BadLibraryVersion => "RSMERR_BAD_LIBRARY_VERSION",
            RsmError::BadTopologyPtr => "RSMERR_BAD_TOPOLOGY_PTR",
            RsmError::BadCtlrHndl => "RSMERR_BAD_CTLR_HNDL",
            RsmError::CtlrNotPresent => "RSMERR_CTLR_NOT_PRESENT",
            RsmError::BadSegHndl => "RSMERR_BAD_SEG_HNDL",
            RsmError::SegAlreadyPublished => "RSMERR_SEG_ALREADY_PUBLISHED",
            RsmError::SegNotPublished => "RSMERR_SEG_NOT_PUBLISHED",
            RsmError::SegNotPublishedToNode => "RSMERR_SEG_NOT_PUBLISHED_TO_NODE",
            RsmError::SegAlreadyMapped => "RSMERR_SEG_ALREADY_MAPPED",
            RsmError::SegStillMapped => "RSMERR_SEG_STILL_MAPPED",
            RsmError::SegNotMapped => "RSMERR_SEG_NOT_MAPPED",
            RsmError::NotCreator => "RSMERR_NOT_CREATOR",
            RsmError::BadBarrierPtr => "RSMERR_BAD_BARRIER_PTR",
            RsmError::BadSgio => "RSMERR_BAD_SGIO",
            RsmError::BadLocalmemHndl => "RSMERR_BAD_LOCALMEM_HNDL",
            RsmError::BadAddr => "RSMERR_BAD_ADDR",
            RsmError::BadMemAlignment => "RSMERR_BAD_MEM_ALIGNMENT",
            RsmError::BadOffset => "RSMERR_BAD_OFFSET",
            RsmError::MisalignedOffset => "RSMERR_MISALIGNED_OFFSET",
            RsmError::BadLength => "RSMERR_BAD_LENGTH",
            RsmError::BadAcl => "RSMERR_BAD_ACL",
            RsmError::BadSegid => "RSMERR_BAD_SEGID",
            RsmError::ReservedSegid => "RSMERR_RESERVED_SEGID",
            RsmError::SegidInUse => "RSMERR_SEGID_IN_USE",
            RsmError::BadMode => "RSMERR_BAD_MODE",
            RsmError::BadPerms => "RSMERR_BAD_PERMS",
            RsmError::PermDenied => "RSMERR_PERM_DENIED",
            RsmError::LocksNotSupported => "RSMERR_LOCKS_NOT_SUPPORTED",
            RsmError::LocksNotEnabled => "RSMERR_LOCKS_NOT_ENABLED",
            RsmError::RebindNotAllowed => "RSMERR_REBIND_NOT_ALLOWED",
            RsmError::InsufficientResources => "RSMERR_INSUFFICIENT_RESOURCES",
            RsmError::InsufficientMem => "RSMERR_INSUFFICIENT_MEM",
            RsmError::MapFailed => "RSMERR_MAP_FAILED",
            RsmError::PollfdInUse => "RSMERR_POLLFD_IN_USE",
            RsmError::BarrierUninitialized => "RSMERR_BARRIER_UNINITIALIZED",
            RsmError::BarrierOpenFailed => "RSMERR_BARRIER_OPEN_FAILED",
            RsmError::BarrierNotOpened => "RSMERR_BARRIER_NOT_OPENED",
            RsmError::BarrierFailure => "RSMERR_BARRIER_FAILURE",
            RsmError::RemoteNodeUnreachable => "RSMERR_REMOTE_NODE_UNREACHABLE",
            RsmError::ConnAborted => "RSMERR_CONN_ABORTED",
            RsmError::Interrupted => "RSMERR_INTERRUPTED",
            RsmError::Timeout => "RSMERR_TIMEOUT",
            RsmError::BadAppid => "RSMERR_BAD_APPID",
            RsmError::BadConf => "RSMERR_BAD_CONF",
            RsmError::SegNotConnected => "RSMERR_SEG_NOT_CONNECTED",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_rsmapis_and_round_trip() {
        for (i, e) in RsmError::ALL.iter().enumerate() {
            assert_eq!(e.code(), i as i32 + 1);
            assert_eq!(RsmError::from_code(e.code()), Some(*e));
        }
        assert_eq!(RsmError::ConnAborted.code(), 40);
        assert_eq!(RsmError::BarrierFailure.code(), 38);
        assert_eq!(RsmError::SegNotConnected.code(), 45);
        assert_eq!(RsmError::from_code(0), None);
        assert_eq!(RsmError::from_code(46), None);
        assert_eq!(RsmError::from_code(-1), None);
        assert_eq!(RsmError::ConnAborted.name(), "RSMERR_CONN_ABORTED");
        assert_eq!(
            RsmError::SegNotPublishedToNode.name(),
            "RSMERR_SEG_NOT_PUBLISHED_TO_NODE"
        );
    }
}

//! The plain values of RSM: node ids, segment ids, permissions, barrier kinds.
//!
//! Numbers are RSMAPI's (`rsmapi.h`, `rsm_common.h`), so the C interface passes them
//! through unchanged.

use crate::error::RsmError;

/// A node of an interconnect: a host a controller reaches (RSMAPI's `rsm_node_id_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// The id a segment is published under (RSMAPI's `rsm_memseg_id_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SegmentId(pub u32);

impl SegmentId {
    /// The first id of the range applications may choose from; ids below it are
    /// reserved for drivers, the cluster transport and the library.
    pub const USER_BASE: u32 = 0x8000_0000;
    /// The last id of the user range.
    pub const USER_END: u32 = 0xFFFF_FFFF;

    /// A segment id an application asked for: in the user range, or
    /// [`RsmError::ReservedSegid`].
    pub fn user(id: u32) -> Result<SegmentId, RsmError> {
        if id >= Self::USER_BASE {
            Ok(SegmentId(id))
        } else {
            Err(RsmError::ReservedSegid)
        }
    }
}

/// Access permission bits, as for files: `0o400` read, `0o200` write, and the same
/// for group (`0o040`, `0o020`) and others (`0o004`, `0o002`) in access lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Perm(pub u32);

impl Perm {
    pub const NONE: Perm = Perm(0);
    pub const READ: Perm = Perm(0o400);
    pub const WRITE: Perm = Perm(0o200);
    pub const RDWR: Perm = Perm(0o600);
    /// Every bit a permission may carry (owner, group, others; read and write).
    pub const MASK: u32 = 0o666;

    /// A permission an importer requests: a non-empty subset of owner read/write.
    pub fn requested(bits: u32) -> Result<Perm, RsmError> {
        if bits != 0 && bits & !Self::RDWR.0 == 0 {
            Ok(Perm(bits))
        } else {
            Err(RsmError::BadPerms)
        }
    }

    /// A permission an access list grants: owner/group/other read-write bits only.
    pub fn granted(bits: u32) -> Result<Perm, RsmError> {
        if bits & !Self::MASK == 0 {
            Ok(Perm(bits))
        } else {
            Err(RsmError::BadPerms)
        }
    }

    pub fn can_read(self) -> bool {
        self.0 & Self::READ.0 != 0
    }

    pub fn can_write(self) -> bool {
        self.0 & Self::WRITE.0 != 0
    }

    /// Whether every bit of `want` is in `self`.
    pub fn covers(self, want: Perm) -> bool {
        want.0 & !self.0 == 0
    }
}

/// One entry of an access list (RSMAPI's `rsmapi_access_entry_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessEntry {
    pub node: NodeId,
    pub perm: Perm,
}

/// When transfer errors are reported (RSMAPI's `rsm_barrier_mode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BarrierMode {
    /// Every put and get is its own barrier scope and reports its own error (the
    /// default, as in RSMAPI).
    #[default]
    Implicit,
    /// Errors between an open and a close are reported by the close.
    Explicit,
}

impl BarrierMode {
    /// RSMAPI's number: `RSM_BARRIER_MODE_EXPLICIT` 0, `RSM_BARRIER_MODE_IMPLICIT` 1.
    pub fn code(self) -> u32 {
        match self {
            BarrierMode::Explicit => 0,
            BarrierMode::Implicit => 1,
        }
    }

    pub fn from_code(code: u32) -> Result<BarrierMode, RsmError> {
        match code {
            0 => Ok(BarrierMode::Explicit),
            1 => Ok(BarrierMode::Implicit),
            _ => Err(RsmError::BadMode),
        }
    }
}

/// What a barrier covers (RSMAPI's `rsm_barrier_type_t`). myrix keeps one scope per
/// import handle whatever the type; the type is recorded and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierType {
    Segment,
    Node,
    SegmentThread,
    NodeThread,
}

impl BarrierType {
    pub fn code(self) -> u32 {
        match self {
            BarrierType::Segment => 0x01,
            BarrierType::Node => 0x02,
            BarrierType::SegmentThread => 0x11,
            BarrierType::NodeThread => 0x12,
        }
    }

    pub fn from_code(code: u32) -> Result<BarrierType, RsmError> {
        match code {
            0x01 => Ok(BarrierType::Segment),
            0x02 => Ok(BarrierType::Node),
            0x11 => Ok(BarrierType::SegmentThread),
            0x12 => Ok(BarrierType::NodeThread),
            _ => Err(RsmError::BadBarrierPtr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_segment_ids_are_the_top_half() {
        assert_eq!(SegmentId::user(0x8000_0000), Ok(SegmentId(0x8000_0000)));
        assert_eq!(SegmentId::user(u32::MAX), Ok(SegmentId(u32::MAX)));
        assert_eq!(SegmentId::user(0x7FFF_FFFF), Err(RsmError::ReservedSegid));
        assert_eq!(SegmentId::user(0), Err(RsmError::ReservedSegid));
    }

    #[test]
    fn requested_permissions_are_owner_bits() {
        assert!(Perm::requested(0o400).is_ok());
        assert!(Perm::requested(0o600).is_ok());
        assert_eq!(Perm::requested(0), Err(RsmError::BadPerms));
        assert_eq!(Perm::requested(0o040), Err(RsmError::BadPerms));
        assert_eq!(Perm::granted(0o624), Ok(Perm(0o624)));
        assert_eq!(Perm::granted(0o1000), Err(RsmError::BadPerms));
        assert!(Perm::RDWR.covers(Perm::READ) && !Perm::READ.covers(Perm::WRITE));
    }

    #[test]
    fn barrier_codes_round_trip() {
        for m in [BarrierMode::Implicit, BarrierMode::Explicit] {
            assert_eq!(BarrierMode::from_code(m.code()), Ok(m));
        }
        assert_eq!(BarrierMode::from_code(2), Err(RsmError::BadMode));
        for t in [
            BarrierType::Segment,
            BarrierType::Node,
            BarrierType::SegmentThread,
            BarrierType::NodeThread,
        ] {
            assert_eq!(BarrierType::from_code(t.code()), Ok(t));
        }
    }
}

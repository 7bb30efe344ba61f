//! Who may import a segment, and with which permission: the access list a segment is
//! published with, checked when an importer connects.
//!
//! As in RSMAPI, an entry's permission has three octal digits like a file's mode
//! (owner, group, others); the digit that applies is chosen by the importer's user and
//! group against the exporter's. A segment published with no list is open to every
//! node with one mode for all. Republishing replaces the list for later connections
//! only: the check happens once, at connect.

use crate::error::RsmError;
use crate::types::{AccessEntry, NodeId, Perm};

/// The most entries one access list may hold: more nodes than any interconnect
/// myrix drives, and a bound on what a caller can make the library allocate.
pub const MAX_ENTRIES: usize = 4096;

/// A user and group, as the exporter sees an importer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credentials {
    pub uid: u32,
    pub gid: u32,
}

/// A published segment's access list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acl {
    /// No list: every node may import with this mode (three octal digits).
    Open(Perm),
    /// Only these nodes, each with its mode.
    List(Vec<AccessEntry>),
}

impl Acl {
    /// A list as a caller gave it: at most [`MAX_ENTRIES`], valid modes, each node
    /// once; an empty list is [`Acl::Open`] with `open_mode`.
    pub fn new(entries: &[AccessEntry], open_mode: Perm) -> Result<Acl, RsmError> {
        if entries.is_empty() {
            return Ok(Acl::Open(Perm::granted(open_mode.0)?));
        }
        if entries.len() > MAX_ENTRIES {
            return Err(RsmError::BadAcl);
        }
        let mut nodes: Vec<NodeId> = entries.iter().map(|e| e.node).collect();
        nodes.sort_unstable();
        if nodes.windows(2).any(|w| w[0] == w[1]) {
            return Err(RsmError::BadAcl);
        }
        if entries.iter().any(|e| Perm::granted(e.perm.0).is_err()) {
            return Err(RsmError::BadAcl);
        }
        Ok(Acl::List(entries.to_vec()))
    }

    /// Whether `node`, run by `who`, may import with `want` from an exporter run by
    /// `owner`: `Ok` or the error RSMAPI gives.
    pub fn check(
        &self,
        node: NodeId,
        who: Credentials,
        owner: Credentials,
        want: Perm,
    ) -> Result<(), RsmError> {
        let mode = match self {
            Acl::Open(mode) => *mode,
            Acl::List(entries) => match entries.iter().find(|e| e.node == node) {
                Some(e) => e.perm,
                None => return Err(RsmError::SegNotPublishedToNode),
            },
        };
        // Move the digit that applies to the owner's place, where `want` is.
        let shift = if who.uid == owner.uid {
            0
        } else if who.gid == owner.gid {
            3
        } else {
            6
        };
        let granted = Perm((mode.0 << shift) & Perm::RDWR.0);
        if granted.covers(want) {
            Ok(())
        } else {
            Err(RsmError::PermDenied)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Credentials = Credentials {
        uid: 1000,
        gid: 100,
    };
    const MY_GROUP: Credentials = Credentials {
        uid: 1001,
        gid: 100,
    };
    const OTHER: Credentials = Credentials {
        uid: 2000,
        gid: 200,
    };

    fn entry(node: u32, perm: u32) -> AccessEntry {
        AccessEntry {
            node: NodeId(node),
            perm: Perm(perm),
        }
    }

    #[test]
    fn the_digit_that_applies_follows_user_and_group() {
        // 0624: owner rw, group w, others r (the man page's example).
        let acl = Acl::new(&[entry(1, 0o624)], Perm::RDWR).unwrap();
        let n = NodeId(1);
        assert_eq!(acl.check(n, ME, ME, Perm::RDWR), Ok(()));
        assert_eq!(acl.check(n, MY_GROUP, ME, Perm::WRITE), Ok(()));
        assert_eq!(
            acl.check(n, MY_GROUP, ME, Perm::READ),
            Err(RsmError::PermDenied)
        );
        assert_eq!(acl.check(n, OTHER, ME, Perm::READ), Ok(()));
        assert_eq!(
            acl.check(n, OTHER, ME, Perm::RDWR),
            Err(RsmError::PermDenied)
        );
    }

    #[test]
    fn a_node_missing_from_the_list_cannot_import() {
        let acl = Acl::new(&[entry(1, 0o666), entry(3, 0o444)], Perm::RDWR).unwrap();
        assert_eq!(
            acl.check(NodeId(2), ME, ME, Perm::READ),
            Err(RsmError::SegNotPublishedToNode)
        );
        assert_eq!(acl.check(NodeId(3), ME, ME, Perm::READ), Ok(()));
        assert_eq!(
            acl.check(NodeId(3), ME, ME, Perm::WRITE),
            Err(RsmError::PermDenied)
        );
    }

    #[test]
    fn no_list_opens_the_segment_to_every_node_with_one_mode() {
        let acl = Acl::new(&[], Perm(0o644)).unwrap();
        for node in [0, 7, u32::MAX] {
            assert_eq!(acl.check(NodeId(node), ME, ME, Perm::RDWR), Ok(()));
            assert_eq!(acl.check(NodeId(node), OTHER, ME, Perm::READ), Ok(()));
            assert_eq!(
                acl.check(NodeId(node), OTHER, ME, Perm::WRITE),
                Err(RsmError::PermDenied)
            );
        }
    }

    #[test]
    fn bad_lists_are_refused() {
        assert_eq!(
            Acl::new(&[entry(1, 0o600), entry(1, 0o400)], Perm::RDWR),
            Err(RsmError::BadAcl)
        );
        assert_eq!(
            Acl::new(&[entry(1, 0o7777)], Perm::RDWR),
            Err(RsmError::BadAcl)
        );
        let many: Vec<_> = (0..MAX_ENTRIES as u32 + 1)
            .map(|n| entry(n, 0o600))
            .collect();
        assert_eq!(Acl::new(&many, Perm::RDWR), Err(RsmError::BadAcl));
        assert_eq!(Acl::new(&[], Perm(0o1000)), Err(RsmError::BadPerms));
    }
}

//! The host's registry of published segments: a directory (`$MYRIX_RSM_DIR`, default
//! `/dev/shm/myrix-rsm`) and, per segment, an abstract socket name (see
//! [`super::serve`]: the name and the segment's files die with the exporter, even
//! killed by SIGKILL). Named in the directory are only
//!
//! * `.lock` — the directory lock;
//! * leftovers of older versions, which named the segment's files `ID.ctl` (the
//!   control block, locked by the live exporter), `ID.seg` and `ID.acl`, and, until
//!   session 31, the FIFOs behind pollable descriptors, `ID.sig-e` and `ID.sig-K`
//!   (eventfds handed over by the serving thread now, with no name).
//!
//! Binding a name and removing files happens under the directory lock (`.lock`,
//! `flock`), so a cleaner never removes the files of a segment being made, and
//! removes them only after seeing under the lock that no live process has the
//! segment. This module must never map memory or decide permissions: it names, locks
//! and cleans up.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use myrix_rsm_proto::{Acl, NodeId, RsmError, SegmentId};

use super::mem;

pub(crate) fn dir() -> PathBuf {
    std::env::var_os("MYRIX_RSM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm/myrix-rsm"))
}

/// Makes the directory if it is missing (sticky and open to all, as `/tmp`, so every
/// user of the host can publish).
pub(crate) fn ensure_dir(d: &Path) -> Result<(), RsmError> {
    if !d.is_dir() {
        std::fs::create_dir_all(d).map_err(|_| RsmError::BadConf)?;
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777));
    }
    Ok(())
}

pub(crate) fn path(d: &Path, id: SegmentId, what: &str) -> PathBuf {
    d.join(format!("{:08x}.{what}", id.0))
}

/// The directory lock, held while alive.
pub(crate) struct DirLock(#[allow(dead_code)] File);

impl DirLock {
    pub(crate) fn take(d: &Path) -> Result<DirLock, RsmError> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o666)
            .open(d.join(".lock"))
            .map_err(|e| mem::mem_error(&e))?;
        mem::lock_exclusive(&f).map_err(|e| mem::mem_error(&e))?;
        Ok(DirLock(f))
    }
}

/// Removes every file of segment `id`. Call with the directory lock held.
pub(crate) fn remove_all(d: &Path, id: SegmentId) {
    let prefix = format!("{:08x}.", id.0);
    if let Ok(entries) = std::fs::read_dir(d) {
        for e in entries.flatten() {
            if e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// With the directory lock held: removes segment `id`'s files if it has no live
/// exporter (its name unbound, and no older version's control block locked).
/// Returns whether a live entry remains.
pub(crate) fn reap(d: &Path, id: SegmentId) -> bool {
    if super::serve::bound(d, id) {
        return true;
    }
    match File::open(path(d, id, "ctl")) {
        Ok(f) if mem::locked_by_other(&f) => true,
        Ok(_) => {
            remove_all(d, id);
            false
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            remove_all(d, id);
            false
        }
        // Not ours to judge (another user's, unreadable): leave it.
        Err(_) => true,
    }
}

/// Removes the entries of every dead exporter, and temporary files of dead processes.
pub(crate) fn reap_all(d: &Path) {
    let Ok(_lock) = DirLock::take(d) else { return };
    let Ok(entries) = std::fs::read_dir(d) else {
        return;
    };
    let mut ids = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(rest) = name.strip_prefix(".tmp-") {
            let pid = rest.split('-').next().and_then(|p| p.parse().ok());
            if pid.is_some_and(|p| !mem::pid_alive(p)) {
                let _ = std::fs::remove_file(e.path());
            }
        } else if let Some((hex, _)) = name.split_once('.') {
            if let Ok(id) = u32::from_str_radix(hex, 16) {
                if hex.len() == 8 {
                    ids.push(SegmentId(id));
                }
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        reap(d, id);
    }
}

/// A temporary file name unique to this process.
pub(crate) fn tmp_path(d: &Path) -> PathBuf {
    let (_, _, pid) = mem::whoami();
    d.join(format!(".tmp-{pid}-{:016x}", crate::random_u64()))
}

/// The file modes an access list gives the data file and the control block, for the
/// users of this host (the node `local`): each class the list admits may open the data
/// file (read-write if it may write: a mapping needs read) and the control block
/// (read-write: signals are posted there); the owner always may.
pub(crate) fn modes(acl: &Acl, local: NodeId) -> (u32, u32) {
    let mode = match acl {
        Acl::Open(m) => m.0,
        Acl::List(list) => list
            .iter()
            .find(|e| e.node == local)
            .map_or(0, |e| e.perm.0),
    };
    let mut seg = 0o600;
    let mut ctl = 0o600;
    for shift in [3, 0] {
        let d = (mode >> shift) & 0o6;
        if d & 0o2 != 0 {
            seg |= 0o6 << shift;
        } else if d & 0o4 != 0 {
            seg |= 0o4 << shift;
        }
        if d != 0 {
            ctl |= 0o6 << shift;
        }
    }
    (seg, ctl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_rsm_proto::{AccessEntry, Perm};

    #[test]
    fn modes_follow_the_list() {
        let acl = Acl::new(&[], Perm(0o624)).unwrap();
        assert_eq!(modes(&acl, NodeId(0)), (0o664, 0o666));
        let acl = Acl::new(
            &[AccessEntry {
                node: NodeId(3),
                perm: Perm(0o644),
            }],
            Perm::RDWR,
        )
        .unwrap();
        assert_eq!(modes(&acl, NodeId(0)), (0o600, 0o600));
        assert_eq!(modes(&acl, NodeId(3)), (0o644, 0o666));
    }
}

//! The `shm` controller: remote shared memory between the processes of this host, for
//! real one-sided access: an importer maps the exporter's segment and its puts and gets
//! are loads and stores, with no call by the exporting process.
//!
//! * [`registry`] — the host's registry directory (`/dev/shm/myrix-rsm`, or
//!   `$MYRIX_RSM_DIR`): its lock, liveness by `flock`, clean-up of what older
//!   versions' dead exporters left named (at controller start, and whenever a user
//!   finds it).
//! * [`serve`] — a published segment's name (an abstract socket, gone with its
//!   exporter), its unnamed files and signal eventfds, and the thread that hands them
//!   between exporter and importers.
//! * [`ctl`] — a segment's control block: state, owner, and the signal mailboxes.
//! * [`export`], [`import`] — the two ends.
//! * [`watch`] — the thread that notices an exporter's death for its importers.
//! * [`mem`] — every system call that maps memory and every raw access (the only
//!   `unsafe` of the controller).
//!
//! The node id of this host is `$MYRIX_RSM_NODE` (a decimal u32), 0 if unset; the
//! topology is this node alone, and connecting to another node gives
//! `RemoteNodeUnreachable`. The design and its reasons are in `docs/rsm-shm.md`.

pub(crate) mod ctl;
pub(crate) mod export;
pub(crate) mod hold;
pub(crate) mod import;
pub(crate) mod mem;
pub(crate) mod registry;
pub(crate) mod serve;
pub(crate) mod watch;

use std::path::PathBuf;

use myrix_rsm_proto::{NodeId, Perm, RsmError, SegmentId};

use crate::backend::{CtlrBackend, ExportBackend, ImportBackend};
use crate::{ControllerAttr, ExportFlags};

/// The largest segment: 64 GiB (tmpfs files are sparse; memory is used as touched).
pub(crate) const MAX_SEGMENT: usize = 1 << 36;

pub(crate) struct ShmCtlr {
    node: NodeId,
    dir: PathBuf,
    page: usize,
}

impl ShmCtlr {
    /// Opens the controller: reads the node id, makes the registry directory if
    /// needed, and removes the entries of dead exporters.
    pub(crate) fn open() -> Result<ShmCtlr, RsmError> {
        let node = match std::env::var("MYRIX_RSM_NODE") {
            Ok(v) => v.trim().parse().map_err(|_| RsmError::BadConf)?,
            Err(_) => 0,
        };
        let dir = registry::dir();
        registry::ensure_dir(&dir)?;
        registry::reap_all(&dir);
        Ok(ShmCtlr {
            node: NodeId(node),
            dir,
            page: mem::page_size(),
        })
    }
}

impl CtlrBackend for ShmCtlr {
    fn attr(&self) -> ControllerAttr {
        ControllerAttr {
            name: String::new(),
            kind: "shm",
            local_node: self.node,
            page_size: self.page,
            max_segment_size: MAX_SEGMENT,
            map_supported: true,
        }
    }

    fn topology(&self) -> Vec<NodeId> {
        vec![self.node]
    }

    fn export_create(
        &self,
        len: usize,
        _flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        let ptr = mem::alloc_guarded(len)?;
        Ok(Box::new(export::ShmExport::new(
            self.dir.clone(),
            self.node,
            ptr,
            len,
            true,
        )))
    }

    #[allow(unsafe_code)]
    unsafe fn export_create_at(
        &self,
        ptr: *mut u8,
        len: usize,
        _flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        if !mem::is_mapped(ptr, len) {
            return Err(RsmError::BadAddr);
        }
        Ok(Box::new(export::ShmExport::new(
            self.dir.clone(),
            self.node,
            ptr,
            len,
            false,
        )))
    }

    fn import_connect(
        &self,
        node: NodeId,
        id: SegmentId,
        perm: Perm,
    ) -> Result<Box<dyn ImportBackend>, RsmError> {
        if node != self.node {
            return Err(RsmError::RemoteNodeUnreachable);
        }
        Ok(Box::new(import::connect(self.dir.clone(), node, id, perm)?))
    }
}

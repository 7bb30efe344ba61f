//! The `shm` controller (being written): segments shared between processes of this host.

use myrix_rsm_proto::{NodeId, Perm, RsmError, SegmentId};

use crate::backend::{CtlrBackend, ExportBackend, ImportBackend};
use crate::{ControllerAttr, ExportFlags};

pub(crate) struct ShmCtlr {
    node: NodeId,
}

impl ShmCtlr {
    pub(crate) fn open() -> Result<ShmCtlr, RsmError> {
        let node = std::env::var("MYRIX_RSM_NODE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Ok(ShmCtlr { node: NodeId(node) })
    }
}

impl CtlrBackend for ShmCtlr {
    fn attr(&self) -> ControllerAttr {
        ControllerAttr {
            name: String::new(),
            kind: "shm",
            local_node: self.node,
            page_size: 4096,
            max_segment_size: 1 << 36,
            map_supported: true,
        }
    }
    fn topology(&self) -> Vec<NodeId> {
        vec![self.node]
    }
    fn export_create(
        &self,
        _len: usize,
        _flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        Err(RsmError::InsufficientResources)
    }
    #[allow(unsafe_code)]
    unsafe fn export_create_at(
        &self,
        _ptr: *mut u8,
        _len: usize,
        _flags: ExportFlags,
    ) -> Result<Box<dyn ExportBackend>, RsmError> {
        Err(RsmError::InsufficientResources)
    }
    fn import_connect(
        &self,
        _node: NodeId,
        _id: SegmentId,
        _perm: Perm,
    ) -> Result<Box<dyn ImportBackend>, RsmError> {
        Err(RsmError::SegNotPublished)
    }
}

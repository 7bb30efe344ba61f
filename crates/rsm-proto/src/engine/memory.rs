//! The exporter's memory, as the engine reaches it: a trait the driver implements over
//! whatever backs a segment (the IO layer's mapped memory, the simulator's vectors).
//!
//! The engine calls [`Memory::write`] and [`Memory::read`] only for ranges it checked
//! against [`Memory::len`] the moment before, so an implementation may index without
//! checking again; it must never be handed a range outside the segment, whatever frames
//! arrive. An implementation must not call back into the engine.

use std::collections::HashMap;

use crate::types::SegmentId;

/// A node's exported memory; see the module docs.
pub trait Memory {
    /// The segment's length now (it may change on rebind), or `None` if no memory backs
    /// that id.
    fn len(&self, seg: SegmentId) -> Option<u64>;
    /// Writes `data` at `offset`; `offset + data.len() <= len(seg)`.
    fn write(&mut self, seg: SegmentId, offset: u64, data: &[u8]);
    /// Reads `out.len()` bytes from `offset`; `offset + out.len() <= len(seg)`.
    fn read(&self, seg: SegmentId, offset: u64, out: &mut [u8]);
}

/// Segments as vectors, for tests and the simulator.
impl Memory for HashMap<SegmentId, Vec<u8>> {
    fn len(&self, seg: SegmentId) -> Option<u64> {
        self.get(&seg).map(|v| v.len() as u64)
    }
    fn write(&mut self, seg: SegmentId, offset: u64, data: &[u8]) {
        if let Some(v) = self.get_mut(&seg) {
            let o = offset as usize;
            v[o..o + data.len()].copy_from_slice(data);
        }
    }
    fn read(&self, seg: SegmentId, offset: u64, out: &mut [u8]) {
        if let Some(v) = self.get(&seg) {
            let o = offset as usize;
            out.copy_from_slice(&v[o..o + out.len()]);
        }
    }
}

/// No memory: a node that only imports.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoMemory;

impl Memory for NoMemory {
    fn len(&self, _: SegmentId) -> Option<u64> {
        None
    }
    fn write(&mut self, _: SegmentId, _: u64, _: &[u8]) {}
    fn read(&self, _: SegmentId, _: u64, _: &mut [u8]) {}
}

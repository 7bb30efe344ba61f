//! The exporter's memory, as the engine reaches it: a trait the driver implements over
//! whatever backs a segment (the IO layer's mapped memory, the simulator's vectors).
//!
//! The engine calls [`Memory::write`] and [`Memory::read`] only for ranges it checked
//! against [`Memory::len`] the moment before, so an implementation may index without
//! checking again; it must never be handed a range outside the segment, whatever frames
//! arrive. Remote writes go through [`Memory::write_checked`], which checks and writes
//! in one call (an override must check as [`check_range`] does). An implementation must
//! not call back into the engine.

use std::collections::HashMap;

use crate::error::RsmError;
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
    /// [`Memory::len`], the range check and [`Memory::write`] in one: the write is
    /// applied only if it lies inside the segment. An implementation that finds a
    /// segment by a lookup overrides it to look once, not twice (every remote write
    /// comes this way).
    fn write_checked(&mut self, seg: SegmentId, offset: u64, data: &[u8]) -> Result<(), RsmError> {
        let len = self.len(seg).ok_or(RsmError::ConnAborted)?;
        check_range(len, offset, data.len() as u64)?;
        self.write(seg, offset, data);
        Ok(())
    }
}

/// `offset..offset+len` within a segment of `seg_len` bytes: [`RsmError::BadOffset`]
/// for an offset past the end, [`RsmError::BadLength`] for a range that runs past it.
pub fn check_range(seg_len: u64, offset: u64, len: u64) -> Result<(), RsmError> {
    if offset > seg_len {
        return Err(RsmError::BadOffset);
    }
    match offset.checked_add(len) {
        Some(end) if end <= seg_len => Ok(()),
        _ => Err(RsmError::BadLength),
    }
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

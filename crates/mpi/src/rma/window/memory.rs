//! This process's memory exposed in windows: the page ranges already exported
//! (a page can be shared from one segment only, so every window and attachment
//! over it must reuse that segment), caller memory exported in place
//! (MPI_Win_create), attached memory cut into pieces per segment
//! (MPI_Win_attach), and library memory (MPI_Win_allocate, control blocks).
//! It never maps another process's memory: that is the window's business.

use super::{round_up, rsm};
use crate::rma::RmaError;
use myrix_rsm::{Controller, Export, ExportFlags, SegmentId};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Exported page ranges of this process's memory (caller memory of windows and
/// attachments, library memory of allocated windows): a range inside one already
/// exported reuses that export; one that overlaps it otherwise is refused (a page
/// cannot be shared twice).
static REGIONS: Mutex<Vec<(usize, usize, Weak<Export>)>> = Mutex::new(Vec::new());

fn regions() -> MutexGuard<'static, Vec<(usize, usize, Weak<Export>)>> {
    REGIONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Exports (or finds the export of) the pages holding `len` bytes at `ptr`: the
/// export, its id and where `ptr` lies in it.
pub(super) fn export_pages(
    ctl: &Controller,
    ptr: *mut u8,
    len: usize,
) -> Result<(Arc<Export>, SegmentId, usize), RmaError> {
    let page = ctl.attr().page_size;
    let start = (ptr as usize) / page * page;
    let end = (ptr as usize)
        .checked_add(len)
        .ok_or(RmaError::Arg("memory range overflows".into()))?
        .div_ceil(page)
        * page;
    let mut rs = regions();
    rs.retain(|r| r.2.strong_count() > 0);
    for (s, e, w) in rs.iter() {
        if *s <= start && end <= *e {
            if let Some(x) = w.upgrade() {
                let id = x.id().ok_or(RmaError::Internal("export not published"))?;
                return Ok((x, id, ptr as usize - s));
            }
        }
        if start < *e && *s < end {
            return Err(RmaError::Attach(format!(
                "memory {ptr:p}+{len} shares pages with memory already exposed in another \
                 window ({:#x}..{:#x}) without lying inside it",
                s, e
            )));
        }
    }
    // SAFETY: the pages hold the caller's window memory, which MPI requires to stay
    // allocated until the window is freed (or the memory detached); the export lives
    // as long as that. Neighbouring bytes of the same pages keep their addresses
    // and contents (the controller remaps in place).
    let x = unsafe { ctl.export_create_at(start as *mut u8, end - start, ExportFlags::default()) }
        .map_err(rsm("exporting window memory"))?;
    let id = x
        .publish(None, &[])
        .map_err(rsm("publishing window memory"))?;
    let x = Arc::new(x);
    rs.push((start, end, Arc::downgrade(&x)));
    Ok((x, id, ptr as usize - start))
}

/// One piece of attached memory: the bytes `addr..addr+len` lie in segment `id`,
/// whose first byte is at `page`.
pub(super) struct Piece {
    /// Held: the pages stay exported while the piece is attached.
    _export: Arc<Export>,
    pub(super) id: SegmentId,
    pub(super) addr: usize,
    pub(super) len: usize,
    pub(super) page: usize,
}

/// Exports the pages holding `len` bytes at `ptr` for MPI_Win_attach, reusing the
/// exports of pages already exposed (by another window or attachment): the memory
/// comes back cut into pieces, one per segment, in address order. A page can be in
/// one segment only (it is mapped from one file), so a region sharing a page with
/// exposed memory uses that memory's segment for the page.
pub(super) fn export_pieces(
    ctl: &Controller,
    ptr: *mut u8,
    len: usize,
) -> Result<Vec<Piece>, RmaError> {
    let page = ctl.attr().page_size;
    let (lo, hi) = (
        ptr as usize,
        (ptr as usize)
            .checked_add(len)
            .ok_or(RmaError::Arg("memory range overflows".into()))?,
    );
    let (start, end) = (lo / page * page, hi.div_ceil(page) * page);
    let mut rs = regions();
    rs.retain(|r| r.2.strong_count() > 0);
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let (x, s, e) = match rs.iter().find(|r| r.0 <= at && at < r.1) {
            Some((s, e, w)) => {
                let x = w
                    .upgrade()
                    .ok_or(RmaError::Internal("exposed memory went away"))?;
                (x, *s, *e)
            }
            None => {
                // New pages up to the next exposed region (or the end).
                let stop = rs
                    .iter()
                    .filter(|r| r.0 > at && r.0 < end)
                    .map(|r| r.0)
                    .min()
                    .unwrap_or(end);
                // SAFETY: as in export_pages: memory MPI requires to stay allocated
                // while attached; the export lives as long as the attachment.
                let x = unsafe {
                    ctl.export_create_at(at as *mut u8, stop - at, ExportFlags::default())
                }
                .map_err(rsm("exporting attached memory"))?;
                x.publish(None, &[])
                    .map_err(rsm("publishing attached memory"))?;
                let x = Arc::new(x);
                rs.push((at, stop, Arc::downgrade(&x)));
                (x, at, stop)
            }
        };
        let id = x.id().ok_or(RmaError::Internal("export not published"))?;
        let (a, b) = (lo.max(at), hi.min(e));
        if a < b || (len == 0 && out.is_empty()) {
            out.push(Piece {
                _export: x,
                id,
                addr: a,
                len: b.saturating_sub(a),
                page: s,
            });
        }
        at = e;
    }
    Ok(out)
}

/// A library-allocated segment of at least `len` bytes, registered like caller
/// memory (so a later MPI_Win_create on it reuses it).
pub(super) fn export_new(
    ctl: &Controller,
    len: usize,
) -> Result<(Arc<Export>, SegmentId), RmaError> {
    let page = ctl.attr().page_size;
    let x = ctl
        .export_create(round_up(len, page), ExportFlags::default())
        .map_err(rsm("allocating window memory"))?;
    let id = x
        .publish(None, &[])
        .map_err(rsm("publishing window memory"))?;
    let x = Arc::new(x);
    let s = x.as_ptr() as usize;
    regions().push((s, s + x.len(), Arc::downgrade(&x)));
    Ok((x, id))
}

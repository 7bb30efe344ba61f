//! Data access: the one transfer engine every read and write goes through (a view
//! whose representation converts hands it to [`datarep`](super::datarep)), and the
//! individual file pointer's MPI_File_seek / MPI_File_get_position.
//!
//! A transfer walks the view's file blocks for the access's bytes and moves each
//! with `pread`/`pwrite` (short reads end at the end of the file). Memory that is
//! one contiguous block is read or written in place; any other memory layout is
//! packed (writes) or unpacked (reads) through the datatype's own pack code in
//! pieces of at most [`PIECE`] bytes, so a large count never makes a large buffer.
//! In atomic mode each access holds an `fcntl` lock on the whole file (shared for
//! reads, exclusive for writes), which serializes conflicting accesses of all ranks.

use super::*;
use crate::datatype;
use crate::ffi::{mpi_fn, put};
use crate::p2p::CStatus;
use myrix_mpi::datatype::Datatype;
use std::os::raw::c_void;
use std::os::unix::fs::FileExt;

/// The largest packing buffer a transfer uses.
pub const PIECE: usize = 1 << 20;

/// Which file pointer an access uses.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Where {
    Individual,
    At(MPI_Offset),
    Shared,
    Ordered,
}

/// Reads `buf.len()` bytes at `off`, fewer at the end of the file.
fn read_full(file: &std::fs::File, buf: &mut [u8], off: u64) -> Result<usize, c_int> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(os_error(&e)),
        }
    }
    Ok(got)
}

fn write_full(file: &std::fs::File, buf: &[u8], off: u64) -> Result<(), c_int> {
    file.write_all_at(buf, off).map_err(|e| os_error(&e))
}

/// Moves the bytes of view range `start .. start + mem.len()` between the file
/// and `mem`; returns the bytes moved (fewer when a read meets the end of file).
pub(crate) fn move_bytes(
    f: &FileObj,
    v: &view::View,
    start: u64,
    mem: &mut [u8],
    write: bool,
) -> Result<usize, c_int> {
    let mut done = 0usize;
    let mut eof = false;
    v.blocks(start, mem.len() as u64, |off, len| {
        let len = len as usize;
        let piece = &mut mem[done..done + len];
        if write {
            write_full(&f.file, piece, off)?;
            done += len;
        } else {
            let got = read_full(&f.file, piece, off)?;
            done += got;
            eof = got < len;
        }
        Ok(!eof)
    })?;
    Ok(done)
}

/// Transfers `count` elements of `dt` at `buf` to or from view bytes `start ..`;
/// returns the bytes moved.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (readable for writes, writable for reads).
#[allow(clippy::too_many_arguments)]
unsafe fn transfer(
    f: &FileObj,
    v: &view::View,
    start: u64,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    dth: MPI_Datatype,
    write: bool,
) -> Result<u64, c_int> {
    // SAFETY: the caller's contract.
    if let Some(r) = unsafe { datarep::transfer(f, v, start, buf, count, dt, dth, write) } {
        return r;
    }
    let total: usize = (count as u128 * dt.size() as u128)
        .try_into()
        .map_err(|_| MPI_ERR_COUNT)?;
    if total == 0 {
        return Ok(0);
    }
    if dt.is_contiguous() && !buf.is_null() {
        let p = buf.wrapping_offset(dt.true_lb());
        // SAFETY: one contiguous block of `total` bytes at buf + true_lb, by the
        // caller's contract.
        let mem = unsafe { std::slice::from_raw_parts_mut(p, total) };
        return move_bytes(f, v, start, mem, write).map(|n| n as u64);
    }
    let mut tmp = vec![0u8; PIECE.min(total)];
    let mut at = 0usize;
    while at < total {
        let c = (total - at).min(tmp.len());
        let piece = &mut tmp[..c];
        if write {
            // SAFETY: the caller's contract; `piece` is this function's own buffer.
            unsafe { dt.pack_at(buf, count, at, piece) };
        }
        let n = move_bytes(f, v, start + at as u64, piece, write)?;
        if !write {
            // SAFETY: as above.
            unsafe { dt.unpack_at(&piece[..n], buf, count, at) };
        }
        at += n;
        if n < c {
            break;
        }
    }
    Ok(at as u64)
}

/// The checks every data access makes, then where it starts (in etypes).
fn check(
    f: &FileObj,
    w: Where,
    count: i64,
    dt: MPI_Datatype,
    write: bool,
) -> Result<(Arc<Datatype>, usize, u64), c_int> {
    let count = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    let dt = datatype::lookup_committed(dt)?;
    if write && f.amode & MPI_MODE_RDONLY != 0 {
        return Err(MPI_ERR_READ_ONLY);
    }
    if !write && f.amode & MPI_MODE_WRONLY != 0 {
        return Err(MPI_ERR_ACCESS);
    }
    if f.amode & MPI_MODE_SEQUENTIAL != 0 && matches!(w, Where::Individual | Where::At(_)) {
        return Err(MPI_ERR_UNSUPPORTED_OPERATION);
    }
    if let Where::At(o) = w {
        if o < 0 {
            return Err(MPI_ERR_ARG);
        }
    }
    let bytes: u64 = (count as u128 * dt.size() as u128)
        .try_into()
        .map_err(|_| MPI_ERR_COUNT)?;
    let esize = f.state().view.esize;
    // Only whole etypes can be accessed.
    if bytes % esize != 0 {
        return Err(MPI_ERR_IO);
    }
    Ok((dt, count, bytes / esize))
}

/// One data access of `count` elements of `dt` at `buf` through file pointer `w`.
/// The ordered form is collective: its argument errors are agreed first.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (readable for writes, writable for reads).
pub(crate) unsafe fn data(
    fh: MPI_File,
    name: &str,
    w: Where,
    buf: *mut c_void,
    count: i64,
    dt: MPI_Datatype,
    write: bool,
) -> Result<CStatus, c_int> {
    let f = lookup(fh)?;
    let checked = check(&f, w, count, dt, write);
    if matches!(w, Where::Ordered) {
        agree(&f.cref, checked.as_ref().map(|_| ()).map_err(|&e| e), name)?;
    }
    let dth = dt;
    let (dt, count, etypes) = checked?;
    let v = f.state().view.clone();
    let start = match w {
        Where::Individual => f.state().pos,
        Where::At(o) => o as u64,
        Where::Shared => shared::fetch_add(&f, etypes)?,
        Where::Ordered => shared::ordered_start(&f, etypes, name)?,
    };
    let s = start.checked_mul(v.esize).ok_or(MPI_ERR_ARG)?;
    let atomic = f.state().atomic;
    let lock = if write { libc::F_WRLCK } else { libc::F_RDLCK };
    if atomic {
        shared::fcntl_lock(&f.file, lock, 0, 0)?;
    }
    // SAFETY: the caller's contract for buf.
    let moved = unsafe { transfer(&f, &v, s, buf.cast(), count, &dt, dth, write) };
    if atomic {
        shared::fcntl_lock(&f.file, libc::F_UNLCK, 0, 0)?;
    }
    let moved = moved?;
    if let Where::Individual = w {
        f.state().pos = start + moved / v.esize;
    }
    Ok(CStatus {
        bytes: moved as usize,
        ..CStatus::inactive()
    })
}

mpi_fn! {
    fn MPI_File_seek / PMPI_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if f.amode & MPI_MODE_SEQUENTIAL != 0 {
                return Err(MPI_ERR_UNSUPPORTED_OPERATION);
            }
            let (cur, v) = {
                let st = f.state();
                (st.pos, st.view.clone())
            };
            let to = shared::seek_to(cur, || shared::end_position(&f, &v), offset, whence)?;
            f.state().pos = to;
            Ok(())
        });
        finish(fh, "MPI_File_seek", r)
    }
}

mpi_fn! {
    fn MPI_File_get_position / PMPI_File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if f.amode & MPI_MODE_SEQUENTIAL != 0 {
                return Err(MPI_ERR_UNSUPPORTED_OPERATION);
            }
            let p = f.state().pos;
            // SAFETY: NULL or an MPI_Offset.
            unsafe { put(offset, p as MPI_Offset) }
        });
        finish(fh, "MPI_File_get_position", r)
    }
}

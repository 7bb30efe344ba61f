//! The shared file pointer, coherent across processes: an 8-byte side file beside
//! the data file (`.<name>.<tag>.shfp`, or in the temporary directory when the
//! file's directory is not writable), read and advanced under an `fcntl` write lock
//! by whichever rank accesses it, as ROMIO's ufs driver keeps it. The side file is
//! named at open (the tag comes from rank 0), made by the first rank that needs it,
//! and removed at close. The ordered collectives (MPI_File_read/write_ordered and
//! their split forms) gather every rank's count, and rank 0 alone advances the
//! pointer by the total; each rank then accesses its own slice in rank order.
//! Also MPI_File_seek_shared and MPI_File_get_position_shared.

use super::*;
use crate::ffi::{mpi_fn, put};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Where a file's shared pointer lives.
pub struct SideFile {
    /// Beside the data file, then in the temporary directory.
    paths: [PathBuf; 2],
    file: Mutex<Option<File>>,
}

impl SideFile {
    /// The side file of the data file at `path`, for the open with `tag`.
    pub(crate) fn new(path: &Path, tag: u64) -> SideFile {
        let base = path
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        SideFile {
            paths: [
                dir.join(format!(".{base}.{tag:x}.shfp")),
                std::env::temp_dir().join(format!("myrix-{base}.{tag:x}.shfp")),
            ],
            file: Mutex::new(None),
        }
    }

    /// Runs `g` on the side file, opening (and making) it first if needed.
    fn with<T>(&self, g: impl FnOnce(&File) -> Result<T, c_int>) -> Result<T, c_int> {
        let mut slot = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let open = |p: &Path| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o666)
                    .open(p)
            };
            let f = open(&self.paths[0])
                .or_else(|_| open(&self.paths[1]))
                .map_err(|e| {
                    crate::ffi::say!(
                        "myrix MPI: cannot make the shared file pointer's file {}: {e}",
                        self.paths[0].display()
                    );
                    os_error(&e)
                })?;
            *slot = Some(f);
        }
        match slot.as_ref() {
            Some(f) => g(f),
            None => Err(MPI_ERR_INTERN),
        }
    }

    /// Removes the side file (at close, on one rank; either path may not exist).
    pub(crate) fn remove(&self) {
        *self.file.lock().unwrap_or_else(|p| p.into_inner()) = None;
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Takes (`ty` F_WRLCK / F_RDLCK) or drops (F_UNLCK) an `fcntl` lock on bytes
/// `start .. start + len` of `file` (`len` 0: to the end and beyond), waiting for it.
pub(crate) fn fcntl_lock(file: &File, ty: c_int, start: u64, len: u64) -> Result<(), c_int> {
    // SAFETY: a plain C struct; all-zero is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = ty as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = i64::try_from(start).map_err(|_| MPI_ERR_ARG)? as libc::off_t;
    fl.l_len = i64::try_from(len).map_err(|_| MPI_ERR_ARG)? as libc::off_t;
    loop {
        // SAFETY: a valid descriptor of an open File and a valid flock struct.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLKW, &fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            crate::ffi::say!("myrix MPI: fcntl lock: {e}");
            return Err(MPI_ERR_IO);
        }
    }
}

/// Runs `g` on the pointer's value under the side file's lock; stores what it
/// returns as the new value.
fn update(f: &FileObj, g: impl FnOnce(u64) -> Result<u64, c_int>) -> Result<u64, c_int> {
    f.shfp.with(|file| {
        fcntl_lock(file, libc::F_WRLCK, 0, 8)?;
        let r = (|| {
            let mut b = [0u8; 8];
            let mut got = 0;
            while got < 8 {
                match file.read_at(&mut b[got..], got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(os_error(&e)),
                }
            }
            // A side file not written yet holds pointer 0.
            let old = if got == 8 { u64::from_le_bytes(b) } else { 0 };
            let new = g(old)?;
            if new != old || got != 8 {
                file.write_all_at(&new.to_le_bytes(), 0)
                    .map_err(|e| os_error(&e))?;
            }
            Ok(old)
        })();
        let unlocked = fcntl_lock(file, libc::F_UNLCK, 0, 8);
        let old = r?;
        unlocked.map(|()| old)
    })
}

/// The shared pointer (etypes of the current view).
pub(crate) fn get(f: &FileObj) -> Result<u64, c_int> {
    update(f, Ok)
}

/// Sets the shared pointer.
pub(crate) fn set(f: &FileObj, v: u64) -> Result<(), c_int> {
    update(f, |_| Ok(v)).map(|_| ())
}

/// Advances the shared pointer by `n` etypes; returns where it was.
pub(crate) fn fetch_add(f: &FileObj, n: u64) -> Result<u64, c_int> {
    update(f, |old| old.checked_add(n).ok_or(MPI_ERR_ARG))
}

/// The ordered collectives' start: this rank's position (etypes) once the ranks
/// before it took theirs; rank 0 advances the shared pointer by everyone's total.
pub(crate) fn ordered_start(f: &FileObj, n: u64, name: &str) -> Result<u64, c_int> {
    let all = allgather_u64(&f.cref, n, name)?;
    let total = all
        .iter()
        .try_fold(0u64, |a, &x| a.checked_add(x))
        .ok_or(MPI_ERR_ARG)?;
    let before: u64 = all[..f.rank()].iter().sum();
    let old = on_root(f, name, || fetch_add(f, total))?;
    Ok(old + before)
}

/// Where the file ends, in etypes of the view (rounded up to a whole etype).
pub(crate) fn end_position(f: &FileObj, v: &view::View) -> Result<u64, c_int> {
    let size = f.file.metadata().map_err(|e| os_error(&e))?.len();
    Ok(v.stream_before(size).div_ceil(v.esize))
}

/// `offset` applied to `current` as `whence` says; a position before the view's
/// start is MPI_ERR_ARG.
pub(crate) fn seek_to(
    current: u64,
    end: impl FnOnce() -> Result<u64, c_int>,
    offset: MPI_Offset,
    whence: c_int,
) -> Result<u64, c_int> {
    let from = match whence {
        MPI_SEEK_SET => 0,
        MPI_SEEK_CUR => current,
        MPI_SEEK_END => end()?,
        _ => return Err(MPI_ERR_ARG),
    };
    let to = from as i128 + offset as i128;
    u64::try_from(to).map_err(|_| MPI_ERR_ARG)
}

mpi_fn! {
    /// Collective: every rank must give the same offset and whence
    /// (MPI_ERR_NOT_SAME otherwise); rank 0 moves the pointer.
    fn MPI_File_seek_shared / PMPI_File_seek_shared(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
        let name = "MPI_File_seek_shared";
        let r = lookup(fh).and_then(|f| {
            let off0 = bcast_u64(&f.cref, offset as u64, name)?;
            let wh0 = bcast_u64(&f.cref, whence as u32 as u64, name)?;
            let same = if off0 as i64 == offset && wh0 as u32 as c_int == whence {
                Ok(())
            } else {
                Err(MPI_ERR_NOT_SAME)
            };
            agree(&f.cref, same, name)?;
            let v = f.state().view.clone();
            on_root(&f, name, || {
                let mut target = Err(MPI_ERR_ARG);
                update(&f, |cur| {
                    target = seek_to(cur, || end_position(&f, &v), offset, whence);
                    Ok(*target.as_ref().unwrap_or(&cur))
                })?;
                target
            })?;
            Ok(())
        });
        finish(fh, name, r)
    }
}

mpi_fn! {
    fn MPI_File_get_position_shared / PMPI_File_get_position_shared(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
        let r = lookup(fh).and_then(|f| {
            let p = get(&f)?;
            // SAFETY: NULL or an MPI_Offset.
            unsafe { put(offset, p as MPI_Offset) }
        });
        finish(fh, "MPI_File_get_position_shared", r)
    }
}

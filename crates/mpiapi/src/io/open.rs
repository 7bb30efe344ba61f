//! File management: MPI_File_open (collective; the access mode checked and agreed,
//! rank 0 creating the file first, every rank's outcome agreed so all ranks fail
//! alike), close (DELETE_ON_CLOSE), delete, set_size, preallocate, get_size,
//! get_group, get_amode, set_info/get_info, sync, set/get_atomicity, and the file
//! error handler functions (MPI_FILE_NULL's handler, MPI_ERRORS_RETURN unless set,
//! is where MPI_File_open's and MPI_File_delete's errors go).
//!
//! File names may carry a ROMIO file-system prefix (`ufs:`, `nfs:`…), which is
//! dropped: every file is a POSIX file here.

use super::*;
use crate::errh::Kind;
use crate::ffi::{mpi_fn, put};
use std::ffi::CStr;
use std::fs::OpenOptions;
use std::os::raw::c_char;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

/// ROMIO's file-system prefixes, dropped from file names.
const PREFIXES: [&str; 9] = [
    "ufs", "nfs", "lustre", "gpfs", "pvfs2", "xfs", "panfs", "daos", "testfs",
];

/// The POSIX path a program's file name means.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_of(name: *const c_char) -> Result<PathBuf, c_int> {
    if name.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: a NUL-terminated string by the C contract.
    let s = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    let s = match s.split_once(':') {
        Some((pre, rest)) if PREFIXES.contains(&pre) => rest.to_string(),
        _ => s,
    };
    if s.is_empty() {
        return Err(MPI_ERR_BAD_FILE);
    }
    Ok(PathBuf::from(s))
}

/// The standard's rules for an access mode.
fn check_amode(amode: c_int) -> Result<(), c_int> {
    let rw = [MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    if amode & !ALL_MODES != 0 || rw != 1 {
        return Err(MPI_ERR_AMODE);
    }
    if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        return Err(MPI_ERR_AMODE);
    }
    Ok(())
}

/// Adds `new` to the hints `info` keeps (a key set again takes the new value).
pub(crate) fn merge_hints(info: &mut crate::info::Pairs, new: crate::info::Pairs) {
    for (k, v) in new {
        match info.iter_mut().find(|(x, _)| *x == k) {
            Some(p) => p.1 = v,
            None => info.push((k, v)),
        }
    }
}

/// A tag no other open of this job shares, from rank 0.
fn open_tag() -> u64 {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed) as u64;
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    ((std::process::id() as u64) << 32) ^ (n << 20) ^ t
}

/// MPI_File_open's body after the argument checks every rank makes alike.
fn open(
    comm: MPI_Comm,
    path: Result<PathBuf, c_int>,
    amode: c_int,
    hints: Result<crate::info::Pairs, c_int>,
    name: &str,
) -> Result<MPI_File, c_int> {
    let c = crate::comm::lookup(comm, name)?;
    if c.inter.is_some() {
        return Err(MPI_ERR_COMM);
    }
    // A private communicator: the file's collectives never meet the program's.
    let dup = crate::comm::dup_plain(comm, name)?;
    let r = (|| {
        let cref = crate::comm::lookup(dup, name)?;
        let amodes = allgather_u64(&cref, amode as u32 as u64, name)?;
        let mine = check_amode(amode)
            .and_then(|()| {
                if amodes.iter().all(|&a| a == amode as u32 as u64) {
                    Ok(())
                } else {
                    Err(MPI_ERR_NOT_SAME)
                }
            })
            .and(path.clone().map(|_| ()))
            .and(hints.clone().map(|_| ()));
        agree(&cref, mine, name)?;
        let (path, hints) = (path?, hints?);
        let open_as = |create: bool, excl: bool| {
            let mut o = OpenOptions::new();
            o.read(amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR) != 0)
                .write(amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR) != 0)
                .mode(0o666);
            if excl {
                o.create_new(true);
            } else if create {
                // An existing file keeps its contents.
                o.create(true).truncate(false);
            }
            o.open(&path).map_err(|e| os_error(&e))
        };
        let (create, excl) = (amode & MPI_MODE_CREATE != 0, amode & MPI_MODE_EXCL != 0);
        // Rank 0 creates (exclusively if asked) before the others open.
        let first = if cref.rank == 0 {
            Some(open_as(create, excl))
        } else {
            None
        };
        let code = match &first {
            Some(Err(c)) => *c as u32 as u64,
            _ => 0,
        };
        let code = bcast_u64(&cref, code, name)?;
        if code != 0 {
            return Err(code as u32 as c_int);
        }
        let file = match first {
            Some(f) => f,
            None => open_as(create, false),
        };
        agree(&cref, file.as_ref().map(|_| ()).map_err(|&e| e), name)?;
        let file = file?;
        let tag = bcast_u64(&cref, open_tag(), name)?;
        let f = FileObj {
            comm: dup,
            cref,
            shfp: shared::SideFile::new(&path, tag),
            file,
            path,
            amode,
            st: Mutex::new(State {
                view: Arc::new(view::View::bytes()),
                pos: 0,
                atomic: false,
                info: hints,
                errh: null_errhandler(),
                split: None,
            }),
        };
        if amode & MPI_MODE_APPEND != 0 {
            // Both pointers start at the end of the file.
            let len = f.file.metadata().map_err(|e| os_error(&e))?.len();
            f.state().pos = len;
            on_root(&f, name, || shared::set(&f, len).map(|()| 0))?;
        }
        files().insert(Arc::new(f)).ok_or(MPI_ERR_NO_MEM)
    })();
    if r.is_err() {
        let _ = crate::comm::remove(dup);
    }
    r
}

mpi_fn! {
    fn MPI_File_open / PMPI_File_open(comm: MPI_Comm, filename: *const c_char, amode: c_int, info: MPI_Info, fh: *mut MPI_File) -> c_int {
        let name = "MPI_File_open";
        let r = (|| {
            if fh.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: the C contract for filename.
            let path = unsafe { path_of(filename) };
            let h = open(comm, path, amode, crate::info::pairs_or_empty(info), name)?;
            // SAFETY: non-NULL, an MPI_File by the C contract.
            unsafe { put(fh, h) }
        })();
        finish(MPI_FILE_NULL, name, r)
    }
}

mpi_fn! {
    /// Collective: after every rank is done, rank 0 removes the shared pointer's
    /// side file and, for MPI_MODE_DELETE_ON_CLOSE, the file.
    fn MPI_File_close / PMPI_File_close(fh: *mut MPI_File) -> c_int {
        let name = "MPI_File_close";
        if fh.is_null() {
            return finish(MPI_FILE_NULL, name, Err(MPI_ERR_ARG));
        }
        // SAFETY: non-NULL, an MPI_File by the C contract.
        let h = unsafe { fh.read() };
        let r = lookup(h).and_then(|f| {
            barrier(&f.cref, name)?;
            if f.rank() == 0 {
                f.shfp.remove();
                if f.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
                    let _ = std::fs::remove_file(&f.path);
                }
            }
            if f.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
                barrier(&f.cref, name)?;
            }
            files().remove(h);
            let _ = crate::comm::remove(f.comm);
            // SAFETY: as above.
            unsafe { put(fh, MPI_FILE_NULL) }
        });
        finish(h, name, r)
    }
}

mpi_fn! {
    fn MPI_File_delete / PMPI_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
        let r = (|| {
            crate::runtime::check("MPI_File_delete")?;
            crate::info::pairs_or_empty(info)?;
            // SAFETY: the C contract for filename.
            let p = unsafe { path_of(filename) }?;
            std::fs::remove_file(p).map_err(|e| os_error(&e))
        })();
        finish(MPI_FILE_NULL, "MPI_File_delete", r)
    }
}

/// MPI_File_set_size / MPI_File_preallocate: checked and agreed, then done by
/// rank 0 once every rank is there (the agreement is the barrier).
fn resize(fh: MPI_File, size: MPI_Offset, grow_only: bool, name: &str) -> Result<(), c_int> {
    let f = lookup(fh)?;
    let mine = if size < 0 {
        Err(MPI_ERR_ARG)
    } else if f.amode & MPI_MODE_RDONLY != 0 {
        Err(MPI_ERR_READ_ONLY)
    } else if f.amode & MPI_MODE_SEQUENTIAL != 0 {
        Err(MPI_ERR_UNSUPPORTED_OPERATION)
    } else {
        Ok(())
    };
    agree(&f.cref, mine, name)?;
    let size0 = bcast_u64(&f.cref, size as u64, name)?;
    agree(
        &f.cref,
        if size0 == size as u64 {
            Ok(())
        } else {
            Err(MPI_ERR_NOT_SAME)
        },
        name,
    )?;
    on_root(&f, name, || {
        let len = size as u64;
        if grow_only {
            // SAFETY: the descriptor of the open file.
            let rc = unsafe { libc::posix_fallocate(f.file.as_raw_fd(), 0, len as libc::off_t) };
            if rc == 0 {
                return Ok(0);
            }
            // File systems without fallocate: grow the file (never shrink it).
            let cur = f.file.metadata().map_err(|e| os_error(&e))?.len();
            if cur >= len {
                return Ok(0);
            }
        }
        f.file.set_len(len).map_err(|e| os_error(&e)).map(|()| 0)
    })
    .map(|_| ())
}

mpi_fn! {
    fn MPI_File_set_size / PMPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
        let r = resize(fh, size, false, "MPI_File_set_size");
        finish(fh, "MPI_File_set_size", r)
    }
}

mpi_fn! {
    fn MPI_File_preallocate / PMPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
        let r = resize(fh, size, true, "MPI_File_preallocate");
        finish(fh, "MPI_File_preallocate", r)
    }
}

mpi_fn! {
    fn MPI_File_get_size / PMPI_File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> c_int {
        let r = lookup(fh).and_then(|f| {
            let len = f.file.metadata().map_err(|e| os_error(&e))?.len();
            // SAFETY: NULL or an MPI_Offset.
            unsafe { put(size, len as MPI_Offset) }
        });
        finish(fh, "MPI_File_get_size", r)
    }
}

mpi_fn! {
    fn MPI_File_get_group / PMPI_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let g = myrix_mpi::group::Group::new(f.cref.ranks.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
            let h = crate::group::insert(g)?;
            // SAFETY: non-NULL, an MPI_Group by the C contract.
            unsafe { put(group, h) }
        });
        finish(fh, "MPI_File_get_group", r)
    }
}

mpi_fn! {
    fn MPI_File_get_amode / PMPI_File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int {
        // SAFETY: NULL or an int.
        let r = lookup(fh).and_then(|f| unsafe { put(amode, f.amode) });
        finish(fh, "MPI_File_get_amode", r)
    }
}

mpi_fn! {
    /// Keeps the hints (none changes what the library does).
    fn MPI_File_set_info / PMPI_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
        let r = lookup(fh).and_then(|f| {
            let p = crate::info::pairs_or_empty(info)?;
            merge_hints(&mut f.state().info, p);
            Ok(())
        });
        finish(fh, "MPI_File_set_info", r)
    }
}

mpi_fn! {
    fn MPI_File_get_info / PMPI_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
        let r = lookup(fh).and_then(|f| {
            if info_used.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let p = f.state().info.clone();
            let h = crate::info::insert(p)?;
            // SAFETY: non-NULL, an MPI_Info by the C contract.
            unsafe { put(info_used, h) }
        });
        finish(fh, "MPI_File_get_info", r)
    }
}

mpi_fn! {
    /// Collective: every rank's data reaches the storage device (fsync), then
    /// all ranks meet.
    fn MPI_File_sync / PMPI_File_sync(fh: MPI_File) -> c_int {
        let name = "MPI_File_sync";
        let r = lookup(fh).and_then(|f| {
            let mine = if f.state().split.is_some() {
                Err(MPI_ERR_IO)
            } else {
                f.file.sync_all().map_err(|e| os_error(&e))
            };
            agree(&f.cref, mine, name)
        });
        finish(fh, name, r)
    }
}

mpi_fn! {
    /// Collective: every rank must give the same flag (MPI_ERR_NOT_SAME otherwise).
    fn MPI_File_set_atomicity / PMPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
        let name = "MPI_File_set_atomicity";
        let r = lookup(fh).and_then(|f| {
            let on = flag != 0;
            let all = allgather_u64(&f.cref, u64::from(on), name)?;
            if all.iter().any(|&x| x != u64::from(on)) {
                return Err(MPI_ERR_NOT_SAME);
            }
            f.state().atomic = on;
            Ok(())
        });
        finish(fh, name, r)
    }
}

mpi_fn! {
    fn MPI_File_get_atomicity / PMPI_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int {
        let r = lookup(fh).and_then(|f| {
            let on = f.state().atomic;
            // SAFETY: NULL or an int.
            unsafe { put(flag, c_int::from(on)) }
        });
        finish(fh, "MPI_File_get_atomicity", r)
    }
}

mpi_fn! {
    fn MPI_File_create_errhandler / PMPI_File_create_errhandler(file_errhandler_fn: usize, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: errhandler is NULL or an MPI_Errhandler.
        let r = unsafe { crate::errh::create(Kind::File, file_errhandler_fn, errhandler) };
        crate::ffi::finish(MPI_COMM_WORLD, "MPI_File_create_errhandler", r)
    }
}

mpi_fn! {
    /// On MPI_FILE_NULL: the handler of files opened from now on (and of
    /// MPI_File_open's own errors).
    fn MPI_File_set_errhandler / PMPI_File_set_errhandler(file: MPI_File, errhandler: MPI_Errhandler) -> c_int {
        let r = (|| {
            crate::runtime::check("MPI_File_set_errhandler")?;
            match errhandler {
                MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => {}
                h if crate::errh::is_user(h, Kind::File) => {}
                _ => return Err(MPI_ERR_ERRHANDLER),
            }
            if file == MPI_FILE_NULL {
                set_null_errhandler(errhandler);
                return Ok(());
            }
            lookup(file)?.state().errh = errhandler;
            Ok(())
        })();
        finish(file, "MPI_File_set_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_File_get_errhandler / PMPI_File_get_errhandler(file: MPI_File, errhandler: *mut MPI_Errhandler) -> c_int {
        let r = (|| {
            crate::runtime::check("MPI_File_get_errhandler")?;
            let h = if file == MPI_FILE_NULL {
                null_errhandler()
            } else {
                lookup(file)?.state().errh
            };
            // SAFETY: NULL or an MPI_Errhandler.
            unsafe { put(errhandler, h) }
        })();
        finish(file, "MPI_File_get_errhandler", r)
    }
}

mpi_fn! {
    /// Invokes the file's error handler with `errorcode`; MPI_SUCCESS once it
    /// returned.
    fn MPI_File_call_errhandler / PMPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
        let name = "MPI_File_call_errhandler";
        if fh != MPI_FILE_NULL {
            if let Err(c) = lookup(fh) {
                return finish(fh, name, Err(c));
            }
        }
        raise(fh, errorcode, name);
        MPI_SUCCESS
    }
}

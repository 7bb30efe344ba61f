//! MPI_Info objects (ordered key/value strings) in a handle table, the
//! predefined MPI_INFO_ENV, and the hints set on communicators and windows
//! (MPI_Comm_set_info/get_info, MPI_Win_set_info/get_info,
//! MPI_Comm_dup_with_info).
//!
//! No hint changes behaviour yet: the library keeps what the program set and
//! hands it back. Keys are 1..MPI_MAX_INFO_KEY-1 bytes, values up to
//! MPI_MAX_INFO_VAL-1 (else MPI_ERR_INFO_KEY / MPI_ERR_INFO_VALUE); MPI_INFO_ENV
//! can be read and duplicated, never changed or freed (MPI_ERR_INFO).

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::handles::{base, Table};
use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Key/value pairs in the order they were first set (MPI_Info_get_nthkey's order).
pub type Pairs = Vec<(String, String)>;

struct Infos {
    table: Table<Pairs>,
    /// Hints set on communicators and windows, by handle.
    attached: HashMap<Handle, Pairs>,
}

static INFOS: LazyLock<Mutex<Infos>> = LazyLock::new(|| {
    Mutex::new(Infos {
        table: Table::new(base::INFO),
        attached: HashMap::new(),
    })
});

fn infos() -> MutexGuard<'static, Infos> {
    INFOS.lock().unwrap_or_else(|p| p.into_inner())
}

/// MPI_INFO_ENV: how the process was started, as far as it is known.
fn env_pairs() -> Pairs {
    let mut v: Pairs = Vec::new();
    let mut args = std::env::args();
    if let Some(cmd) = args.next() {
        v.push(("command".into(), cmd));
    }
    let rest: Vec<String> = args.collect();
    if !rest.is_empty() {
        v.push(("argv".into(), rest.join(" ")));
    }
    if let Ok(size) = crate::runtime::with("MPI_INFO_ENV", |rt| Ok(rt.job.size)) {
        v.push(("maxprocs".into(), size.to_string()));
    }
    if let Ok(d) = std::env::current_dir() {
        v.push(("wdir".into(), d.display().to_string()));
    }
    v.push(("arch".into(), std::env::consts::ARCH.into()));
    let level = crate::runtime::with("MPI_INFO_ENV", |rt| Ok(rt.provided)).unwrap_or(0);
    let t = [
        "MPI_THREAD_SINGLE",
        "MPI_THREAD_FUNNELED",
        "MPI_THREAD_SERIALIZED",
        "MPI_THREAD_MULTIPLE",
    ];
    v.push((
        "thread_level".into(),
        t.get(level as usize).unwrap_or(&t[0]).to_string(),
    ));
    v
}

/// A copy of an info object's pairs (MPI_INFO_ENV included).
pub fn pairs(info: MPI_Info) -> Result<Pairs, c_int> {
    if info == MPI_INFO_ENV {
        return Ok(env_pairs());
    }
    infos().table.get(info).cloned().ok_or(MPI_ERR_INFO)
}

/// The pairs of an optional info argument: MPI_INFO_NULL is none.
pub fn pairs_or_empty(info: MPI_Info) -> Result<Pairs, c_int> {
    if info == MPI_INFO_NULL {
        Ok(Vec::new())
    } else {
        pairs(info)
    }
}

/// A new info object holding `p`.
pub fn insert(p: Pairs) -> Result<MPI_Info, c_int> {
    infos().table.insert(p).ok_or(MPI_ERR_NO_MEM)
}

/// Keeps the hints given to a communicator or window.
pub fn attach(h: Handle, p: Pairs) {
    infos().attached.insert(h, p);
}

/// The hints kept for a communicator or window (none set: empty).
pub fn attached(h: Handle) -> Pairs {
    infos().attached.get(&h).cloned().unwrap_or_default()
}

/// Forgets a freed communicator's or window's hints.
pub fn forget(h: Handle) {
    infos().attached.remove(&h);
}

/// Sets `key` to `value` in a program-created info object (an OUT hint the library
/// gives back, as MPI_Comm_split_type's `mpi_hw_resource_type`).
pub fn set(info: MPI_Info, key: &str, value: &str) -> Result<(), c_int> {
    with_mut(info, |p| {
        match p.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_string(),
            None => p.push((key.to_string(), value.to_string())),
        }
        Ok(())
    })
}

/// Runs `f` on a program-created info object (MPI_INFO_ENV and invalid handles
/// are MPI_ERR_INFO).
fn with_mut<T>(info: MPI_Info, f: impl FnOnce(&mut Pairs) -> Result<T, c_int>) -> Result<T, c_int> {
    let mut g = infos();
    f(g.table.get_mut(info).ok_or(MPI_ERR_INFO)?)
}

/// A C string argument of at most `max - 1` bytes (`too_long` otherwise; empty or
/// NULL is `too_long` too for keys).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn c_str(
    s: *const c_char,
    max: usize,
    too_long: c_int,
    empty_ok: bool,
) -> Result<String, c_int> {
    if s.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let b = unsafe { CStr::from_ptr(s) }.to_bytes();
    if b.len() >= max || (!empty_ok && b.is_empty()) {
        return Err(too_long);
    }
    Ok(String::from_utf8_lossy(b).into_owned())
}

/// # Safety
/// `key` is NULL or a NUL-terminated string.
unsafe fn key(k: *const c_char) -> Result<String, c_int> {
    // SAFETY: the caller's contract.
    unsafe { c_str(k, MPI_MAX_INFO_KEY, MPI_ERR_INFO_KEY, false) }
}

/// Copies `s` into a C buffer of `cap` bytes, NUL-terminated, truncated to fit.
///
/// # Safety
/// `buf` is NULL or valid for `cap` bytes.
unsafe fn copy_str(buf: *mut c_char, cap: usize, s: &str) -> Result<(), c_int> {
    let mut len: c_int = 0;
    // SAFETY: the caller's contract; len is a local int.
    unsafe { put_str(buf, cap, &mut len, s) }
}

fn lookup_value(info: MPI_Info, k: &str) -> Result<Option<String>, c_int> {
    Ok(pairs(info)?
        .into_iter()
        .find(|(kk, _)| kk == k)
        .map(|(_, v)| v))
}

mpi_fn! {
    fn MPI_Info_create / PMPI_Info_create(info: *mut MPI_Info) -> c_int {
        let r = if info.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: info is an MPI_Info (checked non-NULL).
            insert(Vec::new()).and_then(|h| unsafe { put(info, h) })
        };
        finish(MPI_COMM_WORLD, "MPI_Info_create", r)
    }
}

mpi_fn! {
    /// A new info object with MPI_INFO_ENV's pairs.
    fn MPI_Info_create_env / PMPI_Info_create_env(_argc: c_int, _argv: *mut *mut c_char, info: *mut MPI_Info) -> c_int {
        let r = if info.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: info is an MPI_Info (checked non-NULL).
            insert(env_pairs()).and_then(|h| unsafe { put(info, h) })
        };
        finish(MPI_COMM_WORLD, "MPI_Info_create_env", r)
    }
}

mpi_fn! {
    fn MPI_Info_set / PMPI_Info_set(info: MPI_Info, k: *const c_char, value: *const c_char) -> c_int {
        let r = (|| {
            // SAFETY: NUL-terminated strings by the C contract.
            let k = unsafe { key(k) }?;
            // SAFETY: as above.
            let v = unsafe { c_str(value, MPI_MAX_INFO_VAL, MPI_ERR_INFO_VALUE, true) }?;
            with_mut(info, |p| {
                match p.iter_mut().find(|(kk, _)| *kk == k) {
                    Some(e) => e.1 = v,
                    None => p.push((k, v)),
                }
                Ok(())
            })
        })();
        finish(MPI_COMM_WORLD, "MPI_Info_set", r)
    }
}

mpi_fn! {
    fn MPI_Info_delete / PMPI_Info_delete(info: MPI_Info, k: *const c_char) -> c_int {
        // SAFETY: a NUL-terminated string by the C contract.
        let r = unsafe { key(k) }.and_then(|k| {
            with_mut(info, |p| {
                let i = p.iter().position(|(kk, _)| *kk == k).ok_or(MPI_ERR_INFO_NOKEY)?;
                p.remove(i);
                Ok(())
            })
        });
        finish(MPI_COMM_WORLD, "MPI_Info_delete", r)
    }
}

mpi_fn! {
    /// The value of `key`, at most `valuelen` characters (the buffer holds
    /// `valuelen + 1` with the NUL).
    fn MPI_Info_get / PMPI_Info_get(info: MPI_Info, k: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let r = (|| {
            // SAFETY: a NUL-terminated string by the C contract.
            let k = unsafe { key(k) }?;
            let cap = usize::try_from(valuelen).map_err(|_| MPI_ERR_ARG)?;
            match lookup_value(info, &k)? {
                Some(v) => {
                    // SAFETY: value holds valuelen + 1 bytes; flag is an int.
                    unsafe { copy_str(value, cap + 1, &v)?; put(flag, 1) }
                }
                // SAFETY: flag is NULL or an int.
                None => unsafe { put(flag, 0) },
            }
        })();
        finish(MPI_COMM_WORLD, "MPI_Info_get", r)
    }
}

mpi_fn! {
    /// MPI-4's MPI_Info_get_string: copies up to `*buflen - 1` bytes and sets
    /// `*buflen` to the value's length plus one.
    fn MPI_Info_get_string / PMPI_Info_get_string(info: MPI_Info, k: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let r = (|| {
            // SAFETY: a NUL-terminated string by the C contract.
            let k = unsafe { key(k) }?;
            if buflen.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: buflen is an int (checked non-NULL).
            let cap = usize::try_from(unsafe { buflen.read() }).map_err(|_| MPI_ERR_ARG)?;
            match lookup_value(info, &k)? {
                Some(v) => {
                    if cap > 0 {
                        // SAFETY: value holds *buflen bytes.
                        unsafe { copy_str(value, cap, &v) }?;
                    }
                    let n = c_int::try_from(v.len() + 1).map_err(|_| MPI_ERR_INTERN)?;
                    // SAFETY: buflen and flag are ints.
                    unsafe { put(buflen, n).and_then(|()| put(flag, 1)) }
                }
                // SAFETY: flag is NULL or an int.
                None => unsafe { put(flag, 0) },
            }
        })();
        finish(MPI_COMM_WORLD, "MPI_Info_get_string", r)
    }
}

mpi_fn! {
    fn MPI_Info_get_valuelen / PMPI_Info_get_valuelen(info: MPI_Info, k: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
        let r = (|| {
            // SAFETY: a NUL-terminated string by the C contract.
            let k = unsafe { key(k) }?;
            match lookup_value(info, &k)? {
                // SAFETY: valuelen and flag are ints.
                Some(v) => unsafe { put(valuelen, v.len() as c_int).and_then(|()| put(flag, 1)) },
                // SAFETY: flag is NULL or an int.
                None => unsafe { put(flag, 0) },
            }
        })();
        finish(MPI_COMM_WORLD, "MPI_Info_get_valuelen", r)
    }
}

mpi_fn! {
    fn MPI_Info_get_nkeys / PMPI_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> c_int {
        let r = pairs(info).and_then(|p| {
            // SAFETY: nkeys is NULL or an int.
            unsafe { put(nkeys, p.len() as c_int) }
        });
        finish(MPI_COMM_WORLD, "MPI_Info_get_nkeys", r)
    }
}

mpi_fn! {
    fn MPI_Info_get_nthkey / PMPI_Info_get_nthkey(info: MPI_Info, n: c_int, k: *mut c_char) -> c_int {
        let r = pairs(info).and_then(|p| {
            let (kk, _) = usize::try_from(n).ok().and_then(|n| p.get(n)).ok_or(MPI_ERR_ARG)?;
            // SAFETY: k holds MPI_MAX_INFO_KEY bytes by the C contract.
            unsafe { copy_str(k, MPI_MAX_INFO_KEY, kk) }
        });
        finish(MPI_COMM_WORLD, "MPI_Info_get_nthkey", r)
    }
}

mpi_fn! {
    fn MPI_Info_dup / PMPI_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> c_int {
        let r = pairs(info).and_then(|p| {
            if newinfo.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = insert(p)?;
            // SAFETY: newinfo is an MPI_Info (checked non-NULL).
            unsafe { put(newinfo, h) }
        });
        finish(MPI_COMM_WORLD, "MPI_Info_dup", r)
    }
}

mpi_fn! {
    fn MPI_Info_free / PMPI_Info_free(info: *mut MPI_Info) -> c_int {
        let r = if info.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: info is an MPI_Info (checked non-NULL).
            let h = unsafe { info.read() };
            infos().table.remove(h).ok_or(MPI_ERR_INFO).and_then(|_| {
                // SAFETY: as above.
                unsafe { put(info, MPI_INFO_NULL) }
            })
        };
        finish(MPI_COMM_WORLD, "MPI_Info_free", r)
    }
}

/// Replaces the hints of `h` with those of `info`.
fn set_hints(h: Handle, info: MPI_Info) -> Result<(), c_int> {
    let p = pairs_or_empty(info)?;
    attach(h, p);
    Ok(())
}

/// A new info object with the hints of `h`.
///
/// # Safety
/// `out` is NULL or valid for an MPI_Info.
unsafe fn get_hints(h: Handle, out: *mut MPI_Info) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let i = insert(attached(h))?;
    // SAFETY: the caller's contract (checked non-NULL).
    unsafe { put(out, i) }
}

mpi_fn! {
    fn MPI_Comm_set_info / PMPI_Comm_set_info(comm: MPI_Comm, info: MPI_Info) -> c_int {
        let name = "MPI_Comm_set_info";
        let r = crate::comm::lookup(comm, name).and_then(|_| set_hints(comm, info));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_get_info / PMPI_Comm_get_info(comm: MPI_Comm, info_used: *mut MPI_Info) -> c_int {
        let name = "MPI_Comm_get_info";
        // SAFETY: info_used is NULL or an MPI_Info.
        let r = crate::comm::lookup(comm, name).and_then(|_| unsafe { get_hints(comm, info_used) });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_set_info / PMPI_Win_set_info(win: MPI_Win, info: MPI_Info) -> c_int {
        let r = crate::win::lookup(win).and_then(|_| set_hints(win, info));
        crate::win::win_finish(win, "MPI_Win_set_info", r)
    }
}

mpi_fn! {
    fn MPI_Win_get_info / PMPI_Win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> c_int {
        // SAFETY: info_used is NULL or an MPI_Info.
        let r = crate::win::lookup(win).and_then(|_| unsafe { get_hints(win, info_used) });
        crate::win::win_finish(win, "MPI_Win_get_info", r)
    }
}

//! Attribute caching: keyvals (MPI_Comm_create_keyval, MPI_Type_create_keyval,
//! MPI_Win_create_keyval, the legacy MPI_Keyval_create) with their copy and
//! delete callbacks, and the attributes set on communicators, datatypes and
//! windows.
//!
//! Copy callbacks run on MPI_Comm_dup / MPI_Comm_dup_with_info / MPI_Type_dup in
//! the order the attributes were set; delete callbacks run when an attribute is
//! replaced or deleted, and on MPI_Comm_free / MPI_Type_free / MPI_Win_free in the
//! reverse order of setting (MPI_COMM_SELF's, then MPI_COMM_WORLD's, at
//! MPI_Finalize). Callbacks are C code that may call MPI again, so no lock is held
//! while one runs. The predefined copy functions are the header's values 0
//! (`MPI_*_NULL_COPY_FN`: not copied) and 1 (`MPI_*_DUP_FN`: the value is copied);
//! delete function 0 does nothing.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// The kind of object a keyval belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Comm,
    Type,
    Win,
}

/// `MPI_{Comm,Type,Win}_copy_attr_function` (their handles are all `Handle`).
type CopyFn =
    unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_{Comm,Type,Win}_delete_attr_function`.
type DeleteFn = unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void) -> c_int;

struct Keyval {
    kind: Kind,
    /// 0: null copy, 1: dup, else a `CopyFn`.
    copy: usize,
    /// 0: nothing, else a `DeleteFn`.
    delete: usize,
    extra: usize,
    /// Freed by the program: no new attributes, the existing ones keep it.
    freed: bool,
}

struct Attrs {
    keyvals: Table<Keyval>,
    /// The attributes of each object, in the order they were set.
    set: HashMap<(Kind, Handle), Vec<(c_int, usize)>>,
}

static ATTRS: LazyLock<Mutex<Attrs>> = LazyLock::new(|| {
    Mutex::new(Attrs {
        keyvals: Table::new(base::KEYVAL),
        set: HashMap::new(),
    })
});

fn attrs() -> MutexGuard<'static, Attrs> {
    ATTRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a callback needs, copied out of the lock.
#[derive(Clone, Copy)]
struct Callbacks {
    copy: usize,
    delete: usize,
    extra: usize,
}

fn callbacks(kind: Kind, key: c_int, for_set: bool) -> Result<Callbacks, c_int> {
    let a = attrs();
    let k = usize::try_from(key)
        .ok()
        .and_then(|h| a.keyvals.get(h))
        .filter(|k| k.kind == kind && !(for_set && k.freed))
        .ok_or(MPI_ERR_KEYVAL)?;
    Ok(Callbacks {
        copy: k.copy,
        delete: k.delete,
        extra: k.extra,
    })
}

/// Whether `key` is a live keyval of `kind` (MPI_ERR_KEYVAL otherwise).
pub fn check(kind: Kind, key: c_int) -> Result<(), c_int> {
    callbacks(kind, key, false).map(|_| ())
}

/// Runs a delete callback.
fn run_delete(cb: Callbacks, obj: Handle, key: c_int, val: usize) -> Result<(), c_int> {
    if cb.delete == 0 {
        return Ok(());
    }
    // SAFETY: a non-zero delete function is the C function pointer the program
    // gave MPI_*_create_keyval, with this signature by the C contract.
    let f: DeleteFn = unsafe { std::mem::transmute::<usize, DeleteFn>(cb.delete) };
    // SAFETY: calling the program's callback with the arguments the standard names.
    let rc = unsafe { f(obj, key, val as *mut c_void, cb.extra as *mut c_void) };
    if rc == MPI_SUCCESS {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The value of a user attribute, if set.
pub fn get(kind: Kind, obj: Handle, key: c_int) -> Option<usize> {
    let a = attrs();
    let v = a.set.get(&(kind, obj))?;
    v.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
}

/// Sets an attribute, running the delete callback on a value it replaces.
pub fn set(kind: Kind, obj: Handle, key: c_int, val: usize) -> Result<(), c_int> {
    let cb = callbacks(kind, key, true)?;
    if let Some(old) = get(kind, obj, key) {
        run_delete(cb, obj, key, old)?;
    }
    let mut a = attrs();
    let v = a.set.entry((kind, obj)).or_default();
    match v.iter_mut().find(|(k, _)| *k == key) {
        Some(e) => e.1 = val,
        None => v.push((key, val)),
    }
    Ok(())
}

/// Deletes an attribute (its delete callback first; nothing when it is not set).
pub fn delete(kind: Kind, obj: Handle, key: c_int) -> Result<(), c_int> {
    let cb = callbacks(kind, key, false)?;
    let Some(old) = get(kind, obj, key) else {
        return Ok(());
    };
    run_delete(cb, obj, key, old)?;
    let mut a = attrs();
    if let Some(v) = a.set.get_mut(&(kind, obj)) {
        v.retain(|(k, _)| *k != key);
    }
    Ok(())
}

/// Deletes every attribute of an object being freed, newest first; the first
/// callback error is returned after all ran.
pub fn delete_all(kind: Kind, obj: Handle) -> Result<(), c_int> {
    let list = attrs().set.remove(&(kind, obj)).unwrap_or_default();
    let mut first = Ok(());
    for &(key, val) in list.iter().rev() {
        let r = callbacks(kind, key, false).and_then(|cb| run_delete(cb, obj, key, val));
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// Copies the attributes of `old` to its duplicate `new` through their copy
/// callbacks, in the order they were set.
pub fn copy_all(kind: Kind, old: Handle, new: Handle) -> Result<(), c_int> {
    let list = attrs().set.get(&(kind, old)).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (key, val) in list {
        let cb = callbacks(kind, key, false)?;
        match cb.copy {
            0 => {}
            1 => out.push((key, val)),
            f => {
                // SAFETY: a copy function other than 0 and 1 is the C function
                // pointer the program gave, with this signature by the C contract.
                let f: CopyFn = unsafe { std::mem::transmute::<usize, CopyFn>(f) };
                let mut res: *mut c_void = std::ptr::null_mut();
                let mut flag: c_int = 0;
                let extra = cb.extra as *mut c_void;
                let outp = (&mut res as *mut *mut c_void).cast::<c_void>();
                // SAFETY: the program's callback with the standard's arguments;
                // attribute_val_out points to a void * and flag to an int.
                let rc = unsafe { f(old, key, extra, val as *mut c_void, outp, &mut flag) };
                if rc != MPI_SUCCESS {
                    return Err(rc);
                }
                if flag != 0 {
                    out.push((key, res as usize));
                }
            }
        }
    }
    if !out.is_empty() {
        attrs().set.insert((kind, new), out);
    }
    Ok(())
}

/// MPI_Finalize's first step: MPI_COMM_SELF's attributes are deleted, then
/// MPI_COMM_WORLD's.
pub fn finalize() -> Result<(), c_int> {
    let a = delete_all(Kind::Comm, MPI_COMM_SELF);
    let b = delete_all(Kind::Comm, MPI_COMM_WORLD);
    a.and(b)
}

/// A new keyval.
///
/// # Safety
/// `out` is NULL or valid for an int.
unsafe fn create(
    kind: Kind,
    copy: usize,
    delete: usize,
    out: *mut c_int,
    extra: *mut c_void,
) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let k = Keyval {
        kind,
        copy,
        delete,
        extra: extra as usize,
        freed: false,
    };
    let h = attrs().keyvals.insert(k).ok_or(MPI_ERR_NO_MEM)?;
    let h = c_int::try_from(h).map_err(|_| MPI_ERR_INTERN)?;
    // SAFETY: the caller's contract (checked non-NULL).
    unsafe { put(out, h) }
}

/// Frees a keyval (its attributes keep it) and sets the handle to
/// MPI_KEYVAL_INVALID. A keyval freed already may be freed again: a delete callback
/// that frees its own keyval runs once per object (MPICH's
/// attr/keyval_double_free), and the entry is never reused, so this is safe.
///
/// # Safety
/// `key` is NULL or valid for an int.
unsafe fn free(kind: Kind, key: *mut c_int) -> Result<(), c_int> {
    if key.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract (checked non-NULL).
    let k = unsafe { key.read() };
    {
        let mut a = attrs();
        let kv = usize::try_from(k)
            .ok()
            .and_then(|h| a.keyvals.get_mut(h))
            .filter(|kv| kv.kind == kind)
            .ok_or(MPI_ERR_KEYVAL)?;
        kv.freed = true;
    }
    // SAFETY: as above.
    unsafe { put(key, MPI_KEYVAL_INVALID) }
}

/// Writes a user attribute's value (`*(void **)attribute_val`) and the flag.
///
/// # Safety
/// `attribute_val` is NULL or valid for a `void *`; `flag` NULL or an int.
pub unsafe fn put_value(
    v: Option<usize>,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> Result<(), c_int> {
    match v {
        // SAFETY: the caller's contract.
        Some(v) => unsafe {
            put(attribute_val.cast::<*mut c_void>(), v as *mut c_void)?;
            put(flag, 1)
        },
        // SAFETY: the caller's contract.
        None => unsafe { put(flag, 0) },
    }
}

fn comm_ok(comm: MPI_Comm, name: &str) -> Result<(), c_int> {
    crate::comm::lookup(comm, name).map(|_| ())
}

mpi_fn! {
    fn MPI_Comm_create_keyval / PMPI_Comm_create_keyval(copy_fn: usize, delete_fn: usize, comm_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: comm_keyval is NULL or an int.
        let r = unsafe { create(Kind::Comm, copy_fn, delete_fn, comm_keyval, extra_state) };
        finish(MPI_COMM_WORLD, "MPI_Comm_create_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Keyval_create / PMPI_Keyval_create(copy_fn: usize, delete_fn: usize, keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: keyval is NULL or an int.
        let r = unsafe { create(Kind::Comm, copy_fn, delete_fn, keyval, extra_state) };
        finish(MPI_COMM_WORLD, "MPI_Keyval_create", r)
    }
}

mpi_fn! {
    fn MPI_Comm_free_keyval / PMPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
        // SAFETY: comm_keyval is NULL or an int.
        let r = unsafe { free(Kind::Comm, comm_keyval) };
        finish(MPI_COMM_WORLD, "MPI_Comm_free_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Keyval_free / PMPI_Keyval_free(keyval: *mut c_int) -> c_int {
        // SAFETY: keyval is NULL or an int.
        let r = unsafe { free(Kind::Comm, keyval) };
        finish(MPI_COMM_WORLD, "MPI_Keyval_free", r)
    }
}

mpi_fn! {
    fn MPI_Comm_set_attr / PMPI_Comm_set_attr(comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let name = "MPI_Comm_set_attr";
        let r = comm_ok(comm, name).and_then(|()| set(Kind::Comm, comm, comm_keyval, attribute_val as usize));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Attr_put / PMPI_Attr_put(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let name = "MPI_Attr_put";
        let r = comm_ok(comm, name).and_then(|()| set(Kind::Comm, comm, keyval, attribute_val as usize));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_delete_attr / PMPI_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> c_int {
        let name = "MPI_Comm_delete_attr";
        let r = comm_ok(comm, name).and_then(|()| delete(Kind::Comm, comm, comm_keyval));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Attr_delete / PMPI_Attr_delete(comm: MPI_Comm, keyval: c_int) -> c_int {
        let name = "MPI_Attr_delete";
        let r = comm_ok(comm, name).and_then(|()| delete(Kind::Comm, comm, keyval));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Type_create_keyval / PMPI_Type_create_keyval(copy_fn: usize, delete_fn: usize, type_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: type_keyval is NULL or an int.
        let r = unsafe { create(Kind::Type, copy_fn, delete_fn, type_keyval, extra_state) };
        finish(MPI_COMM_WORLD, "MPI_Type_create_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Type_free_keyval / PMPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
        // SAFETY: type_keyval is NULL or an int.
        let r = unsafe { free(Kind::Type, type_keyval) };
        finish(MPI_COMM_WORLD, "MPI_Type_free_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Type_set_attr / PMPI_Type_set_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let r = crate::datatype::lookup(datatype).and_then(|_| set(Kind::Type, datatype, type_keyval, attribute_val as usize));
        finish(MPI_COMM_WORLD, "MPI_Type_set_attr", r)
    }
}

mpi_fn! {
    fn MPI_Type_get_attr / PMPI_Type_get_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let r = crate::datatype::lookup(datatype).and_then(|_| {
            callbacks(Kind::Type, type_keyval, false)?;
            // SAFETY: the C contract for both pointers.
            unsafe { put_value(get(Kind::Type, datatype, type_keyval), attribute_val, flag) }
        });
        finish(MPI_COMM_WORLD, "MPI_Type_get_attr", r)
    }
}

mpi_fn! {
    fn MPI_Type_delete_attr / PMPI_Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int {
        let r = crate::datatype::lookup(datatype).and_then(|_| delete(Kind::Type, datatype, type_keyval));
        finish(MPI_COMM_WORLD, "MPI_Type_delete_attr", r)
    }
}

mpi_fn! {
    fn MPI_Win_create_keyval / PMPI_Win_create_keyval(copy_fn: usize, delete_fn: usize, win_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        // SAFETY: win_keyval is NULL or an int.
        let r = unsafe { create(Kind::Win, copy_fn, delete_fn, win_keyval, extra_state) };
        finish(MPI_COMM_WORLD, "MPI_Win_create_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Win_free_keyval / PMPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
        // SAFETY: win_keyval is NULL or an int.
        let r = unsafe { free(Kind::Win, win_keyval) };
        finish(MPI_COMM_WORLD, "MPI_Win_free_keyval", r)
    }
}

mpi_fn! {
    fn MPI_Win_set_attr / PMPI_Win_set_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let r = crate::win::lookup(win).and_then(|_| set(Kind::Win, win, win_keyval, attribute_val as usize));
        crate::win::win_finish(win, "MPI_Win_set_attr", r)
    }
}

mpi_fn! {
    fn MPI_Win_delete_attr / PMPI_Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> c_int {
        let r = crate::win::lookup(win).and_then(|_| delete(Kind::Win, win, win_keyval));
        crate::win::win_finish(win, "MPI_Win_delete_attr", r)
    }
}

//! The library's live objects, each in a handle table (see [`crate::handles`]), and
//! the lookups that turn a C handle into one or the RSMERR_BAD_*_HNDL number.

use std::ffi::c_void;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};

use myrix_rsm::{Barrier, Controller, Export, Import, Mapping, RsmError};

use crate::ffi::Res;
use crate::handles::{Kind, Table};

/// A handle as C passes it: an opaque pointer that is really a table number.
pub type Handle = *mut c_void;

/// Locks a mutex whether or not a panic poisoned it (none of ours holds a lock
/// across anything that can panic half-way through a change).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct ExportObj {
    pub export: Export,
    /// rsm_memseg_get_pollfd calls not yet released.
    pub pollfds: Mutex<u32>,
}

pub struct ImportObj {
    pub import: Import,
    pub mapping: Mutex<Option<Mapped>>,
    pub pollfds: Mutex<u32>,
}

/// A live rsm_memseg_import_map.
pub struct Mapped {
    pub mapping: Mapping,
}

/// Memory a program named with rsm_create_localmemory_handle.
pub struct LocalMem {
    pub addr: usize,
    pub len: usize,
    pub controller: usize,
}

pub struct BarrierObj {
    /// The import handle the barrier was made for.
    pub import: usize,
    pub barrier: Mutex<Barrier>,
}

pub static CONTROLLERS: Table<Controller> = Table::new(Kind::Controller);
pub static EXPORTS: Table<ExportObj> = Table::new(Kind::Export);
pub static IMPORTS: Table<ImportObj> = Table::new(Kind::Import);
pub static LOCAL_MEMORY: Table<LocalMem> = Table::new(Kind::LocalMemory);
pub static BARRIERS: Table<BarrierObj> = Table::new(Kind::Barrier);

/// Descriptors handed out by rsm_memseg_get_pollfd, with their segment's handle, so
/// rsm_intr_signal_wait_pollfd knows which ones to consume a signal on.
pub static POLLFDS: Mutex<Vec<(RawFd, usize)>> = Mutex::new(Vec::new());

pub fn controller(h: Handle) -> Res<Controller> {
    CONTROLLERS
        .get(h as usize)
        .map(|c| Controller::clone(&c))
        .ok_or(RsmError::BadCtlrHndl)
}

pub fn export(h: Handle) -> Res<Arc<ExportObj>> {
    EXPORTS.get(h as usize).ok_or(RsmError::BadSegHndl)
}

pub fn import(h: Handle) -> Res<Arc<ImportObj>> {
    IMPORTS.get(h as usize).ok_or(RsmError::BadSegHndl)
}

/// A new handle, or RSMERR_INSUFFICIENT_RESOURCES when the table is full.
pub fn insert<T>(table: &Table<T>, item: T) -> Res<usize> {
    table.insert(item).ok_or(RsmError::InsufficientResources)
}

/// Forgets the pollfds a segment handed out (the segment is going away).
pub fn forget_pollfds(handle: usize) {
    lock(&POLLFDS).retain(|&(_, h)| h != handle);
}

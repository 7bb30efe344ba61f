//! The MPI tool information interface (`MPI_T_*`, MPI 4.0 chapter 15), present so
//! that tools and libraries that look for variables work: it exposes no control
//! variables, performance variables, categories, events or event sources. Every
//! `get_num` answers 0, lookups by name `MPI_T_ERR_INVALID_NAME`, by index
//! `MPI_T_ERR_INVALID_INDEX`, other handles `MPI_T_ERR_INVALID_HANDLE`; performance
//! variable sessions can be made and freed. As the standard says, these calls return
//! their codes and never call an error handler, may be used before `MPI_Init` and
//! after `MPI_Finalize`, and need `MPI_T_init_thread` first (else
//! `MPI_T_ERR_NOT_INITIALIZED`); initializations are counted, each ended by one
//! `MPI_T_finalize`. The variables the library reads (`MYRIX_MPI_*`) are environment
//! variables (docs/mpi.md), not exposed here yet.

use crate::abi::*;
use crate::ffi::mpi_fn;
use std::collections::HashSet;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const MPI_T_ERR_NOT_INITIALIZED: c_int = 1003;
const MPI_T_ERR_INVALID: c_int = 1006;
const MPI_T_ERR_INVALID_INDEX: c_int = 1007;
const MPI_T_ERR_INVALID_SESSION: c_int = 1009;
const MPI_T_ERR_INVALID_HANDLE: c_int = 1010;
const MPI_T_ERR_INVALID_NAME: c_int = 1011;

/// `MPI_T_init_thread` calls not yet ended by `MPI_T_finalize`.
static INITS: AtomicUsize = AtomicUsize::new(0);

/// Performance-variable sessions made and not freed (their handles).
static SESSIONS: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
static NEXT_SESSION: AtomicUsize = AtomicUsize::new(0x7400_0000);

fn init_thread(required: c_int, provided: *mut c_int) -> c_int {
    let valid = [
        MPI_THREAD_SINGLE,
        MPI_THREAD_FUNNELED,
        MPI_THREAD_SERIALIZED,
        MPI_THREAD_MULTIPLE,
    ];
    if !valid.contains(&required) || provided.is_null() {
        return MPI_T_ERR_INVALID;
    }
    INITS.fetch_add(1, Ordering::SeqCst);
    // Any level is given as asked: nothing here is shared but atomics and a lock.
    // SAFETY: non-NULL, an int by the C contract.
    unsafe { provided.write(required) };
    MPI_SUCCESS
}

fn finalize() -> c_int {
    match INITS.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)) {
        Ok(_) => MPI_SUCCESS,
        Err(_) => MPI_T_ERR_NOT_INITIALIZED,
    }
}

/// `code` once initialized.
fn initialized(code: c_int) -> c_int {
    if INITS.load(Ordering::SeqCst) == 0 {
        MPI_T_ERR_NOT_INITIALIZED
    } else {
        code
    }
}

/// Writes 0 to an int out-parameter (a count of nothing).
fn zero(p: *mut c_int) -> c_int {
    match initialized(MPI_SUCCESS) {
        MPI_SUCCESS if p.is_null() => MPI_T_ERR_INVALID,
        MPI_SUCCESS => {
            // SAFETY: non-NULL, an int by the C contract.
            unsafe { p.write(0) };
            MPI_SUCCESS
        }
        e => e,
    }
}

fn no_name(name: *const c_void) -> c_int {
    match initialized(MPI_SUCCESS) {
        MPI_SUCCESS if name.is_null() => MPI_T_ERR_INVALID,
        // No variable has a name to find.
        MPI_SUCCESS => MPI_T_ERR_INVALID_NAME,
        e => e,
    }
}

fn sessions<R>(f: impl FnOnce(&mut HashSet<usize>) -> R) -> R {
    let mut g = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashSet::new))
}

fn session_create(out: *mut usize) -> c_int {
    match initialized(MPI_SUCCESS) {
        MPI_SUCCESS if out.is_null() => MPI_T_ERR_INVALID,
        MPI_SUCCESS => {
            let h = NEXT_SESSION.fetch_add(1, Ordering::SeqCst);
            sessions(|s| s.insert(h));
            // SAFETY: non-NULL, an MPI_T_pvar_session by the C contract.
            unsafe { out.write(h) };
            MPI_SUCCESS
        }
        e => e,
    }
}

fn session_free(p: *mut usize) -> c_int {
    match initialized(MPI_SUCCESS) {
        MPI_SUCCESS if p.is_null() => MPI_T_ERR_INVALID,
        MPI_SUCCESS => {
            // SAFETY: non-NULL, an MPI_T_pvar_session by the C contract.
            let h = unsafe { p.read() };
            if !sessions(|s| s.remove(&h)) {
                return MPI_T_ERR_INVALID_SESSION;
            }
            // SAFETY: as above.
            unsafe { p.write(0) };
            MPI_SUCCESS
        }
        e => e,
    }
}

/// `code` for a call on a live session; else `MPI_T_ERR_INVALID_SESSION`.
fn in_session(session: usize, code: c_int) -> c_int {
    match initialized(MPI_SUCCESS) {
        MPI_SUCCESS if sessions(|s| s.contains(&session)) => code,
        MPI_SUCCESS => MPI_T_ERR_INVALID_SESSION,
        e => e,
    }
}

mpi_fn! {
    fn MPI_T_category_changed / PMPI_T_category_changed(update_number: *mut c_void) -> c_int {
        zero(update_number.cast())
    }
}

mpi_fn! {
    fn MPI_T_category_get_categories / PMPI_T_category_get_categories(cat_index: c_int, len: c_int, indices: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = len;
        let _ = indices;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_category_get_cvars / PMPI_T_category_get_cvars(cat_index: c_int, len: c_int, indices: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = len;
        let _ = indices;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_category_get_events / PMPI_T_category_get_events(cat_index: c_int, len: c_int, indices: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = len;
        let _ = indices;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_category_get_index / PMPI_T_category_get_index(name: *const c_void, cat_index: *mut c_void) -> c_int {
        let _ = cat_index;
        no_name(name)
    }
}

mpi_fn! {
    fn MPI_T_category_get_info / PMPI_T_category_get_info(cat_index: c_int, name: *mut c_void, name_len: *mut c_void, desc: *mut c_void, desc_len: *mut c_void, num_cvars: *mut c_void, num_pvars: *mut c_void, num_categories: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = name;
        let _ = name_len;
        let _ = desc;
        let _ = desc_len;
        let _ = num_cvars;
        let _ = num_pvars;
        let _ = num_categories;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_category_get_num / PMPI_T_category_get_num(num_cat: *mut c_void) -> c_int {
        zero(num_cat.cast())
    }
}

mpi_fn! {
    fn MPI_T_category_get_num_events / PMPI_T_category_get_num_events(cat_index: c_int, num_events: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = num_events;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_category_get_pvars / PMPI_T_category_get_pvars(cat_index: c_int, len: c_int, indices: *mut c_void) -> c_int {
        let _ = cat_index;
        let _ = len;
        let _ = indices;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_cvar_get_index / PMPI_T_cvar_get_index(name: *const c_void, cvar_index: *mut c_void) -> c_int {
        let _ = cvar_index;
        no_name(name)
    }
}

mpi_fn! {
    fn MPI_T_cvar_get_info / PMPI_T_cvar_get_info(cvar_index: c_int, name: *mut c_void, name_len: *mut c_void, verbosity: *mut c_void, datatype: *mut c_void, enumtype: *mut c_void, desc: *mut c_void, desc_len: *mut c_void, bind: *mut c_void, scope: *mut c_void) -> c_int {
        let _ = cvar_index;
        let _ = name;
        let _ = name_len;
        let _ = verbosity;
        let _ = datatype;
        let _ = enumtype;
        let _ = desc;
        let _ = desc_len;
        let _ = bind;
        let _ = scope;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_cvar_get_num / PMPI_T_cvar_get_num(num_cvar: *mut c_void) -> c_int {
        zero(num_cvar.cast())
    }
}

mpi_fn! {
    fn MPI_T_cvar_handle_alloc / PMPI_T_cvar_handle_alloc(cvar_index: c_int, obj_handle: *mut c_void, handle: *mut c_void, count: *mut c_void) -> c_int {
        let _ = cvar_index;
        let _ = obj_handle;
        let _ = handle;
        let _ = count;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_cvar_handle_free / PMPI_T_cvar_handle_free(handle: *mut c_void) -> c_int {
        let _ = handle;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_cvar_read / PMPI_T_cvar_read(handle: usize, buf: *mut c_void) -> c_int {
        let _ = handle;
        let _ = buf;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_cvar_write / PMPI_T_cvar_write(handle: usize, buf: *const c_void) -> c_int {
        let _ = handle;
        let _ = buf;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_enum_get_info / PMPI_T_enum_get_info(enumtype: usize, num: *mut c_void, name: *mut c_void, name_len: *mut c_void) -> c_int {
        let _ = enumtype;
        let _ = num;
        let _ = name;
        let _ = name_len;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_enum_get_item / PMPI_T_enum_get_item(enumtype: usize, indx: c_int, value: *mut c_void, name: *mut c_void, name_len: *mut c_void) -> c_int {
        let _ = enumtype;
        let _ = indx;
        let _ = value;
        let _ = name;
        let _ = name_len;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_callback_get_info / PMPI_T_event_callback_get_info(event_registration: usize, cb_safety: c_int, info_used: *mut c_void) -> c_int {
        let _ = event_registration;
        let _ = cb_safety;
        let _ = info_used;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_callback_set_info / PMPI_T_event_callback_set_info(event_registration: usize, cb_safety: c_int, info: usize) -> c_int {
        let _ = event_registration;
        let _ = cb_safety;
        let _ = info;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_copy / PMPI_T_event_copy(event_instance: usize, buffer: *mut c_void) -> c_int {
        let _ = event_instance;
        let _ = buffer;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_get_index / PMPI_T_event_get_index(name: *const c_void, event_index: *mut c_void) -> c_int {
        let _ = event_index;
        no_name(name)
    }
}

mpi_fn! {
    fn MPI_T_event_get_info / PMPI_T_event_get_info(event_index: c_int, name: *mut c_void, name_len: *mut c_void, verbosity: *mut c_void, array_of_datatypes: *mut c_void, array_of_displacements: *mut c_void, num_elements: *mut c_void, enumtype: *mut c_void, info: *mut c_void, desc: *mut c_void, desc_len: *mut c_void, bind: *mut c_void) -> c_int {
        let _ = event_index;
        let _ = name;
        let _ = name_len;
        let _ = verbosity;
        let _ = array_of_datatypes;
        let _ = array_of_displacements;
        let _ = num_elements;
        let _ = enumtype;
        let _ = info;
        let _ = desc;
        let _ = desc_len;
        let _ = bind;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_event_get_num / PMPI_T_event_get_num(num_events: *mut c_void) -> c_int {
        zero(num_events.cast())
    }
}

mpi_fn! {
    fn MPI_T_event_get_source / PMPI_T_event_get_source(event_instance: usize, source_index: *mut c_void) -> c_int {
        let _ = event_instance;
        let _ = source_index;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_get_timestamp / PMPI_T_event_get_timestamp(event_instance: usize, event_timestamp: *mut c_void) -> c_int {
        let _ = event_instance;
        let _ = event_timestamp;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_handle_alloc / PMPI_T_event_handle_alloc(event_index: c_int, obj_handle: *mut c_void, info: usize, event_registration: *mut c_void) -> c_int {
        let _ = event_index;
        let _ = obj_handle;
        let _ = info;
        let _ = event_registration;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_event_handle_free / PMPI_T_event_handle_free(event_registration: usize, user_data: *mut c_void, free_cb_function: usize) -> c_int {
        let _ = event_registration;
        let _ = user_data;
        let _ = free_cb_function;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_handle_get_info / PMPI_T_event_handle_get_info(event_registration: usize, info_used: *mut c_void) -> c_int {
        let _ = event_registration;
        let _ = info_used;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_handle_set_info / PMPI_T_event_handle_set_info(event_registration: usize, info: usize) -> c_int {
        let _ = event_registration;
        let _ = info;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_read / PMPI_T_event_read(event_instance: usize, element_index: c_int, buffer: *mut c_void) -> c_int {
        let _ = event_instance;
        let _ = element_index;
        let _ = buffer;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_register_callback / PMPI_T_event_register_callback(event_registration: usize, cb_safety: c_int, info: usize, user_data: *mut c_void, event_cb_function: usize) -> c_int {
        let _ = event_registration;
        let _ = cb_safety;
        let _ = info;
        let _ = user_data;
        let _ = event_cb_function;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_event_set_dropped_handler / PMPI_T_event_set_dropped_handler(event_registration: usize, dropped_cb_function: usize) -> c_int {
        let _ = event_registration;
        let _ = dropped_cb_function;
        initialized(MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_finalize / PMPI_T_finalize() -> c_int {
        finalize()
    }
}

mpi_fn! {
    fn MPI_T_init_thread / PMPI_T_init_thread(required: c_int, provided: *mut c_void) -> c_int {
        init_thread(required, provided.cast())
    }
}

mpi_fn! {
    fn MPI_T_pvar_get_index / PMPI_T_pvar_get_index(name: *const c_void, var_class: c_int, pvar_index: *mut c_void) -> c_int {
        let _ = var_class;
        let _ = pvar_index;
        no_name(name)
    }
}

mpi_fn! {
    fn MPI_T_pvar_get_info / PMPI_T_pvar_get_info(pvar_index: c_int, name: *mut c_void, name_len: *mut c_void, verbosity: *mut c_void, var_class: *mut c_void, datatype: *mut c_void, enumtype: *mut c_void, desc: *mut c_void, desc_len: *mut c_void, bind: *mut c_void, readonly: *mut c_void, continuous: *mut c_void, atomic: *mut c_void) -> c_int {
        let _ = pvar_index;
        let _ = name;
        let _ = name_len;
        let _ = verbosity;
        let _ = var_class;
        let _ = datatype;
        let _ = enumtype;
        let _ = desc;
        let _ = desc_len;
        let _ = bind;
        let _ = readonly;
        let _ = continuous;
        let _ = atomic;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_pvar_get_num / PMPI_T_pvar_get_num(num_pvar: *mut c_void) -> c_int {
        zero(num_pvar.cast())
    }
}

mpi_fn! {
    fn MPI_T_pvar_handle_alloc / PMPI_T_pvar_handle_alloc(session: usize, pvar_index: c_int, obj_handle: *mut c_void, handle: *mut c_void, count: *mut c_void) -> c_int {
        let _ = pvar_index;
        let _ = obj_handle;
        let _ = handle;
        let _ = count;
        in_session(session, MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_pvar_handle_free / PMPI_T_pvar_handle_free(session: usize, handle: *mut c_void) -> c_int {
        let _ = handle;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_read / PMPI_T_pvar_read(session: usize, handle: usize, buf: *mut c_void) -> c_int {
        let _ = handle;
        let _ = buf;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_readreset / PMPI_T_pvar_readreset(session: usize, handle: usize, buf: *mut c_void) -> c_int {
        let _ = handle;
        let _ = buf;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_reset / PMPI_T_pvar_reset(session: usize, handle: usize) -> c_int {
        let _ = handle;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_session_create / PMPI_T_pvar_session_create(session: *mut c_void) -> c_int {
        session_create(session.cast())
    }
}

mpi_fn! {
    fn MPI_T_pvar_session_free / PMPI_T_pvar_session_free(session: *mut c_void) -> c_int {
        session_free(session.cast())
    }
}

mpi_fn! {
    fn MPI_T_pvar_start / PMPI_T_pvar_start(session: usize, handle: usize) -> c_int {
        let _ = handle;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_stop / PMPI_T_pvar_stop(session: usize, handle: usize) -> c_int {
        let _ = handle;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_pvar_write / PMPI_T_pvar_write(session: usize, handle: usize, buf: *const c_void) -> c_int {
        let _ = handle;
        let _ = buf;
        in_session(session, MPI_T_ERR_INVALID_HANDLE)
    }
}

mpi_fn! {
    fn MPI_T_source_get_info / PMPI_T_source_get_info(source_index: c_int, name: *mut c_void, name_len: *mut c_void, desc: *mut c_void, desc_len: *mut c_void, ordering: *mut c_void, ticks_per_second: *mut c_void, max_ticks: *mut c_void, info: *mut c_void) -> c_int {
        let _ = source_index;
        let _ = name;
        let _ = name_len;
        let _ = desc;
        let _ = desc_len;
        let _ = ordering;
        let _ = ticks_per_second;
        let _ = max_ticks;
        let _ = info;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

mpi_fn! {
    fn MPI_T_source_get_num / PMPI_T_source_get_num(num_sources: *mut c_void) -> c_int {
        zero(num_sources.cast())
    }
}

mpi_fn! {
    fn MPI_T_source_get_timestamp / PMPI_T_source_get_timestamp(source_index: c_int, timestamp: *mut c_void) -> c_int {
        let _ = source_index;
        let _ = timestamp;
        initialized(MPI_T_ERR_INVALID_INDEX)
    }
}

//! Environment management: init, finalize, abort, versions, the processor name,
//! timers, and the ABI's handle and address conversions.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::runtime;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use std::time::Instant;

/// The text `MPI_Get_library_version` gives.
pub fn library_version() -> String {
    format!(
        "myrix MPI {} (MPI {}.{}, standard ABI 1.0; launchers: myrix mpiexec and hydra over PMI-1, Slurm over PMI-2, singleton; point-to-point over postboxes in RSM segments, blocking collectives)",
        env!("CARGO_PKG_VERSION"),
        5,
        0
    )
}

fn host_name() -> String {
    let mut buf = [0u8; MPI_MAX_PROCESSOR_NAME];
    // SAFETY: gethostname writes at most buf.len() bytes into buf, which we own.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

mpi_fn! {
    /// MPI_Init: joins the job (PMI from the environment, or a singleton).
    fn MPI_Init / PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
        let r = runtime::init(MPI_THREAD_SINGLE, "MPI_Init")
            .and_then(|_| crate::dynproc_spawn::connect_parent());
        finish(MPI_COMM_WORLD, "MPI_Init", r)
    }
}

mpi_fn! {
    /// MPI_Init_thread: as MPI_Init; `provided` is at most MPI_THREAD_SERIALIZED.
    fn MPI_Init_thread / PMPI_Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
        let r = runtime::init(required, "MPI_Init_thread").and_then(|p| {
            crate::dynproc_spawn::connect_parent()?;
            // SAFETY: provided is NULL or an int, by the C contract.
            unsafe { put(provided, p) }
        });
        finish(MPI_COMM_WORLD, "MPI_Init_thread", r)
    }
}

mpi_fn! {
    fn MPI_Query_thread / PMPI_Query_thread(provided: *mut c_int) -> c_int {
        let r = runtime::with("MPI_Query_thread", |rt| Ok(rt.provided)).and_then(|p| {
            // SAFETY: provided is NULL or an int.
            unsafe { put(provided, p) }
        });
        finish(MPI_COMM_WORLD, "MPI_Query_thread", r)
    }
}

mpi_fn! {
    fn MPI_Is_thread_main / PMPI_Is_thread_main(flag: *mut c_int) -> c_int {
        let me = std::thread::current().id();
        let r = runtime::with("MPI_Is_thread_main", |rt| Ok(rt.main_thread == me)).and_then(|m| {
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(m)) }
        });
        finish(MPI_COMM_WORLD, "MPI_Is_thread_main", r)
    }
}

mpi_fn! {
    /// MPI_Finalize: tells the launcher this rank is done.
    fn MPI_Finalize / PMPI_Finalize() -> c_int {
        // The attributes of MPI_COMM_SELF, then MPI_COMM_WORLD, go first (attr.rs).
        let r = crate::attr::finalize().and_then(|()| runtime::finalize("MPI_Finalize"));
        finish(MPI_COMM_WORLD, "MPI_Finalize", r)
    }
}

mpi_fn! {
    fn MPI_Initialized / PMPI_Initialized(flag: *mut c_int) -> c_int {
        // SAFETY: flag is NULL or an int.
        let r = unsafe { put(flag, c_int::from(runtime::initialized())) };
        finish(MPI_COMM_WORLD, "MPI_Initialized", r)
    }
}

mpi_fn! {
    fn MPI_Finalized / PMPI_Finalized(flag: *mut c_int) -> c_int {
        // SAFETY: flag is NULL or an int.
        let r = unsafe { put(flag, c_int::from(runtime::finalized())) };
        finish(MPI_COMM_WORLD, "MPI_Finalized", r)
    }
}

mpi_fn! {
    /// MPI_Abort: ends every rank of the job (through the launcher) with `errorcode`.
    fn MPI_Abort / PMPI_Abort(_comm: MPI_Comm, errorcode: c_int) -> c_int {
        crate::ffi::say!("myrix MPI: MPI_Abort called with code {errorcode}");
        runtime::abort(errorcode, &format!("MPI_Abort({errorcode})"))
    }
}

mpi_fn! {
    /// The ABI's sizes, as Open MPI's keys name them: `mpi_aint_size`,
    /// `mpi_count_size`, `mpi_offset_size` (bytes).
    fn MPI_Abi_get_info / PMPI_Abi_get_info(info: *mut MPI_Info) -> c_int {
        let pairs = ["mpi_aint_size", "mpi_count_size", "mpi_offset_size"]
            .iter()
            .map(|k| (k.to_string(), "8".to_string()))
            .collect();
        let r = crate::info::insert(pairs)
            // SAFETY: info is NULL or an MPI_Info.
            .and_then(|h| unsafe { put(info, h) });
        finish(MPI_COMM_WORLD, "MPI_Abi_get_info", r)
    }
}

mpi_fn! {
    /// MPI-4.1: the hardware this process runs on, as far as the library knows it:
    /// one level, `mpi_hw_resource_type` = `mpi_shared_memory` (the node, which
    /// MPI_Comm_split_type's guided kinds split by).
    fn MPI_Get_hw_resource_info / PMPI_Get_hw_resource_info(hw_info: *mut MPI_Info) -> c_int {
        let pairs = vec![("mpi_hw_resource_type".to_string(), "mpi_shared_memory".to_string())];
        let r = crate::info::insert(pairs)
            // SAFETY: hw_info is NULL or an MPI_Info.
            .and_then(|h| unsafe { put(hw_info, h) });
        finish(MPI_COMM_WORLD, "MPI_Get_hw_resource_info", r)
    }
}

mpi_fn! {
    fn MPI_Get_version / PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
        // SAFETY: both are NULL or ints.
        let r = unsafe { put(version, 5).and_then(|()| put(subversion, 0)) };
        finish(MPI_COMM_WORLD, "MPI_Get_version", r)
    }
}

mpi_fn! {
    fn MPI_Abi_get_version / PMPI_Abi_get_version(abi_major: *mut c_int, abi_minor: *mut c_int) -> c_int {
        // SAFETY: both are NULL or ints.
        let r = unsafe { put(abi_major, 1).and_then(|()| put(abi_minor, 0)) };
        finish(MPI_COMM_WORLD, "MPI_Abi_get_version", r)
    }
}

mpi_fn! {
    fn MPI_Get_library_version / PMPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
        // SAFETY: version holds MPI_MAX_LIBRARY_VERSION_STRING bytes (the standard's
        // contract), resultlen is an int.
        let r = unsafe { put_str(version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen, &library_version()) };
        finish(MPI_COMM_WORLD, "MPI_Get_library_version", r)
    }
}

mpi_fn! {
    fn MPI_Get_processor_name / PMPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
        // SAFETY: name holds MPI_MAX_PROCESSOR_NAME bytes, resultlen is an int.
        let r = unsafe { put_str(name, MPI_MAX_PROCESSOR_NAME, resultlen, &host_name()) };
        finish(MPI_COMM_WORLD, "MPI_Get_processor_name", r)
    }
}

fn epoch() -> Instant {
    static T0: OnceLock<Instant> = OnceLock::new();
    *T0.get_or_init(Instant::now)
}

mpi_fn! {
    /// Seconds since the first timer call in this process (monotonic; not global).
    fn MPI_Wtime / PMPI_Wtime() -> f64 {
        epoch().elapsed().as_secs_f64()
    }
}

mpi_fn! {
    fn MPI_Wtick / PMPI_Wtick() -> f64 {
        1e-9
    }
}

mpi_fn! {
    /// Does nothing: no profiler is attached (the standard's behaviour then).
    fn MPI_Pcontrol / PMPI_Pcontrol(_level: c_int) -> c_int {
        MPI_SUCCESS
    }
}

mpi_fn! {
    fn MPI_Aint_add / PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
        base.wrapping_add(disp)
    }
}

mpi_fn! {
    fn MPI_Aint_diff / PMPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
        addr1.wrapping_sub(addr2)
    }
}

/// The ABI's `MPI_X_toint`/`MPI_X_fromint`: myrix's handles are small integers, so
/// the conversion is the value itself.
macro_rules! int_conversions {
    ($($to:ident / $pto:ident, $from:ident / $pfrom:ident;)*) => {$(
        mpi_fn! {
            fn $to / $pto(h: Handle) -> c_int {
                c_int::try_from(h).unwrap_or(-1)
            }
        }
        mpi_fn! {
            fn $from / $pfrom(i: c_int) -> Handle {
                usize::try_from(i).unwrap_or(0)
            }
        }
    )*};
}

int_conversions! {
    MPI_Comm_toint / PMPI_Comm_toint, MPI_Comm_fromint / PMPI_Comm_fromint;
    MPI_Errhandler_toint / PMPI_Errhandler_toint, MPI_Errhandler_fromint / PMPI_Errhandler_fromint;
    MPI_File_toint / PMPI_File_toint, MPI_File_fromint / PMPI_File_fromint;
    MPI_Group_toint / PMPI_Group_toint, MPI_Group_fromint / PMPI_Group_fromint;
    MPI_Info_toint / PMPI_Info_toint, MPI_Info_fromint / PMPI_Info_fromint;
    MPI_Message_toint / PMPI_Message_toint, MPI_Message_fromint / PMPI_Message_fromint;
    MPI_Op_toint / PMPI_Op_toint, MPI_Op_fromint / PMPI_Op_fromint;
    MPI_Request_toint / PMPI_Request_toint, MPI_Request_fromint / PMPI_Request_fromint;
    MPI_Session_toint / PMPI_Session_toint, MPI_Session_fromint / PMPI_Session_fromint;
    MPI_Type_toint / PMPI_Type_toint, MPI_Type_fromint / PMPI_Type_fromint;
    MPI_Win_toint / PMPI_Win_toint, MPI_Win_fromint / PMPI_Win_fromint;
}

mpi_fn! {
    /// MPI_Alloc_mem: whole pages from the C heap, page-aligned (or aligned to the
    /// info key `mpi_minimum_memory_alignment` when that is a larger power of two).
    /// Whole pages because memory from MPI_Alloc_mem is what programs expose in
    /// windows, and a window's memory is shared in place page by page: two windows
    /// over two small blocks of one page could not both be made. Freed by MPI_Free_mem.
    fn MPI_Alloc_mem / PMPI_Alloc_mem(size: MPI_Aint, info: MPI_Info, baseptr: *mut std::os::raw::c_void) -> c_int {
        let r = (|| {
            let n = usize::try_from(size).map_err(|_| MPI_ERR_ARG)?;
            if baseptr.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let align = alloc_alignment(crate::info::pairs_or_empty(info)?)?;
            let len = n.max(1).checked_next_multiple_of(page_size()).ok_or(MPI_ERR_NO_MEM)?;
            let mut p: *mut std::os::raw::c_void = std::ptr::null_mut();
            // SAFETY: `p` is a valid out-pointer; `align` is a power of two and a
            // multiple of the pointer size (at least a page).
            if unsafe { libc::posix_memalign(&mut p, align, len) } != 0 || p.is_null() {
                return Err(MPI_ERR_NO_MEM);
            }
            // SAFETY: baseptr is a `void *` out-parameter (a pointer to a pointer),
            // non-NULL by the check.
            unsafe { baseptr.cast::<*mut std::os::raw::c_void>().write(p) };
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Alloc_mem", r)
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p)
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096)
}

/// The largest alignment MPI_Alloc_mem honours (a hint beyond it is refused: the
/// rounding would waste more memory than any program means to ask for).
const MAX_ALLOC_ALIGN: usize = 1 << 30;

/// MPI_Alloc_mem's alignment: a page, or the hint `mpi_minimum_memory_alignment`
/// (MPI-4.1) when it is larger. A hint that is not a power of two is MPI_ERR_INFO_VALUE.
fn alloc_alignment(hints: crate::info::Pairs) -> Result<usize, c_int> {
    let page = page_size();
    match hints
        .iter()
        .find(|(k, _)| k == "mpi_minimum_memory_alignment")
    {
        None => Ok(page),
        Some((_, v)) => match v.trim().parse::<usize>() {
            Ok(a) if a.is_power_of_two() && a <= MAX_ALLOC_ALIGN => Ok(a.max(page)),
            _ => Err(MPI_ERR_INFO_VALUE),
        },
    }
}

mpi_fn! {
    fn MPI_Free_mem / PMPI_Free_mem(base: *mut std::os::raw::c_void) -> c_int {
        // SAFETY: base came from MPI_Alloc_mem (malloc) or is NULL, by the contract.
        unsafe { libc::free(base) };
        MPI_SUCCESS
    }
}

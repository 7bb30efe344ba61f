//! Data representations of file views (MPI-4.1 §14.5): `"native"`, `"internal"`
//! (myrix's internal representation is the native one), `"external32"` (the
//! datatype crate's conversion, big-endian IEEE), and the representations a program
//! registers with `MPI_Register_datarep(_c)`: its conversion functions are called
//! with the access's datatype, a count of typemap entries and a position into the
//! tiled datatype, as the standard specifies; `MPI_CONVERSION_FN_NULL` leaves that
//! direction native.
//!
//! **Limit:** a representation must store each basic type of the view's etype and
//! filetype, and of an access's memory type, in as many bytes as memory does (as
//! external32 does for every type but C `long`, `unsigned long` and `long
//! double`), so the view's layout is the same in both; anything else is refused with
//! `MPI_ERR_UNSUPPORTED_DATAREP` (at `MPI_File_set_view` or at the access), never
//! written at the wrong place. Conversion runs over whole elements of the memory
//! type in pieces of about [`access::PIECE`] bytes; a read that ends inside an
//! element at the end of the file converts the whole elements before it.

use super::*;
use crate::datatype;
use crate::ffi::{mpi_fn, put};
use myrix_mpi::datatype::{external, Basic, Datatype};
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::sync::LazyLock;

/// `MPI_Datarep_conversion_function`.
pub type ConversionFn = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    c_int,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
/// `MPI_Datarep_conversion_function_c`.
pub type ConversionFnC = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    MPI_Count,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
/// `MPI_Datarep_extent_function`.
pub type ExtentFn = unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;

#[derive(Clone, Copy)]
enum Conversion {
    Int(ConversionFn),
    Count(ConversionFnC),
}

impl Conversion {
    /// Calls the program's function; its failure is `MPI_ERR_CONVERSION`.
    ///
    /// # Safety
    /// `user` and `file` are what the standard promises the function.
    unsafe fn call(
        self,
        user: *mut c_void,
        dt: MPI_Datatype,
        count: u64,
        file: *mut u8,
        position: u64,
        extra: usize,
    ) -> Result<(), c_int> {
        let extra = std::ptr::with_exposed_provenance_mut::<c_void>(extra);
        let pos = MPI_Offset::try_from(position).map_err(|_| MPI_ERR_COUNT)?;
        let rc = match self {
            Conversion::Int(f) => {
                let n = c_int::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
                // SAFETY: the program's function, called as its type says.
                unsafe { f(user, dt, n, file.cast(), pos, extra) }
            }
            Conversion::Count(f) => {
                let n = MPI_Count::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
                // SAFETY: as above.
                unsafe { f(user, dt, n, file.cast(), pos, extra) }
            }
        };
        if rc == MPI_SUCCESS {
            Ok(())
        } else {
            Err(MPI_ERR_CONVERSION)
        }
    }

    /// The most typemap entries one call may be given.
    fn max_count(self) -> u64 {
        match self {
            Conversion::Int(_) => c_int::MAX as u64,
            Conversion::Count(_) => MPI_Count::MAX as u64,
        }
    }
}

/// A representation the program registered.
pub struct UserRep {
    name: String,
    read: Option<Conversion>,
    write: Option<Conversion>,
    extent: ExtentFn,
    /// The program's `extra_state`, kept as an address.
    extra: usize,
}

/// A view's data representation.
#[derive(Clone)]
pub enum Rep {
    Native,
    Internal,
    External32,
    User(Arc<UserRep>),
}

/// Registered representations, by name (few: the standard expects no more).
static REGISTERED: Mutex<Vec<Arc<UserRep>>> = Mutex::new(Vec::new());

fn registered() -> MutexGuard<'static, Vec<Arc<UserRep>>> {
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Predefined datatype handles by `Basic::index()`, for the extent callback.
static HANDLES: LazyLock<Vec<Option<MPI_Datatype>>> = LazyLock::new(|| {
    let mut v = Vec::new();
    for h in 0x200..0x300 {
        if let Some(b) = datatype::predefined(h) {
            let i = b.index();
            if v.len() <= i {
                v.resize(i + 1, None);
            }
            v[i].get_or_insert(h);
        }
    }
    v
});

const PREDEFINED: [&str; 3] = ["native", "internal", "external32"];

impl Rep {
    /// The representation a view names (`MPI_ERR_UNSUPPORTED_DATAREP` if none).
    pub fn by_name(name: &[u8]) -> Result<Rep, c_int> {
        let rep = if name.eq_ignore_ascii_case(b"native") {
            Rep::Native
        } else if name.eq_ignore_ascii_case(b"internal") {
            Rep::Internal
        } else if name.eq_ignore_ascii_case(b"external32") {
            Rep::External32
        } else {
            let r = registered();
            let u = r.iter().find(|u| u.name.as_bytes() == name);
            Rep::User(u.cloned().ok_or(MPI_ERR_UNSUPPORTED_DATAREP)?)
        };
        Ok(rep)
    }

    /// The name `MPI_File_get_view` gives back.
    pub fn name(&self) -> &str {
        match self {
            Rep::Native => "native",
            Rep::Internal => "internal",
            Rep::External32 => "external32",
            Rep::User(u) => &u.name,
        }
    }

    /// Bytes basic type `b` takes in the file.
    fn file_size(&self, b: Basic) -> Result<usize, c_int> {
        match self {
            Rep::Native | Rep::Internal => Ok(b.size()),
            Rep::External32 => external::size(&Datatype::basic(b), 1).ok_or(MPI_ERR_TYPE),
            Rep::User(u) => {
                let h = HANDLES
                    .get(b.index())
                    .copied()
                    .flatten()
                    .ok_or(MPI_ERR_TYPE)?;
                let mut ext: MPI_Aint = 0;
                let extra = std::ptr::with_exposed_provenance_mut::<c_void>(u.extra);
                // SAFETY: the program's extent function, called as its type says.
                let rc = unsafe { (u.extent)(h, &mut ext, extra) };
                if rc != MPI_SUCCESS {
                    return Err(MPI_ERR_CONVERSION);
                }
                usize::try_from(ext).map_err(|_| MPI_ERR_CONVERSION)
            }
        }
    }

    /// Whether every basic type of `t` takes as many bytes in the file as in memory
    /// (the module's limit): `MPI_ERR_UNSUPPORTED_DATAREP` otherwise.
    pub fn check_type(&self, t: &Datatype) -> Result<(), c_int> {
        if matches!(self, Rep::Native | Rep::Internal) {
            return Ok(());
        }
        let mut r = Ok(());
        t.for_each_basic(&mut |b| {
            if r.is_ok() {
                r = match self.file_size(b) {
                    Ok(n) if n == b.size() => Ok(()),
                    Ok(_) => Err(MPI_ERR_UNSUPPORTED_DATAREP),
                    Err(e) => Err(e),
                };
            }
        });
        r
    }

    /// The extent of `t` in the file (MPI_File_get_type_extent).
    pub fn extent(&self, t: &Datatype) -> Result<i64, c_int> {
        if let Some(b) = t.as_basic().filter(|b| b.pair_parts().is_none()) {
            return self.file_size(b).map(|n| n as i64);
        }
        self.check_type(t)?;
        Ok(t.extent() as i64)
    }

    /// The conversion an access in this direction makes; `None`: bytes as they are.
    fn converts(&self, write: bool) -> Option<Option<Conversion>> {
        match self {
            Rep::Native | Rep::Internal => None,
            Rep::External32 => Some(None),
            Rep::User(u) => {
                let c = if write { u.write } else { u.read };
                c.map(Some)
            }
        }
    }
}

/// Transfers `count` elements of `dt` (handle `dth`) at `buf` to or from view bytes
/// `start ..` through the view's representation; `None` when the representation
/// moves the bytes as they are (the caller's native path).
///
/// # Safety
/// `buf` holds `count` elements of `dt` (readable for writes, writable for reads).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transfer(
    f: &FileObj,
    v: &view::View,
    start: u64,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    dth: MPI_Datatype,
    write: bool,
) -> Option<Result<u64, c_int>> {
    let conv = v.rep.converts(write)?;
    Some(v.rep.check_type(dt).and_then(|()| {
        // SAFETY: the caller's contract.
        unsafe { convert(f, v, start, buf, count, dt, dth, write, conv) }
    }))
}

/// The converting transfer: external32 (`conv` None) or the program's function.
///
/// # Safety
/// As [`transfer`].
#[allow(clippy::too_many_arguments)]
unsafe fn convert(
    f: &FileObj,
    v: &view::View,
    start: u64,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    dth: MPI_Datatype,
    write: bool,
    conv: Option<Conversion>,
) -> Result<u64, c_int> {
    let size = dt.size();
    if size == 0 || count == 0 {
        return Ok(0);
    }
    let items = dt.elements_per();
    let mut per = (access::PIECE / size).max(1);
    if let Some(c) = conv {
        per = per.min((c.max_count() / items.max(1)).max(1) as usize);
    }
    let per = per.min(count);
    let mut file = vec![0u8; per * size];
    let mut native = if conv.is_none() {
        vec![0u8; per * size]
    } else {
        Vec::new()
    };
    let mut done = 0usize;
    while done < count {
        let k = per.min(count - done);
        let bytes = k * size;
        let at = (done * size) as u64;
        let fb = &mut file[..bytes];
        let whole = if write {
            match conv {
                None => {
                    let nb = &mut native[..bytes];
                    // SAFETY: the caller's contract; `nb` is this function's buffer.
                    unsafe { dt.pack_at(buf, count, done * size, nb) };
                    external::to_external(dt, k, nb, fb).map_err(|_| MPI_ERR_CONVERSION)?;
                }
                // SAFETY: `buf` as the caller promises, `fb` holds k elements.
                Some(c) => unsafe {
                    c.call(
                        buf.cast(),
                        dth,
                        k as u64 * items,
                        fb.as_mut_ptr(),
                        done as u64 * items,
                        user_extra(&v.rep),
                    )?
                },
            }
            access::move_bytes(f, v, start + at, fb, true)?;
            k
        } else {
            let got = access::move_bytes(f, v, start + at, fb, false)?;
            let whole = got / size;
            let fb = &mut fb[..whole * size];
            match conv {
                None => {
                    let nb = &mut native[..whole * size];
                    external::from_external(dt, whole, fb, nb);
                    // SAFETY: as above.
                    unsafe { dt.unpack_at(nb, buf, count, done * size) };
                }
                // SAFETY: as above.
                Some(c) => unsafe {
                    c.call(
                        buf.cast(),
                        dth,
                        whole as u64 * items,
                        fb.as_mut_ptr(),
                        done as u64 * items,
                        user_extra(&v.rep),
                    )?
                },
            }
            if whole < k {
                done += whole;
                break;
            }
            whole
        };
        done += whole;
    }
    Ok((done * size) as u64)
}

fn user_extra(rep: &Rep) -> usize {
    match rep {
        Rep::User(u) => u.extra,
        _ => 0,
    }
}

/// MPI_Register_datarep(_c): checks, then files the representation.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn register(
    name: *const c_char,
    read: Option<Conversion>,
    write: Option<Conversion>,
    extent: Option<ExtentFn>,
    extra: *mut c_void,
) -> Result<(), c_int> {
    crate::runtime::check("MPI_Register_datarep")?;
    if name.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: a NUL-terminated string by the C contract.
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
    if bytes.is_empty() || bytes.len() >= MPI_MAX_DATAREP_STRING {
        return Err(MPI_ERR_ARG);
    }
    let name = std::str::from_utf8(bytes).map_err(|_| MPI_ERR_ARG)?;
    let extent = extent.ok_or(MPI_ERR_ARG)?;
    let mut r = registered();
    let taken =
        PREDEFINED.iter().any(|p| p.eq_ignore_ascii_case(name)) || r.iter().any(|u| u.name == name);
    if taken {
        return Err(MPI_ERR_DUP_DATAREP);
    }
    r.push(Arc::new(UserRep {
        name: name.to_string(),
        read,
        write,
        extent,
        extra: extra.expose_provenance(),
    }));
    Ok(())
}

mpi_fn! {
    /// Errors go to MPI_FILE_NULL's handler (the default file error handler).
    fn MPI_Register_datarep / PMPI_Register_datarep(datarep: *const c_char, read_conversion_fn: Option<ConversionFn>, write_conversion_fn: Option<ConversionFn>, dtype_file_extent_fn: Option<ExtentFn>, extra_state: *mut c_void) -> c_int {
        // SAFETY: the C contract for datarep.
        let r = unsafe {
            register(
                datarep,
                read_conversion_fn.map(Conversion::Int),
                write_conversion_fn.map(Conversion::Int),
                dtype_file_extent_fn,
                extra_state,
            )
        };
        finish(MPI_FILE_NULL, "MPI_Register_datarep", r)
    }
}

mpi_fn! {
    fn MPI_Register_datarep_c / PMPI_Register_datarep_c(datarep: *const c_char, read_conversion_fn: Option<ConversionFnC>, write_conversion_fn: Option<ConversionFnC>, dtype_file_extent_fn: Option<ExtentFn>, extra_state: *mut c_void) -> c_int {
        // SAFETY: the C contract for datarep.
        let r = unsafe {
            register(
                datarep,
                read_conversion_fn.map(Conversion::Count),
                write_conversion_fn.map(Conversion::Count),
                dtype_file_extent_fn,
                extra_state,
            )
        };
        finish(MPI_FILE_NULL, "MPI_Register_datarep_c", r)
    }
}

/// Writes a representation's name into `MPI_File_get_view`'s buffer.
///
/// # Safety
/// `out` holds `MPI_MAX_DATAREP_STRING` bytes.
pub(crate) unsafe fn put_name(rep: &Rep, out: *mut c_char) -> Result<(), c_int> {
    let n = rep.name().as_bytes();
    if out.is_null() || n.len() >= MPI_MAX_DATAREP_STRING {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: `out` holds MPI_MAX_DATAREP_STRING bytes by the standard.
    unsafe {
        std::ptr::copy_nonoverlapping(n.as_ptr(), out.cast::<u8>(), n.len());
        put(out.add(n.len()), 0)
    }
}

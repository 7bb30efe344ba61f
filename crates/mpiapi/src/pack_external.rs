//! MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size (and their
//! `_c` forms) in the one data representation the standard defines, `external32`
//! (`myrix_mpi::datatype::external`): packed natively as MPI_Pack does, into a
//! scratch buffer, then converted element by element into the caller's (and the
//! reverse). Any other representation name is MPI_ERR_UNSUPPORTED_DATAREP; a value
//! external32 cannot hold (a `long` beyond 32 bits) is MPI_ERR_CONVERSION.

use crate::abi::*;
use crate::datatype::{lookup_committed, pack, unpack};
use crate::ffi::{finish, mpi_fn, put};
use myrix_mpi::datatype::external;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 54;
const MPI_ERR_CONVERSION: c_int = 25;

/// `datarep` must name external32 (any case, as MPICH and Open MPI accept).
///
/// # Safety
/// `datarep` is NULL or NUL-terminated.
unsafe fn external32(datarep: *const c_char) -> Result<(), c_int> {
    if datarep.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    let name = unsafe { CStr::from_ptr(datarep) }.to_bytes();
    if name.eq_ignore_ascii_case(b"external32") {
        Ok(())
    } else {
        Err(MPI_ERR_UNSUPPORTED_DATAREP)
    }
}

/// The external32 bytes of `n` elements of `datatype`.
fn ext_size(n: usize, datatype: MPI_Datatype) -> Result<usize, c_int> {
    external::size(&*lookup_committed(datatype)?, n).ok_or(MPI_ERR_VALUE_TOO_LARGE)
}

/// The body of both pack forms; `pos` in and out.
///
/// # Safety
/// The C contract of MPI_Pack_external (buffers of the sizes given).
#[allow(clippy::too_many_arguments)]
unsafe fn pack_ext(
    datarep: *const c_char,
    inbuf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: usize,
    pos: &mut usize,
    name: &str,
) -> Result<(), c_int> {
    // SAFETY: the caller's contract.
    unsafe { external32(datarep)? };
    let t = lookup_committed(datatype)?;
    let len = external::size(&t, n).ok_or(MPI_ERR_VALUE_TOO_LARGE)?;
    let end = pos
        .checked_add(len)
        .filter(|&e| e <= outsize)
        .ok_or(MPI_ERR_TRUNCATE)?;
    if len == 0 {
        return Ok(());
    }
    if outbuf.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    let native_len = n.checked_mul(t.size()).ok_or(MPI_ERR_VALUE_TOO_LARGE)?;
    let mut native = vec![0u8; native_len];
    let mut at = 0usize;
    // SAFETY: the caller's inbuf; native holds native_len bytes.
    unsafe {
        pack(
            inbuf,
            n,
            datatype,
            native.as_mut_ptr().cast(),
            native_len,
            &mut at,
            MPI_COMM_SELF,
            name,
        )?
    };
    // SAFETY: outbuf holds outsize >= end bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(*pos), len) };
    external::to_external(&t, n, &native, out).map_err(|_| MPI_ERR_CONVERSION)?;
    *pos = end;
    Ok(())
}

/// The body of both unpack forms: the external bytes converted into a scratch
/// buffer, then unpacked.
///
/// # Safety
/// The C contract of MPI_Unpack_external.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_ext(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: usize,
    pos: &mut usize,
    outbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    name: &str,
) -> Result<(), c_int> {
    // SAFETY: the caller's contract.
    unsafe { external32(datarep)? };
    let t = lookup_committed(datatype)?;
    let len = external::size(&t, n).ok_or(MPI_ERR_VALUE_TOO_LARGE)?;
    let end = pos
        .checked_add(len)
        .filter(|&e| e <= insize)
        .ok_or(MPI_ERR_TRUNCATE)?;
    if len == 0 {
        return Ok(());
    }
    if inbuf.is_null() {
        return Err(MPI_ERR_BUFFER);
    }
    // SAFETY: inbuf holds insize >= end bytes.
    let ext = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(*pos), len) };
    let native_len = n.checked_mul(t.size()).ok_or(MPI_ERR_VALUE_TOO_LARGE)?;
    let mut native = vec![0u8; native_len];
    external::from_external(&t, n, ext, &mut native);
    let mut at = 0usize;
    // SAFETY: native holds native_len bytes; outbuf is the caller's.
    unsafe {
        unpack(
            native.as_ptr().cast(),
            native_len,
            &mut at,
            outbuf,
            n,
            datatype,
            MPI_COMM_SELF,
            name,
        )?
    };
    *pos = end;
    Ok(())
}

/// `v` as a `usize`: negative is `err`.
fn nonneg<T: TryInto<usize>>(v: T, err: c_int) -> Result<usize, c_int> {
    v.try_into().map_err(|_| err)
}

/// Reads a position argument.
///
/// # Safety
/// `p` is NULL or valid for a `T`.
unsafe fn read_pos<T: Copy + TryInto<usize>>(p: *const T) -> Result<usize, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, the caller's contract.
    nonneg(unsafe { p.read() }, MPI_ERR_ARG)
}

/// A C position or buffer size: MPI_Aint in the int forms, MPI_Count in the `_c` ones.
trait Pos: Copy + TryInto<usize> + TryFrom<usize> {}
impl Pos for MPI_Aint {}
impl Pos for MPI_Count {}

/// Both pack forms at the C boundary: `position` read, checked, written back.
///
/// # Safety
/// The C contract of MPI_Pack_external(_c).
#[allow(clippy::too_many_arguments)]
unsafe fn pack_form<N: TryInto<usize>, P: Pos>(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: N,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: P,
    position: *mut P,
    name: &str,
) -> c_int {
    let r = (|| {
        // SAFETY: position is NULL or a P.
        let mut pos = unsafe { read_pos(position)? };
        let (n, size) = (
            nonneg(incount, MPI_ERR_COUNT)?,
            nonneg(outsize, MPI_ERR_ARG)?,
        );
        // SAFETY: the C contract, forwarded.
        unsafe { pack_ext(datarep, inbuf, n, datatype, outbuf, size, &mut pos, name)? };
        let pos = P::try_from(pos).map_err(|_| MPI_ERR_VALUE_TOO_LARGE)?;
        // SAFETY: position is a P (read above).
        unsafe { put(position, pos) }
    })();
    finish(MPI_COMM_WORLD, name, r)
}

/// Both unpack forms at the C boundary.
///
/// # Safety
/// The C contract of MPI_Unpack_external(_c).
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_form<N: TryInto<usize>, P: Pos>(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: P,
    position: *mut P,
    outbuf: *mut c_void,
    outcount: N,
    datatype: MPI_Datatype,
    name: &str,
) -> c_int {
    let r = (|| {
        // SAFETY: position is NULL or a P.
        let mut pos = unsafe { read_pos(position)? };
        let (size, n) = (
            nonneg(insize, MPI_ERR_ARG)?,
            nonneg(outcount, MPI_ERR_COUNT)?,
        );
        // SAFETY: the C contract, forwarded.
        unsafe { unpack_ext(datarep, inbuf, size, &mut pos, outbuf, n, datatype, name)? };
        let pos = P::try_from(pos).map_err(|_| MPI_ERR_VALUE_TOO_LARGE)?;
        // SAFETY: position is a P (read above).
        unsafe { put(position, pos) }
    })();
    finish(MPI_COMM_WORLD, name, r)
}

mpi_fn! {
    fn MPI_Pack_external / PMPI_Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { pack_form(datarep, inbuf, incount, datatype, outbuf, outsize, position, "MPI_Pack_external") }
    }
}

mpi_fn! {
    fn MPI_Pack_external_c / PMPI_Pack_external_c(datarep: *const c_char, inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { pack_form(datarep, inbuf, incount, datatype, outbuf, outsize, position, "MPI_Pack_external_c") }
    }
}

mpi_fn! {
    fn MPI_Unpack_external / PMPI_Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { unpack_form(datarep, inbuf, insize, position, outbuf, outcount, datatype, "MPI_Unpack_external") }
    }
}

mpi_fn! {
    fn MPI_Unpack_external_c / PMPI_Unpack_external_c(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { unpack_form(datarep, inbuf, insize, position, outbuf, outcount, datatype, "MPI_Unpack_external_c") }
    }
}

mpi_fn! {
    /// The bytes `incount` elements take in external32.
    fn MPI_Pack_external_size / PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, datatype: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
        // SAFETY: datarep is NULL or NUL-terminated; size NULL or an MPI_Aint.
        let r = unsafe { external32(datarep) }
            .and_then(|()| ext_size(nonneg(incount, MPI_ERR_COUNT)?, datatype))
            .and_then(|s| MPI_Aint::try_from(s).map_err(|_| MPI_ERR_VALUE_TOO_LARGE))
            // SAFETY: as above.
            .and_then(|s| unsafe { put(size, s) });
        finish(MPI_COMM_WORLD, "MPI_Pack_external_size", r)
    }
}

mpi_fn! {
    fn MPI_Pack_external_size_c / PMPI_Pack_external_size_c(datarep: *const c_char, incount: MPI_Count, datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
        // SAFETY: datarep is NULL or NUL-terminated; size NULL or an MPI_Count.
        let r = unsafe { external32(datarep) }
            .and_then(|()| ext_size(nonneg(incount, MPI_ERR_COUNT)?, datatype))
            .and_then(|s| MPI_Count::try_from(s).map_err(|_| MPI_ERR_VALUE_TOO_LARGE))
            // SAFETY: as above.
            .and_then(|s| unsafe { put(size, s) });
        finish(MPI_COMM_WORLD, "MPI_Pack_external_size_c", r)
    }
}

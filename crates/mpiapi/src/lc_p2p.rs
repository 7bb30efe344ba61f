//! Large-count forms of point-to-point and one-sided calls: see `crate::large_count`.
//! Point-to-point counts may exceed `INT_MAX` (`wide_p2p!`, `wide`); one-sided ones not yet.
//!
//! The plain adapters are lines of `narrowed!`; by hand, the ones with out-parameters.
#![allow(clippy::redundant_closure_call)]

use crate::ffi::put;
use crate::large_count::*;

extern "C" {
    fn PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int;
    fn PMPI_Get_elements_x(
        status: *const MPI_Status,
        datatype: MPI_Datatype,
        count: *mut MPI_Count,
    ) -> c_int;
    fn PMPI_Type_size_x(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int;
}

mpi_fn! {
    fn MPI_Buffer_detach_c / PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            let mut size_int: c_int = 0;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Buffer_detach(buffer_addr, if size.is_null() { std::ptr::null_mut() } else { &mut size_int }) };
            // SAFETY: non-NULL out-parameter of the C caller.
            if !size.is_null() { unsafe { size.write(MPI_Count::from(size_int)) }; }
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Buffer_detach_c", r)
    }
}

mpi_fn! {
    /// Whole `datatype`s received, counted in 64 bits: the status's bytes (its
    /// elements of MPI_BYTE) over the type's size.
    fn MPI_Get_count_c / PMPI_Get_count_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        let (mut bytes, mut size): (MPI_Count, MPI_Count) = (0, 0);
        // SAFETY: the caller's status; out-parameters are locals.
        let rc = unsafe { PMPI_Get_elements_x(status, MPI_BYTE, &mut bytes) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // SAFETY: out-parameter is a local; the handle is checked by the callee.
        let rc = unsafe { PMPI_Type_size_x(datatype, &mut size) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        let n = match size {
            0 if bytes == 0 => 0,
            s if s > 0 && bytes % s == 0 => bytes / s,
            _ => MPI_Count::from(MPI_UNDEFINED),
        };
        // SAFETY: count is NULL or an MPI_Count.
        finish(MPI_COMM_WORLD, "MPI_Get_count_c", unsafe { put(count, n) })
    }
}

mpi_fn! {
    /// MPI_Get_elements_x under its MPI-4 name (64 bits already).
    fn MPI_Get_elements_c / PMPI_Get_elements_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        // SAFETY: the caller's arguments, passed on.
        unsafe { PMPI_Get_elements_x(status, datatype, count) }
    }
}

narrowed! {
    fn MPI_Buffer_attach_c / PMPI_Buffer_attach_c => PMPI_Buffer_attach on MPI_COMM_WORLD;
    (
        buffer: *mut c_void, size: MPI_Count => c_int,
    )

    fn MPI_Raccumulate_c / PMPI_Raccumulate_c => PMPI_Raccumulate on MPI_COMM_WORLD;
    (
        origin_addr: *const c_void, origin_count: MPI_Count => c_int,
        origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint,
        target_count: MPI_Count => c_int, target_datatype: MPI_Datatype, op: MPI_Op,
        win: MPI_Win, request: *mut MPI_Request,
    )

    fn MPI_Rget_accumulate_c / PMPI_Rget_accumulate_c => PMPI_Rget_accumulate on MPI_COMM_WORLD;
    (
        origin_addr: *const c_void, origin_count: MPI_Count => c_int,
        origin_datatype: MPI_Datatype, result_addr: *mut c_void,
        result_count: MPI_Count => c_int, result_datatype: MPI_Datatype, target_rank: c_int,
        target_disp: MPI_Aint, target_count: MPI_Count => c_int, target_datatype: MPI_Datatype,
        op: MPI_Op, win: MPI_Win, request: *mut MPI_Request,
    )

    fn MPI_Rget_c / PMPI_Rget_c => PMPI_Rget on MPI_COMM_WORLD;
    (
        origin_addr: *mut c_void, origin_count: MPI_Count => c_int,
        origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint,
        target_count: MPI_Count => c_int, target_datatype: MPI_Datatype, win: MPI_Win,
        request: *mut MPI_Request,
    )

    fn MPI_Rput_c / PMPI_Rput_c => PMPI_Rput on MPI_COMM_WORLD;
    (
        origin_addr: *const c_void, origin_count: MPI_Count => c_int,
        origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint,
        target_count: MPI_Count => c_int, target_datatype: MPI_Datatype, win: MPI_Win,
        request: *mut MPI_Request,
    )

}

/// Defines `MPI_X_c` / `PMPI_X_c` over `PMPI_X` for calls with one buffer, given as
/// `buf` and its type before `count, datatype`, and the int form's other arguments
/// after: the count goes through [`wide`], so it may exceed `INT_MAX`.
macro_rules! wide_p2p {
    ($(
        fn $name:ident / $pname:ident => $int:ident on $on:expr;
        ( $buf:ident : $bt:ty, $($a:ident : $t:ty),* $(,)? )
    )*) => {$(
        extern "C" {
            fn $int($buf: $bt, count: c_int, datatype: MPI_Datatype, $($a: $t),*) -> c_int;
        }
        mpi_fn! {
            fn $name / $pname($buf: $bt, count: MPI_Count, datatype: MPI_Datatype, $($a: $t),*) -> c_int {
                // SAFETY: the caller's arguments; the count carried by a wider type if
                // it does not fit an int.
                let r = wide(count, datatype, |n, t| unsafe { $int($buf, n, t, $($a),*) });
                widened($on, stringify!($name), r)
            }
        }
    )*};
}

wide_p2p! {
    fn MPI_Bsend_c / PMPI_Bsend_c => PMPI_Bsend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm)

    fn MPI_Bsend_init_c / PMPI_Bsend_init_c => PMPI_Bsend_init on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Ibsend_c / PMPI_Ibsend_c => PMPI_Ibsend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Imrecv_c / PMPI_Imrecv_c => PMPI_Imrecv on MPI_COMM_WORLD;
    (buf: *mut c_void, message: *mut MPI_Message, request: *mut MPI_Request)

    fn MPI_Irecv_c / PMPI_Irecv_c => PMPI_Irecv on comm;
    (buf: *mut c_void, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Irsend_c / PMPI_Irsend_c => PMPI_Irsend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Isend_c / PMPI_Isend_c => PMPI_Isend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Isendrecv_replace_c / PMPI_Isendrecv_replace_c => PMPI_Isendrecv_replace on comm;
    (buf: *mut c_void, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Issend_c / PMPI_Issend_c => PMPI_Issend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Mrecv_c / PMPI_Mrecv_c => PMPI_Mrecv on MPI_COMM_WORLD;
    (buf: *mut c_void, message: *mut MPI_Message, status: *mut MPI_Status)

    fn MPI_Recv_c / PMPI_Recv_c => PMPI_Recv on comm;
    (buf: *mut c_void, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status)

    fn MPI_Recv_init_c / PMPI_Recv_init_c => PMPI_Recv_init on comm;
    (buf: *mut c_void, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Rsend_c / PMPI_Rsend_c => PMPI_Rsend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm)

    fn MPI_Rsend_init_c / PMPI_Rsend_init_c => PMPI_Rsend_init on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Send_c / PMPI_Send_c => PMPI_Send on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm)

    fn MPI_Send_init_c / PMPI_Send_init_c => PMPI_Send_init on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)

    fn MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c => PMPI_Sendrecv_replace on comm;
    (buf: *mut c_void, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status)

    fn MPI_Ssend_c / PMPI_Ssend_c => PMPI_Ssend on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm)

    fn MPI_Ssend_init_c / PMPI_Ssend_init_c => PMPI_Ssend_init on comm;
    (buf: *const c_void, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request)
}

extern "C" {
    fn PMPI_Sendrecv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int;
    fn PMPI_Isendrecv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
}

/// Carries a send and a receive count/type pair as `wide` does, each on its own, and
/// reports under `name`: what `MPI_Sendrecv_c` and `MPI_Isendrecv_c` share.
fn wide_pair(
    comm: MPI_Comm,
    name: &str,
    send: (MPI_Count, MPI_Datatype),
    recv: (MPI_Count, MPI_Datatype),
    call: impl FnOnce(c_int, MPI_Datatype, c_int, MPI_Datatype) -> c_int,
) -> c_int {
    let r = wide(send.0, send.1, |sn, st| {
        widened(
            comm,
            name,
            wide(recv.0, recv.1, |rn, rt| call(sn, st, rn, rt)),
        )
    });
    widened(comm, name, r)
}

mpi_fn! {
    fn MPI_Sendrecv_c / PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        wide_pair(comm, "MPI_Sendrecv_c", (sendcount, sendtype), (recvcount, recvtype), |sn, st, rn, rt| {
            // SAFETY: the caller's arguments, counts carried as `wide` does.
            unsafe { PMPI_Sendrecv(sendbuf, sn, st, dest, sendtag, recvbuf, rn, rt, source, recvtag, comm, status) }
        })
    }
}

mpi_fn! {
    fn MPI_Isendrecv_c / PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        wide_pair(comm, "MPI_Isendrecv_c", (sendcount, sendtype), (recvcount, recvtype), |sn, st, rn, rt| {
            // SAFETY: the caller's arguments, counts carried as `wide` does.
            unsafe { PMPI_Isendrecv(sendbuf, sn, st, dest, sendtag, recvbuf, rn, rt, source, recvtag, comm, request) }
        })
    }
}

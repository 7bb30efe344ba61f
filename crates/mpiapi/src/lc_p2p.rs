//! Large-count forms of point-to-point and one-sided calls: see `crate::large_count`.
//!
//! Every body is the same shape (a closure for `?`), also where nothing can fail.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;

extern "C" {
    fn PMPI_Bsend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Bsend_init(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int;
    fn PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int;
    fn PMPI_Get_count(
        status: *const MPI_Status,
        datatype: MPI_Datatype,
        count: *mut c_int,
    ) -> c_int;
    fn PMPI_Get_elements(
        status: *const MPI_Status,
        datatype: MPI_Datatype,
        count: *mut c_int,
    ) -> c_int;
    fn PMPI_Ibsend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Imrecv(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Irecv(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Irsend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Isend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
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
    fn PMPI_Isendrecv_replace(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Issend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Mrecv(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int;
    fn PMPI_Raccumulate(
        origin_addr: *const c_void,
        origin_count: c_int,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: c_int,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Recv(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int;
    fn PMPI_Recv_init(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Rget_accumulate(
        origin_addr: *const c_void,
        origin_count: c_int,
        origin_datatype: MPI_Datatype,
        result_addr: *mut c_void,
        result_count: c_int,
        result_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: c_int,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Rget(
        origin_addr: *mut c_void,
        origin_count: c_int,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: c_int,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Rput(
        origin_addr: *const c_void,
        origin_count: c_int,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: c_int,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Rsend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Rsend_init(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Send(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Send_init(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
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
    fn PMPI_Sendrecv_replace(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int;
    fn PMPI_Ssend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Ssend_init(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
}

mpi_fn! {
    fn MPI_Bsend_c / PMPI_Bsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Bsend(buf, int_of(count)?, datatype, dest, tag, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Bsend_c", r)
    }
}

mpi_fn! {
    fn MPI_Bsend_init_c / PMPI_Bsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Bsend_init(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Bsend_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Buffer_attach_c / PMPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Buffer_attach(buffer, int_of(size)?) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Buffer_attach_c", r)
    }
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
    fn MPI_Get_count_c / PMPI_Get_count_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            let mut count_int: c_int = 0;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Get_count(status, datatype, if count.is_null() { std::ptr::null_mut() } else { &mut count_int }) };
            // SAFETY: non-NULL out-parameter of the C caller.
            if !count.is_null() { unsafe { count.write(MPI_Count::from(count_int)) }; }
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Get_count_c", r)
    }
}

mpi_fn! {
    fn MPI_Get_elements_c / PMPI_Get_elements_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            let mut count_int: c_int = 0;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Get_elements(status, datatype, if count.is_null() { std::ptr::null_mut() } else { &mut count_int }) };
            // SAFETY: non-NULL out-parameter of the C caller.
            if !count.is_null() { unsafe { count.write(MPI_Count::from(count_int)) }; }
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Get_elements_c", r)
    }
}

mpi_fn! {
    fn MPI_Ibsend_c / PMPI_Ibsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ibsend(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ibsend_c", r)
    }
}

mpi_fn! {
    fn MPI_Imrecv_c / PMPI_Imrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Imrecv(buf, int_of(count)?, datatype, message, request) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Imrecv_c", r)
    }
}

mpi_fn! {
    fn MPI_Irecv_c / PMPI_Irecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Irecv(buf, int_of(count)?, datatype, source, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Irecv_c", r)
    }
}

mpi_fn! {
    fn MPI_Irsend_c / PMPI_Irsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Irsend(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Irsend_c", r)
    }
}

mpi_fn! {
    fn MPI_Isend_c / PMPI_Isend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Isend(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Isend_c", r)
    }
}

mpi_fn! {
    fn MPI_Isendrecv_c / PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Isendrecv(sendbuf, int_of(sendcount)?, sendtype, dest, sendtag, recvbuf, int_of(recvcount)?, recvtype, source, recvtag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Isendrecv_c", r)
    }
}

mpi_fn! {
    fn MPI_Isendrecv_replace_c / PMPI_Isendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Isendrecv_replace(buf, int_of(count)?, datatype, dest, sendtag, source, recvtag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Isendrecv_replace_c", r)
    }
}

mpi_fn! {
    fn MPI_Issend_c / PMPI_Issend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Issend(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Issend_c", r)
    }
}

mpi_fn! {
    fn MPI_Mrecv_c / PMPI_Mrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Mrecv(buf, int_of(count)?, datatype, message, status) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Mrecv_c", r)
    }
}

mpi_fn! {
    fn MPI_Raccumulate_c / PMPI_Raccumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Raccumulate(origin_addr, int_of(origin_count)?, origin_datatype, target_rank, target_disp, int_of(target_count)?, target_datatype, op, win, request) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Raccumulate_c", r)
    }
}

mpi_fn! {
    fn MPI_Recv_c / PMPI_Recv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Recv(buf, int_of(count)?, datatype, source, tag, comm, status) };
            Ok(rc)
        })();
        relay(comm, "MPI_Recv_c", r)
    }
}

mpi_fn! {
    fn MPI_Recv_init_c / PMPI_Recv_init_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Recv_init(buf, int_of(count)?, datatype, source, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Recv_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Rget_accumulate_c / PMPI_Rget_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Rget_accumulate(origin_addr, int_of(origin_count)?, origin_datatype, result_addr, int_of(result_count)?, result_datatype, target_rank, target_disp, int_of(target_count)?, target_datatype, op, win, request) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Rget_accumulate_c", r)
    }
}

mpi_fn! {
    fn MPI_Rget_c / PMPI_Rget_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Rget(origin_addr, int_of(origin_count)?, origin_datatype, target_rank, target_disp, int_of(target_count)?, target_datatype, win, request) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Rget_c", r)
    }
}

mpi_fn! {
    fn MPI_Rput_c / PMPI_Rput_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Rput(origin_addr, int_of(origin_count)?, origin_datatype, target_rank, target_disp, int_of(target_count)?, target_datatype, win, request) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Rput_c", r)
    }
}

mpi_fn! {
    fn MPI_Rsend_c / PMPI_Rsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Rsend(buf, int_of(count)?, datatype, dest, tag, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Rsend_c", r)
    }
}

mpi_fn! {
    fn MPI_Rsend_init_c / PMPI_Rsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Rsend_init(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Rsend_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Send_c / PMPI_Send_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Send(buf, int_of(count)?, datatype, dest, tag, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Send_c", r)
    }
}

mpi_fn! {
    fn MPI_Send_init_c / PMPI_Send_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Send_init(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Send_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Sendrecv_c / PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Sendrecv(sendbuf, int_of(sendcount)?, sendtype, dest, sendtag, recvbuf, int_of(recvcount)?, recvtype, source, recvtag, comm, status) };
            Ok(rc)
        })();
        relay(comm, "MPI_Sendrecv_c", r)
    }
}

mpi_fn! {
    fn MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Sendrecv_replace(buf, int_of(count)?, datatype, dest, sendtag, source, recvtag, comm, status) };
            Ok(rc)
        })();
        relay(comm, "MPI_Sendrecv_replace_c", r)
    }
}

mpi_fn! {
    fn MPI_Ssend_c / PMPI_Ssend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ssend(buf, int_of(count)?, datatype, dest, tag, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ssend_c", r)
    }
}

mpi_fn! {
    fn MPI_Ssend_init_c / PMPI_Ssend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ssend_init(buf, int_of(count)?, datatype, dest, tag, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ssend_init_c", r)
    }
}

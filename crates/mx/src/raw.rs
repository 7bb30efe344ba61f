//! Receives into raw caller memory, as a C ABI's `mx_irecv(ep, ptr, len, …)` needs: the
//! one place where the engine's receives reach memory through a raw pointer.
//!
//! The engine (sans-IO, `forbid(unsafe_code)`) writes received bytes through the safe
//! trait [`RecvTarget`]; [`RawRecv`] implements it over a pointer and a length whose
//! validity the caller promises once, at [`RawRecv::new`].
#![allow(unsafe_code)]

use myrix_mx_proto::engine::{RecvBuf, RecvTarget};

/// `len` bytes of caller memory at `ptr`, lent to one receive.
#[derive(Debug)]
pub struct RawRecv {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a `RawRecv` is the only path to its memory while the receive lives
// (`RawRecv::new`'s contract), so moving it to another thread (a progress thread) moves
// that exclusive access with it.
unsafe impl Send for RawRecv {}

impl RawRecv {
    /// Lends `len` bytes at `ptr` to a receive.
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `len` bytes (or `len` must be 0), and nothing
    /// else may read or write those bytes until the `RawRecv` is dropped or given back:
    /// the receive completed and was tested, was cancelled, or the endpoint was dropped.
    pub unsafe fn new(ptr: *mut u8, len: usize) -> RawRecv {
        RawRecv { ptr, len }
    }

    /// The receive buffer for [`crate::Endpoint::irecv`].
    ///
    /// # Safety
    /// As for [`RawRecv::new`].
    pub unsafe fn recv_buf(ptr: *mut u8, len: usize) -> RecvBuf {
        // SAFETY: the caller's promise is the one `new` asks for.
        RecvBuf::target(unsafe { RawRecv::new(ptr, len) })
    }

    /// The memory's start, as lent.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl RecvTarget for RawRecv {
    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&mut self, offset: usize, data: &[u8]) {
        let end = offset.checked_add(data.len()).expect("offset overflows");
        assert!(end <= self.len, "write past the caller's buffer");
        if data.is_empty() {
            return;
        }
        // SAFETY: `ptr..ptr + len` is valid for writes and ours alone (`new`'s
        // contract); `offset..end` lies inside it (asserted above); `data` is a Rust
        // slice, so it cannot overlap memory only this `RawRecv` may touch.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset), data.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_land_in_caller_memory() {
        let mut mem = [0u8; 8];
        {
            // SAFETY: `mem` outlives `r` and is not touched while `r` lives.
            let mut r = unsafe { RawRecv::new(mem.as_mut_ptr(), mem.len()) };
            r.write_at(2, b"abc");
            r.write_at(7, b"z");
            r.write_at(8, b"");
        }
        assert_eq!(&mem, b"\0\0abc\0\0z");
    }
}

//! TO BE DELETED AT INTEGRATION. A stand-in, for predefined contiguous types only,
//! for what `crate::datatype` and `crate::op` (written by another engineer at the
//! same time) provide under the contract's signatures, so that `coll.rs` compiles
//! and its single-rank tests run before they land. `coll.rs` names them only through
//! `use crate::coll_shim::{datatype, op}`; at integration that line becomes
//! `use crate::{datatype, op}` and this file goes. The constants in [`abi_ext`]
//! move to `abi.rs`.
//!
//! Needed from the real `op.rs` beyond the contract: [`op::commutative`] (whether an
//! op commutes, as MPI_Op_commutative reports).

/// ABI values (`include/mpi.h`) used by comm.rs, group.rs and coll.rs that abi.rs
/// does not have yet.
#[allow(non_camel_case_types)]
pub mod abi_ext {
    use crate::abi::Handle;
    use std::os::raw::c_int;

    pub type MPI_Datatype = Handle;
    pub type MPI_Op = Handle;
    pub type MPI_Group = Handle;
    pub type MPI_Info = Handle;

    pub const MPI_GROUP_NULL: Handle = 0x108;
    pub const MPI_GROUP_EMPTY: Handle = 0x109;
    pub const MPI_INFO_NULL: Handle = 0x130;
    pub const MPI_SIMILAR: c_int = 203;
    pub const MPI_UNDEFINED: c_int = -32766;
    pub const MPI_COMM_TYPE_SHARED: c_int = 221;
    /// `MPI_IN_PLACE`, `(void *)1`.
    pub const MPI_IN_PLACE: usize = 1;

    pub const MPI_ERR_BUFFER: c_int = 1;
    pub const MPI_ERR_COUNT: c_int = 2;
    pub const MPI_ERR_TYPE: c_int = 3;
    pub const MPI_ERR_RANK: c_int = 6;
    pub const MPI_ERR_ROOT: c_int = 8;
    pub const MPI_ERR_GROUP: c_int = 9;
    pub const MPI_ERR_OP: c_int = 10;
    pub const MPI_ERR_TRUNCATE: c_int = 15;
}

/// The contract's `crate::datatype` for the predefined integer and floating types.
pub mod datatype {
    use super::abi_ext::*;
    use std::os::raw::c_int;
    use std::sync::Arc;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Num {
        I8,
        U8,
        I16,
        U16,
        I32,
        U32,
        I64,
        U64,
        F32,
        F64,
        /// No arithmetic (MPI_BYTE, MPI_PACKED).
        Bytes,
    }

    /// A predefined contiguous type.
    #[derive(Debug)]
    pub struct Datatype {
        pub(crate) num: Num,
        size: usize,
    }

    impl Datatype {
        pub fn size(&self) -> usize {
            self.size
        }
        pub fn extent(&self) -> isize {
            self.size as isize
        }
        pub fn true_lb(&self) -> isize {
            0
        }
        pub fn true_extent(&self) -> isize {
            self.size as isize
        }
        pub fn is_contiguous(&self) -> bool {
            true
        }
        /// # Safety
        /// `base` is valid for `count` elements; `out` holds at least their size.
        pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) {
            let n = (self.size * count).min(out.len());
            // SAFETY: the caller's contract; `out` is a distinct Rust buffer.
            unsafe { std::ptr::copy_nonoverlapping(base, out.as_mut_ptr(), n) }
        }
        /// # Safety
        /// `base` is valid for writing `count` elements.
        pub unsafe fn unpack(&self, data: &[u8], base: *mut u8, count: usize) {
            let n = (self.size * count).min(data.len());
            // SAFETY: the caller's contract; `data` is a distinct Rust buffer.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), base, n) }
        }
    }

    fn num_of(dt: MPI_Datatype) -> Option<(Num, usize)> {
        let long = std::mem::size_of::<std::os::raw::c_long>();
        Some(match dt {
            0x243 | 0x244 | 0x240 => (Num::I8, 1), // CHAR, SIGNED_CHAR, INT8
            0x245 | 0x241 => (Num::U8, 1),         // UNSIGNED_CHAR, UINT8
            0x247 | 0x207 => (Num::Bytes, 1),      // BYTE, PACKED
            0x208 | 0x248 => (Num::I16, 2),        // SHORT, INT16
            0x20c | 0x249 => (Num::U16, 2),        // UNSIGNED_SHORT, UINT16
            0x209 | 0x250 => (Num::I32, 4),        // INT, INT32
            0x20d | 0x251 => (Num::U32, 4),        // UNSIGNED, UINT32
            0x20b | 0x258 | 0x201 | 0x202 | 0x203 => (Num::I64, 8), // LONG_LONG, INT64, AINT, COUNT, OFFSET
            0x20f | 0x259 => (Num::U64, 8),                         // UNSIGNED_LONG_LONG, UINT64
            0x20a if long == 8 => (Num::I64, 8),                    // LONG
            0x20e if long == 8 => (Num::U64, 8),                    // UNSIGNED_LONG
            0x20a => (Num::I32, 4),
            0x20e => (Num::U32, 4),
            0x210 => (Num::F32, 4), // FLOAT
            0x214 => (Num::F64, 8), // DOUBLE
            _ => return None,
        })
    }

    pub fn lookup(dt: MPI_Datatype) -> Result<Arc<Datatype>, c_int> {
        let (num, size) = num_of(dt).ok_or(MPI_ERR_TYPE)?;
        Ok(Arc::new(Datatype { num, size }))
    }
}

/// The contract's `crate::op` for the predefined arithmetic, bitwise and logical ops.
pub mod op {
    use super::abi_ext::*;
    use super::datatype::{lookup as type_of, Num};
    use std::os::raw::{c_int, c_void};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum OpRef {
        Sum,
        Min,
        Max,
        Prod,
        Band,
        Bor,
        Bxor,
        Land,
        Lor,
        Lxor,
    }

    pub fn lookup(op: MPI_Op) -> Result<OpRef, c_int> {
        Ok(match op {
            0x21 => OpRef::Sum,
            0x22 => OpRef::Min,
            0x23 => OpRef::Max,
            0x24 => OpRef::Prod,
            0x28 => OpRef::Band,
            0x29 => OpRef::Bor,
            0x2a => OpRef::Bxor,
            0x30 => OpRef::Land,
            0x31 => OpRef::Lor,
            0x32 => OpRef::Lxor,
            _ => return Err(MPI_ERR_OP),
        })
    }

    /// Whether `op` commutes (every predefined op does).
    pub fn commutative(_op: &OpRef) -> bool {
        true
    }

    macro_rules! int_op {
        ($t:ty, $op:expr, $a:expr, $b:expr) => {{
            let (a, b): ($t, $t) = ($a, $b);
            match $op {
                OpRef::Sum => a.wrapping_add(b),
                OpRef::Prod => a.wrapping_mul(b),
                OpRef::Min => a.min(b),
                OpRef::Max => a.max(b),
                OpRef::Band => a & b,
                OpRef::Bor => a | b,
                OpRef::Bxor => a ^ b,
                OpRef::Land => <$t>::from((a != 0) && (b != 0)),
                OpRef::Lor => <$t>::from((a != 0) || (b != 0)),
                OpRef::Lxor => <$t>::from((a != 0) != (b != 0)),
            }
        }};
    }

    macro_rules! apply_as {
        ($t:ty, $n:expr, $input:expr, $inout:expr, |$a:ident, $b:ident| $body:expr) => {{
            let input = $input.cast::<$t>();
            let inout = $inout.cast::<$t>();
            for i in 0..$n {
                // SAFETY: the caller's contract: `count` elements at each pointer
                // (unaligned reads: packed buffers need not be aligned).
                unsafe {
                    let $a = input.add(i).read_unaligned();
                    let $b = inout.add(i).read_unaligned();
                    inout.add(i).write_unaligned($body);
                }
            }
        }};
    }

    /// `inout[i] = input[i] op inout[i]` for `count` elements of `dt`.
    ///
    /// # Safety
    /// Both pointers are valid for `count` elements of `dt`.
    pub unsafe fn apply(
        op: &OpRef,
        dt: MPI_Datatype,
        input: *const c_void,
        inout: *mut c_void,
        count: c_int,
    ) -> Result<(), c_int> {
        let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
        let t = type_of(dt)?;
        let op = *op;
        let float_ok = matches!(op, OpRef::Sum | OpRef::Prod | OpRef::Min | OpRef::Max);
        match t.num {
            Num::I8 => apply_as!(i8, n, input, inout, |a, b| int_op!(i8, op, a, b)),
            Num::U8 => apply_as!(u8, n, input, inout, |a, b| int_op!(u8, op, a, b)),
            Num::I16 => apply_as!(i16, n, input, inout, |a, b| int_op!(i16, op, a, b)),
            Num::U16 => apply_as!(u16, n, input, inout, |a, b| int_op!(u16, op, a, b)),
            Num::I32 => apply_as!(i32, n, input, inout, |a, b| int_op!(i32, op, a, b)),
            Num::U32 => apply_as!(u32, n, input, inout, |a, b| int_op!(u32, op, a, b)),
            Num::I64 => apply_as!(i64, n, input, inout, |a, b| int_op!(i64, op, a, b)),
            Num::U64 => apply_as!(u64, n, input, inout, |a, b| int_op!(u64, op, a, b)),
            Num::F32 | Num::F64 if !float_ok => return Err(MPI_ERR_OP),
            Num::F32 => apply_as!(f32, n, input, inout, |a, b| float_op(op, a, b)),
            Num::F64 => apply_as!(f64, n, input, inout, |a, b| float_op(op, a, b)),
            Num::Bytes => return Err(MPI_ERR_OP),
        }
        Ok(())
    }

    fn float_op<T: Copy + PartialOrd + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
        op: OpRef,
        a: T,
        b: T,
    ) -> T {
        match op {
            OpRef::Sum => a + b,
            OpRef::Prod => a * b,
            OpRef::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            _ => {
                if b > a {
                    b
                } else {
                    a
                }
            }
        }
    }
}

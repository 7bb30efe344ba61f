//! Plain data for the Rust API ([`crate::world`], [`crate::comm`]): [`Pod`], the
//! element types whose slices travel as their bytes, and [`Num`], the numbers the
//! predefined reduction operations combine, each tied to the C library's basic
//! datatype so a reduction runs the very code `MPI_Allreduce` runs on it.

use crate::datatype::Basic;

/// Element types whose slices travel as their bytes.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, and `Self` has
/// no padding bytes (a receive writes any bytes into it; a send reads all of them).
pub unsafe trait Pod: Copy + 'static {}

macro_rules! pod {
    ($($t:ty)*) => { $(
        // SAFETY: a primitive number: no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )* };
}
pod!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);
// SAFETY: an array of `Pod` elements has no padding between or after them.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// The bytes of a slice of `Pod` values.
pub fn bytes<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so every byte of the slice is initialized; the
    // length is the slice's size in bytes, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of `Pod` values (any bytes written are valid values).
pub fn bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `bytes`; every bit pattern is a valid `T` (`Pod`), and the
    // exclusive borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// A vector of `n` zero values.
pub(crate) fn zeroed<T: Pod>(n: usize) -> Vec<T> {
    // SAFETY: all-zero bytes are a valid `T` (`Pod`: every bit pattern is).
    let zero: T = unsafe { std::mem::zeroed() };
    vec![zero; n]
}

/// Numbers the predefined reduction operations ([`crate::comm::Op`]) combine: each
/// is one of the C library's basic datatypes (`BASIC`), and an array of them is
/// combined element by element.
///
/// # Safety
/// `Self` is laid out as one or more consecutive values of `BASIC` (in this
/// host's byte order) and nothing else.
pub unsafe trait Num: Pod {
    /// The basic datatype of one element.
    const BASIC: Basic;
}

macro_rules! num {
    ($($t:ty => $b:ident)*) => { $(
        // SAFETY: the primitive is exactly one value of the C type named (LP64).
        unsafe impl Num for $t {
            const BASIC: Basic = Basic::$b;
        }
    )* };
}
num! {
    i8 => Int8 i16 => Int16 i32 => Int32 i64 => Int64 isize => Int64
    u8 => Uint8 u16 => Uint16 u32 => Uint32 u64 => Uint64 usize => Uint64
    f32 => Float f64 => Double
}
// SAFETY: an array of `T` is `N` values of `T`'s basic type, one after another.
unsafe impl<T: Num, const N: usize> Num for [T; N] {
    const BASIC: Basic = T::BASIC;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_basic_types() {
        fn size<T: Num>() -> (usize, usize) {
            (std::mem::size_of::<T>(), T::BASIC.size())
        }
        for (a, b) in [
            size::<i8>(),
            size::<u16>(),
            size::<i32>(),
            size::<u64>(),
            size::<isize>(),
            size::<usize>(),
            size::<f32>(),
            size::<f64>(),
        ] {
            assert_eq!(a, b);
        }
        assert_eq!(size::<[f64; 3]>(), (24, 8));
    }
}

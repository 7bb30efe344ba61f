//! The predefined (basic) datatypes: what each one is in C on the supported LP64
//! targets (x86-64 and AArch64 Linux): size, extent, alignment, its name, and the
//! class the standard's reduction rules sort it into.
//!
//! This module only describes types; it never touches user memory.

use std::mem::{align_of, size_of};

/// Every predefined datatype myrix knows (the C ones of `mpi.h`, the C++ synonyms
/// with their own handles, and the Fortran types whose C equivalents are clear).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Basic {
    Char,
    SignedChar,
    UnsignedChar,
    Byte,
    Short,
    UnsignedShort,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Float,
    Double,
    LongDouble,
    WChar,
    CBool,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Aint,
    Offset,
    Count,
    FloatComplex,
    DoubleComplex,
    LongDoubleComplex,
    Packed,
    /// `struct { float; int; }`
    FloatInt,
    /// `struct { double; int; }`
    DoubleInt,
    /// `struct { long; int; }`
    LongInt,
    /// `struct { int; int; }`
    TwoInt,
    /// `struct { short; int; }`
    ShortInt,
    /// `struct { long double; int; }`
    LongDoubleInt,
    CxxBool,
    CxxFloatComplex,
    CxxDoubleComplex,
    CxxLongDoubleComplex,
    // Fortran types with the sizes of gfortran on LP64 (default INTEGER/REAL 4 bytes).
    FInteger,
    FReal,
    FDoublePrecision,
    FLogical,
    FComplex,
    FDoubleComplex,
    FCharacter,
    F2Real,
    F2DoublePrecision,
    F2Integer,
    FInteger1,
    FInteger2,
    FInteger4,
    FInteger8,
    FReal4,
    FReal8,
    FComplex8,
    FComplex16,
    FLogical1,
    FLogical2,
    FLogical4,
    FLogical8,
}

/// The groups of the standard's table of which predefined operation applies to
/// which type (MPI-4.1 §6.9.2), plus the types no operation applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    CInteger,
    FortranInteger,
    Floating,
    Logical,
    Complex,
    Byte,
    /// MPI_AINT, MPI_OFFSET, MPI_COUNT.
    MultiLanguage,
    /// The value-index pairs of MAXLOC and MINLOC.
    Pair,
    /// MPI_CHAR, MPI_WCHAR, MPI_CHARACTER: characters, not numbers.
    Character,
    Packed,
}

/// The machine number behind a type (for complex types: of each part; for pairs: of
/// the value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Num {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// C `long double`: x87 80-bit extended in 16 bytes on x86-64, IEEE binary128
    /// on AArch64.
    LongDouble,
}

impl Num {
    pub const fn size(self) -> usize {
        match self {
            Num::I8 | Num::U8 => 1,
            Num::I16 | Num::U16 => 2,
            Num::I32 | Num::U32 | Num::F32 => 4,
            Num::I64 | Num::U64 | Num::F64 => 8,
            Num::LongDouble => LONG_DOUBLE_SIZE,
        }
    }
}

#[cfg(not(target_pointer_width = "64"))]
compile_error!("myrix's datatypes describe the LP64 C layouts (x86-64, AArch64)");

const LONG_DOUBLE_SIZE: usize = 16;
const LONG_DOUBLE_ALIGN: usize = 16;

/// Everything a predefined type is.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    pub name: &'static str,
    /// Bytes of data (MPI_Type_size): for pairs, value plus index.
    pub size: usize,
    /// `sizeof` the C type (the extent).
    pub extent: usize,
    pub align: usize,
    pub class: Class,
    pub num: Num,
    /// Pairs: the index's number and its offset in the C struct.
    pub index: Option<(Num, usize)>,
}

const fn signed(n: usize) -> Num {
    match n {
        1 => Num::I8,
        2 => Num::I16,
        4 => Num::I32,
        _ => Num::I64,
    }
}

const fn unsigned(n: usize) -> Num {
    match n {
        1 => Num::U8,
        2 => Num::U16,
        4 => Num::U32,
        _ => Num::U64,
    }
}

const fn scalar(name: &'static str, size: usize, align: usize, class: Class, num: Num) -> Info {
    Info {
        name,
        size,
        extent: size,
        align,
        class,
        num,
        index: None,
    }
}

/// A C pair `struct { V value; I index; }` as the compiler lays it out.
const fn pair(name: &'static str, value: Num, vsize: usize, valign: usize, index: Num) -> Info {
    let isize_ = index.size();
    let align = if valign > isize_ { valign } else { isize_ };
    let ioff = vsize.div_ceil(isize_) * isize_;
    let extent = (ioff + isize_).div_ceil(align) * align;
    Info {
        name,
        size: vsize + isize_,
        extent,
        align,
        class: Class::Pair,
        num: value,
        index: Some((index, ioff)),
    }
}

impl Basic {
    /// Every predefined type, in declaration order.
    pub const ALL: [Basic; 64] = {
        use Basic::*;
        [
            Char,
            SignedChar,
            UnsignedChar,
            Byte,
            Short,
            UnsignedShort,
            Int,
            Unsigned,
            Long,
            UnsignedLong,
            LongLong,
            UnsignedLongLong,
            Float,
            Double,
            LongDouble,
            WChar,
            CBool,
            Int8,
            Int16,
            Int32,
            Int64,
            Uint8,
            Uint16,
            Uint32,
            Uint64,
            Aint,
            Offset,
            Count,
            FloatComplex,
            DoubleComplex,
            LongDoubleComplex,
            Packed,
            FloatInt,
            DoubleInt,
            LongInt,
            TwoInt,
            ShortInt,
            LongDoubleInt,
            CxxBool,
            CxxFloatComplex,
            CxxDoubleComplex,
            CxxLongDoubleComplex,
            FInteger,
            FReal,
            FDoublePrecision,
            FLogical,
            FComplex,
            FDoubleComplex,
            FCharacter,
            F2Real,
            F2DoublePrecision,
            F2Integer,
            FInteger1,
            FInteger2,
            FInteger4,
            FInteger8,
            FReal4,
            FReal8,
            FComplex8,
            FComplex16,
            FLogical1,
            FLogical2,
            FLogical4,
            FLogical8,
        ]
    };

    /// This type's position in [`Basic::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn info(self) -> Info {
        use Basic::*;
        use Class::{
            CInteger, Character, Complex, Floating, FortranInteger, Logical, MultiLanguage,
        };
        const LONG: usize = size_of::<libc::c_long>();
        const INT: usize = size_of::<libc::c_int>();
        const SHORT: usize = size_of::<libc::c_short>();
        const LL: usize = size_of::<libc::c_longlong>();
        const PTR: usize = size_of::<isize>();
        let s = |n: &'static str, sz: usize, c: Class, num: Num| scalar(n, sz, sz, c, num);
        match self {
            Char => s("MPI_CHAR", 1, Character, Num::I8),
            SignedChar => s("MPI_SIGNED_CHAR", 1, CInteger, Num::I8),
            UnsignedChar => s("MPI_UNSIGNED_CHAR", 1, CInteger, Num::U8),
            Byte => s("MPI_BYTE", 1, Class::Byte, Num::U8),
            Short => s("MPI_SHORT", SHORT, CInteger, signed(SHORT)),
            UnsignedShort => s("MPI_UNSIGNED_SHORT", SHORT, CInteger, unsigned(SHORT)),
            Int => s("MPI_INT", INT, CInteger, signed(INT)),
            Unsigned => s("MPI_UNSIGNED", INT, CInteger, unsigned(INT)),
            Long => s("MPI_LONG", LONG, CInteger, signed(LONG)),
            UnsignedLong => s("MPI_UNSIGNED_LONG", LONG, CInteger, unsigned(LONG)),
            LongLong => s("MPI_LONG_LONG", LL, CInteger, signed(LL)),
            UnsignedLongLong => s("MPI_UNSIGNED_LONG_LONG", LL, CInteger, unsigned(LL)),
            Float => s("MPI_FLOAT", 4, Floating, Num::F32),
            Double => s("MPI_DOUBLE", 8, Floating, Num::F64),
            LongDouble => scalar(
                "MPI_LONG_DOUBLE",
                LONG_DOUBLE_SIZE,
                LONG_DOUBLE_ALIGN,
                Floating,
                Num::LongDouble,
            ),
            WChar => s("MPI_WCHAR", 4, Character, Num::I32),
            CBool => s("MPI_C_BOOL", 1, Logical, Num::U8),
            Int8 => s("MPI_INT8_T", 1, CInteger, Num::I8),
            Int16 => s("MPI_INT16_T", 2, CInteger, Num::I16),
            Int32 => s("MPI_INT32_T", 4, CInteger, Num::I32),
            Int64 => s("MPI_INT64_T", 8, CInteger, Num::I64),
            Uint8 => s("MPI_UINT8_T", 1, CInteger, Num::U8),
            Uint16 => s("MPI_UINT16_T", 2, CInteger, Num::U16),
            Uint32 => s("MPI_UINT32_T", 4, CInteger, Num::U32),
            Uint64 => s("MPI_UINT64_T", 8, CInteger, Num::U64),
            Aint => s("MPI_AINT", PTR, MultiLanguage, signed(PTR)),
            Offset => s("MPI_OFFSET", 8, MultiLanguage, Num::I64),
            Count => s("MPI_COUNT", 8, MultiLanguage, Num::I64),
            FloatComplex => scalar("MPI_C_FLOAT_COMPLEX", 8, 4, Complex, Num::F32),
            DoubleComplex => scalar("MPI_C_DOUBLE_COMPLEX", 16, 8, Complex, Num::F64),
            LongDoubleComplex => scalar(
                "MPI_C_LONG_DOUBLE_COMPLEX",
                2 * LONG_DOUBLE_SIZE,
                LONG_DOUBLE_ALIGN,
                Complex,
                Num::LongDouble,
            ),
            Packed => s("MPI_PACKED", 1, Class::Packed, Num::U8),
            FloatInt => pair("MPI_FLOAT_INT", Num::F32, 4, 4, signed(INT)),
            DoubleInt => pair(
                "MPI_DOUBLE_INT",
                Num::F64,
                8,
                align_of::<f64>(),
                signed(INT),
            ),
            LongInt => pair("MPI_LONG_INT", signed(LONG), LONG, LONG, signed(INT)),
            TwoInt => pair("MPI_2INT", signed(INT), INT, INT, signed(INT)),
            ShortInt => pair("MPI_SHORT_INT", signed(SHORT), SHORT, SHORT, signed(INT)),
            LongDoubleInt => pair(
                "MPI_LONG_DOUBLE_INT",
                Num::LongDouble,
                LONG_DOUBLE_SIZE,
                LONG_DOUBLE_ALIGN,
                signed(INT),
            ),
            CxxBool => s("MPI_CXX_BOOL", 1, Logical, Num::U8),
            CxxFloatComplex => scalar("MPI_CXX_FLOAT_COMPLEX", 8, 4, Complex, Num::F32),
            CxxDoubleComplex => scalar("MPI_CXX_DOUBLE_COMPLEX", 16, 8, Complex, Num::F64),
            CxxLongDoubleComplex => scalar(
                "MPI_CXX_LONG_DOUBLE_COMPLEX",
                2 * LONG_DOUBLE_SIZE,
                LONG_DOUBLE_ALIGN,
                Complex,
                Num::LongDouble,
            ),
            FInteger => s("MPI_INTEGER", 4, FortranInteger, Num::I32),
            FReal => s("MPI_REAL", 4, Floating, Num::F32),
            FDoublePrecision => s("MPI_DOUBLE_PRECISION", 8, Floating, Num::F64),
            FLogical => s("MPI_LOGICAL", 4, Logical, Num::I32),
            FComplex => scalar("MPI_COMPLEX", 8, 4, Complex, Num::F32),
            FDoubleComplex => scalar("MPI_DOUBLE_COMPLEX", 16, 8, Complex, Num::F64),
            FCharacter => s("MPI_CHARACTER", 1, Character, Num::I8),
            F2Real => pair("MPI_2REAL", Num::F32, 4, 4, Num::F32),
            F2DoublePrecision => pair("MPI_2DOUBLE_PRECISION", Num::F64, 8, 8, Num::F64),
            F2Integer => pair("MPI_2INTEGER", Num::I32, 4, 4, Num::I32),
            FInteger1 => s("MPI_INTEGER1", 1, FortranInteger, Num::I8),
            FInteger2 => s("MPI_INTEGER2", 2, FortranInteger, Num::I16),
            FInteger4 => s("MPI_INTEGER4", 4, FortranInteger, Num::I32),
            FInteger8 => s("MPI_INTEGER8", 8, FortranInteger, Num::I64),
            FReal4 => s("MPI_REAL4", 4, Floating, Num::F32),
            FReal8 => s("MPI_REAL8", 8, Floating, Num::F64),
            FComplex8 => scalar("MPI_COMPLEX8", 8, 4, Complex, Num::F32),
            FComplex16 => scalar("MPI_COMPLEX16", 16, 8, Complex, Num::F64),
            FLogical1 => s("MPI_LOGICAL1", 1, Logical, Num::I8),
            FLogical2 => s("MPI_LOGICAL2", 2, Logical, Num::I16),
            FLogical4 => s("MPI_LOGICAL4", 4, Logical, Num::I32),
            FLogical8 => s("MPI_LOGICAL8", 8, Logical, Num::I64),
        }
    }

    /// The type's name as MPI_Type_get_name reports it.
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// Bytes of data (MPI_Type_size).
    pub fn size(self) -> usize {
        self.info().size
    }
    /// `sizeof` the C type.
    pub fn extent(self) -> usize {
        self.info().extent
    }
    pub fn align(self) -> usize {
        self.info().align
    }
    pub fn class(self) -> Class {
        self.info().class
    }
    pub fn is_pair(self) -> bool {
        self.info().index.is_some()
    }
    /// The two basic types of a pair (value, index) as the standard's type map has
    /// them, with the index's offset.
    pub fn pair_parts(self) -> Option<(Basic, Basic, usize)> {
        use Basic::*;
        let (_, off) = self.info().index?;
        let (v, i) = match self {
            FloatInt => (Float, Int),
            DoubleInt => (Double, Int),
            LongInt => (Long, Int),
            TwoInt => (Int, Int),
            ShortInt => (Short, Int),
            LongDoubleInt => (LongDouble, Int),
            F2Real => (FReal, FReal),
            F2DoublePrecision => (FDoublePrecision, FDoublePrecision),
            F2Integer => (FInteger, FInteger),
            _ => return None,
        };
        Some((v, i, off))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order() {
        for (i, b) in Basic::ALL.iter().enumerate() {
            assert_eq!(b.index(), i, "{b:?}");
        }
    }

    #[test]
    fn pairs_are_laid_out_as_c_structs() {
        #[repr(C)]
        struct P<V, I>(V, I);
        macro_rules! check {
            ($b:expr, $v:ty) => {
                let i = $b.info();
                assert_eq!(i.extent, size_of::<P<$v, i32>>(), "{:?}", $b);
                assert_eq!(i.align, align_of::<P<$v, i32>>(), "{:?}", $b);
                assert_eq!(i.index.unwrap().1, std::mem::offset_of!(P<$v, i32>, 1));
                assert_eq!(i.size, size_of::<$v>() + 4);
            };
        }
        check!(Basic::FloatInt, f32);
        check!(Basic::DoubleInt, f64);
        check!(Basic::LongInt, libc::c_long);
        check!(Basic::TwoInt, i32);
        check!(Basic::ShortInt, i16);
        let ldi = Basic::LongDoubleInt.info();
        assert_eq!((ldi.extent, ldi.align, ldi.size), (32, 16, 20));
        assert_eq!(ldi.index.unwrap().1, 16);
    }
}

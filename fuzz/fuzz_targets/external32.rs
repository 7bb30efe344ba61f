//! Any bytes as external32 data (what MPI_Unpack_external reads from a caller's
//! buffer) for a struct of every kind of basic element: converting in never panics,
//! and what came in goes back out to the same bytes wherever the values are
//! canonical (everything but the binary128 fraction bits an x87 `long double` drops).
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_mpi::datatype::external::{from_external, size, to_external};
use myrix_mpi::datatype::{Basic, Datatype};

fuzz_target!(|data: &[u8]| {
    let parts = [
        Basic::Char,
        Basic::Short,
        Basic::Int,
        Basic::Long,
        Basic::UnsignedLong,
        Basic::Double,
        Basic::FloatComplex,
        Basic::ShortInt,
    ];
    let types: Vec<Datatype> = parts.iter().map(|&b| Datatype::basic(b)).collect();
    let mut disps = Vec::new();
    let mut at = 0isize;
    for t in &types {
        disps.push(at);
        at += t.extent().max(1) + 8;
    }
    let t = Datatype::create_struct(&[1; 8], &disps, &types).expect("a valid struct");
    let per = size(&t, 1).expect("small");
    let count = data.len() / per;
    let ext = &data[..count * per];
    let mut native = vec![0u8; count * t.size()];
    from_external(&t, count, ext, &mut native);
    let mut again = vec![0u8; ext.len()];
    to_external(&t, count, &native, &mut again).expect("values that came in fit going out");
    assert_eq!(again, ext);
});

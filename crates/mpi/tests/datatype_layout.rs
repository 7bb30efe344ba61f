//! The predefined types' sizes, extents and alignments against what the C compiler
//! says (`cc` on this machine; skipped without one).

use myrix_ctest::{BuildError, Compiler};
use myrix_mpi::datatype::{Basic, Datatype};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const PROGRAM: &str = r#"
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>
#include <complex.h>
#define T(name, ty) printf("%s %zu %zu\n", name, sizeof(ty), alignof(ty));
#define P(name, v) { struct s { v a; int b; }; \
    printf("%s %zu %zu %zu\n", name, sizeof(struct s), alignof(struct s), offsetof(struct s, b)); }
int main(void) {
    T("MPI_CHAR", char) T("MPI_SHORT", short) T("MPI_INT", int) T("MPI_LONG", long)
    T("MPI_LONG_LONG", long long) T("MPI_FLOAT", float) T("MPI_DOUBLE", double)
    T("MPI_LONG_DOUBLE", long double) T("MPI_WCHAR", wchar_t) T("MPI_C_BOOL", bool)
    T("MPI_INT8_T", int8_t) T("MPI_INT16_T", int16_t) T("MPI_INT32_T", int32_t)
    T("MPI_INT64_T", int64_t) T("MPI_AINT", intptr_t)
    T("MPI_C_FLOAT_COMPLEX", float _Complex) T("MPI_C_DOUBLE_COMPLEX", double _Complex)
    T("MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex)
    P("MPI_FLOAT_INT", float) P("MPI_DOUBLE_INT", double) P("MPI_LONG_INT", long)
    P("MPI_2INT", int) P("MPI_SHORT_INT", short) P("MPI_LONG_DOUBLE_INT", long double)
    return 0;
}
"#;

#[test]
fn predefined_types_match_the_c_compiler() {
    let exe = match Compiler::cc(Path::new(env!("CARGO_TARGET_TMPDIR")).join("datatype-layout"))
        .flags(&["-std=c11"])
        .build_text("layout.c", PROGRAM)
    {
        Ok(exe) => exe,
        Err(BuildError::NoCompiler(_)) => {
            eprintln!("no cc: skipped");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let out = myrix_ctest::run(Command::new(&exe), Duration::from_secs(60));
    assert!(out.status.success(), "{}", myrix_ctest::show(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let c: HashMap<&str, Vec<usize>> = text
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap();
            (name, w.map(|x| x.parse().unwrap()).collect())
        })
        .collect();
    let mut checked = 0;
    for b in Basic::ALL {
        let Some(v) = c.get(b.name()) else { continue };
        let info = b.info();
        let dt = Datatype::basic(b);
        assert_eq!(info.extent, v[0], "sizeof {}", b.name());
        assert_eq!(dt.extent(), v[0] as isize, "extent {}", b.name());
        assert_eq!(info.align, v[1], "alignof {}", b.name());
        if let Some((_, off)) = info.index {
            assert_eq!(off, v[2], "offsetof index in {}", b.name());
            let (value, index, _) = b.pair_parts().unwrap();
            assert_eq!(dt.size(), value.size() + index.size(), "size {}", b.name());
            assert_eq!(dt.true_extent() as usize, off + index.size());
        } else {
            assert_eq!(dt.size(), v[0], "size {}", b.name());
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        c.len(),
        "a name printed by the C program is unknown"
    );
    assert!(checked >= 24, "only {checked} types printed:\n{text}");
}

#[test]
fn a_struct_type_matches_the_c_struct() {
    // struct { char c; double d[2]; short s; } on LP64: 0, 8, 24; sizeof 32.
    let t = Datatype::create_struct(
        &[1, 2, 1],
        &[0, 8, 24],
        &[
            Datatype::basic(Basic::Char),
            Datatype::basic(Basic::Double),
            Datatype::basic(Basic::Short),
        ],
    )
    .unwrap();
    assert_eq!((t.size(), t.extent(), t.true_extent()), (19, 32, 26));
    assert_eq!(t.elements(19), Some(4));
    assert_eq!(t.uniform_basic(), None);
}

//! Generator inputs that would overflow or exhaust memory are refused with a message.

use myrix_fabric::generate::{generate, GenError, Params, MAX_SWITCHES};

fn refused(kind: &str, p: Params) -> String {
    match generate(kind, &p) {
        Err(GenError::Params(m)) => m,
        other => panic!("{kind} {p:?}: expected a parameter error, got {other:?}"),
    }
}

#[test]
fn mesh_sizes_that_overflow_are_refused() {
    // 100000^4 wraps a u64: it once reported 7766279631452241920 switches.
    let m = refused(
        "mesh",
        Params {
            dims: vec![100_000; 4],
            ..Params::default()
        },
    );
    assert!(m.contains("4096"), "{m}");
    // 1000x1000 fits a usize but not the limit (it once ran for minutes).
    refused(
        "torus",
        Params {
            dims: vec![1000, 1000],
            ..Params::default()
        },
    );
}

#[test]
fn switch_counts_past_the_limit_are_refused() {
    // 65536 irregular switches once needed 32 GB for the candidate pairs.
    let m = refused(
        "irregular",
        Params {
            switches: MAX_SWITCHES + 1,
            ..Params::default()
        },
    );
    assert!(m.contains("1 to 4096"), "{m}");
    refused(
        "fattree",
        Params {
            leaves: usize::MAX,
            spines: 2,
            ..Params::default()
        },
    );
}

#[test]
fn the_limit_itself_is_built() {
    let t = generate(
        "mesh",
        &Params {
            dims: vec![64, 64],
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!(t.num_switches(), MAX_SWITCHES);
}

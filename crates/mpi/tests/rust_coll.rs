//! The Rust API's communicators and collectives between processes:
//! `examples/jacobi.rs` (a 2-D Jacobi over process rows and columns) against a
//! serial computation made here, and `examples/coll_check.rs` (every collective
//! against a serial reference, on the world, a dup, split halves and the node's
//! ranks) at 1, 2, 3 and 4 ranks under the launcher behind `myrix mpiexec`, through
//! the shared segment and with `MYRIX_MPI_COLL=p2p`; under MPICH's hydra (CI:
//! `--ignored hydra`); across two network namespaces (root, `MYRIX_NETNS=1`); and
//! the refusals in this process (a singleton). Cargo builds
//! the examples for `cargo test -p myrix-mpi`, not for `--test rust_coll` alone.

mod launching;
use launching::{example, launch_in, Namespaces};
use myrix_ctest::{have, run};
use myrix_mpi::world::{Error, ErrorClass, Op, World};
use std::process::Command;
use std::time::Duration;

/// Runs `name` at `n` ranks through the launcher with `env`; every rank's output.
fn launch(name: &str, n: u32, args: &[&str], env: &[(&str, &str)]) -> String {
    launch_in(name, n, args, env, &[])
}

/// The Jacobi iteration written plainly: the interior of an `n` × `n` grid with the
/// example's border values, `steps` steps; the last step's largest change.
fn serial_residual(n: usize, steps: usize) -> f64 {
    let m = n + 2;
    let mut u = vec![0.0f64; m * m];
    for i in 0..m {
        for j in 0..m {
            let (gi, gj) = (i as i64 - 1, j as i64 - 1);
            let edge = gi < 0 || gj < 0 || gi >= n as i64 || gj >= n as i64;
            u[i * m + j] = match (edge, gi < 0, gj < 0) {
                (false, _, _) => 0.0,
                (true, true, _) => 1.0,
                (true, false, true) => 0.5 + 0.25 * (gi as f64 / n as f64),
                _ => 0.0,
            };
        }
    }
    let mut r = 0.0f64;
    for _ in 0..steps {
        let old = u.clone();
        r = 0.0;
        for i in 1..=n {
            for j in 1..=n {
                let v = 0.25
                    * (old[(i - 1) * m + j]
                        + old[(i + 1) * m + j]
                        + old[i * m + j - 1]
                        + old[i * m + j + 1]);
                r = r.max((v - old[i * m + j]).abs());
                u[i * m + j] = v;
            }
        }
    }
    r
}

/// Rank 0's lines: the residual (bit for bit this file's serial one) and the
/// example's own check of the whole grid.
fn check_jacobi(text: &str, n: u32, what: &str) {
    let (size, steps) = (37, 60);
    let want = serial_residual(size, steps);
    let line = format!("residual={want:?}");
    let head = text
        .lines()
        .find(|l| l.starts_with("jacobi: N="))
        .unwrap_or_else(|| panic!("{what}: no result line:\n{text}"));
    assert!(
        head.contains(&format!("ranks={n} ")) && head.ends_with(&line),
        "{what}: {head:?}, want {line}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("check ok")),
        "{what}: the grid is not the serial one:\n{text}"
    );
}

#[test]
fn jacobi_at_1_2_3_4_ranks_equals_the_serial_computation() {
    for n in [1, 2, 3, 4] {
        let text = launch("jacobi", n, &["37", "60", "--check"], &[]);
        check_jacobi(&text, n, &format!("jacobi at {n}"));
    }
    let text = launch(
        "jacobi",
        4,
        &["37", "60", "--check"],
        &[("MYRIX_MPI_COLL", "p2p")],
    );
    check_jacobi(&text, 4, "jacobi at 4, point-to-point collectives");
}

fn check_coll(text: &str, n: u32, what: &str) {
    for r in 0..n {
        let ok = text.lines().any(|l| {
            l.strip_prefix(&format!("coll ok {r} "))
                .and_then(|c| c.parse::<usize>().ok())
                .is_some_and(|c| c > 100)
        });
        assert!(ok, "{what}: rank {r} did not pass:\n{text}");
    }
}

#[test]
fn every_collective_at_1_2_3_4_ranks() {
    for n in [1, 2, 3, 4] {
        let text = launch("coll_check", n, &[], &[]);
        check_coll(&text, n, &format!("coll_check at {n}"));
    }
}

#[test]
fn every_collective_over_point_to_point_and_through_slots() {
    let text = launch("coll_check", 3, &[], &[("MYRIX_MPI_COLL", "p2p")]);
    check_coll(&text, 3, "coll_check at 3, MYRIX_MPI_COLL=p2p");
    let text = launch("coll_check", 4, &[], &[("MYRIX_MPI_SHM_DIRECT", "off")]);
    check_coll(&text, 4, "coll_check at 4, MYRIX_MPI_SHM_DIRECT=off");
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn jacobi_and_collectives_under_hydra() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    for n in [2, 3] {
        let mut c = Command::new("mpiexec.hydra");
        c.args(["-n", &n.to_string()])
            .arg(example("jacobi"))
            .args(["37", "60", "--check"]);
        let o = run(c, Duration::from_secs(120));
        assert!(o.status.success(), "{o:?}");
        check_jacobi(&String::from_utf8_lossy(&o.stdout), n, "jacobi under hydra");
        let mut c = Command::new("mpiexec.hydra");
        c.args(["-n", &n.to_string()]).arg(example("coll_check"));
        let o = run(c, Duration::from_secs(240));
        assert!(o.status.success(), "{o:?}");
        check_coll(
            &String::from_utf8_lossy(&o.stdout),
            n,
            "coll_check under hydra",
        );
    }
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces rcolla<pid>, rcollb<pid>)"]
fn jacobi_and_collectives_across_two_namespaces() {
    if std::env::var("MYRIX_NETNS").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_NETNS=1 is not set (needs root to make namespaces)");
    }
    let ns = Namespaces::up("rcolla", "rcollb", "rcva", "rcvb", "10.79.31");
    // 2 ranks: one per namespace, every collective point-to-point; 4: the world
    // spans both, the node's ranks share a segment.
    for n in [2, 4] {
        let what = format!("two namespaces, {n} ranks");
        let text = launch_in("jacobi", n, &["37", "60", "--check"], &[], &ns.0);
        check_jacobi(&text, n, &what);
        let text = launch_in("coll_check", n, &[], &[], &ns.0);
        check_coll(&text, n, &what);
    }
}

fn class<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorClass {
    match r {
        Err(e) => e.class(),
        Ok(v) => panic!("accepted: {v:?}"),
    }
}

/// The refusals a program can meet, in this process as a singleton: each is an
/// error with the C library's class, none panics, and the communicators work after.
#[test]
fn refusals_are_errors_with_their_class() {
    let mut w = World::init().expect("a singleton");
    let mut d = w.dup().expect("dup");
    assert_eq!((d.rank(), d.size()), (0, 1));
    assert_eq!(class(d.bcast(1, &mut [0u8; 4])), ErrorClass::Root);
    assert_eq!(
        class(d.reduce(2, &[1i32], &mut [0], Op::Sum)),
        ErrorClass::Root
    );
    assert_eq!(
        class(d.allreduce(&[1.5f32], &mut [0.0], Op::Bor)),
        ErrorClass::Op
    );
    assert_eq!(
        class(d.allreduce(&[1u8; 3], &mut [0; 2], Op::Sum)),
        ErrorClass::Arg
    );
    assert_eq!(class(d.allgather(&[1u16; 2], &mut [0; 3])), ErrorClass::Arg);
    assert_eq!(class(d.gather(0, &[1u64; 2], &mut [0; 1])), ErrorClass::Arg);
    assert_eq!(
        class(d.scatter(0, &[1u64; 3], &mut [0; 2])),
        ErrorClass::Arg
    );
    assert_eq!(
        class(d.gatherv(0, &[1u8], &mut [0; 4], &[1, 2])),
        ErrorClass::Arg
    );
    assert_eq!(
        class(d.alltoallv(&[1u8; 2], &[2], &mut [0; 1], &[1])),
        ErrorClass::Arg
    );
    assert_eq!(
        class(d.allgatherv(&[1u8], &mut [0; 1], &[usize::MAX])),
        ErrorClass::Arg
    );
    assert_eq!(class(d.send(1, 0, b"x")), ErrorClass::Rank);
    // Split: a color joins, None does not.
    assert!(w.split(None, 0).expect("split").is_none());
    let mut s = w.split(Some(7), 3).expect("split").expect("a member");
    assert_eq!(s.allreduce_one(5u64, Op::Prod).expect("allreduce"), 5);
    let shared = w.split_shared(0).expect("split_shared");
    assert_eq!(shared.size(), 1);
    // Another communicator's point-to-point inside a scope is busy, not a panic.
    let busy = w
        .scope(|_| s.send(0, 1, b"x").err().map(|e| e.class()))
        .expect("scope");
    assert_eq!(busy, Some(ErrorClass::Other));
    // A closure op that does not commute, alone: the input itself.
    let mut out = [[0u32; 2]; 2];
    d.allreduce_with(&[[1, 2], [3, 4]], &mut out, false, |a, b| {
        for (x, y) in a.iter().zip(b.iter_mut()) {
            y[0] = y[0].wrapping_add(x[0]);
        }
    })
    .expect("allreduce_with");
    assert_eq!(out, [[1, 2], [3, 4]]);
    d.barrier().expect("barrier after the refusals");
    w.barrier().expect("world barrier");
    // Communicators kept past finalize fail cleanly.
    w.finalize().expect("finalize");
    assert!(matches!(d.barrier(), Err(Error::Finalized)));
    assert!(matches!(s.send(0, 1, b"late"), Err(Error::Finalized)));
}

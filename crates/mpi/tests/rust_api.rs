//! The Rust API (`myrix_mpi::World`) between processes: `examples/ring.rs` (a token
//! round the ranks, a nonblocking halo exchange, a probed message, a barrier, a
//! ping-pong) under `myrix mpiexec`'s launcher at 1, 2 and 4 ranks, alone, under
//! MPICH's hydra (CI: `--ignored hydra`), Slurm (CI, `MYRIX_SLURM=1`) and across two
//! network namespaces (root, `MYRIX_NETNS=1`); and its refusals in this process (a
//! singleton). Cargo builds the example for `cargo test -p myrix-mpi`, not for
//! `--test rust_api` alone.

mod launching;
use launching::Namespaces;
use myrix_ctest::{have, run};
use myrix_mpi::p2p::P2pError;
use myrix_mpi::world::{Error, World, ANY_SOURCE};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn example() -> PathBuf {
    launching::example("ring")
}

/// Every rank of `n` printed `ring ok <rank>`, rank 0 the ring's line with the right
/// sum over `nodes` nodes, and (from 2 ranks) one ping-pong line with a time.
fn check(text: &str, n: u32, nodes: u32, what: &str) {
    eprintln!("{what}:\n{text}");
    for r in 0..n {
        assert!(
            text.lines().any(|l| l == format!("ring ok {r}")),
            "{what}: rank {r} did not finish:\n{text}"
        );
    }
    let sum = u64::from(n) * u64::from(n + 1) / 2;
    let want = format!("ring: the token went round {n} ranks on {nodes} node(s): [{sum}, {n}]");
    assert!(
        text.lines().any(|l| l == want),
        "{what}: no {want:?}:\n{text}"
    );
    let pings: Vec<&str> = text.lines().filter(|l| l.starts_with("pingpong")).collect();
    if n < 2 {
        assert!(pings.is_empty(), "{what}: {pings:?}");
        return;
    }
    assert_eq!(pings.len(), 1, "{what}:\n{text}");
    let us: f64 = pings[0]
        .strip_prefix("pingpong 8 B: ")
        .and_then(|r| r.split_once(" us one way"))
        .and_then(|(t, _)| t.parse().ok())
        .unwrap_or_else(|| panic!("{what}: bad line {:?}", pings[0]));
    assert!(us > 0.0 && us.is_finite(), "{what}: {us}");
}

/// Runs the ring at `n` ranks through the launcher behind `myrix mpiexec`, in
/// `netns` if given.
fn launch(n: u32, netns: &[String], args: &[&str]) -> String {
    launching::launch_in("ring", n, args, &[], netns)
}

#[test]
fn ring_under_myrix_mpiexec_at_1_2_4_ranks() {
    for n in [1, 2, 4] {
        let text = launch(n, &[], &["200"]);
        check(&text, n, 1, &format!("myrix mpiexec -n {n}"));
    }
}

#[test]
fn ring_alone() {
    let mut c = Command::new(example());
    c.env_remove("PMI_FD").env_remove("PMI_PORT");
    let o = run(c, Duration::from_secs(60));
    assert!(o.status.success(), "{o:?}");
    check(&String::from_utf8_lossy(&o.stdout), 1, 1, "singleton");
}

#[test]
#[ignore = "needs MPICH's hydra (apt-get install mpich); .ci/run runs it"]
fn ring_under_hydra() {
    if !have("mpiexec.hydra") {
        panic!("skipped: mpiexec.hydra is not installed (apt-get install mpich)");
    }
    for n in [2, 3] {
        let mut c = Command::new("mpiexec.hydra");
        c.args(["-n", &n.to_string()]).arg(example()).arg("200");
        let o = run(c, Duration::from_secs(120));
        assert!(o.status.success(), "{o:?}");
        check(&String::from_utf8_lossy(&o.stdout), n, 1, "hydra");
    }
}

#[test]
#[ignore = "needs a running one-node Slurm (.ci/slurm.sh up); .ci/run runs it with MYRIX_SLURM=1"]
fn ring_under_slurm() {
    if std::env::var("MYRIX_SLURM").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_SLURM=1 is not set (no Slurm from .ci/slurm.sh up)");
    }
    let mut c = Command::new("srun");
    c.args(["--mpi=pmi2", "-O", "-n", "3"])
        .arg(example())
        .arg("200");
    let o = run(c, Duration::from_secs(120));
    assert!(o.status.success(), "{o:?}");
    check(&String::from_utf8_lossy(&o.stdout), 3, 1, "slurm");
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces rra<pid>, rrb<pid>)"]
fn ring_across_two_namespaces() {
    if std::env::var("MYRIX_NETNS").as_deref() != Ok("1") {
        panic!("skipped: MYRIX_NETNS=1 is not set (needs root to make namespaces)");
    }
    let ns = Namespaces::up("rra", "rrb", "rva", "rvb", "10.79.0");
    // 2 ranks: one per namespace (the network only); 4: shared memory inside each.
    for n in [2, 4] {
        let text = launch(n, &ns.0, &["200"]);
        check(&text, n, 2, &format!("two namespaces, {n} ranks"));
    }
}

/// The refusals a program can meet, in this process as a singleton: none panics.
#[test]
fn refusals_are_errors() {
    let mut w = World::init().expect("a singleton");
    assert_eq!((w.rank(), w.size()), (0, 1));
    assert!(matches!(
        w.send(1, 0, b"x"),
        Err(Error::NoSuchRank { rank: 1, size: 1 })
    ));
    assert!(matches!(
        w.recv(Some(3), None, &mut [0u8; 4]),
        Err(Error::NoSuchRank { rank: 3, .. })
    ));
    // A 6-byte message is not a whole number of u32s.
    let r = w.isend_vec(0, 5, vec![7u8; 6]).expect("isend");
    let mut four = [0u32; 4];
    assert!(matches!(
        w.recv_pod(ANY_SOURCE, Some(5), &mut four),
        Err(Error::Partial { len: 6, elem: 4 })
    ));
    assert_eq!(w.wait_vec(r).expect("wait").1, vec![7u8; 6]);
    // Truncation: 16 bytes into 8.
    let r = w.isend_vec(0, 6, (0..16).collect()).expect("isend");
    let mut eight = [0u8; 8];
    match w.recv(Some(0), Some(6), &mut eight) {
        Err(Error::P2p(P2pError::Truncated { len: 16, cap: 8 })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(eight, [0, 1, 2, 3, 4, 5, 6, 7]);
    w.wait_vec(r).expect("wait");
    // The probe reports the whole length; recv_vec takes any length.
    w.send_pod(0, 8, &[1.0f64, 2.0, 3.0]).expect("send to self");
    assert_eq!(w.probe(None, Some(8)).expect("probe").len, 24);
    let (v, s) = w.recv_vec::<f64>(Some(0), None).expect("recv_vec");
    assert_eq!((v, s.tag), (vec![1.0, 2.0, 3.0], 8));
    assert!(w.iprobe(None, None).expect("iprobe").is_none());
    // A scope's receive that nothing matches is cancelled at the scope's end.
    let mut never = [0u8; 4];
    w.scope(|s| s.irecv(Some(0), Some(99), &mut never).map(drop))
        .expect("scope")
        .expect("irecv");
    w.barrier().expect("barrier alone");
    w.finalize().expect("finalize");
}

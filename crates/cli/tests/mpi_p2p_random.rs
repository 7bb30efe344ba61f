//! Randomized point-to-point over the whole stack: `crates/mpiapi/tests/c/p2p_random.c`
//! (a seeded schedule every rank derives alike; random sources, tags, sizes across the
//! short, pool and rendezvous protocols, communicators, posting orders, wildcards,
//! probes, matched probes, cancels, vector datatypes; every byte, status, count and
//! MPI's non-overtaking rule checked) built with `myrix mpicc` and run as separate
//! processes through the C library and the real channels: under `myrix mpiexec` on
//! shared memory at 2, 4 and 8 ranks with several seeds, with the channel's tunables
//! shrunk (tiny queues and pool, a low eager limit), under MPICH's hydra, the program
//! itself checked under MPICH, and across two network namespaces with loss
//! (`#[ignore]`d: root and `MYRIX_NETNS=1`). Needs `cc`.

mod common;

use common::mpi::{build, myrix, run, show};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

/// `p2p_random.c` built with `myrix mpicc`, once.
fn p2p_random() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("p2p_random"))
}

/// `o` succeeded and each of its `n` ranks printed "p2p_random ok <rank> <received>
/// <bytes> <ordered>"; returns the messages received in all.
fn every_rank_ok(o: &Output, n: usize, what: &str) -> u64 {
    assert!(o.status.success(), "{what}: {}", show(o));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut total = 0;
    for r in 0..n {
        let line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("p2p_random ok {r} ")))
            .unwrap_or_else(|| panic!("{what}: rank {r} did not finish: {}", show(o)));
        total += line
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{what}: rank {r}: {line:?}"));
    }
    total
}

/// Runs `p2p_random SEED ROUNDS` under `myrix mpiexec -n N` with `env`, at most 120 s.
fn mpiexec(n: usize, seed: &str, rounds: &str, env: &[(&str, &str)]) -> Output {
    let mut c = myrix();
    c.envs(env.iter().copied())
        .args(["mpiexec", "-n", &n.to_string()])
        .arg(p2p_random())
        .args([seed, rounds]);
    run(c, Duration::from_secs(120))
}

/// Shared memory (the postboxes and pool, the rendezvous) at 2 and 4 ranks with three
/// seeds and 8 ranks (oversubscribed on two cores: fewer rounds) with two.
#[test]
fn random_point_to_point_over_shared_memory() {
    for (n, seeds, rounds) in [
        (2, &["1", "2", "20261129"][..], "30"),
        (4, &["1", "2", "20261129"][..], "30"),
        (8, &["3", "4"][..], "8"),
    ] {
        for seed in seeds {
            let what = format!("n={n} seed {seed}");
            let got = every_rank_ok(&mpiexec(n, seed, rounds, &[]), n, &what);
            assert!(got > 0, "{what}: no message received");
        }
    }
}

/// The same with the channel shrunk: 8 postboxes a queue, a pool of four large blocks,
/// messages past 4 KiB by rendezvous, so queues wrap, the pool runs dry and most sizes
/// take the long protocols.
#[test]
fn random_point_to_point_with_small_queues_pool_and_eager_limit() {
    let env = [
        ("MYRIX_MPI_QUEUE", "8"),
        ("MYRIX_MPI_POOL", "16384"),
        ("MYRIX_MPI_EAGER", "4096"),
    ];
    for n in [2usize, 4] {
        for seed in ["5", "6"] {
            let what = format!("small channel, n={n} seed {seed}");
            every_rank_ok(&mpiexec(n, seed, "20", &env), n, &what);
        }
    }
}

/// Started by MPICH's hydra (PMI-1) with 4 ranks, when it is installed.
#[test]
fn random_point_to_point_under_hydra() {
    if !common::mpi::have("mpiexec.hydra") {
        eprintln!("p2p_random under hydra: skipped: no mpiexec.hydra");
        return;
    }
    let mut c = Command::new("mpiexec.hydra");
    c.args(["-n", "4"]).arg(p2p_random()).args(["7", "20"]);
    every_rank_ok(&run(c, Duration::from_secs(120)), 4, "hydra -n 4");
}

/// The program itself is correct MPI: built with MPICH's `mpicc.mpich` and run under
/// `mpiexec.mpich` it passes the same seeds (when MPICH is installed).
#[test]
fn the_program_passes_under_mpich() {
    if !common::mpi::have("mpicc.mpich") || !common::mpi::have("mpiexec.mpich") {
        eprintln!("p2p_random under MPICH: skipped: no mpicc.mpich or mpiexec.mpich");
        return;
    }
    let exe = myrix_ctest::Compiler::command(
        "mpicc.mpich",
        &[],
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("p2p-random-mpich"),
    )
    .flags(&["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
    .build(&common::mpi::c_source("p2p_random"));
    for seed in ["1", "20261129"] {
        let mut c = Command::new("mpiexec.mpich");
        c.env_remove("PMI_FD")
            .env_remove("PMI_PORT")
            .args(["-n", "4"])
            .arg(&exe)
            .args([seed, "30"]);
        every_rank_ok(&run(c, Duration::from_secs(120)), 4, "MPICH -n 4");
    }
}

/// Two namespaces of this process's own (`pra<pid>`, `prb<pid>`, veths `pva<pid>` and
/// `pvb<pid>`, 10.83.0.0/24) with `.ci/netns.sh`'s loss, duplication and reordering,
/// deleted when dropped.
struct Namespaces([String; 2]);

impl Namespaces {
    fn up() -> Namespaces {
        let pid = std::process::id();
        let ns = [format!("pra{pid}"), format!("prb{pid}")];
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &ns[0])
            .env("MYRIX_NETNS_B", &ns[1])
            .env("MYRIX_NETNS_VA", format!("pva{pid}"))
            .env("MYRIX_NETNS_VB", format!("pvb{pid}"))
            .env("MYRIX_NETNS_NET", "10.83.0")
            .env("MYRIX_NETNS_LOSS", "2")
            .env("MYRIX_NETNS_DUP", "1")
            .env("MYRIX_NETNS_REORDER", common::reorder_share())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Namespaces(ns)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Across two namespaces with loss, duplication and reordering on the link: 2 ranks
/// (the network only) and 4 (two a namespace: shared memory inside, the network
/// across) with the controller the library picks, and 2 over raw Ethernet
/// (`MYRIX_MPI_NET=eth`, one rank an interface), two seeds each.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces pra<pid> and prb<pid>)"]
fn random_point_to_point_across_namespaces_with_loss() {
    if common::netns_skipped("p2p_random") {
        return;
    }
    let exe = p2p_random();
    let ns = Namespaces::up();
    for (net, n) in [("auto", 2usize), ("auto", 4), ("eth", 2)] {
        for seed in ["8", "9"] {
            let mut c = myrix();
            c.env("MYRIX_MPI_NET", net)
                .args(["mpiexec", "--netns", &ns.0.join(","), "-n", &n.to_string()])
                .arg(exe)
                .args([seed, "12"]);
            let what = format!("--netns, {net}, n={n} seed {seed}");
            every_rank_ok(&run(c, Duration::from_secs(180)), n, &what);
        }
    }
    drop(ns);
}

//! MPI between two network namespaces (and over raw Ethernet, a star of them), with
//! `.ci/netns.sh`'s loss, duplication and reordering on the link: point-to-point,
//! one-sided and collective C programs under `myrix mpiexec --netns`, every byte
//! checked. Each test makes namespaces of its own, named by process id, and deletes
//! them. `.ci/run` sets `MYRIX_NETNS=1` and runs these tests with `--ignored`; a plain
//! `cargo test` lists them as ignored, with the reason.

mod common;

use common::mpi::{c_source, mpicc, myrix as myrix_cmd, run};
use common::reorder_share;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Two namespaces of this test process's own (`mma<pid>`, `mmb<pid>`, veths `mva<pid>`
/// and `mvb<pid>`, 10.78.0.0/24; named by process id so two runs on one machine never
/// take each other's) with
/// loss, duplication and reordering on the veth (`.ci/netns.sh`'s: 2%, 1%, and one frame
/// in ten through its slow class; `MYRIX_NETNS_REORDER` sets that share, 0 turns it
/// off), deleted when dropped. The reordering used to make RSM collapse (docs/rsm-net.md,
/// "Reordering"); it is on by default since the engine resends only the oldest frame.
struct MpiNamespaces;

/// This process's names: namespace a, namespace b, veth in a (at most 15 bytes each,
/// the kernel's limit for interface names).
struct MpiNames {
    ns: [String; 2],
    va: String,
    vb: String,
}

fn mpi_names() -> &'static MpiNames {
    static NAMES: std::sync::OnceLock<MpiNames> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let pid = std::process::id();
        MpiNames {
            ns: [format!("mma{pid}"), format!("mmb{pid}")],
            va: format!("mva{pid}"),
            vb: format!("mvb{pid}"),
        }
    })
}

impl MpiNamespaces {
    fn up() -> MpiNamespaces {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &mpi_names().ns[0])
            .env("MYRIX_NETNS_B", &mpi_names().ns[1])
            .env("MYRIX_NETNS_VA", &mpi_names().va)
            .env("MYRIX_NETNS_VB", &mpi_names().vb)
            .env("MYRIX_NETNS_NET", "10.78.0")
            .env("MYRIX_NETNS_LOSS", "2")
            .env("MYRIX_NETNS_DUP", "1")
            .env("MYRIX_NETNS_REORDER", reorder_share())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        eprint!("{}", String::from_utf8_lossy(&o.stdout));
        MpiNamespaces
    }

    /// Frames namespace a's veth sent through `.ci/netns.sh`'s slow class (HTB class
    /// 1:20) so far; `None` where the script used netem (no such class).
    fn slow_class_packets(&self) -> Option<u64> {
        let o = Command::new("ip")
            .args(["netns", "exec", &mpi_names().ns[0], "tc", "-s", "class"])
            .args(["show", "dev", &mpi_names().va, "classid", "1:20"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&o.stdout);
        let sent = text.lines().find_map(|l| l.trim().strip_prefix("Sent "))?;
        // "Sent 117702910 bytes 88323 pkt (dropped …"
        sent.split_whitespace().nth(2)?.parse().ok()
    }

    /// Packets received by namespace a's veth so far.
    fn rx_packets(&self) -> u64 {
        let o = Command::new("ip")
            .args(["netns", "exec", &mpi_names().ns[0], "cat"])
            .arg(format!(
                "/sys/class/net/{}/statistics/rx_packets",
                mpi_names().va
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
    }
}

impl Drop for MpiNamespaces {
    fn drop(&mut self) {
        for ns in &mpi_names().ns {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// `p2p.c` built with `myrix mpicc`.
fn mpi_p2p_program() -> std::path::PathBuf {
    mpi_c_program("p2p")
}

/// Runs `cmd` with a time limit; checks every rank of `n` printed "p2p ok <rank>".
fn expect_p2p_ok(cmd: Command, n: u32, what: &str) {
    expect_ranks_ok(cmd, "p2p", n, what);
}

/// MPI point-to-point (`p2p.c`: every byte, MPI's matching rules) between ranks in two
/// network namespaces with loss and duplication on the link: `myrix mpiexec --netns`
/// at 2 ranks and 4 (two per namespace: shared memory inside, the network across),
/// and MPICH's hydra with `ip netns exec` when it is installed.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mma<pid> and mmb<pid>)"]
fn mpi_p2p_across_namespaces_with_loss() {
    if common::netns_skipped("mpi") {
        return;
    }
    let exe = mpi_p2p_program();
    let ns = MpiNamespaces::up();
    let netns = mpi_names().ns.join(",");
    // A namespace that does not exist: one clear error, no rank started.
    let o = myrix_cmd()
        .args(["mpiexec", "--netns"])
        .arg(format!("{},myrix-no-such-ns", mpi_names().ns[0]))
        .args(["-n", "2"])
        .arg(&exe)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("\"myrix-no-such-ns\"") && err.contains("no such network namespace"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "no rank ran");
    let slow_before = ns.slow_class_packets();
    for n in [2u32, 4] {
        let before = ns.rx_packets();
        let mut c = myrix_cmd();
        c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
            .arg(&exe);
        expect_p2p_ok(c, n, &format!("myrix mpiexec --netns, {n} ranks"));
        // Hundreds of frames crossed the veth (a few hundred KiB at least).
        assert!(
            ns.rx_packets() > before + 100,
            "the ranks did not talk across"
        );
    }
    // And the slow class reordered some of them (where there is one).
    if let (Some(before), Some(after)) = (slow_before, ns.slow_class_packets()) {
        assert!(
            reorder_share() == "0" || after > before + 10,
            "no frame went through the slow class"
        );
    }
    if Command::new("mpiexec.hydra")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        for per in [1u32, 2] {
            let mut c = Command::new("mpiexec.hydra");
            for (i, n) in mpi_names().ns.iter().enumerate() {
                if i > 0 {
                    c.arg(":");
                }
                c.args(["-n", &per.to_string(), "ip", "netns", "exec", n])
                    .arg(&exe);
            }
            expect_p2p_ok(c, 2 * per, &format!("hydra, {per} rank(s) per namespace"));
        }
    } else {
        eprintln!("mpi: hydra part skipped: no mpiexec.hydra");
    }
    drop(ns);
}

/// A C program of `crates/mpiapi/tests/c/` built with `myrix mpicc -O1`.
fn mpi_c_program(name: &str) -> std::path::PathBuf {
    mpicc("mpi-netns", &["-O1"]).build(&c_source(name))
}

/// Runs `cmd` (at most 180 s); checks it succeeded and every rank of `n` printed
/// "`word` ok <rank>".
fn expect_ranks_ok(mut cmd: Command, word: &str, n: u32, what: &str) {
    cmd.env_remove("PMI_FD").env_remove("PMI_PORT");
    let o = run(cmd, Duration::from_secs(180));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what}: {}\n{out}\n{err}", o.status);
    for r in 0..n {
        assert!(
            out.lines().any(|l| {
                let l = l.trim();
                l == format!("{word} ok {r}") || l.starts_with(&format!("{word} ok {r} "))
            }),
            "{what}: rank {r} did not finish:\n{out}\n{err}"
        );
    }
}

/// One-sided communication between two namespaces with 2% loss and 1% duplication
/// on the veth: `rma.c` (fence, locks, counters, a CAS lock, PSCW, refusals of
/// shared and dynamic windows over the world) and `rma_random.c` (random traffic
/// against a serial reference) on 2 ranks (one per namespace), 3 and 4 (ranks of
/// one namespace also reach each other through shared memory).
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mma<pid> and mmb<pid>)"]
fn mpi_one_sided_across_namespaces_with_loss() {
    if common::netns_skipped("mpi rma") {
        return;
    }
    let rma = mpi_c_program("rma");
    let random = mpi_c_program("rma_random");
    let ns = MpiNamespaces::up();
    let netns = mpi_names().ns.join(",");
    for n in [2u32, 3, 4] {
        let before = ns.rx_packets();
        let mut c = myrix_cmd();
        c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
            .arg(&rma);
        expect_ranks_ok(c, "rma", n, &format!("rma.c, {n} ranks across namespaces"));
        assert!(
            ns.rx_packets() > before + 100,
            "the ranks did not talk across"
        );
        let mut c = myrix_cmd();
        c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
            .arg(&random)
            .arg(n.to_string());
        expect_ranks_ok(
            c,
            "rma_random",
            n,
            &format!("rma_random.c, {n} ranks across namespaces"),
        );
    }
    drop(ns);
}

/// Non-contiguous data between nodes (session 31): `dtype_random.c` (random vectors
/// with negative strides, shuffled indexed blocks, structs, resized types with holes,
/// every protocol up to 1 MiB, every byte checked against the map kept by hand) on 2
/// ranks (one per namespace) and 3, across the lossy link: the gather into the
/// network window's staged puts and the scatter out of the pool.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mma<pid> and mmb<pid>)"]
fn mpi_derived_types_across_namespaces_with_loss() {
    if common::netns_skipped("mpi derived types") {
        return;
    }
    let exe = mpi_c_program("dtype_random");
    let ns = MpiNamespaces::up();
    let netns = mpi_names().ns.join(",");
    for (n, seed) in [(2u32, "31"), (3, "20261129")] {
        let before = ns.rx_packets();
        let mut c = myrix_cmd();
        c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
            .arg(&exe)
            .args([seed, "25"]);
        expect_ranks_ok(
            c,
            "dtype_random",
            n,
            &format!("dtype_random.c, {n} ranks across namespaces"),
        );
        assert!(
            ns.rx_packets() > before + 100,
            "the ranks did not talk across"
        );
    }
    drop(ns);
}

/// Every blocking collective (`coll_ranks.c`: every root, split communicators, a
/// non-commutative user op, in place, a strided type), every nonblocking one
/// (`icoll.c`) and intercommunicators (`intercomm.c`) on 2, 3 and 4 ranks spread over
/// two namespaces with loss and duplication: over point-to-point, every result
/// checked on every rank.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mma<pid> and mmb<pid>)"]
fn mpi_collectives_across_namespaces_with_loss() {
    if common::netns_skipped("mpi collectives") {
        return;
    }
    let progs =
        ["coll_ranks", "icoll", "intercomm", "comm_group", "pcoll"].map(|p| (p, mpi_c_program(p)));
    let ns = MpiNamespaces::up();
    let netns = mpi_names().ns.join(",");
    for n in [2u32, 3, 4] {
        for (word, exe) in &progs {
            let before = ns.rx_packets();
            let mut c = myrix_cmd();
            c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
                .arg(exe);
            expect_ranks_ok(
                c,
                word,
                n,
                &format!("{word}.c, {n} ranks across namespaces"),
            );
            assert!(
                ns.rx_packets() > before,
                "{word}: the ranks did not talk across"
            );
        }
    }
    // Random collectives against a serial reference, through point-to-point across
    // the lossy link (shared memory cannot span namespaces); on 3 and 4 ranks (2 + 1,
    // 2 + 2) the collectives by levels, the v-forms and nonblocking forms among them.
    let random = mpi_c_program("coll_random");
    for n in [2u32, 3, 4] {
        let mut c = myrix_cmd();
        c.args(["mpiexec", "--netns", &netns, "-n", &n.to_string()])
            .arg(&random)
            .args(["21", "300"]);
        expect_ranks_ok(
            c,
            "coll_random",
            n,
            &format!("coll_random.c, {n} ranks across namespaces"),
        );
    }
    drop(ns);
}

/// UDP datagrams namespace `ns` received so far (`Udp: InDatagrams` of
/// `/proc/net/snmp`, which is per namespace).
fn udp_in_datagrams(ns: &str) -> u64 {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "cat", "/proc/net/snmp"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
    let (head, vals) = (udp.next().unwrap(), udp.next().unwrap());
    let i = head
        .split_whitespace()
        .position(|w| w == "InDatagrams")
        .unwrap();
    vals.split_whitespace().nth(i).unwrap().parse().unwrap()
}

/// `k` network namespaces of this process (`me<i>-<pid>`), each joined by a veth
/// (`mq<i>-<pid>` inside) to a bridge in a hub namespace (`meh-<pid>`), 10.79.<pid %
/// 200>.0/24, with `.ci/netns.sh`'s loss (2 %) and duplication (1 %) on raw MX frames
/// both ways at each rank namespace's veth (netem, else nftables with counters):
/// raw Ethernet reaches one process per interface, so a job of `k` ranks over `eth`
/// needs `k` namespaces on one segment. Deleted when dropped.
struct EthStar {
    ns: Vec<String>,
    hub: String,
    /// The impairment is nftables' (its counters can be read), not netem's.
    nft: bool,
}

impl EthStar {
    fn up(k: usize) -> EthStar {
        let pid = std::process::id();
        let mut s = EthStar {
            ns: (0..k).map(|i| format!("me{i}-{pid}")).collect(),
            hub: format!("meh-{pid}"),
            nft: false,
        };
        let sh = |script: &str, args: &[&str]| {
            let o = Command::new("bash")
                .args(["-euc", script, "sh"])
                .args(args)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{script}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let br = format!("mbr-{pid}");
        sh(
            "ip netns add $1; ip -n $1 link add $2 type bridge; ip -n $1 link set $2 up",
            &[&s.hub, &br],
        );
        let net = format!("10.79.{}", pid % 200 + 20);
        for (i, ns) in s.ns.clone().iter().enumerate() {
            let (v, p) = (format!("mq{i}-{pid}"), format!("mp{i}-{pid}"));
            let ip = format!("{net}.{}/24", i + 1);
            sh(
                "ip netns add $1; ip link add $2 type veth peer name $3
                 ip link set $2 netns $1; ip link set $3 netns $4
                 ip -n $4 link set $3 master $5; ip -n $4 link set $3 up
                 ip -n $1 addr add $6 dev $2; ip -n $1 link set lo up; ip -n $1 link set $2 up",
                &[ns, &v, &p, &s.hub, &br, &ip],
            );
            let how = sh(
                r#"if ip netns exec $1 tc qdisc add dev $2 root netem loss 2% duplicate 1% 2>/dev/null
                then echo netem; else ip netns exec $1 nft -f - <<NFT
table netdev myrixe {
  chain in {
    type filter hook ingress device "$2" priority 0; policy accept;
    ether type 0x86df numgen random mod 100 < 2 counter drop
  }
  chain out {
    type filter hook egress device "$2" priority 0; policy accept;
    ether type 0x86df numgen random mod 100 < 1 counter dup to "$2"
  }
}
NFT
                echo nft; fi"#,
                &[ns, &v],
            );
            s.nft = how.trim() == "nft";
        }
        s
    }

    /// Raw MX frames nftables dropped and duplicated so far, over all namespaces.
    fn impaired(&self) -> (u64, u64) {
        let (mut drop, mut dup) = (0, 0);
        for ns in &self.ns {
            let o = Command::new("ip")
                .args([
                    "netns", "exec", ns, "nft", "list", "table", "netdev", "myrixe",
                ])
                .output()
                .unwrap();
            for l in String::from_utf8_lossy(&o.stdout).lines() {
                let n = l
                    .split_whitespace()
                    .skip_while(|w| *w != "packets")
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
                if l.contains(" drop") {
                    drop += n;
                } else if l.contains(" dup ") {
                    dup += n;
                }
            }
        }
        (drop, dup)
    }
}

impl Drop for EthStar {
    fn drop(&mut self) {
        for ns in self.ns.iter().chain([&self.hub]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// MPI point-to-point (`p2p.c`) between namespaces over RSM's raw-Ethernet controller
/// (`MYRIX_MPI_NET=eth`) with loss and duplication: 2 ranks across the reordering pair
/// of [`MpiNamespaces`], 4 ranks in four namespaces on one bridge ([`EthStar`]); no UDP
/// datagram reaches a rank's namespace while they run (the channel is not on `udp`).
/// Refused with a clear error: `eth` for ranks sharing an interface (4 ranks in two
/// namespaces) and a bad `MYRIX_MPI_NET`.
#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mma<pid>, mmb<pid>, me<i>-<pid>, meh-<pid>)"]
fn mpi_p2p_over_raw_ethernet_across_namespaces_with_loss() {
    if common::netns_skipped("mpi eth") {
        return;
    }
    let exe = mpi_p2p_program();
    let ns = MpiNamespaces::up();
    let netns = mpi_names().ns.join(",");
    let (rx, udp) = (ns.rx_packets(), udp_in_datagrams(&mpi_names().ns[0]));
    let mut c = myrix_cmd();
    c.args(["mpiexec", "--netns", &netns, "-n", "2"])
        .arg(&exe)
        .env("MYRIX_MPI_NET", "eth");
    expect_p2p_ok(c, 2, "MYRIX_MPI_NET=eth, 2 ranks in two namespaces");
    assert!(ns.rx_packets() > rx + 100, "the ranks did not talk across");
    assert_eq!(
        udp_in_datagrams(&mpi_names().ns[0]),
        udp,
        "UDP datagrams reached the namespace: not raw Ethernet"
    );
    for (net, n, why) in [
        ("eth", "4", "share the interface"),
        (
            "ethernet",
            "2",
            "MYRIX_MPI_NET=\"ethernet\": must be eth, udp or auto",
        ),
    ] {
        let o = myrix_cmd()
            .args(["mpiexec", "--netns", &netns, "-n", n])
            .arg(&exe)
            .env("MYRIX_MPI_NET", net)
            .env_remove("PMI_FD")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "MYRIX_MPI_NET={net} -n {n} ran");
        assert!(err.contains(why), "MYRIX_MPI_NET={net} -n {n}: {err}");
    }
    drop(ns);
    let star = EthStar::up(4);
    let before = star.impaired();
    let udp = udp_in_datagrams(&star.ns[0]);
    let mut c = myrix_cmd();
    c.args(["mpiexec", "--netns", &star.ns.join(","), "-n", "4"])
        .arg(&exe)
        .env("MYRIX_MPI_NET", "eth");
    expect_p2p_ok(c, 4, "MYRIX_MPI_NET=eth, 4 ranks in four namespaces");
    assert_eq!(udp_in_datagrams(&star.ns[0]), udp, "not raw Ethernet");
    if star.nft {
        let after = star.impaired();
        assert!(
            after.0 > before.0 && after.1 > before.1,
            "no frame lost or duplicated: {before:?} -> {after:?}"
        );
    }
    drop(star);
}

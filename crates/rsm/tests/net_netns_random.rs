//! The randomized RSM workload (`model`: thousands of puts, gets, scalars of every width
//! with repeat counts, scatter/gather lists, implicit and explicit barriers, refusals
//! and signals) between processes in two network namespaces, over `udp` and over `eth`,
//! with `.ci/netns.sh`'s loss, duplication and reordering on the veth joining them.
//!
//! An exporter process in namespace A publishes one segment and does nothing but count
//! the signals it is sent (one-sided: its memory is written by its progress thread).
//! Importer processes in namespace B (over `udp` two processes, nodes 2 and 3; over
//! `eth` one, since a node is an interface and B has one) run one importer thread per
//! stripe, each owning its stripe so its model is exact. The exporter replays every
//! stripe's operations from the seed alone: once it has every signal the replay says
//! each node posted (and no more) it signals all its importers, each of which waits
//! for that before it disconnects; when they have exited it compares its memory with
//! the models byte for byte. The seed is printed; `RSM_SEED=<seed>` reruns it.
//!
//! Namespaces, veths and the subnet are this process's own (`mza<pid>`, `mzb<pid>`,
//! 10.84.0.0/24), made by `.ci/netns.sh up` and deleted by a guard, also on panic;
//! children are killed by a guard. Ignored unless run as root with `--ignored` and
//! `MYRIX_NETNS=1`, as `.ci/run` does.

mod model;
mod netns_support;

use netns_support::{lines, mac, Child, Namespaces};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use myrix_rsm::{Controller, ExportFlags, NodeId, Perm, SegmentId};

const PLAN: model::Plan = model::Plan {
    stripe: 16 * 1024,
    ops: 3000,
    big: 16 * 1024,
};
/// The most a whole run (one controller kind) may take before the test gives up,
/// killing its children: a hang is a failure, not a stuck CI.
const RUN_LIMIT: Duration = Duration::from_secs(150);

/// This process's namespaces and veth ends: (A, B, veth in A, veth in B).
fn names() -> [String; 4] {
    netns_support::names("mz")
}

const NET: &str = "10.84.0";

/// Parses a comma-separated list of numbers from the environment.
fn list(var: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect()
}

fn env_u64(var: &str) -> u64 {
    std::env::var(var).unwrap().parse().unwrap()
}

/// The exporter: publishes, prints the id, counts signals by sender until it has all
/// the replayed models say were posted, then signals every importer back; when the
/// parent says CHECK (the importers have exited) it compares its memory with the
/// models.
fn exporter() {
    let c = Controller::get(&std::env::var("KIND").unwrap()).unwrap();
    let seed = env_u64("SEED");
    // Stripe k's importer is node owners[k].
    let owners = list("OWNERS");
    let e = c
        .export_create(PLAN.stripe * owners.len(), ExportFlags::default())
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    println!("ID {:08x}", id.0);
    std::io::stdout().flush().unwrap();
    // What every stripe's importer does, from the seed alone.
    let outcomes: Vec<model::Outcome> = (0..owners.len())
        .map(|k| model::run(seed, k, &PLAN, None))
        .collect();
    let mut want: BTreeMap<u32, u32> = BTreeMap::new();
    for (o, &node) in outcomes.iter().zip(&owners) {
        *want.entry(node as u32).or_default() += o.signals;
    }
    let stop = AtomicBool::new(false);
    let (got, extra) = std::thread::scope(|s| {
        let counter = s.spawn(|| {
            let mut got: BTreeMap<u32, u32> = BTreeMap::new();
            let deadline = Instant::now() + RUN_LIMIT;
            while got != want && Instant::now() < deadline {
                if let Ok(from) = e.signal_wait_from(Some(Duration::from_millis(50))) {
                    *got.entry(from.node.0).or_default() += 1;
                }
            }
            // Every importer has posted its last signal, so every import is connected
            // (each stripe posts hundreds): signal them all back, once.
            if got == want {
                e.signal_post(Default::default()).unwrap();
            }
            // Anything after is a signal too many (a duplicate delivered twice).
            let mut extra = 0;
            while !stop.load(Ordering::Acquire) {
                if e.signal_wait(Some(Duration::from_millis(50))).is_ok() {
                    extra += 1;
                }
            }
            (got, extra)
        });
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        stop.store(true, Ordering::Release);
        counter.join().unwrap()
    });
    assert_eq!(got, want, "signals per sending node");
    assert_eq!(extra, 0, "signals beyond those posted");
    // SAFETY: the export's live memory; every importer has finished (the parent said so).
    #[allow(unsafe_code)]
    let mem = unsafe { std::slice::from_raw_parts(e.as_ptr(), e.len()) };
    for (k, o) in outcomes.iter().enumerate() {
        let have = &mem[k * PLAN.stripe..(k + 1) * PLAN.stripe];
        if let Some(at) = (0..PLAN.stripe).find(|&j| have[j] != o.model[j]) {
            panic!("stripe {k} differs from its model at byte {at} (seed {seed})");
        }
    }
    let frames_in: u64 = c.rail_stats().iter().map(|r| r.frames_in).sum();
    println!(
        "PASS {} stripes, signals {got:?}, frames_in {frames_in}",
        owners.len()
    );
    std::io::stdout().flush().unwrap();
}

/// An importer process: one thread (and one import) per stripe it owns.
fn importer() {
    let c = Controller::get(&std::env::var("KIND").unwrap()).unwrap();
    let seed = env_u64("SEED");
    let id = SegmentId(u32::from_str_radix(&std::env::var("SEG").unwrap(), 16).unwrap());
    std::thread::scope(|s| {
        for k in list("STRIPES") {
            let c = &c;
            s.spawn(move || {
                let i = c.import_connect(NodeId(1), id, Perm::RDWR).unwrap();
                let o = model::run(seed, k, &PLAN, Some(&i));
                println!(
                    "stripe {k}: {} ops, {} gets checked, {} scopes, {} refusals, {} signals",
                    PLAN.ops, o.checked_gets, o.scopes, o.refusals, o.signals
                );
                // The exporter signals every importer once it has all their signals.
                i.signal_wait(Some(RUN_LIMIT))
                    .unwrap_or_else(|e| panic!("stripe {k}: no signal from the exporter: {e:?}"));
                i.disconnect().unwrap();
            });
        }
    });
    let frames_out: u64 = c.rail_stats().iter().map(|r| r.frames_out).sum();
    println!("FRAMES_OUT {frames_out}");
}

/// The children's entry point (does nothing in a plain test run).
#[test]
fn child_roles() {
    match std::env::var("MYRIX_RSM_ROLE").as_deref() {
        Ok("export") => exporter(),
        Ok("import") => importer(),
        _ => {}
    }
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces mza<pid>, mzb<pid>)"]
fn random_ops_between_namespaces_over_udp_and_eth() {
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!("skipped: set MYRIX_NETNS=1 and run as root (as .ci/run does)");
        return;
    }
    let seed = model::seed();
    let _ns = Namespaces::up("mz", NET);
    let [a, b, va, vb] = names();
    let udp = format!("1 udp:{NET}.1:7501\n2 udp:{NET}.2:7502\n3 udp:{NET}.2:7503\n");
    run("udp", &udp, seed, &[(2, &[0, 1]), (3, &[2, 3])]);
    let eth = format!("1 eth:{va}@{}\n2 eth:{vb}@{}\n", mac(&a, &va), mac(&b, &vb));
    run("eth", &eth, seed, &[(2, &[0, 1, 2])]);
}

/// One run: the exporter (node 1) in A, one importer process per `(node, stripes)` in B.
fn run(kind: &str, table: &str, seed: u64, importers: &[(u32, &[usize])]) {
    let started = Instant::now();
    let [a, b, ..] = names();
    let path = std::env::temp_dir().join(format!("myrix-rsmrand-{}.nodes", std::process::id()));
    std::fs::write(&path, table).unwrap();
    let exe = std::env::current_exe().unwrap();
    let child = |ns: &str, role: &str, node: u32| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(&exe)
            .args(["child_roles", "--exact", "--nocapture", "--test-threads=1"])
            .env_remove("LD_LIBRARY_PATH")
            .env("MYRIX_RSM_ROLE", role)
            .env("MYRIX_RSM_NODES", &path)
            .env("MYRIX_RSM_NODE", node.to_string())
            .env("KIND", kind)
            .env("SEED", seed.to_string());
        c
    };
    let owners: Vec<String> = {
        let mut o = Vec::new();
        for (node, stripes) in importers {
            for &k in stripes.iter() {
                if o.len() <= k {
                    o.resize(k + 1, String::new());
                }
                o[k] = node.to_string();
            }
        }
        o
    };
    let mut exp = Child(
        child(&a, "export", 1)
            .env("OWNERS", owners.join(","))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The exporter's lines, read by a thread so that a silent exporter times out.
    let rx = lines(&mut exp);
    let next = |what: &str| loop {
        let l = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{kind}: the exporter did not say {what}"));
        eprintln!("{kind} exporter: {l}");
        // The test harness may have begun the line ("test child_roles ... ").
        if let Some((_, rest)) = l.split_once(what) {
            break rest.trim().to_string();
        }
    };
    let seg = next("ID ");
    let mut imps: Vec<(Child, mpsc::Receiver<String>)> = importers
        .iter()
        .map(|(node, stripes)| {
            let s: Vec<String> = stripes.iter().map(|k| k.to_string()).collect();
            let mut c = Child(
                child(&b, "import", *node)
                    .env("SEG", &seg)
                    .env("STRIPES", s.join(","))
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
            let rx = lines(&mut c);
            (c, rx)
        })
        .collect();
    let mut frames_out = 0u64;
    for (n, (imp, rx)) in imps.iter_mut().enumerate() {
        let st = loop {
            if let Some(st) = imp.0.try_wait().unwrap() {
                break st;
            }
            assert!(
                started.elapsed() < RUN_LIMIT,
                "{kind}: importer {n} still running after {RUN_LIMIT:?} (seed {seed})"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(st.success(), "{kind}: importer {n} failed (seed {seed})");
        // Its last lines (the reader thread ends when the pipe closes).
        while let Ok(l) = rx.recv_timeout(Duration::from_secs(5)) {
            eprintln!("{kind} importer {n}: {l}");
            if let Some((_, v)) = l.split_once("FRAMES_OUT ") {
                frames_out += v.trim().parse::<u64>().unwrap();
            }
        }
    }
    let mut stdin = exp.0.stdin.take().unwrap();
    writeln!(stdin, "CHECK").unwrap();
    let pass = next("PASS ");
    let st = exp.0.wait().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(st.success(), "{kind}: the exporter failed (seed {seed})");
    // The link was impaired: frames the importers sent were lost or duplicated on the
    // way (the engines' counters; the qdiscs' own, printed below, say how).
    let frames_in: u64 = pass.rsplit_once("frames_in ").unwrap().1.parse().unwrap();
    eprintln!("{kind}: importers sent {frames_out} frames, the exporter received {frames_in}");
    assert!(frames_out > 0 && frames_in > 0);
    assert_ne!(
        frames_in, frames_out,
        "{kind}: no frame lost nor duplicated"
    );
    for (ns, dev) in [(&a, &names()[2]), (&b, &names()[3])] {
        for what in ["qdisc", "class"] {
            let o = Command::new("ip")
                .args(["netns", "exec", ns, "tc", "-s", what, "show", "dev", dev])
                .output()
                .unwrap();
            eprint!("{dev} {what}: {}", String::from_utf8_lossy(&o.stdout));
        }
    }
    eprintln!("{kind}: passed in {:.1} s", started.elapsed().as_secs_f64());
}

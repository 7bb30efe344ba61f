//! The channel's postbox and pool state machines driven deterministically over RSM's
//! sans-IO engine and a lossy, duplicating, reordering in-memory network (issue 23,
//! "Reliability"): two and three nodes, short, long and rendezvous messages of random
//! sizes both ways with queue and pool wrap-around, seeds swept, every byte, the order
//! per pair and the empty queues and pools at the end checked (`chanloss` says how).
//! The receivers poll between any two pieces of the writes the engines apply, so a
//! postbox seen before the data it points at would be caught: the last tests break the
//! exporter's order on purpose and show that it is.
//!
//! `MYRIX_SEEDS` (default 6) seeds per test from `MYRIX_SEED0` (default 0).

mod chanloss;

use chanloss::wire::{Order, WireConfig};
use chanloss::{run, Report, Scenario};
use myrix_mpi::channel::send::Geometry;
use myrix_rsm_proto::engine::Config;

fn seeds() -> std::ops::Range<u64> {
    let var = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let first = var("MYRIX_SEED0", 0);
    first..first + var("MYRIX_SEEDS", 6)
}

/// A small channel (eight postboxes, a pool of eight 64-byte blocks) so that queue and
/// pool go round many times, on a wire of 2 µs with 10 µs of jitter (frames overtake
/// each other), with the engine's fast timers.
fn small(nodes: usize, loss: f64) -> Scenario {
    Scenario {
        nodes,
        g: Geometry {
            queue: 8,
            pool_units: 8,
            small: 64,
            large: 128,
        },
        short: 100,
        eager: 700,
        msgs: 120,
        rdv_max: 2101,
        sync: 0.1,
        wire: WireConfig {
            latency_ns: 2_000,
            jitter_ns: 10_000,
            loss,
            duplicate: loss / 2.0,
        },
        engine: Config::fast_timers(),
        order: Order::FirstWordLast,
        poll_between: 0.5,
        ack_idle_ns: 50_000,
        act_ns: 4_000,
        limit_ns: 4_000_000_000,
        hide_one_write: false,
    }
}

/// Sums the coverage of several runs.
fn add(sum: &mut Report, r: &Report) {
    sum.messages += r.messages;
    sum.bytes += r.bytes;
    sum.frames += r.frames;
    sum.lost += r.lost;
    sum.duplicated += r.duplicated;
    sum.resends += r.resends;
    sum.split_writes += r.split_writes;
    sum.queue_wraps += r.queue_wraps;
    sum.pool_wraps += r.pool_wraps;
    sum.sent_now += r.sent_now;
    sum.claimed += r.claimed;
    sum.direct += r.direct;
    sum.truncated += r.truncated;
    sum.between_polls += r.between_polls;
}

/// Runs `sc` over the seeds, the loss of each seed taken from `losses` in turn; panics
/// at the first violation. Returns the summed report.
fn sweep(sc: impl Fn(f64) -> Scenario, losses: &[f64]) -> Report {
    let mut sum = Report::default();
    for seed in seeds() {
        let loss = losses[seed as usize % losses.len()];
        let r = run(&sc(loss), seed).unwrap_or_else(|e| panic!("loss {loss}: {e}"));
        eprintln!("seed {seed}, loss {loss}: {r:?}");
        add(&mut sum, &r);
    }
    sum
}

/// What every sweep must have gone through for its checks to mean something.
fn covered(r: &Report) {
    assert!(r.lost > 0 && r.duplicated > 0 && r.resends > 0, "{r:?}");
    assert!(r.split_writes > 0 && r.between_polls > 0, "{r:?}");
    assert!(r.queue_wraps > 0 && r.pool_wraps > 0, "{r:?}");
    assert!(
        r.sent_now > 0 && r.claimed > 0 && r.direct > 0 && r.truncated > 0,
        "{r:?}"
    );
}

#[test]
fn two_nodes_both_ways_over_a_lossy_reordering_wire() {
    let r = sweep(|l| small(2, l), &[0.0, 0.02, 0.05, 0.1]);
    covered(&r);
}

#[test]
fn three_nodes_every_pair_both_ways() {
    let sc = |loss| Scenario {
        g: Geometry {
            queue: 16,
            pool_units: 16,
            small: 64,
            large: 256,
        },
        short: 200,
        eager: 1500,
        rdv_max: 4000,
        msgs: 60,
        ..small(3, loss)
    };
    let r = sweep(sc, &[0.03, 0.08]);
    covered(&r);
}

/// The default geometry (64 postboxes, a 256 KiB pool of 2/4 KiB blocks), the network
/// short limit (880 bytes: a batch of 16 postboxes in one frame) and eager limit (64
/// KiB), rendezvous messages up to 200 KiB, and the network controllers' timers
/// (resend after 5 ms) on a 30 µs wire whose frames may lag 200 µs more.
fn default_geometry(loss: f64) -> Scenario {
    Scenario {
        g: Geometry {
            queue: 64,
            pool_units: 128,
            small: 2048,
            large: 4096,
        },
        short: 880,
        eager: 65536,
        rdv_max: 200_000,
        msgs: 40,
        wire: WireConfig {
            latency_ns: 30_000,
            jitter_ns: 200_000,
            loss,
            duplicate: loss / 2.0,
        },
        engine: myrix_rsm::net::default_config(),
        act_ns: 10_000,
        limit_ns: 20_000_000_000,
        ..small(2, loss)
    }
}

#[test]
fn default_geometry_with_the_network_timers() {
    let r = sweep(default_geometry, &[0.02]);
    assert!(r.lost > 0 && r.resends > 0 && r.pool_wraps > 0, "{r:?}");
}

/// Thousands of messages: each window goes past the 4096 puts after which it closes a
/// barrier (a flush here, whose success the run checks).
#[test]
fn a_long_run_passes_the_windows_barriers() {
    let sc = Scenario {
        msgs: 2500,
        ..small(2, 0.02)
    };
    let seed = seeds().start;
    let r = run(&sc, seed).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("seed {seed}: {r:?}");
    assert!(r.barriers > 0, "{r:?}");
}

/// An exporter that stored a write's first word first (a postbox's flag before its
/// body) would let a receiver see half a message: the test must see it.
#[test]
fn a_flag_stored_before_its_data_is_caught() {
    for seed in 0..4 {
        let sc = Scenario {
            order: Order::FlagFirst,
            ..small(2, 0.02)
        };
        let e = run(&sc, seed).expect_err("a flag stored first went unseen");
        eprintln!("seed {seed}: {e}");
    }
}

/// A batch of postboxes is put as one write led by its first flag, up to 1 KiB, and a
/// write cut across two frames would land its flag with the first: the window keeps a
/// flag-led run within the import's one write (`Import::one_write`). With frames of
/// 596 bytes of data (an engine MTU of 620, as a small `MYRIX_UDP_MTU` gives) no
/// receiver sees half a message.
#[test]
fn small_frames_shorten_the_batch_and_no_postbox_is_cut() {
    for seed in 0..8 {
        let mut sc = default_geometry(0.02);
        sc.engine.mtu = 620;
        sc.poll_between = 1.0;
        let r = run(&sc, seed).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("seed {seed}: {r:?}");
    }
}

/// The same with the write size hidden from the window (as before session 30, when
/// the window assumed 1 KiB fitted a frame): a postbox straddles two frames, the later
/// postboxes' flags land with the first, and a receiver sees half a message: the test
/// must see it.
#[test]
fn a_postbox_cut_across_two_frames_is_caught() {
    // Seen only while the second frame lags (lost, or overtaken): not every seed.
    let mut seen = 0;
    for seed in 0..8 {
        let mut sc = default_geometry(0.02);
        sc.engine.mtu = 620;
        sc.poll_between = 1.0;
        sc.hide_one_write = true;
        match run(&sc, seed) {
            Ok(r) => eprintln!("seed {seed}: unseen: {r:?}"),
            Err(e) => {
                eprintln!("seed {seed}: {e}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 6, "seen in {seen} seeds of 8");
}

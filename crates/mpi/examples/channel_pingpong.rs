//! Two-process ping-pong over `ChannelFabric` on shm: one-way latency (half the round
//! trip) and bandwidth per message size, the median of several runs.
//!
//! `cargo run --release -p myrix-mpi --example channel_pingpong [-- SIZE...]`
//! The `MYRIX_MPI_*` variables apply (both processes read them), e.g.
//! `MYRIX_MPI_SHORT=4096` to compare the short and pool protocols at one size.

use std::process::{Command, Stdio};
use std::time::Instant;

use myrix_mpi::channel::{ChannelConfig, ChannelFabric, FileDirectory};
use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, MsgToken, Rank};
use myrix_rsm::spin::SpinWait;

const RUNS: usize = 7;

fn iters(size: usize) -> usize {
    (2_000_000 / (size + 256)).clamp(200, 20_000)
}

/// Sends `size` bytes to `peer` and waits for its data to have left (a message that
/// arrives meanwhile is kept in `early`).
fn send(
    f: &mut ChannelFabric,
    ev: &mut Vec<Event>,
    early: &mut Option<MsgToken>,
    peer: Rank,
    buf: &[u8],
    spin: &mut SpinWait,
) {
    let env = Envelope {
        ctx: 0,
        tag: 1,
        len: buf.len(),
        sync: false,
    };
    // SAFETY: `buf` outlives the wait for SendDone below.
    let id = unsafe { f.send(peer, env, buf.as_ptr()) }.expect("send");
    let mut sent = false;
    while !sent {
        ev.clear();
        f.progress(ev).expect("progress");
        for e in ev.iter() {
            match e {
                Event::SendDone { send } if *send == id => sent = true,
                Event::Arrived { token, .. } => *early = Some(*token),
                Event::PeerLost { why, .. } => panic!("peer lost: {why}"),
                _ => {}
            }
        }
    }
    spin.reset();
}

/// Waits for one message into `buf`.
fn recv(
    f: &mut ChannelFabric,
    ev: &mut Vec<Event>,
    early: &mut Option<MsgToken>,
    buf: &mut [u8],
    spin: &mut SpinWait,
) {
    loop {
        ev.clear();
        let mut tok = early.take();
        let moved = tok.is_some() || f.progress(ev).expect("progress");
        for e in ev.iter() {
            match e {
                Event::Arrived { token, .. } => tok = Some(*token),
                Event::PeerLost { why, .. } => panic!("peer lost: {why}"),
                _ => {}
            }
        }
        if let Some(t) = tok {
            // SAFETY: `buf` outlives the wait for Received below.
            if unsafe { f.take(t, buf.as_mut_ptr(), buf.len()) }.expect("take") {
                spin.reset();
                return;
            }
            loop {
                ev.clear();
                f.progress(ev).expect("progress");
                if ev
                    .iter()
                    .any(|e| matches!(e, Event::Received { token } if *token == t))
                {
                    spin.reset();
                    return;
                }
            }
        }
        if !moved && !hard_spin() {
            spin.spin();
        }
    }
}

/// `PINGPONG_SPIN=hard`: never yield between polls (measures the fabric alone; only
/// meaningful on an idle machine).
fn hard_spin() -> bool {
    static HARD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HARD.get_or_init(|| std::env::var("PINGPONG_SPIN").is_ok_and(|v| v == "hard"))
}

fn main() {
    let sizes: Vec<usize> = {
        let a: Vec<usize> = std::env::args()
            .skip(1)
            .filter_map(|s| s.parse().ok())
            .collect();
        if a.is_empty() {
            vec![8, 64, 256, 1024, 2048, 4096, 16384, 65536, 1 << 20]
        } else {
            a
        }
    };
    let cfg = ChannelConfig::from_env().unwrap_or_else(|e| panic!("{e}"));
    if std::env::var("PINGPONG_MODE").is_ok_and(|m| m == "thread") {
        return one_thread(&sizes, &cfg);
    }
    let child = std::env::var("PINGPONG_DIR").ok();
    let dir = match &child {
        Some(d) => d.into(),
        None => {
            let d = std::env::temp_dir().join(format!("myrix-pingpong-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            d
        }
    };
    let rank: Rank = if child.is_some() { 1 } else { 0 };
    let mut kid = None;
    if rank == 0 {
        kid = Some(
            Command::new(std::env::current_exe().unwrap())
                .args(std::env::args().skip(1))
                .env("PINGPONG_DIR", &dir)
                .stdout(Stdio::inherit())
                .spawn()
                .unwrap(),
        );
        println!(
            "# channel ping-pong over shm, 2 processes; queue {} pool {} short {} eager {}",
            cfg.queue, cfg.pool, cfg.short, cfg.eager
        );
        println!("# size  one-way µs (median of {RUNS})  MB/s   [min..max µs]");
    }
    let mut f =
        ChannelFabric::with_directory(rank, 2, vec![0, 0], FileDirectory(dir.clone()), &cfg)
            .expect("fabric");
    let peer = 1 - rank;
    let mut ev = Vec::with_capacity(64);
    let mut spin = SpinWait::new();
    let mut early = None;
    let max = *sizes.iter().max().unwrap();
    let sbuf: Vec<u8> = (0..max).map(|i| i as u8).collect();
    let mut rbuf = vec![0u8; max];
    for &size in &sizes {
        let n = iters(size);
        let mut runs = Vec::with_capacity(RUNS);
        for run in 0..=RUNS {
            let t = Instant::now();
            for _ in 0..n {
                if rank == 0 {
                    send(&mut f, &mut ev, &mut early, peer, &sbuf[..size], &mut spin);
                    recv(&mut f, &mut ev, &mut early, &mut rbuf[..size], &mut spin);
                } else {
                    recv(&mut f, &mut ev, &mut early, &mut rbuf[..size], &mut spin);
                    send(&mut f, &mut ev, &mut early, peer, &sbuf[..size], &mut spin);
                }
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / n as f64 / 2.0;
            if run > 0 {
                runs.push(us); // run 0 warms up (and connects)
            }
        }
        assert_eq!(&rbuf[..size], &sbuf[..size], "bytes");
        if rank == 0 {
            runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let med = runs[RUNS / 2];
            println!(
                "{size:>8}  {med:>9.3}  {:>9.1}   [{:.3}..{:.3}]",
                size as f64 / med,
                runs[0],
                runs[RUNS - 1]
            );
        }
    }
    // Both sides finish the last exchange before either drops its segments.
    if rank == 0 {
        send(&mut f, &mut ev, &mut early, peer, &sbuf[..0], &mut spin);
        kid.unwrap().wait().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        recv(&mut f, &mut ev, &mut early, &mut rbuf[..0], &mut spin);
    }
}

/// `PINGPONG_MODE=thread`: both ranks in one thread, taking turns: the software cost
/// of a message (send, progress, take) without the cross-core transfer or scheduling.
fn one_thread(sizes: &[usize], cfg: &ChannelConfig) {
    let dir = myrix_mpi::channel::MemDirectory::new();
    let mut f = [
        ChannelFabric::with_directory(0, 2, vec![0, 0], dir.clone(), cfg).expect("fabric"),
        ChannelFabric::with_directory(1, 2, vec![0, 0], dir, cfg).expect("fabric"),
    ];
    let max = *sizes.iter().max().unwrap();
    let sbuf: Vec<u8> = (0..max).map(|i| i as u8).collect();
    let mut rbuf = vec![0u8; max];
    let mut ev = Vec::with_capacity(64);
    println!("# one thread, both ranks taking turns (software cost per message)");
    for &size in sizes {
        let n = iters(size);
        let mut runs = Vec::new();
        for run in 0..=RUNS {
            let t = Instant::now();
            for i in 0..2 * n {
                let (a, b) = (i % 2, 1 - i % 2);
                let env = Envelope {
                    ctx: 0,
                    tag: 1,
                    len: size,
                    sync: false,
                };
                // SAFETY: `sbuf` outlives the exchange, which completes below.
                unsafe { f[a].send(b as Rank, env, sbuf.as_ptr()) }.expect("send");
                let mut got = false;
                while !got {
                    ev.clear();
                    f[b].progress(&mut ev).expect("progress");
                    f[a].progress(&mut ev).expect("progress");
                    for e in ev.iter() {
                        match e {
                            Event::Arrived { token, .. } => {
                                // SAFETY: `rbuf` outlives the message.
                                got |= unsafe { f[b].take(*token, rbuf.as_mut_ptr(), size) }
                                    .expect("take");
                            }
                            Event::Received { .. } => got = true,
                            _ => {}
                        }
                    }
                }
            }
            if run > 0 {
                runs.push(t.elapsed().as_secs_f64() * 1e6 / (2 * n) as f64);
            }
        }
        runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{size:>8}  {:>9.3}   [{:.3}..{:.3}]",
            runs[RUNS / 2],
            runs[0],
            runs[RUNS - 1]
        );
    }
}

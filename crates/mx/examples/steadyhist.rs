//! Where a large shm ping-pong's time goes, iteration by iteration: two processes (this
//! one and a child it spawns) ping-pong `LEN` bytes (default 1 MiB) `N` times after `WARM`
//! warm-up round trips, and the parent prints the distribution of the round trips (as
//! one-way times), so a slow run shows whether every iteration was slower (placement,
//! caches) or a few stalled (preemption, faults).
//!
//! `cargo run --release -p myrix-mx --example steadyhist` with, in the environment:
//! `CPU=0,1` pins the parent and the child; `TOUCH=0` leaves the send buffer untouched (a
//! fresh zeroed allocation reads the kernel's one zero page); `HUGE=1` asks for
//! transparent huge pages on both buffers; `RUNS=R` repeats the measurement R times in
//! the same pair of processes.
use myrix_mx::{Endpoint, RecvBuf};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(30);
const KEY: u32 = 7;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn buffer(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    if env("HUGE", 0) == 1 {
        // SAFETY: advice on memory we own; it changes no contents.
        unsafe {
            libc::madvise(v.as_mut_ptr().cast(), len, libc::MADV_HUGEPAGE);
        }
    }
    if env("TOUCH", 1) == 1 {
        v.fill(1);
    }
    v
}

fn pin(which: usize) {
    if let Ok(c) = std::env::var("CPU") {
        let cpu: usize = c.split(',').nth(which).unwrap().parse().unwrap();
        myrix_mx::pin_to_cpu(cpu).unwrap();
    }
}

fn open() -> Endpoint {
    (0..=255u8)
        .find_map(|id| Endpoint::open("shm", id, KEY).ok())
        .expect("a free shm endpoint")
}

fn main() {
    let len = env("LEN", 1 << 20);
    let n = env("N", 300);
    let warm = env("WARM", 10);
    let runs = env("RUNS", 1);
    let total = (warm + n) * runs;
    if std::env::var("STEADY_CHILD").is_ok() {
        pin(0);
        let mut ep = open();
        println!("{}", ep.addr());
        std::io::stdout().flush().unwrap();
        let sbuf = buffer(len);
        let mut rbuf = Some(RecvBuf::One(buffer(len)));
        for _ in 0..total {
            let (st, b) = ep.recv(rbuf.take().unwrap(), 1, u64::MAX, T).unwrap();
            rbuf = Some(b);
            ep.send(st.source, &[&sbuf], 1, T).unwrap();
        }
        ep.flush_all(Duration::from_secs(2)).unwrap();
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("STEADY_CHILD", "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    pin(1);
    let mut ep = open();
    let peer = ep.connect(&line.trim().parse().unwrap(), KEY, T).unwrap();
    let sbuf = buffer(len);
    let mut rbuf = Some(RecvBuf::One(buffer(len)));
    let mut ns = vec![0u64; n];
    for run in 0..runs {
        let t0 = Instant::now();
        for i in 0..warm + n {
            let t = Instant::now();
            ep.send(peer, &[&sbuf], 1, T).unwrap();
            rbuf = Some(ep.recv(rbuf.take().unwrap(), 1, u64::MAX, T).unwrap().1);
            if i >= warm {
                ns[i - warm] = t.elapsed().as_nanos() as u64 / 2;
            }
        }
        let wall = t0.elapsed();
        let mean = ns.iter().sum::<u64>() as f64 / n as f64 / 1e3;
        let mut s = ns.clone();
        s.sort_unstable();
        let q = |p: f64| s[((n - 1) as f64 * p) as usize] as f64 / 1e3;
        let med = q(0.5);
        let slow: Vec<u64> = ns
            .iter()
            .copied()
            .filter(|&x| x as f64 / 1e3 > 2.0 * med)
            .collect();
        println!(
            "run {run}: mean {mean:.1} min {:.1} p10 {:.1} p50 {med:.1} p90 {:.1} p99 {:.1} max {:.1} us; {} over 2x median costing {:.0} us; warm-up+run {:.1} ms",
            q(0.0),
            q(0.1),
            q(0.9),
            q(0.99),
            q(1.0),
            slow.len(),
            slow.iter().map(|&x| x as f64 / 1e3 - med).sum::<f64>() * 2.0,
            wall.as_secs_f64() * 1e3
        );
    }
    ep.flush_all(Duration::from_secs(2)).unwrap();
    child.wait().unwrap();
}

//! The shm put-based ping-pong (seed 004's "raw RSM" figure): two processes each export
//! a segment and import the other's; each side writes a sequence number into the
//! other's segment with one 8-byte put and spin-polls its own segment for the answer.
//!
//! `cargo run --release -p myrix-rsm --example pingpong [-- ITERS]` prints the round
//! trip and half of it (the one-way put latency). The polls yield the core when more
//! processes run than there are cores ([`myrix_rsm::spin::SpinWait`]).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use myrix_rsm::spin::SpinWait;
use myrix_rsm::{Controller, Export, ExportFlags, Import, Perm, SegmentId};

/// The flag word of a segment, as its exporter reads it.
fn flag(e: &Export) -> &AtomicU64 {
    // SAFETY: the first 8 bytes of a live, page-aligned export; other processes write
    // it only with 8-byte atomic puts.
    unsafe { AtomicU64::from_ptr(e.as_ptr() as *mut u64) }
}

fn wait_for(e: &Export, v: u64) {
    let f = flag(e);
    let mut spin = SpinWait::new();
    while f.load(Ordering::Acquire) != v {
        spin.spin();
    }
}

fn connect(c: &Controller, id: SegmentId) -> Import {
    c.import_connect(c.local_node(), id, Perm::RDWR).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(4096, ExportFlags::default()).unwrap();
    let mine = e.publish(None, &[]).unwrap();
    if args.get(1).map(String::as_str) == Some("--child") {
        // The echo side: answers every number it receives.
        let theirs = SegmentId(u32::from_str_radix(&args[2], 16).unwrap());
        let iters: u64 = args[3].parse().unwrap();
        println!("{:08x}", mine.0);
        std::io::stdout().flush().unwrap();
        let peer = connect(&c, theirs);
        for i in 1..=iters {
            wait_for(&e, i);
            peer.put_scalars(0, &[i]).unwrap();
        }
        return;
    }
    let iters: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--child", &format!("{:08x}", mine.0), &iters.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let peer = connect(&c, SegmentId(u32::from_str_radix(line.trim(), 16).unwrap()));
    let warm = iters / 10;
    let mut start = Instant::now();
    for i in 1..=iters {
        if i == warm + 1 {
            start = Instant::now();
        }
        peer.put_scalars(0, &[i]).unwrap();
        wait_for(&e, i);
    }
    let rtt = start.elapsed().as_secs_f64() * 1e9 / (iters - warm) as f64;
    child.wait().unwrap();
    println!(
        "shm put ping-pong, 8 B: round trip {rtt:.0} ns, one way {:.0} ns ({} round trips)",
        rtt / 2.0,
        iters - warm
    );
}

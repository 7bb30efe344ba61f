//! The floor under MX over shm: a ping-pong of frames (28 bytes, or `LEN`) straight through the
//! shared-memory transport, no engine. `cargo run --release -p myrix-mx --example shmfloor`
//!
//! Two knobs for studying the wait: `PAUSE=1` pauses after every empty poll, and `WORK=N`
//! spends N dependent multiplications (about 0.37 ns each here) between receiving a frame
//! and answering it, on both sides, as an engine's processing would.
use myrix_mx::transport::{shm::Shm, Loc, Transport, Verdict};
use std::time::Instant;

/// Stands in for an engine's work on a frame: `n` dependent multiplications.
fn spend(n: u32) {
    let mut x = 1u64;
    for _ in 0..n {
        x = std::hint::black_box(x.wrapping_mul(3));
    }
    std::hint::black_box(x);
}

fn main() {
    std::env::set_var("MYRIX_SHM_DIR", "/tmp/floor");
    let nic = 0x0200_0000_0001;
    let n = 2_000_000u64;
    let len: usize = std::env::var("LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(28);
    let pause = std::env::var_os("PAUSE").is_some();
    let work: u32 = std::env::var("WORK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut a = Shm::open(nic, 1).unwrap();
    let mut b = Shm::open(nic, 2).unwrap();
    let to_b = a
        .resolve(&myrix_mx::transport::shm::segment_name(nic, 2), 2)
        .unwrap();
    let to_a = b
        .resolve(&myrix_mx::transport::shm::segment_name(nic, 1), 1)
        .unwrap();
    let t = std::thread::spawn(move || {
        myrix_mx::pin_to_cpu(1).ok();
        let frame = vec![7u8; len];
        let mut sink = vec![0u8; len];
        let mut got = 0u64;
        while got < n {
            let mut k = 0;
            b.poll_recv(1, |_: &Loc, f: &[u8]| {
                // Copied out, as a receive does.
                sink[..f.len()].copy_from_slice(f);
                std::hint::black_box(&sink);
                k += 1;
                Verdict::Taken
            })
            .unwrap();
            if k == 0 && pause {
                std::hint::spin_loop();
            }
            if k > 0 {
                spend(work);
                got += 1;
                while !b.send(&to_a, &frame).unwrap() {}
            }
        }
    });
    myrix_mx::pin_to_cpu(0).ok();
    let frame = vec![9u8; len];
    let mut sink = vec![0u8; len];
    let start = Instant::now();
    for _ in 0..n {
        while !a.send(&to_b, &frame).unwrap() {}
        let mut k = 0;
        while k == 0 {
            a.poll_recv(1, |_: &Loc, f: &[u8]| {
                sink[..f.len()].copy_from_slice(f);
                std::hint::black_box(&sink);
                k += 1;
                Verdict::Taken
            })
            .unwrap();
            if k == 0 && pause {
                std::hint::spin_loop();
            }
        }
        spend(work);
    }
    t.join().unwrap();
    println!(
        "{:.3} us one-way ({len}-byte frames, transport only)",
        start.elapsed().as_secs_f64() * 1e6 / n as f64 / 2.0
    );
}

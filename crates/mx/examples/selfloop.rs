use myrix_mx::{Endpoint, RecvBuf};
use std::time::{Duration, Instant};
fn main() {
    // BOARD=shm runs the same loop through a shared-memory ring to itself.
    let board = std::env::var("BOARD").unwrap_or_else(|_| "self".into());
    let mut a = Endpoint::open(&board, 0, 1).unwrap();
    let me = a
        .connect(&a.addr().clone(), 1, Duration::from_secs(1))
        .unwrap();
    let mut buf = Some(RecvBuf::One(vec![0; 8]));
    let n: u32 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let t = Instant::now();
    for _ in 0..n {
        let r = a.irecv(buf.take().unwrap(), 1, u64::MAX, 0).unwrap();
        let s = a.isend(me, &[&[1u8; 8]], 1, 0).unwrap();
        let (_, b) = a.wait(r, Duration::from_secs(1)).unwrap().unwrap();
        buf = b;
        a.wait(s, Duration::from_secs(1)).unwrap().unwrap();
    }
    println!(
        "{:.1} ns per message (send+recv, one process)",
        t.elapsed().as_nanos() as f64 / n as f64
    );
}

//! The part of an 8-byte shm ping-pong that lies on the one-way latency path, alone:
//! from a wait that finds the message in its ring to the reply's slot being published.
//! Run under `valgrind --tool=callgrind --toggle-collect=critpath::turn` to count the
//! instructions of just that part; the endpoint C that feeds and drains B stands in for
//! the other process and is not counted.
use myrix_mx::{Endpoint, PeerId};
use std::time::Duration;

const T: Duration = Duration::from_secs(1);

/// What the ping-pong's responder does between two messages, as `myrix bench pingpong`
/// does it: a blocking receive, then the reply.
#[inline(never)]
fn turn(b: &mut Endpoint, into: myrix_mx::RecvBuf, to_c: PeerId, data: &[u8]) -> Vec<u8> {
    let (_, buf) = b.recv(into, 1, u64::MAX, T).unwrap();
    b.send(to_c, &[data], 1, T).unwrap();
    match buf {
        myrix_mx::RecvBuf::One(v) => v,
        _ => unreachable!("a one-piece receive hands its buffer back"),
    }
}

fn main() {
    let mut b = Endpoint::open("shm", 0, 1).unwrap();
    let mut c = Endpoint::open("shm", 1, 1).unwrap();
    // Both connects need the other side to make progress: drive them together.
    let (ab, ac) = (b.addr().clone(), c.addr().clone());
    let rb = b.iconnect(&ac, 1).unwrap();
    let rc = c.iconnect(&ab, 1).unwrap();
    let (mut to_c, mut to_b) = (None, None);
    while to_c.is_none() || to_b.is_none() {
        if to_c.is_none() {
            to_c = b
                .test(rb)
                .unwrap()
                .map(|(st, _)| Endpoint::connected(&ac, st).unwrap());
        }
        if to_b.is_none() {
            to_b = c
                .test(rc)
                .unwrap()
                .map(|(st, _)| Endpoint::connected(&ab, st).unwrap());
        }
    }
    let (to_c, to_b) = (to_c.unwrap(), to_b.unwrap());
    let n: u32 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let mut buf = vec![0u8; 8];
    let mut cbuf = Some(myrix_mx::RecvBuf::One(vec![0u8; 8]));
    let mut spent = Duration::ZERO;
    for i in 0..n {
        let r = myrix_mx::RecvBuf::One(buf);
        c.send(to_b, &[&i.to_le_bytes(), &[0; 4]], 1, T).unwrap();
        let t0 = std::time::Instant::now();
        buf = turn(&mut b, r, to_c, &[2u8; 8]);
        spent += t0.elapsed();
        let cr = c.irecv(cbuf.take().unwrap(), 1, u64::MAX, 0).unwrap();
        let (_, back) = c.wait(cr, T).unwrap().unwrap();
        cbuf = back;
        assert_eq!(buf[..4], i.to_le_bytes());
    }
    println!(
        "{n} turns, {:.1} ns each (hot caches, one process, timer included)",
        spent.as_nanos() as f64 / n as f64
    );
}

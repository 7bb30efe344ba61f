//! `omx+shm:IFNAME`: one endpoint, two paths chosen by the peer's address, on the
//! loopback interface (raw sockets need root: skipped, saying so, without).

use std::time::{Duration, Instant};

use myrix_mx::transport::shm::{host_nic, segment_name};
use myrix_mx::{EndpointAddr, OmxEndpoint, RecvBuf, Request};

const T: Duration = Duration::from_secs(10);

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect()
}

/// Polls `a` for `r` and `others` for progress until `r` completes.
fn drive(a: &mut OmxEndpoint, r: Request, others: &mut [&mut OmxEndpoint]) -> myrix_mx::Completion {
    let start = Instant::now();
    loop {
        if let Some(c) = a.test(r).unwrap() {
            return c;
        }
        for o in others.iter_mut() {
            o.progress().unwrap();
        }
        assert!(start.elapsed() < T, "request stuck");
    }
}

/// Sends every length from `a` to `b`'s peer `to`, verified on arrival.
fn exchange(a: &mut OmxEndpoint, to: myrix_mx::PeerId, b: &mut OmxEndpoint, seed: u8) {
    for len in [0, 5, 200, 5000, 20_000, 300_000] {
        let want = pattern(len, seed);
        let r = b.irecv(RecvBuf::One(vec![0; len]), 9, u64::MAX, 0).unwrap();
        let s = a.isend(to, &[&want], 9, 0).unwrap();
        let (st, buf) = drive(b, r, &mut [&mut *a]);
        assert_eq!(st.xfer_len, len);
        assert_eq!(buf.unwrap().to_vec(), want, "{len} bytes");
        drive(a, s, &mut [&mut *b]);
    }
}

#[test]
fn local_peers_over_shared_memory_and_others_over_the_link() {
    let mut a = match OmxEndpoint::open_omx("omx+shm:lo", 241, 7) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skipped: no raw Ethernet socket here ({e})");
            return;
        }
    };
    // Its NIC id is the interface's MAC, its locator Open-MX's.
    assert!(a.addr().to_string().contains("@omx:000000000000"));
    let mut b = OmxEndpoint::open_omx("omx+shm:lo", 242, 7).unwrap();
    // Endpoint ids are the host's: the segment of 242 is taken.
    assert!(OmxEndpoint::open_omx("omx+shm:lo", 242, 7).is_err());
    let mut c = OmxEndpoint::open_omx("omx:lo", 243, 7).unwrap();

    // b through shared memory: the address names its segment.
    let via_shm = EndpointAddr {
        nic: b.addr().nic,
        endpoint: 242,
        session: 0,
        locator: format!("shm:{}", segment_name(host_nic(), 242)),
    };
    let r = a.iconnect(&via_shm, 7).unwrap();
    let (st, _) = drive(&mut a, r, &mut [&mut b]);
    let to_b = myrix_mx::Endpoint::connected(&via_shm, st).unwrap();
    // c, which has no shared memory, through the link.
    let via_link = c.addr().clone();
    let r = a.iconnect(&via_link, 7).unwrap();
    let (st, _) = drive(&mut a, r, &mut [&mut c]);
    let to_c = myrix_mx::Endpoint::connected(&via_link, st).unwrap();

    let frames_b = b.stats().frames_in;
    exchange(&mut a, to_b, &mut b, 1);
    exchange(&mut a, to_c, &mut c, 2);
    // Each got its messages (and only b's path was shared memory: c cannot have one).
    assert!(b.stats().frames_in > frames_b);
    assert!(a.peer_identity(to_b) == Some((b.addr().nic, 242)));
    assert!(a.peer_identity(to_c) == Some((c.addr().nic, 243)));
}

//! An address names one instance of an endpoint (its session): a connect to the address
//! of an endpoint that closed, whose id another endpoint opened since with the same key,
//! must not reach the new one (`Engine::iconnect_session`), over shared memory where the
//! old address's locator leads straight to the new endpoint's rings.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use myrix_mx::{Code, Endpoint, MxError, RecvBuf};

const KEY: u32 = 0x57a1e;

#[test]
fn a_stale_address_does_not_reach_the_endpoint_that_took_its_id() {
    let mut a = Endpoint::open("shm", 180, KEY).unwrap();
    let old = Endpoint::open("shm", 181, KEY).unwrap();
    let old_addr = old.addr().clone();
    drop(old);
    // Another endpoint (standing for another process) opens the same id, same key, and
    // makes progress on its own thread.
    let mut b = Endpoint::open("shm", 181, KEY).unwrap();
    let new_addr = b.addr().clone();
    assert_ne!(new_addr.session, old_addr.session);
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let server = std::thread::spawn(move || {
        let r = b.irecv(RecvBuf::One(vec![0; 5]), 1, u64::MAX, 0).unwrap();
        let mut got = None;
        while !stop2.load(Ordering::Relaxed) {
            b.progress().unwrap();
            if got.is_none() {
                got = b.test(r).unwrap();
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        got.map(|(st, buf)| (st.code, buf.unwrap().to_vec()))
    });
    let t = Duration::from_secs(5);
    match a.connect(&old_addr, KEY, t) {
        Err(MxError::Connect { code, .. }) => assert_eq!(code, Code::NoEndpoint),
        other => panic!("a stale address reached the new endpoint: {other:?}"),
    }
    // The new endpoint's own address connects, and a message arrives.
    let p = a.connect(&new_addr, KEY, t).unwrap();
    let s = a.isend(p, &[b"hello"], 1, 0).unwrap();
    a.wait(s, t).unwrap().expect("sent within 5 s");
    a.flush_all(t).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let got = server.join().unwrap();
    assert_eq!(got, Some((Code::Success, b"hello".to_vec())));
}

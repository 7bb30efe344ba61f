//! Peers that are gone: a closed endpoint's address, a shared-memory peer killed with
//! SIGKILL.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use myrix_mx::{Code, Endpoint, MxError, RecvBuf};

const KEY: u32 = 0xdead;

#[test]
fn an_address_of_a_closed_endpoint_does_not_reach_ourselves() {
    let old = Endpoint::open("shm", 60, KEY).unwrap();
    let addr = old.addr().clone();
    drop(old);
    // A new process (here: endpoint) takes the same id, then is given the old address.
    let mut now = Endpoint::open("shm", 60, KEY).unwrap();
    assert_ne!(now.addr().session, addr.session);
    match now.connect(&addr, KEY, Duration::from_secs(5)) {
        Err(MxError::Connect { code, .. }) => assert_eq!(code, Code::NoEndpoint),
        other => panic!("connected to a closed endpoint's address: {other:?}"),
    }
}

/// The peer process of `a_killed_shm_peer_fails_its_sends_within_100ms`: connects to the
/// address in `MYRIX_DEATH_PEER`, prints its own, and makes progress until killed.
#[test]
#[ignore = "not a test alone: a_killed_shm_peer_fails_its_sends_within_100ms runs it as its peer process (--ignored --exact)"]
fn death_peer_process() {
    let parent: myrix_mx::EndpointAddr = std::env::var("MYRIX_DEATH_PEER")
        .expect("run by the death test")
        .parse()
        .unwrap();
    let mut ep = Endpoint::open("shm", 62, KEY).unwrap();
    ep.connect(&parent, KEY, Duration::from_secs(10)).unwrap();
    println!("{}", ep.addr());
    loop {
        ep.progress().unwrap();
        std::thread::sleep(Duration::from_micros(50));
    }
}

#[test]
fn a_killed_shm_peer_fails_its_sends_within_100ms() {
    let mut ep = Endpoint::open("shm", 61, KEY).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "death_peer_process", "--ignored", "--nocapture"])
        .env("MYRIX_DEATH_PEER", ep.addr().to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The child connects to us (we answer while reading its address), then we to it.
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        lines.find_map(|l| l.ok().filter(|l| l.contains("@shm:")))
    });
    while !reader.is_finished() {
        ep.progress().unwrap();
    }
    let addr = reader.join().unwrap().expect("the child's address");
    let peer = ep
        .connect(&addr.parse().unwrap(), KEY, Duration::from_secs(10))
        .unwrap();
    // A large send waits for the peer to pull it, which it never will.
    let big = vec![1u8; 1 << 20];
    let s = ep.isend(peer, &[&big], 1, 0).unwrap();
    for _ in 0..1000 {
        assert!(ep.test(s).unwrap().is_none(), "nothing pulls it");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let dead = Instant::now();
    let st = loop {
        if let Some((st, _)) = ep.test(s).unwrap() {
            break st;
        }
        assert!(dead.elapsed() < Duration::from_secs(10), "never noticed");
    };
    let took = dead.elapsed();
    assert_eq!(st.code, Code::Unreachable);
    assert!(took < Duration::from_millis(100), "noticed after {took:?}");
    // A receive waiting for it ends at once, not after its timeout.
    assert!(ep.peer_lost(peer));
    let r = ep.recv_from(
        peer,
        RecvBuf::One(vec![0; 8]),
        1,
        u64::MAX,
        Duration::from_secs(10),
    );
    assert!(matches!(r, Err(MxError::PeerLost)), "{r:?}");
}

#[test]
fn a_missing_shm_endpoint_is_named_not_a_raw_os_error() {
    let mut ep = Endpoint::open("shm", 63, KEY).unwrap();
    let mut addr = ep.addr().clone();
    addr.endpoint = 99;
    addr.locator = addr.locator.replace("-63", "-99");
    let e = ep.connect(&addr, KEY, Duration::from_secs(5)).unwrap_err();
    assert!(
        e.to_string().contains("no endpoint 99 open on this host"),
        "{e}"
    );
}

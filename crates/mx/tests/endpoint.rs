//! The endpoint API over the real transports, two endpoints in one process.

use std::time::Duration;

use myrix_mx::engine::Codec;
use myrix_mx::{Code, Endpoint, MxError, OmxEndpoint, RecvBuf};

const T: Duration = Duration::from_secs(20);

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 13 + len) as u8).collect()
}

/// Every message class both ways between `a` and `b`.
fn exchange<C: Codec>(mut a: Endpoint<C>, mut b: Endpoint<C>) {
    let (pa, pb) = pair(&mut a, &mut b);
    for len in [
        0,
        8,
        32,
        100,
        128,
        129,
        5000,
        32 * 1024,
        32 * 1024 + 1,
        1 << 20,
    ] {
        let data = pattern(len);
        let r = b
            .irecv(RecvBuf::One(vec![0; len]), len as u64, u64::MAX, 0)
            .unwrap();
        let s = a.isend(pa, &[&data], len as u64, 0).unwrap();
        // Both sides must progress: run them alternately.
        let mut done_s = None;
        let mut done_r = None;
        let start = std::time::Instant::now();
        while done_s.is_none() || done_r.is_none() {
            assert!(start.elapsed() < T, "len {len} stuck");
            if done_s.is_none() {
                done_s = a.test(s).unwrap();
            }
            if done_r.is_none() {
                done_r = b.test(r).unwrap();
            } else {
                // The receiver keeps acknowledging.
                b.progress().unwrap();
            }
        }
        let (st, buf) = done_r.unwrap();
        assert_eq!((st.code, st.xfer_len, st.source), (Code::Success, len, pb));
        assert_eq!(buf.unwrap().to_vec(), data, "len {len}");
        assert_eq!(done_s.unwrap().0.code, Code::Success);
    }
}

#[test]
fn udp_ipv4() {
    exchange(
        Endpoint::open("udp:127.0.0.1:0", 1, 7).unwrap(),
        Endpoint::open("udp:127.0.0.1:0", 2, 7).unwrap(),
    );
}

#[test]
fn udp_ipv6() {
    let Ok(a) = Endpoint::open("udp:[::1]:0", 1, 7) else {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    };
    exchange(a, Endpoint::open("udp:[::1]:0", 2, 7).unwrap());
}

/// Raw Ethernet on the loopback interface (needs CAP_NET_RAW: root, as `.ci/run` is).
#[test]
fn raw_ethernet_on_loopback() {
    let a = match Endpoint::open("eth:lo", 1, 7) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skipped: no raw Ethernet socket here ({e})");
            return;
        }
    };
    assert!(a.addr().to_string().contains("@eth:000000000000"));
    exchange(a, Endpoint::open("eth:lo", 2, 7).unwrap());
}

/// Open-MX's frames on the loopback interface (root, as above); synchronous sends too
/// (they go by rendezvous in this layout).
#[test]
fn open_mx_frames_on_loopback() {
    let mut a = match OmxEndpoint::open_omx("omx:lo", 1, 7) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skipped: no raw Ethernet socket here ({e})");
            return;
        }
    };
    assert!(a.addr().to_string().contains("@omx:000000000000"));
    assert!(
        Endpoint::open("omx:lo", 1, 7).is_err(),
        "Open-MX frames need an OmxEndpoint"
    );
    let mut b = OmxEndpoint::open_omx("omx:lo", 2, 7).unwrap();
    let (pa, _) = pair(&mut a, &mut b);
    let r = b.irecv(RecvBuf::One(vec![0; 8]), 5, u64::MAX, 0).unwrap();
    let s = a.issend(pa, &[b"in sync"], 5, 0).unwrap();
    let start = std::time::Instant::now();
    let (mut sd, mut rd) = (None, None);
    while sd.is_none() || rd.is_none() {
        assert!(start.elapsed() < T, "issend stuck");
        if sd.is_none() {
            sd = a.test(s).unwrap();
        }
        if rd.is_none() {
            rd = b.test(r).unwrap();
        } else {
            b.progress().unwrap();
        }
    }
    assert_eq!(rd.unwrap().0.xfer_len, 7);
    assert_eq!(sd.unwrap().0.code, Code::Success);
    exchange(a, b);
}

#[test]
fn shared_memory() {
    exchange(
        Endpoint::open("shm", 201, 7).unwrap(),
        Endpoint::open("shm", 202, 7).unwrap(),
    );
}

#[test]
fn an_endpoint_to_itself() {
    let mut a = Endpoint::open("self", 0, 7).unwrap();
    let me = a.connect(&a.addr().clone(), 7, T).unwrap();
    for len in [3, 4000, 100_000] {
        let r = a.irecv(RecvBuf::One(vec![0; len]), 1, u64::MAX, 0).unwrap();
        let s = a.isend(me, &[&pattern(len)], 1, 0).unwrap();
        let (st, buf) = a.wait(r, T).unwrap().unwrap();
        assert_eq!(st.xfer_len, len);
        assert_eq!(buf.unwrap().to_vec(), pattern(len));
        assert!(a.wait(s, T).unwrap().is_some());
    }
}

#[test]
fn shm_endpoint_in_use_and_reopened() {
    let a = Endpoint::open("shm", 203, 7).unwrap();
    let e = Endpoint::open("shm", 203, 7).err().unwrap();
    assert!(e.to_string().contains("open in another process"), "{e}");
    drop(a);
    // Closed: the id is free again.
    Endpoint::open("shm", 203, 7).unwrap();
}

/// Opens shm endpoint `id` and connects it to `b` (which must make progress to answer).
fn open_connected(b: &mut Endpoint, id: u8) -> (Endpoint, myrix_mx::PeerId) {
    let mut a = Endpoint::open("shm", id, 7).unwrap();
    let ca = a.iconnect(&b.addr().clone(), 7).unwrap();
    loop {
        b.progress().unwrap();
        if let Some((st, _)) = a.test(ca).unwrap() {
            return (a, st.source);
        }
    }
}

/// A sender that closes and reopens its endpoint gets a fresh ring in the receiver's
/// segment and is heard again at once, many times over (more than the ring count).
#[test]
fn shm_sender_reopens_and_sends_again() {
    let mut b = Endpoint::open("shm", 205, 7).unwrap();
    for round in 0..40u64 {
        let (mut a, pa) = open_connected(&mut b, 206);
        let r = b
            .irecv(RecvBuf::One(vec![0; 8]), round, u64::MAX, 0)
            .unwrap();
        let s = a.isend(pa, &[&round.to_le_bytes()], round, 0).unwrap();
        let (st, buf) = b.wait(r, T).unwrap().expect("heard after reopening");
        assert_eq!((st.code, st.match_info), (Code::Success, round));
        assert_eq!(buf.unwrap().to_vec(), round.to_le_bytes());
        assert!(a.wait(s, T).unwrap().is_some());
    }
}

#[test]
fn bad_key_bad_board_bad_address() {
    let mut a = Endpoint::open("udp:127.0.0.1:0", 1, 7).unwrap();
    let mut b = Endpoint::open("udp:127.0.0.1:0", 1, 8).unwrap();
    // b must progress to answer: a connect from a thread-free test needs both polled.
    let addr = b.addr().clone();
    let h = std::thread::spawn(move || {
        for _ in 0..200_000 {
            let _ = b.progress();
        }
    });
    match a.connect(&addr, 7, T) {
        Err(MxError::Connect { code, .. }) => assert_eq!(code, Code::BadKey),
        other => panic!("expected a refusal, got {other:?}"),
    }
    h.join().unwrap();
    assert!(matches!(
        Endpoint::open("tcp:1.2.3.4:5", 0, 0),
        Err(MxError::Board(_))
    ));
    // An interface that does not exist: an error naming it, whether or not raw sockets
    // are allowed here.
    match Endpoint::open("eth:nosuchif0", 0, 0) {
        Err(e) => assert!(e.to_string().contains("nosuchif0"), "{e}"),
        Ok(_) => panic!("opened a missing interface"),
    }
    let shm = Endpoint::open("shm", 204, 7).unwrap();
    assert!(matches!(
        a.connect(shm.addr(), 7, T),
        Err(MxError::Transport(_))
    ));
}

/// A sender that closes its endpoint right after sending loses nothing: the receiver
/// still reads every frame the sender published before it gave its ring back, and the
/// ring is free again afterwards (more rounds than rings).
#[test]
fn shm_frames_sent_before_close_arrive() {
    let mut b = Endpoint::open("shm", 207, 7).unwrap();
    for round in 0..24u64 {
        let (mut a, pa) = open_connected(&mut b, 208);
        for k in 0..5u64 {
            let s = a.isend(pa, &[&k.to_le_bytes()], round << 8 | k, 0).unwrap();
            assert!(a.wait(s, T).unwrap().is_some());
        }
        drop(a);
        for k in 0..5u64 {
            let r = b
                .irecv(RecvBuf::One(vec![0; 8]), round << 8 | k, u64::MAX, 0)
                .unwrap();
            let (st, buf) = b
                .wait(r, Duration::from_secs(2))
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: message {k} lost at close"));
            assert_eq!(st.code, Code::Success);
            assert_eq!(buf.unwrap().to_vec(), k.to_le_bytes());
        }
    }
}

/// Connects two endpoints to each other; returns each one's id for the other.
fn pair<C: Codec>(
    a: &mut Endpoint<C>,
    b: &mut Endpoint<C>,
) -> (myrix_mx::PeerId, myrix_mx::PeerId) {
    let ca = a.iconnect(&b.addr().clone(), 7).unwrap();
    let cb = b.iconnect(&a.addr().clone(), 7).unwrap();
    let (mut pa, mut pb) = (None, None);
    while pa.is_none() || pb.is_none() {
        if pa.is_none() {
            pa = a.test(ca).unwrap().map(|c| c.0.source);
        }
        if pb.is_none() {
            pb = b.test(cb).unwrap().map(|c| c.0.source);
        }
    }
    (pa.unwrap(), pb.unwrap())
}

fn blocking_sends(mut a: Endpoint, mut b: Endpoint) {
    let (pa, _) = pair(&mut a, &mut b);
    let lens = [0usize, 8, 5000, 32 * 1024 + 1, 1 << 20, 3 << 20];
    let rx = std::thread::spawn(move || {
        for &len in &lens {
            let r = b
                .irecv(RecvBuf::One(vec![0; len]), len as u64, u64::MAX, 0)
                .unwrap();
            let (st, buf) = b.wait(r, T).unwrap().expect("arrives");
            assert_eq!((st.code, st.xfer_len), (Code::Success, len));
            assert_eq!(buf.unwrap().to_vec(), pattern(len), "len {len}");
        }
        b.flush_all(T).unwrap();
    });
    for &len in &lens {
        let data = pattern(len);
        // Gathered from three pieces, read in place while the call lasts.
        let (x, rest) = data.split_at(len / 3);
        let (y, z) = rest.split_at(rest.len() / 2);
        let st = a.send(pa, &[x, y, z], len as u64, T).unwrap();
        assert_eq!(
            (st.code, st.source, st.match_info, st.msg_len, st.xfer_len),
            (Code::Success, pa, len as u64, len, len)
        );
    }
    while !rx.is_finished() {
        a.progress().unwrap();
    }
    rx.join().unwrap();
}

/// Runs `f` on a pair of shared-memory endpoints (ids `shm_ids`), then on a UDP pair.
fn over_shm_and_udp(shm_ids: (u8, u8), f: impl Fn(Endpoint, Endpoint)) {
    f(
        Endpoint::open("shm", shm_ids.0, 7).unwrap(),
        Endpoint::open("shm", shm_ids.1, 7).unwrap(),
    );
    f(
        Endpoint::open("udp:127.0.0.1:0", 1, 7).unwrap(),
        Endpoint::open("udp:127.0.0.1:0", 2, 7).unwrap(),
    );
}

#[test]
fn blocking_send_over_shm_and_udp() {
    over_shm_and_udp((209, 210), blocking_sends);
}

#[test]
fn a_blocking_send_that_times_out_still_delivers_its_copy() {
    let mut a = Endpoint::open("shm", 211, 7).unwrap();
    let mut b = Endpoint::open("shm", 212, 7).unwrap();
    let (pa, _) = pair(&mut a, &mut b);
    let len = 1 << 20;
    let mut data = pattern(len);
    // Nobody receives yet: the rendezvous cannot finish.
    let e = a
        .send(pa, &[&data], 5, Duration::from_millis(50))
        .unwrap_err();
    assert!(matches!(e, MxError::Timeout), "{e}");
    // The caller has its buffer back and may change it; the message was copied.
    data.fill(0);
    let rx = std::thread::spawn(move || {
        let r = b.irecv(RecvBuf::One(vec![0; len]), 5, u64::MAX, 0).unwrap();
        let (st, buf) = b.wait(r, T).unwrap().expect("arrives");
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        assert_eq!(buf.unwrap().to_vec(), pattern(len));
    });
    while !rx.is_finished() {
        a.progress().unwrap();
    }
    rx.join().unwrap();
}

/// The blocking receive takes messages in the order they were sent, whatever their
/// class: a tiny message straight from its frame never overtakes a medium one that
/// went to the unexpected queue ahead of it, and a receive posted earlier comes first.
fn blocking_receives(mut a: Endpoint, mut b: Endpoint) {
    let (pa, pb) = pair(&mut a, &mut b);
    let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
    let g = gate.clone();
    let tx = std::thread::spawn(move || {
        // All queued before the receiver looks: first a medium message of several
        // frames, which cannot be taken straight from one.
        let mut rs = vec![
            a.isend(pa, &[&pattern(20000)], 1, 0).unwrap(),
            a.isend(pa, &[&pattern(8)], 1, 0).unwrap(),
            a.isend(pa, &[&pattern(9)], 2, 0).unwrap(),
        ];
        g.wait();
        a.send(pa, &[&pattern(1 << 20)], 1, T).unwrap();
        rs.push(a.isend(pa, &[&pattern(32)], 1, 0).unwrap());
        // Taken by a receive posted before the blocking one.
        rs.push(a.isend(pa, &[b"x"], 3, 0).unwrap());
        rs.push(a.isend(pa, &[b"y"], 3, 0).unwrap());
        for r in rs {
            assert_eq!(a.wait(r, T).unwrap().expect("sent").0.code, Code::Success);
        }
        g.wait();
        // After the receiver's timeout: this one must not be lost.
        a.send(pa, &[b"late"], 9, T).unwrap();
        a.flush_all(T).unwrap();
    });
    gate.wait();
    let buf = |n| RecvBuf::One(vec![0; n]);
    for (len, room, m, mask) in [
        (20000, 20000, 1, u64::MAX),
        (8, 8, 1, u64::MAX),
        (1 << 20, 1 << 20, 1, u64::MAX),
        (9, 9, 0, 0), // any match: the one left waiting since the start
        (32, 8, 1, u64::MAX),
    ] {
        let (st, got) = b.recv(buf(room), m, mask, T).unwrap();
        assert_eq!((st.source, st.msg_len, st.xfer_len), (pb, len, room));
        let want = if room < len {
            Code::Truncated
        } else {
            Code::Success
        };
        assert_eq!(st.code, want, "len {len}");
        assert_eq!(got.to_vec(), pattern(len)[..room], "len {len}");
    }
    let r = b.irecv(buf(1), 3, u64::MAX, 0).unwrap();
    let (st, got) = b.recv(buf(1), 3, u64::MAX, T).unwrap();
    assert_eq!((st.code, got.to_vec()), (Code::Success, b"y".to_vec()));
    let (_, first) = b.wait(r, T).unwrap().expect("posted first, matched first");
    assert_eq!(first.unwrap().to_vec(), b"x");
    let e = b.recv(buf(4), 9, u64::MAX, Duration::from_millis(30));
    assert!(matches!(e, Err(MxError::Timeout)), "{e:?}");
    let e = b.recv(buf(4), 3, 1, T);
    assert!(
        matches!(
            e,
            Err(MxError::Engine(myrix_mx::Error::BadMatchMask { .. }))
        ),
        "{e:?}"
    );
    gate.wait();
    let (st, got) = b.recv(buf(4), 9, u64::MAX, T).unwrap();
    assert_eq!((st.code, got.to_vec()), (Code::Success, b"late".to_vec()));
    while !tx.is_finished() {
        b.progress().unwrap();
    }
    tx.join().unwrap();
}

/// A blocking receive that sees a message it does not want go by keeps waiting, and
/// the message waits for its own receive.
fn blocking_receive_lets_others_pass(mut a: Endpoint, mut b: Endpoint) {
    let (pa, _) = pair(&mut a, &mut b);
    let tx = std::thread::spawn(move || {
        a.send(pa, &[&pattern(20000)], 1, T).unwrap();
        a.send(pa, &[&pattern(8)], 1, T).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        a.send(pa, &[&pattern(9)], 2, T).unwrap();
        a.flush_all(T).unwrap();
    });
    let (st, got) = b.recv(RecvBuf::One(vec![0; 9]), 2, u64::MAX, T).unwrap();
    assert_eq!((st.code, got.to_vec()), (Code::Success, pattern(9)));
    for len in [20000, 8] {
        let (st, got) = b.recv(RecvBuf::One(vec![0; len]), 1, u64::MAX, T).unwrap();
        assert_eq!((st.code, got.to_vec()), (Code::Success, pattern(len)));
    }
    while !tx.is_finished() {
        b.progress().unwrap();
    }
    tx.join().unwrap();
}

#[test]
fn blocking_receive_over_shm_and_udp() {
    over_shm_and_udp((213, 214), blocking_receives);
    over_shm_and_udp((213, 214), blocking_receive_lets_others_pass);
}

#[test]
fn blocking_receive_takes_a_tiny_message_from_its_frame() {
    let mut a = Endpoint::open("shm", 215, 7).unwrap();
    let mut b = Endpoint::open("shm", 216, 7).unwrap();
    let (pa, _) = pair(&mut a, &mut b);
    let before = b.stats().fast_recvs;
    a.send(pa, &[b"tiny"], 4, T).unwrap();
    let (st, got) = b.recv(RecvBuf::One(vec![0; 4]), 4, u64::MAX, T).unwrap();
    assert_eq!((st.code, got.to_vec()), (Code::Success, b"tiny".to_vec()));
    assert_eq!(b.stats().fast_recvs, before + 1);
}

/// Disconnect, a refused send, connect again, and messages flow both ways.
fn disconnect_and_connect_again(mut a: Endpoint, mut b: Endpoint) {
    let (pa, _) = pair(&mut a, &mut b);
    let b_addr = b.addr().clone();
    let rx = std::thread::spawn(move || {
        for want in [b"one".as_slice(), b"two"] {
            let (st, got) = b.recv(RecvBuf::One(vec![0; 3]), 1, u64::MAX, T).unwrap();
            assert_eq!((st.code, got.to_vec()), (Code::Success, want.to_vec()));
            b.send(st.source, &[want], 2, T).unwrap();
        }
        b.flush_all(T).unwrap();
        // Stay until the other side is done with us.
        let _ = b.recv(RecvBuf::One(vec![]), 9, u64::MAX, T);
    });
    a.send(pa, &[b"one"], 1, T).unwrap();
    let (st, _) = a.recv(RecvBuf::One(vec![0; 3]), 2, u64::MAX, T).unwrap();
    assert_eq!(st.code, Code::Success);
    a.disconnect(pa).unwrap();
    let e = a.send(pa, &[b"no"], 1, T).unwrap_err();
    assert!(
        matches!(e, MxError::Engine(myrix_mx::Error::NotConnected(_))),
        "{e}"
    );
    let pa = a.connect(&b_addr, 7, T).unwrap();
    a.send(pa, &[b"two"], 1, T).unwrap();
    let (st, got) = a.recv(RecvBuf::One(vec![0; 3]), 2, u64::MAX, T).unwrap();
    assert_eq!((st.code, got.to_vec()), (Code::Success, b"two".to_vec()));
    a.send(pa, &[], 9, T).unwrap();
    a.flush_all(T).unwrap();
    rx.join().unwrap();
}

#[test]
fn disconnect_over_shm_and_udp() {
    over_shm_and_udp((217, 218), disconnect_and_connect_again);
}

/// `len` bytes of caller memory, with 16 more after them that must stay untouched, lent
/// to a receive as a C ABI's `mx_irecv` would.
fn caller_memory(len: usize) -> (Vec<u8>, RecvBuf) {
    let mut mem = vec![0xeeu8; len + 16];
    // SAFETY: the tests below touch `mem` only once the receive's completion is taken,
    // and keep it alive until then (moving a `Vec` does not move its heap bytes).
    let buf = unsafe { myrix_mx::raw::RawRecv::recv_buf(mem.as_mut_ptr(), mem.len()) };
    (mem, buf)
}

fn check_caller_memory(st: myrix_mx::Status, mem: &[u8], data: &[u8]) {
    let len = data.len();
    assert_eq!(
        (st.code, st.msg_len, st.xfer_len),
        (Code::Success, len, len)
    );
    assert_eq!(&mem[..len], data, "len {len}");
    assert!(
        mem[len..].iter().all(|&x| x == 0xee),
        "len {len}: wrote past"
    );
}

/// Receives into raw caller memory, every message class, over UDP (lossy: acks,
/// fragments, pulls) and to itself (lossless: the fast paths and the blocking receive
/// that waits without a request).
#[test]
fn receives_into_caller_memory() {
    let lens = [0usize, 8, 100, 5000, 100_000];
    let mut a = Endpoint::open("udp:127.0.0.1:0", 1, 7).unwrap();
    let mut b = Endpoint::open("udp:127.0.0.1:0", 2, 7).unwrap();
    let (pa, _) = pair(&mut a, &mut b);
    for len in lens {
        let data = pattern(len);
        let (mem, buf) = caller_memory(len);
        let r = b.irecv(buf, 5, u64::MAX, 0).unwrap();
        let s = a.isend(pa, &[&data], 5, 0).unwrap();
        let (mut done_s, mut done_r) = (None, None);
        while done_s.is_none() || done_r.is_none() {
            if done_s.is_none() {
                done_s = a.test(s).unwrap();
            }
            if done_r.is_none() {
                done_r = b.test(r).unwrap();
            } else {
                b.progress().unwrap();
            }
        }
        let (st, back) = done_r.unwrap();
        assert!(
            matches!(back, Some(RecvBuf::Target(_))),
            "the target comes back"
        );
        check_caller_memory(st, &mem, &data);
    }
    let mut s = Endpoint::open("self", 0, 7).unwrap();
    let me = s.connect(&s.addr().clone(), 7, T).unwrap();
    for len in lens {
        let data = pattern(len);
        let (mem, buf) = caller_memory(len);
        s.isend(me, &[&data], 6, 0).unwrap();
        let (st, _) = s.recv(buf, 6, u64::MAX, T).unwrap();
        check_caller_memory(st, &mem, &data);
        let (mem, buf) = caller_memory(len);
        let r = s.irecv(buf, 7, u64::MAX, 0).unwrap();
        s.isend(me, &[&data], 7, 0).unwrap();
        let (st, _) = s.wait(r, T).unwrap().unwrap();
        check_caller_memory(st, &mem, &data);
    }
}

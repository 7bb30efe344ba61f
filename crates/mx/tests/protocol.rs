//! Another protocol served beside MX on one endpoint's transport: its frames reach it,
//! MX's reach the engine, both at once, over UDP and shared memory.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use myrix_mx::protocol::Protocol;
use myrix_mx::transport::{Loc, Verdict};
use myrix_mx::{Code, Endpoint, MxError, RecvBuf};
use myrix_wire::protocol::{MX, RSM};

const T: Duration = Duration::from_secs(20);

/// Answers every frame with the same bytes, its second byte set to 1 ("reply").
struct Echo {
    out: VecDeque<(Loc, Vec<u8>)>,
}

impl Protocol for Echo {
    fn tag(&self) -> u8 {
        RSM
    }
    fn handle_frame(&mut self, _now: u64, from: &Loc, frame: &[u8]) -> Verdict {
        let mut f = frame.to_vec();
        f[1] = 1;
        self.out.push_back((from.clone(), f));
        Verdict::Taken
    }
    fn poll_transmit(&mut self, _now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        let (to, f) = self.out.pop_front()?;
        buf[..f.len()].copy_from_slice(&f);
        Some((to, f.len()))
    }
}

/// Sends `n` numbered requests to one peer and records the replies.
struct Probe {
    to: Loc,
    next: u32,
    n: u32,
    replies: Arc<Mutex<Vec<u32>>>,
}

impl Protocol for Probe {
    fn tag(&self) -> u8 {
        RSM
    }
    fn handle_frame(&mut self, _now: u64, _from: &Loc, frame: &[u8]) -> Verdict {
        assert_eq!(frame[1], 1, "a reply");
        let k = u32::from_be_bytes(frame[2..6].try_into().unwrap());
        self.replies.lock().unwrap().push(k);
        Verdict::Taken
    }
    fn poll_transmit(&mut self, _now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        if self.next == self.n {
            return None;
        }
        buf[0] = RSM;
        buf[1] = 0;
        buf[2..6].copy_from_slice(&self.next.to_be_bytes());
        self.next += 1;
        Some((self.to.clone(), 6))
    }
}

fn both(board: &str) {
    let mut a = Endpoint::open(board, 1, 7).unwrap();
    let mut b = Endpoint::open(board, 2, 7).unwrap();
    let b_addr = b.addr().clone();
    b.attach(Box::new(Echo {
        out: VecDeque::new(),
    }))
    .unwrap();
    let replies = Arc::new(Mutex::new(Vec::new()));
    let to = a.locate(&b_addr).unwrap();
    a.attach(Box::new(Probe {
        to,
        next: 0,
        n: 50,
        replies: replies.clone(),
    }))
    .unwrap();
    // MX at the same time, on the same transports.
    let ra = a.iconnect(&b_addr, 7).unwrap();
    let data = vec![7u8; 5000];
    let r = b
        .irecv(RecvBuf::One(vec![0; 5000]), 9, u64::MAX, 0)
        .unwrap();
    let start = Instant::now();
    let mut peer = None;
    let mut sent = false;
    let mut got = None;
    while got.is_none() || replies.lock().unwrap().len() < 50 {
        assert!(start.elapsed() < T, "stuck");
        match peer {
            None => {
                if let Some((st, _)) = a.test(ra).unwrap() {
                    assert_eq!(st.code, Code::Success);
                    peer = Some(st.source);
                }
            }
            Some(p) if !sent => {
                a.isend(p, &[&data], 9, 0).unwrap();
                sent = true;
            }
            Some(_) => {
                a.progress().unwrap();
            }
        }
        if got.is_none() {
            got = b.test(r).unwrap();
        } else {
            b.progress().unwrap();
        }
    }
    let (st, buf) = got.unwrap();
    assert_eq!((st.code, st.xfer_len), (Code::Success, 5000));
    assert_eq!(buf.unwrap().to_vec(), data);
    let mut seen = replies.lock().unwrap().clone();
    seen.sort_unstable();
    seen.dedup();
    // UDP on loopback may in principle drop; this toy protocol does not resend.
    assert!(seen.len() >= 45, "{} of 50 replies", seen.len());
    assert!(seen.iter().all(|&k| k < 50));
}

#[test]
fn another_protocol_beside_mx_over_udp() {
    both("udp:127.0.0.1:0");
}

#[test]
fn another_protocol_beside_mx_over_shm() {
    both("shm");
}

#[test]
fn attach_refuses_mx_and_a_tag_taken() {
    struct Tagged(u8);
    impl Protocol for Tagged {
        fn tag(&self) -> u8 {
            self.0
        }
        fn handle_frame(&mut self, _: u64, _: &Loc, _: &[u8]) -> Verdict {
            Verdict::Taken
        }
        fn poll_transmit(&mut self, _: u64, _: &mut [u8]) -> Option<(Loc, usize)> {
            None
        }
    }
    let mut e = Endpoint::open("self", 0, 1).unwrap();
    assert!(matches!(e.attach(Box::new(Tagged(MX))), Err(MxError::Tag(t)) if t == MX));
    e.attach(Box::new(Tagged(RSM))).unwrap();
    assert!(matches!(
        e.attach(Box::new(Tagged(RSM))),
        Err(MxError::Tag(_))
    ));
    assert!(e.attached(RSM).is_some());
    assert!(e.detach(RSM).is_some());
    assert!(e.attached(RSM).is_none());
}

/// Records every frame it is handed.
struct Sink(Arc<Mutex<Vec<Vec<u8>>>>);

impl Protocol for Sink {
    fn tag(&self) -> u8 {
        RSM
    }
    fn handle_frame(&mut self, _: u64, _: &Loc, frame: &[u8]) -> Verdict {
        self.0.lock().unwrap().push(frame.to_vec());
        Verdict::Taken
    }
    fn poll_transmit(&mut self, _: u64, _: &mut [u8]) -> Option<(Loc, usize)> {
        None
    }
}

#[test]
fn send_with_sends_the_datagram_the_caller_fills() {
    let mut a = Endpoint::open("udp:127.0.0.1:0", 1, 7).unwrap();
    let mut b = Endpoint::open("udp:127.0.0.1:0", 2, 7).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    b.attach(Box::new(Sink(got.clone()))).unwrap();
    let to = a.locate(&b.addr().clone()).unwrap();
    // Nothing to send: `fill` is called, nothing leaves.
    assert!(a.send_with(|_, _| None).unwrap());
    let mut times = Vec::new();
    for k in 0..3u8 {
        let sent = a
            .send_with(|now, buf| {
                times.push(now);
                buf[..3].copy_from_slice(&[RSM, 9, k]);
                Some((to.clone(), 3))
            })
            .unwrap();
        assert!(sent);
    }
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let start = Instant::now();
    while got.lock().unwrap().len() < 3 {
        assert!(start.elapsed() < T, "stuck");
        b.progress().unwrap();
    }
    assert_eq!(
        *got.lock().unwrap(),
        [vec![RSM, 9, 0], vec![RSM, 9, 1], vec![RSM, 9, 2]]
    );
}

/// Echo that answers in the endpoint's send buffer while the receive runs when it is
/// offered, and otherwise queues the answer for `poll_transmit`; counts both.
struct AnswerEcho {
    out: VecDeque<(Loc, Vec<u8>)>,
    in_room: Arc<Mutex<u32>>,
}

impl Protocol for AnswerEcho {
    fn tag(&self) -> u8 {
        RSM
    }
    fn handle_frame(&mut self, _now: u64, from: &Loc, frame: &[u8]) -> Verdict {
        let mut f = frame.to_vec();
        f[1] = 1;
        self.out.push_back((from.clone(), f));
        Verdict::Taken
    }
    fn handle_frame_answer(
        &mut self,
        _now: u64,
        from: &Loc,
        frame: &[u8],
        room: &mut [u8],
    ) -> (Verdict, Option<(Loc, usize)>) {
        room[..frame.len()].copy_from_slice(frame);
        room[1] = 1;
        *self.in_room.lock().unwrap() += 1;
        (Verdict::Taken, Some((from.clone(), frame.len())))
    }
    fn poll_transmit(&mut self, _now: u64, buf: &mut [u8]) -> Option<(Loc, usize)> {
        let (to, f) = self.out.pop_front()?;
        buf[..f.len()].copy_from_slice(&f);
        Some((to, f.len()))
    }
}

/// Every request is answered exactly once, whether the answer was written in the
/// receive's lent buffer (one per receive) or queued for the protocols' loop.
fn answers(board: &str) {
    // Endpoint ids of their own: the shared-memory test above runs alongside with 1 and 2.
    let mut a = Endpoint::open(board, 3, 7).unwrap();
    let mut b = Endpoint::open(board, 4, 7).unwrap();
    let in_room = Arc::new(Mutex::new(0));
    b.attach(Box::new(AnswerEcho {
        out: VecDeque::new(),
        in_room: in_room.clone(),
    }))
    .unwrap();
    let replies = Arc::new(Mutex::new(Vec::new()));
    let to = a.locate(&b.addr().clone()).unwrap();
    a.attach(Box::new(Probe {
        to,
        next: 0,
        n: 50,
        replies: replies.clone(),
    }))
    .unwrap();
    let start = Instant::now();
    while replies.lock().unwrap().len() < 50 {
        assert!(start.elapsed() < T, "stuck");
        a.progress().unwrap();
        b.progress().unwrap();
    }
    let mut seen = replies.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..50).collect::<Vec<_>>());
    let n = *in_room.lock().unwrap();
    assert!(n >= 1, "no answer went from the receive's buffer");
    // One progress of `a` sends all 50 requests; the shared-memory ring hands `b`
    // several per receive, and only the first of each may use the buffer.
    if board == "shm" {
        assert!(n < 50, "every answer in the buffer: {n}");
    }
}

#[test]
fn answers_leave_from_the_receive_or_the_loop_over_udp() {
    answers("udp:127.0.0.1:0");
}

#[test]
fn answers_leave_from_the_receive_or_the_loop_over_shm() {
    answers("shm");
}

//! The point-to-point rules, one at a time, over the loop network.

mod common;

use common::{drive, irecv, net, wait, E, EAGER};
use myrix_mpi::p2p::{P2pError, ReqId, SendMode};

fn pattern(id: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ id).collect()
}

fn isend(es: &mut [E], from: usize, to: u32, ctx: u32, tag: i32, d: &[u8], m: SendMode) -> ReqId {
    // SAFETY: every test keeps `d` alive until the send is complete.
    unsafe { es[from].isend(to, ctx, tag, d.as_ptr(), d.len(), m) }.unwrap()
}

#[test]
fn eager_and_rendezvous_either_order() {
    for seed in 0..8 {
        for len in [0, 1, EAGER, EAGER + 1, 5000] {
            let (_n, mut es) = net(2, seed);
            let data = pattern(7, len);
            // Receive first.
            let mut buf = vec![0u8; len];
            let r = irecv(&mut es, 1, Some(0), Some(3), &mut buf);
            let s = isend(&mut es, 0, 1, 0, 3, &data, SendMode::Standard);
            let st = wait(&mut es, 1, r);
            assert_eq!((st.source, st.tag, st.len, st.error), (0, 3, len, None));
            assert_eq!(buf, data);
            wait(&mut es, 0, s);
            // Send first: unexpected.
            let s = isend(&mut es, 0, 1, 0, 4, &data, SendMode::Standard);
            for _ in 0..5 {
                es[1].progress().unwrap();
            }
            let mut buf = vec![0u8; len];
            let r = irecv(&mut es, 1, None, None, &mut buf);
            let st = wait(&mut es, 1, r);
            assert_eq!((st.source, st.tag, st.len), (0, 4, len));
            assert_eq!(buf, data);
            wait(&mut es, 0, s);
            assert_eq!(es[0].live_requests() + es[1].live_requests(), 0);
        }
    }
}

#[test]
fn one_source_never_overtakes() {
    for seed in 0..16 {
        let (_n, mut es) = net(2, seed);
        let msgs: Vec<(i32, Vec<u8>)> = (0..12)
            .map(|i| {
                (
                    i % 3,
                    pattern(i as u8, [3, EAGER + 10, 0, 40][i as usize % 4]),
                )
            })
            .collect();
        let sends: Vec<ReqId> = msgs
            .iter()
            .map(|(t, d)| isend(&mut es, 0, 1, 0, *t, d, SendMode::Standard))
            .collect();
        for _ in 0..seed {
            es[1].progress().unwrap();
        }
        // Tag 1 only, then the rest with ANY_TAG: each in send order.
        let mut got = Vec::new();
        for want in msgs.iter().filter(|(t, _)| *t == 1) {
            let mut b = vec![0u8; 100];
            let st = es[1].recv(Some(0), 0, Some(1), &mut b).unwrap();
            assert_eq!(&b[..st.len], &want.1[..]);
            got.push(st);
        }
        for want in msgs.iter().filter(|(t, _)| *t != 1) {
            let mut b = vec![0u8; 100];
            let st = es[1].recv(Some(0), 0, None, &mut b).unwrap();
            assert_eq!((st.tag, &b[..st.len]), (want.0, &want.1[..]));
        }
        for s in sends {
            wait(&mut es, 0, s);
        }
    }
}

#[test]
fn earliest_posted_receive_wins() {
    let (_n, mut es) = net(3, 1);
    let (mut a, mut b, mut c) = ([0u8; 8], [0u8; 8], [0u8; 8]);
    let ra = irecv(&mut es, 0, None, Some(5), &mut a);
    let rb = irecv(&mut es, 0, Some(2), Some(5), &mut b);
    let rc = irecv(&mut es, 0, Some(2), None, &mut c);
    let d1 = [1u8; 8];
    let d2 = [2u8; 8];
    let d3 = [3u8; 8];
    isend(&mut es, 2, 0, 0, 5, &d1, SendMode::Standard);
    let sa = wait(&mut es, 0, ra);
    assert_eq!((sa.source, a), (2, d1));
    isend(&mut es, 2, 0, 0, 5, &d2, SendMode::Standard);
    isend(&mut es, 2, 0, 0, 6, &d3, SendMode::Standard);
    wait(&mut es, 0, rb);
    wait(&mut es, 0, rc);
    assert_eq!((b, c), (d2, d3));
}

#[test]
fn any_source_takes_from_every_rank_and_contexts_stay_apart() {
    let (_n, mut es) = net(4, 9);
    let d = pattern(1, 10);
    for e in es.iter_mut().skip(1) {
        // SAFETY: `d` outlives the sends (waited below through the receives' drive).
        unsafe { e.isend(0, 2, 0, d.as_ptr(), d.len(), SendMode::Standard) }.unwrap();
    }
    let mut b = [0u8; 10];
    // Context 0 sees nothing.
    for _ in 0..20 {
        for e in es.iter_mut() {
            e.progress().unwrap();
        }
    }
    assert_eq!(es[0].iprobe(None, 0, None).unwrap(), None);
    let mut seen = Vec::new();
    for _ in 1..4 {
        let st = es[0].recv(None, 2, None, &mut b).unwrap();
        assert_eq!(b.to_vec(), d);
        seen.push(st.source);
    }
    seen.sort();
    assert_eq!(seen, [1, 2, 3]);
}

#[test]
fn truncation_delivers_what_fits() {
    for len in [EAGER, 1000] {
        for recv_first in [false, true] {
            let (_n, mut es) = net(2, len as u64);
            let data = pattern(3, len);
            let mut buf = vec![0u8; 20];
            let (s, r) = if recv_first {
                let r = irecv(&mut es, 1, Some(0), None, &mut buf);
                (isend(&mut es, 0, 1, 0, 1, &data, SendMode::Standard), r)
            } else {
                let s = isend(&mut es, 0, 1, 0, 1, &data, SendMode::Standard);
                for _ in 0..4 {
                    es[1].progress().unwrap();
                }
                (s, irecv(&mut es, 1, Some(0), None, &mut buf))
            };
            let st = wait(&mut es, 1, r);
            assert_eq!(st.len, 20);
            assert_eq!(st.error, Some(P2pError::Truncated { len, cap: 20 }));
            assert_eq!(buf, data[..20]);
            assert_eq!(wait(&mut es, 0, s).error, None);
        }
    }
}

#[test]
fn sync_send_completes_only_once_matched() {
    for len in [4, 500] {
        for seed in 0..4 {
            let (_n, mut es) = net(2, seed);
            let data = pattern(9, len);
            let s = isend(&mut es, 0, 1, 0, 1, &data, SendMode::Sync);
            for _ in 0..50 {
                es[0].progress().unwrap();
                es[1].progress().unwrap();
            }
            assert!(!es[0].is_complete(s), "Ssend complete before a receive");
            assert!(es[1].iprobe(Some(0), 0, Some(1)).unwrap().is_some());
            let mut b = vec![0u8; len];
            let r = irecv(&mut es, 1, None, None, &mut b);
            wait(&mut es, 1, r);
            let st = wait(&mut es, 0, s);
            assert_eq!((st.len, st.error, st.cancelled), (len, None, false));
            assert_eq!(b, data);
        }
    }
}

#[test]
fn sync_message_waiting_does_not_block_later_ones() {
    let (_n, mut es) = net(2, 3);
    let d = [5u8; 4];
    let s1 = isend(&mut es, 0, 1, 0, 1, &d, SendMode::Sync);
    let s2 = isend(&mut es, 0, 1, 0, 2, &d, SendMode::Standard);
    let mut b = [0u8; 4];
    let st = es[1].recv(Some(0), 0, Some(2), &mut b).unwrap();
    assert_eq!(st.tag, 2);
    wait(&mut es, 0, s2);
    assert!(!es[0].is_complete(s1));
    es[1].recv(Some(0), 0, Some(1), &mut b).unwrap();
    wait(&mut es, 0, s1);
}

#[test]
fn standard_and_ready_eager_sends_complete_without_a_receive() {
    let (_n, mut es) = net(2, 0);
    let d = [1u8; 8];
    let s = isend(&mut es, 0, 1, 0, 1, &d, SendMode::Standard);
    let r = isend(&mut es, 0, 1, 0, 1, &d, SendMode::Ready);
    wait(&mut es, 0, s);
    wait(&mut es, 0, r);
    let mut b = [0u8; 8];
    es[1].recv(Some(0), 0, Some(1), &mut b).unwrap();
    es[1].recv(Some(0), 0, Some(1), &mut b).unwrap();
}

#[test]
fn cancel_rules() {
    let (_n, mut es) = net(2, 4);
    let mut b = [0u8; 8];
    // An unmatched receive is cancelled.
    let r = irecv(&mut es, 1, Some(0), Some(1), &mut b);
    es[1].cancel(r).unwrap();
    let st = es[1].test(r).unwrap().unwrap();
    assert!(st.cancelled);
    assert_eq!(st.len, 0);
    assert_eq!(es[1].test(r), Err(P2pError::UnknownRequest));
    // A cancelled receive takes no message: the next one gets it.
    let d = [4u8; 8];
    let s = isend(&mut es, 0, 1, 0, 1, &d, SendMode::Standard);
    let mut b2 = [0u8; 8];
    let st = es[1].recv(Some(0), 0, Some(1), &mut b2).unwrap();
    assert_eq!((st.cancelled, b2, b), (false, d, [0; 8]));
    // A send is not cancelled: it completes normally.
    es[0].cancel(s).unwrap();
    let st = wait(&mut es, 0, s);
    assert!(!st.cancelled);
    // A matched receive is not cancelled.
    let big = pattern(1, 300);
    let s = isend(&mut es, 0, 1, 0, 1, &big, SendMode::Sync);
    let mut bb = vec![0u8; 300];
    let r = irecv(&mut es, 1, Some(0), Some(1), &mut bb);
    drive(&mut es, |es| es[0].is_complete(s));
    es[1].cancel(r).unwrap();
    let st = wait(&mut es, 1, r);
    assert!(!st.cancelled);
    assert_eq!(bb, big);
}

#[test]
fn probe_and_matched_probe() {
    let (_n, mut es) = net(2, 5);
    assert_eq!(es[1].iprobe(None, 0, None).unwrap(), None);
    let d1 = pattern(1, 100);
    let d2 = pattern(2, 10);
    let s1 = isend(&mut es, 0, 1, 0, 1, &d1, SendMode::Standard);
    let s2 = isend(&mut es, 0, 1, 0, 2, &d2, SendMode::Standard);
    drive(&mut es, |es| {
        es[1].iprobe(Some(0), 0, Some(2)).unwrap().is_some()
    });
    let st = es[1].iprobe(None, 0, None).unwrap().unwrap();
    assert_eq!(
        (st.source, st.tag, st.len),
        (0, 1, 100),
        "probe sees the earliest"
    );
    // improbe takes message 1 out of matching.
    let (h, st) = es[1].improbe(None, 0, None).unwrap().unwrap();
    assert_eq!((st.tag, st.len), (1, 100));
    let mut b = vec![0u8; 100];
    let st = es[1].recv(None, 0, None, &mut b).unwrap();
    assert_eq!(
        (st.tag, &b[..10]),
        (2, &d2[..]),
        "the improbed message is not matched"
    );
    // SAFETY: `b` outlives the request, waited for below.
    let r = unsafe { es[1].imrecv(h, b.as_mut_ptr(), b.len()) }.unwrap();
    let st = wait(&mut es, 1, r);
    assert_eq!((st.tag, st.len, &b), (1, 100, &d1));
    // SAFETY: refused before any use of the buffer.
    let again = unsafe { es[1].imrecv(h, b.as_mut_ptr(), b.len()) };
    assert_eq!(again, Err(P2pError::UnknownRequest));
    wait(&mut es, 0, s1);
    wait(&mut es, 0, s2);
}

#[test]
fn peer_lost_fails_what_depends_on_it_and_nothing_else() {
    let (net, mut es) = net(3, 6);
    let short = [9u8; 8];
    let long = pattern(3, 400);
    // Rank 2 sends rank 0 a short message (it arrives) before dying.
    let s = isend(&mut es, 2, 0, 0, 7, &short, SendMode::Standard);
    drive(&mut es, |es| {
        es[0].iprobe(Some(2), 0, Some(7)).unwrap().is_some()
    });
    let _ = s;
    let mut b_from2 = [0u8; 8];
    let mut b_any = [0u8; 8];
    let mut b_from1 = [0u8; 8];
    let r_from2 = irecv(&mut es, 0, Some(2), Some(1), &mut b_from2);
    let r_any = irecv(&mut es, 0, None, Some(1), &mut b_any);
    let r_from1 = irecv(&mut es, 0, Some(1), Some(1), &mut b_from1);
    let s_to2 = isend(&mut es, 0, 2, 0, 1, &long, SendMode::Standard);
    net.kill(2, "killed by the test");
    es[0].progress().unwrap();
    for r in [r_from2, r_any, s_to2] {
        let st = es[0].test(r).unwrap().expect("completed by the loss");
        assert!(
            matches!(st.error, Some(P2pError::PeerLost { rank: 2, .. })),
            "{st:?}"
        );
    }
    assert!(!es[0].is_complete(r_from1));
    // Rank 1 still works.
    let d = [1u8; 8];
    isend(&mut es, 1, 0, 0, 1, &d, SendMode::Standard);
    let st = wait(&mut es[..2], 0, r_from1);
    assert_eq!((st.error, b_from1), (None, d));
    // What rank 2 sent before dying can still be received.
    let mut b = [0u8; 8];
    let st = es[0].recv(Some(2), 0, Some(7), &mut b).unwrap();
    assert_eq!((st.error, b), (None, short));
    // New work with rank 2 fails at once.
    // SAFETY: refused before any use of the buffer.
    let e = unsafe { es[0].isend(2, 0, 1, long.as_ptr(), 4, SendMode::Standard) };
    assert!(matches!(e, Err(P2pError::PeerLost { rank: 2, .. })));
    let st = es[0].recv(Some(2), 0, None, &mut b).unwrap();
    assert!(matches!(st.error, Some(P2pError::PeerLost { rank: 2, .. })));
}

#[test]
fn peer_lost_fails_a_receive_already_matched_to_its_rendezvous() {
    let (net, mut es) = net(2, 8);
    let cfg_long = pattern(1, 1000);
    let s = isend(&mut es, 1, 0, 0, 1, &cfg_long, SendMode::Standard);
    drive(&mut es, |es| es[0].iprobe(None, 0, None).unwrap().is_some());
    let (h, _) = es[0].improbe(None, 0, None).unwrap().unwrap();
    net.kill(1, "gone");
    es[0].progress().unwrap();
    let mut b = vec![0u8; 1000];
    // SAFETY: `b` outlives the request, completed at once.
    let r = unsafe { es[0].imrecv(h, b.as_mut_ptr(), b.len()) }.unwrap();
    let st = es[0].test(r).unwrap().unwrap();
    assert!(matches!(st.error, Some(P2pError::PeerLost { rank: 1, .. })));
    let _ = s;
}

#[test]
fn free_and_stale_ids() {
    let (_n, mut es) = net(2, 2);
    let d = [3u8; 8];
    let mut b = [0u8; 8];
    let r = irecv(&mut es, 1, Some(0), None, &mut b);
    es[1].free(r);
    assert_eq!(es[1].live_requests(), 1, "kept until complete");
    let s = isend(&mut es, 0, 1, 0, 0, &d, SendMode::Standard);
    drive(&mut es, |es| es[1].live_requests() == 0);
    assert_eq!(b, d);
    assert_eq!(es[1].test(r), Err(P2pError::UnknownRequest));
    let st = wait(&mut es, 0, s);
    assert_eq!(st.len, 8);
    assert_eq!(es[0].wait(s), Err(P2pError::UnknownRequest));
    assert!(!es[0].is_complete(s));
    assert_eq!(es[0].status(s), None);
}

#[test]
fn send_to_self() {
    let (_n, mut es) = net(1, 0);
    for len in [5, 700] {
        let d = pattern(2, len);
        let s = isend(&mut es, 0, 0, 0, 1, &d, SendMode::Sync);
        let mut b = vec![0u8; len];
        let st = es[0].recv(Some(0), 0, Some(1), &mut b).unwrap();
        assert_eq!((st.len, b), (len, d));
        assert_eq!(wait(&mut es, 0, s).error, None);
    }
}

#[test]
fn blocking_calls_across_threads() {
    let (_n, es) = net(4, 11);
    let handles: Vec<_> = es
        .into_iter()
        .map(|mut e| {
            std::thread::spawn(move || {
                let me = e.rank();
                let n = e.size();
                let right = (me + 1) % n;
                let left = (me + n - 1) % n;
                for round in 0..50u32 {
                    let len = [1, 63, 64, 65, 3000][round as usize % 5];
                    let out = pattern(me as u8 ^ round as u8, len);
                    let mut inb = vec![0u8; len];
                    let st = e
                        .sendrecv(right, 1, &out, Some(left), Some(1), &mut inb, 0)
                        .unwrap();
                    assert_eq!((st.source, st.len), (left, len));
                    assert_eq!(inb, pattern(left as u8 ^ round as u8, len));
                    let mode = [SendMode::Standard, SendMode::Sync][round as usize % 2];
                    if me == 0 {
                        e.send(1, 3, 9, &out, mode).unwrap();
                    } else if me == 1 {
                        let st = e.recv(Some(0), 3, Some(9), &mut inb).unwrap();
                        assert_eq!(st.error, None);
                    }
                }
                e.live_requests()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 0);
    }
}

#[test]
fn scoped_and_owned_buffers() {
    let (_n, es) = net(2, 12);
    let mut it = es.into_iter();
    let (mut e0, mut e1) = (it.next().unwrap(), it.next().unwrap());
    let t = std::thread::spawn(move || {
        let mut a = vec![0u8; 100];
        let mut b = vec![0u8; 1000];
        let mut c = [0u8; 4];
        let got = e1.scope(|s| {
            let ra = s.irecv(Some(0), 0, Some(1), &mut a).unwrap();
            let rb = s.irecv(Some(0), 0, Some(2), &mut b).unwrap();
            let sb = s.wait(rb).unwrap();
            let sa = s.wait(ra).unwrap();
            // Left open: cancelled and waited for at the end of the scope.
            let _open = s.irecv(Some(0), 0, Some(99), &mut c).unwrap();
            (sa.len, sb.len)
        });
        assert_eq!(got, (100, 1000));
        assert_eq!((a, b), (pattern(1, 100), pattern(2, 1000)));
        let r = e1.irecv_vec(Some(0), 0, Some(3), vec![0u8; 50]).unwrap();
        let (st, v) = e1.wait_vec(r).unwrap();
        assert_eq!((st.len, v), (20, pattern(3, 20)));
        let r = e1.irecv_vec(Some(0), 0, Some(4), vec![0u8; 5]).unwrap();
        assert!(matches!(
            e1.wait_vec(r),
            Err(P2pError::Truncated { len: 20, cap: 5 })
        ));
        e1.live_requests()
    });
    let big = pattern(2, 1000);
    e0.scope(|s| {
        let small = pattern(1, 100);
        let r1 = s.isend(1, 0, 2, &big, SendMode::Standard).unwrap();
        s.send(1, 0, 1, &small).unwrap();
        s.wait(r1).unwrap();
    });
    let r = e0
        .isend_vec(1, 0, 3, pattern(3, 20), SendMode::Sync)
        .unwrap();
    let (_, v) = e0.wait_vec(r).unwrap();
    assert_eq!(v, pattern(3, 20));
    e0.send(1, 0, 4, &pattern(4, 20), SendMode::Standard)
        .unwrap();
    assert_eq!(t.join().unwrap(), 0);
}

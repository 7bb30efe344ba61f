//! Processes of another job in a `ChannelFabric` (`channel::dynamic`, what
//! MPI_Comm_accept/connect build on): two "jobs" of fabrics on threads of this
//! process, each with its own card directory, append each other's members as ranks
//! past their own and exchange messages both ways; bad cards are refused; a retired
//! peer's end is not reported, a peer not retired is.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use myrix_mpi::channel::{ChannelConfig, ChannelFabric, MemDirectory};
use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, MsgToken, NewPeer, Rank};

/// A fabric and what arrived: (source, tag, bytes).
struct Node {
    f: ChannelFabric,
    got: Vec<(Rank, i32, Vec<u8>)>,
    lost: Vec<Rank>,
    bufs: HashMap<MsgToken, (i32, Vec<u8>)>,
}

impl Node {
    fn new(f: ChannelFabric) -> Node {
        Node {
            f,
            got: Vec::new(),
            lost: Vec::new(),
            bufs: HashMap::new(),
        }
    }

    fn send(&mut self, dest: Rank, tag: i32, data: &'static [u8]) {
        let env = Envelope {
            ctx: 0,
            tag,
            len: data.len(),
            sync: false,
        };
        // SAFETY: (test) static data.
        unsafe { self.f.send(dest, env, data.as_ptr()) }.unwrap();
    }

    fn step(&mut self) {
        let mut ev = Vec::new();
        self.f.progress(&mut ev).unwrap();
        for e in ev {
            match e {
                Event::Arrived { token, env } => {
                    let mut buf = vec![0u8; env.len];
                    let p = buf.as_mut_ptr();
                    self.bufs.insert(token, (env.tag, buf));
                    // SAFETY: (test) the buffer's heap memory stays in `bufs`.
                    if unsafe { self.f.take(token, p, env.len) }.unwrap() {
                        let (tag, b) = self.bufs.remove(&token).unwrap();
                        self.got.push((token.src, tag, b));
                    }
                }
                Event::Received { token } => {
                    let (tag, b) = self.bufs.remove(&token).unwrap();
                    self.got.push((token.src, tag, b));
                }
                Event::PeerLost { rank, .. } => self.lost.push(rank),
                Event::SendDone { .. } | Event::SyncMatched { .. } => {}
            }
        }
    }
}

fn job(size: Rank) -> Vec<Node> {
    let dir = MemDirectory::new();
    let cfg = ChannelConfig::default();
    (0..size)
        .map(|r| {
            Node::new(
                ChannelFabric::with_directory(r, size, vec![0; size as usize], dir.clone(), &cfg)
                    .unwrap(),
            )
        })
        .collect()
}

fn until(nodes: &mut [&mut Node], what: &str, mut done: impl FnMut(&[&mut Node]) -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !done(nodes) {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        for n in nodes.iter_mut() {
            n.step();
        }
    }
}

#[test]
fn two_jobs_append_each_other_and_talk_both_ways() {
    let mut a = job(2);
    let mut b = job(1);
    // What each member tells the other side: its card and its size before adding.
    let a_cards: Vec<(String, Rank)> = a
        .iter()
        .map(|n| (n.f.card().unwrap(), n.f.size()))
        .collect();
    let b_cards: Vec<(String, Rank)> = b
        .iter()
        .map(|n| (n.f.card().unwrap(), n.f.size()))
        .collect();
    // Each member of A appends B's members; its slot in member j is j's size + its
    // rank in A.
    for (i, n) in a.iter_mut().enumerate() {
        let peers: Vec<NewPeer> = b_cards
            .iter()
            .map(|(c, s)| NewPeer {
                card: c.clone(),
                slot_there: s + i as Rank,
            })
            .collect();
        assert_eq!(n.f.add_peers(&peers).unwrap(), 2);
        assert_eq!(n.f.size(), 3);
    }
    for (i, n) in b.iter_mut().enumerate() {
        let peers: Vec<NewPeer> = a_cards
            .iter()
            .map(|(c, s)| NewPeer {
                card: c.clone(),
                slot_there: s + i as Rank,
            })
            .collect();
        assert_eq!(n.f.add_peers(&peers).unwrap(), 1);
    }
    let [a0, a1] = &mut a[..] else { unreachable!() };
    let b0 = &mut b[0];
    a0.send(2, 10, b"from a0");
    a1.send(2, 11, b"from a1");
    b0.send(1, 20, b"to a0");
    b0.send(2, 21, b"to a1");
    // Inside job A as before.
    a0.send(1, 30, b"a0 to a1");
    until(&mut [&mut *a0, &mut *a1, &mut *b0], "the messages", |n| {
        n[0].got.len() == 1 && n[1].got.len() == 2 && n[2].got.len() == 2
    });
    assert_eq!(a0.got, vec![(2, 20, b"to a0".to_vec())]);
    let mut a1_got = a1.got.clone();
    a1_got.sort();
    assert_eq!(
        a1_got,
        vec![(0, 30, b"a0 to a1".to_vec()), (2, 21, b"to a1".to_vec())]
    );
    let mut b0_got = b0.got.clone();
    b0_got.sort();
    assert_eq!(
        b0_got,
        vec![(1, 10, b"from a0".to_vec()), (2, 11, b"from a1".to_vec())]
    );
    // a1 retires b0; a0 does not. b0 ends: only a0 reports it.
    a1.f.retire(2);
    drop(b);
    until(&mut [&mut *a0, &mut *a1], "a0 to see b0 gone", |n| {
        n[0].lost == [2]
    });
    for _ in 0..50_000 {
        a1.step();
    }
    assert!(a1.lost.is_empty(), "a retired peer's end is no loss");
}

#[test]
fn bad_cards_and_too_many_peers_are_refused() {
    let mut a = job(1);
    let n = &mut a[0];
    let card = n.f.card().unwrap();
    let bad = |c: &str| NewPeer {
        card: c.to_string(),
        slot_there: 0,
    };
    assert!(n.f.add_peers(&[bad("nonsense")]).is_err());
    // A card naming another RSM node.
    let (node, inbox) = card.split_once(':').unwrap();
    let other = u32::from_str_radix(node, 16).unwrap() ^ 1;
    assert!(n
        .f
        .add_peers(&[bad(&format!("{other:x}:{inbox}"))])
        .is_err());
    assert_eq!(n.f.size(), 1, "nothing added by a refused call");
    let many = vec![bad(&card); 1025];
    assert!(n.f.add_peers(&many).is_err());
    assert_eq!(n.f.size(), 1);
}

//! `ChannelFabric` over the `shm` RSM controller: fabrics on threads of one process,
//! self-sends and a singleton, and two real processes (this test binary run again with
//! `MYRIX_CHAN_ROLE` set as the child) exchanging messages, then the child killed with
//! SIGKILL and its loss reported within a bounded time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use myrix_mpi::channel::{ChannelConfig, ChannelFabric, FileDirectory, MemDirectory};
use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};

/// A minimal engine: takes every message as it arrives, into a buffer of its length.
struct Node {
    f: ChannelFabric,
    ev: Vec<Event>,
    next: HashMap<Rank, u64>,
    inflight: HashMap<MsgToken, (Envelope, Vec<u8>)>,
    got: Vec<(Rank, Envelope, Vec<u8>)>,
    done: Vec<SendId>,
    matched: Vec<SendId>,
    lost: Vec<Rank>,
}

impl Node {
    fn new(f: ChannelFabric) -> Node {
        Node {
            f,
            ev: Vec::new(),
            next: HashMap::new(),
            inflight: HashMap::new(),
            got: Vec::new(),
            done: Vec::new(),
            matched: Vec::new(),
            lost: Vec::new(),
        }
    }

    fn send(&mut self, dest: Rank, tag: i32, data: &'static [u8], sync: bool) -> SendId {
        let env = Envelope {
            ctx: 0,
            tag,
            len: data.len(),
            sync,
        };
        // SAFETY: (test) static data.
        unsafe { self.f.send(dest, env, data.as_ptr()) }.unwrap()
    }

    fn step(&mut self) {
        self.f.progress(&mut self.ev).unwrap();
        for e in std::mem::take(&mut self.ev) {
            match e {
                Event::Arrived { token, env } => {
                    let n = self.next.entry(token.src).or_default();
                    assert_eq!(token.seq, *n, "per-source order");
                    *n += 1;
                    let mut buf = vec![0u8; env.len];
                    let p = buf.as_mut_ptr();
                    self.inflight.insert(token, (env, buf));
                    // SAFETY: (test) the buffer stays in `inflight` (its heap memory
                    // does not move) until received.
                    if unsafe { self.f.take(token, p, env.len) }.unwrap() {
                        let (env, buf) = self.inflight.remove(&token).unwrap();
                        self.got.push((token.src, env, buf));
                    }
                }
                Event::Received { token } => {
                    let (env, buf) = self.inflight.remove(&token).unwrap();
                    self.got.push((token.src, env, buf));
                }
                Event::SendDone { send } => self.done.push(send),
                Event::SyncMatched { send } => self.matched.push(send),
                Event::PeerLost { rank, .. } => self.lost.push(rank),
            }
        }
    }
}

fn pattern(seed: usize, len: usize) -> &'static [u8] {
    let v: Vec<u8> = (0..len).map(|i| (i * 31 + seed * 7 + 1) as u8).collect();
    Box::leak(v.into_boxed_slice())
}

const SIZES: [usize; 10] = [0, 1, 8, 40, 41, 1000, 1025, 5000, 65536, 300_000];

fn small_cfg() -> ChannelConfig {
    ChannelConfig {
        queue: 16,
        pool: 16 << 10,
        short: 200,
        eager: 8192,
        ..ChannelConfig::default()
    }
}

#[test]
fn threads_exchange_every_size_both_ways() {
    let dir = MemDirectory::new();
    let n = 3u32;
    let handles: Vec<_> = (0..n)
        .map(|r| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let f = ChannelFabric::with_directory(r, n, vec![0; n as usize], dir, &small_cfg())
                    .unwrap();
                let mut node = Node::new(f);
                let mut sends = 0;
                for dest in 0..n {
                    for (i, &len) in SIZES.iter().enumerate() {
                        node.send(
                            dest,
                            i as i32,
                            pattern(r as usize * 100 + i, len),
                            i % 3 == 0,
                        );
                        sends += 1;
                    }
                }
                let expect = n as usize * SIZES.len();
                let t = Instant::now();
                while node.got.len() < expect || node.done.len() < sends {
                    node.step();
                    assert!(t.elapsed() < Duration::from_secs(60), "hang at rank {r}");
                }
                for (src, env, buf) in &node.got {
                    let i = env.tag as usize;
                    assert_eq!(&buf[..], pattern(*src as usize * 100 + i, SIZES[i]));
                }
                assert_eq!(node.matched.len(), n as usize * 4, "sync sends matched");
                assert!(node.lost.is_empty());
                // Keep serving until every peer is done (a drop would look like a loss).
                node
            })
        })
        .collect();
    let nodes: Vec<Node> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for node in &nodes {
        let (rx, tx) = node.f.connections();
        assert_eq!((rx, tx), (n as usize - 1, n as usize - 1));
    }
}

#[test]
fn a_singleton_sends_to_itself() {
    let mut node = Node::new(
        ChannelFabric::with_directory(0, 1, vec![0], MemDirectory::new(), &small_cfg()).unwrap(),
    );
    for (i, &len) in SIZES.iter().enumerate() {
        node.send(0, i as i32, pattern(i, len), i % 2 == 0);
    }
    while node.got.len() < SIZES.len() {
        node.step();
    }
    node.step();
    assert_eq!(node.done.len(), SIZES.len());
    assert_eq!(node.matched.len(), SIZES.len() / 2);
    for (_, env, buf) in &node.got {
        assert_eq!(&buf[..], pattern(env.tag as usize, SIZES[env.tag as usize]));
    }
    assert_eq!(node.f.connections(), (0, 0));
    let bad = unsafe {
        node.f.send(
            1,
            Envelope {
                ctx: 0,
                tag: 0,
                len: 0,
                sync: false,
            },
            [].as_ptr(),
        )
    };
    assert_eq!(bad, Err(FabricError::NoSuchRank(1)));
}

#[test]
fn another_node_without_a_network_is_a_clear_error() {
    let dir = MemDirectory::new();
    let mut f = ChannelFabric::with_directory(0, 2, vec![0, 1], dir, &small_cfg()).unwrap();
    // SAFETY: (test) nothing is read for an empty message.
    let r = unsafe {
        f.send(
            1,
            Envelope {
                ctx: 0,
                tag: 0,
                len: 0,
                sync: false,
            },
            [].as_ptr(),
        )
    };
    assert!(
        matches!(r, Err(FabricError::Other(ref s)) if s.contains("no network")),
        "{r:?}"
    );
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "myrix-chan-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PROC_MSGS: usize = 200;

fn proc_len(i: usize) -> usize {
    SIZES[i % SIZES.len()] % 70_000
}

/// The child: rank 1 of 2. Echoes the exchange, says READY, then sleeps until killed
/// (or until stdin closes).
#[test]
fn child_role() {
    let Ok(role) = std::env::var("MYRIX_CHAN_ROLE") else {
        return;
    };
    let dir = PathBuf::from(std::env::var("MYRIX_CHAN_DIR").unwrap());
    let f =
        ChannelFabric::with_directory(1, 2, vec![0, 0], FileDirectory(dir), &small_cfg()).unwrap();
    let mut node = Node::new(f);
    for i in 0..PROC_MSGS {
        node.send(0, i as i32, pattern(i + 1000, proc_len(i)), i % 7 == 0);
    }
    while node.got.len() < PROC_MSGS || node.done.len() < PROC_MSGS {
        node.step();
    }
    let ok = node
        .got
        .iter()
        .all(|(_, env, buf)| buf[..] == *pattern(env.tag as usize, proc_len(env.tag as usize)));
    println!("{}", if ok { "READY" } else { "BAD" });
    std::io::stdout().flush().unwrap();
    if role == "victim" {
        // Keep the channel alive (progress) until killed.
        loop {
            node.step();
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn two_processes_exchange_and_a_killed_peer_is_lost() {
    let dir = scratch();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_role", "--exact", "--nocapture", "--test-threads=1"])
        .env("MYRIX_CHAN_ROLE", "victim")
        .env("MYRIX_CHAN_DIR", &dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let f =
        ChannelFabric::with_directory(0, 2, vec![0, 0], FileDirectory(dir.clone()), &small_cfg())
            .unwrap();
    let mut node = Node::new(f);
    for i in 0..PROC_MSGS {
        node.send(1, i as i32, pattern(i, proc_len(i)), i % 5 == 0);
    }
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let t = Instant::now();
    while node.got.len() < PROC_MSGS || node.done.len() < PROC_MSGS {
        node.step();
        assert!(t.elapsed() < Duration::from_secs(60), "exchange hung");
    }
    for (_, env, buf) in &node.got {
        let i = env.tag as usize;
        assert_eq!(&buf[..], pattern(i + 1000, proc_len(i)));
    }
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child said nothing");
        if line.contains("READY") || line.contains("BAD") {
            break;
        }
    }
    assert!(line.contains("READY"), "the child saw bad bytes");
    child.kill().unwrap(); // SIGKILL
    let killed = Instant::now();
    while node.lost.is_empty() {
        node.step();
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "loss not noticed"
        );
    }
    let noticed = killed.elapsed();
    child.wait().unwrap();
    assert_eq!(node.lost, vec![1]);
    eprintln!("SIGKILL noticed after {noticed:?}");
    // SAFETY: (test) static data.
    let r = unsafe {
        node.f.send(
            1,
            Envelope {
                ctx: 0,
                tag: 0,
                len: 1,
                sync: false,
            },
            b"x".as_ptr(),
        )
    };
    assert!(matches!(r, Err(FabricError::PeerLost { rank: 1, .. })));
    let _ = std::fs::remove_dir_all(dir);
}

/// The engine over the channel, on two threads: blocking receives from a named source
/// take short and one-block messages straight from the postbox (`recv_now`) only while
/// MPI's rules allow it — a receive for a later tag skips an earlier message, which
/// stays first for its own tag; an earlier posted receive and ANY_SOURCE keep their
/// turn; every byte checked.
#[test]
fn direct_receives_keep_the_matching_order() {
    use myrix_mpi::p2p::{Engine, SendMode};
    let dir = MemDirectory::new();
    let cfg = ChannelConfig {
        short: 40,
        ..ChannelConfig::default()
    };
    // (tag, len): short, one block, several blocks, rendezvous.
    const MSGS: [(i32, usize); 8] = [
        (1, 8),
        (2, 8),
        (1, 1000),
        (3, 40),
        (1, 5000),
        (4, 64),
        (5, 100_000),
        (1, 0),
    ];
    let handles: Vec<_> = (0..2u32)
        .map(|r| {
            let (dir, cfg) = (dir.clone(), cfg.clone());
            std::thread::spawn(move || {
                let f = ChannelFabric::with_directory(r, 2, vec![0; 2], dir, &cfg).unwrap();
                let mut e = Engine::new(f);
                for round in 0..50 {
                    if r == 0 {
                        for (i, &(tag, len)) in MSGS.iter().enumerate() {
                            e.send(1, 0, tag, pattern(round * 10 + i, len), SendMode::Standard)
                                .unwrap();
                        }
                        let mut ack = [0u8; 1];
                        e.recv(Some(1), 0, Some(9), &mut ack).unwrap();
                    } else {
                        let mut got: Vec<Option<Vec<u8>>> = vec![None; MSGS.len()];
                        let mut recv = |e: &mut Engine<ChannelFabric>, src, tag, i: usize| {
                            let mut b = vec![0u8; MSGS[i].1];
                            let s = e.recv(src, 0, tag, &mut b).unwrap();
                            assert_eq!((s.tag, s.len, s.error), (MSGS[i].0, MSGS[i].1, None));
                            got[i] = Some(b);
                        };
                        let mut b4 = vec![0u8; 64];
                        // A later tag first: the tag-1 messages ahead of it must stay
                        // first for tag 1.
                        recv(&mut e, Some(0), Some(3), 3);
                        recv(&mut e, Some(0), Some(2), 1);
                        // A posted receive for tag 4 before a blocking one for any tag:
                        // the blocking one must get the first tag-1 message.
                        // SAFETY: (test) `b4` lives until the wait below.
                        let r4 =
                            unsafe { e.irecv(Some(0), 0, Some(4), b4.as_mut_ptr(), 64) }.unwrap();
                        recv(&mut e, Some(0), None, 0);
                        recv(&mut e, None, Some(1), 2);
                        recv(&mut e, Some(0), Some(1), 4);
                        assert_eq!(e.wait(r4).unwrap().len, 64);
                        recv(&mut e, Some(0), Some(5), 6);
                        recv(&mut e, Some(0), Some(1), 7);
                        got[5] = Some(b4);
                        for (i, g) in got.iter().enumerate() {
                            assert_eq!(
                                g.as_deref(),
                                Some(pattern(round * 10 + i, MSGS[i].1)),
                                "round {round} message {i}"
                            );
                        }
                        e.send(0, 0, 9, &[1], SendMode::Standard).unwrap();
                    }
                }
                // Serve until the peer is done too (a drop would look like a loss).
                e
            })
        })
        .collect();
    let _engines: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
}

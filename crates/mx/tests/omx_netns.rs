//! Open-MX boards between two processes in two network namespaces of each test's own
//! (`ox2<t>a<pid>`, `ox2<t>b<pid>`, veths `ox2<t>va<pid>`/`ox2<t>vb<pid>`, `<t>` a letter
//! per test, so that the tests run in parallel; made by `.ci/netns.sh` with its loss,
//! duplication and reordering, deleted when done, also on panic):
//! * refusals on the wire: a connect to an endpoint id nobody has open ends with
//!   ENDPT_CLOSED (`Code::NoEndpoint`), one past Open-MX's 32 ids with BAD_ENDPT
//!   (`Code::BadEndpoint`), a send to an endpoint that closed after the connect with
//!   ENDPT_CLOSED, and one to an endpoint reopened since (another instance) with
//!   BAD_SESSION (`Code::PeerReset`), each well before its timeout: the other host's
//!   remaining endpoint answers for the interface (`transport::eth_driver`), the
//!   reopened one for itself;
//! * the MX-compatible wire mode (`OmxMxWireEndpoint`): every message class both ways
//!   with every byte checked, and the frames captured on the veth decode field by
//!   field with that mode's layouts.
//!
//! Needs root and `MYRIX_NETNS=1`; the two sides are this test binary run again in each
//! namespace (`child`, its role in `MYRIX_OMX_ROLE`), talking to the test over pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use myrix_mx::{Code, EndpointAddr, MxError, OmxEndpoint, OmxMxWireEndpoint, RecvBuf};

const KEY: u32 = 0x0a11;
const T: Duration = Duration::from_secs(30);

/// Namespace, veth names and subnet of test `t`'s pair in this process (`t` < 2): per
/// test, as the harness runs tests in parallel threads of one process. At most 15 bytes
/// a name with a 7-digit pid.
fn names(t: u32) -> [String; 5] {
    let p = std::process::id();
    let tag = [b'r', b'm'][t as usize] as char;
    [
        format!("ox2{tag}a{p}"),
        format!("ox2{tag}b{p}"),
        format!("ox2{tag}va{p}"),
        format!("ox2{tag}vb{p}"),
        // Third bytes 125 apart (mod 250): the two tests' subnets never meet.
        format!("10.{}.{}", 100 + p % 100, (p / 100 + 125 * t) % 250),
    ]
}

fn netns_sh(t: u32, what: &str) -> std::process::Output {
    let [a, b, va, vb, net] = names(t);
    Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh"))
        .arg(what)
        .env("MYRIX_NETNS_A", a)
        .env("MYRIX_NETNS_B", b)
        .env("MYRIX_NETNS_VA", va)
        .env("MYRIX_NETNS_VB", vb)
        .env("MYRIX_NETNS_NET", net)
        .output()
        .unwrap()
}

/// Test `.0`'s namespaces, deleted when dropped.
struct Pair(u32);

impl Pair {
    fn up(t: u32) -> Option<Pair> {
        if std::env::var_os("MYRIX_NETNS").is_none() {
            eprintln!("skipped: needs root and MYRIX_NETNS=1");
            return None;
        }
        let out = netns_sh(t, "up");
        let pair = Pair(t);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Room for the MX-compatible mode's 4144-byte frames (and the default mode's
        // 9000): on a 1500-byte link a medium is one frame.
        let [a, b, va, vb, _] = names(t);
        for (ns, v) in [(a, va), (b, vb)] {
            let st = Command::new("ip")
                .args(["-n", &ns, "link", "set", "dev", &v, "mtu", "9000"])
                .status()
                .unwrap();
            assert!(st.success());
        }
        Some(pair)
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        netns_sh(self.0, "down");
    }
}

/// A side running in a namespace, killed if the test ends first.
struct Side {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Side {
    fn spawn(ns: &str, role: &str, env: &[(&str, String)]) -> Side {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "child", "--ignored", "--nocapture"])
            .env("MYRIX_OMX_ROLE", role)
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if let Some(l) = l.strip_prefix("@@ ") {
                    if tx.send(l.to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Side {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// The next line the side says, or a panic after `T`.
    fn said(&self) -> String {
        self.lines
            .recv_timeout(T)
            .expect("the side said nothing in time (or died)")
    }

    fn tell(&mut self, what: &str) {
        writeln!(self.stdin.as_mut().unwrap(), "{what}").unwrap();
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + T;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert!(st.success(), "a side failed");
                return;
            }
            assert!(Instant::now() < deadline, "a side did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces ox2ra<pid> and ox2rb<pid>)"]
fn refusals_on_the_wire_between_namespaces() {
    let Some(_pair) = Pair::up(0) else { return };
    let [a, b, va, vb, _] = names(0);
    let mut server = Side::spawn(&b, "refuse-server", &[("MYRIX_OMX_IFACE", vb)]);
    let (addr, addr8) = (server.said(), server.said());
    let mut client = Side::spawn(
        &a,
        "refuse-client",
        &[
            ("MYRIX_OMX_IFACE", va),
            ("MYRIX_OMX_PEER", addr),
            ("MYRIX_OMX_PEER8", addr8),
        ],
    );
    assert_eq!(client.said(), "connected");
    server.tell("close");
    assert_eq!(server.said(), "closed");
    client.tell("send");
    assert_eq!(client.said(), "refused");
    server.tell("reopen");
    assert_eq!(server.said(), "reopened");
    client.tell("send");
    assert_eq!(client.said(), "bad session");
    server.tell("count");
    let refused: u64 = server.said().parse().unwrap();
    // The two connects and the two sends, at least (more when a NACK was lost and the
    // frame resent).
    assert!(refused >= 4, "the server's host refused {refused} frames");
    client.finish();
    server.finish();
}

/// The side in a namespace, as `MYRIX_OMX_ROLE` says; nothing without it.
#[test]
#[ignore = "run by the namespace tests in a namespace"]
fn child() {
    let Ok(role) = std::env::var("MYRIX_OMX_ROLE") else {
        return;
    };
    let iface = std::env::var("MYRIX_OMX_IFACE").unwrap();
    let board = format!("omx:{iface}");
    let (tx, commands) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for l in std::io::stdin().lock().lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let say = |s: &str| {
        println!("@@ {s}");
        std::io::stdout().flush().unwrap();
    };
    match role.as_str() {
        "refuse-server" => {
            // Endpoints 5 and 8 are the client's peers; 7 stays open to answer for the
            // host once 5 closes.
            let mut keep = OmxEndpoint::open_omx(&board, 7, KEY).unwrap();
            let mut ep = Some(OmxEndpoint::open_omx(&board, 5, KEY).unwrap());
            let mut other = OmxEndpoint::open_omx(&board, 8, KEY).unwrap();
            let mut refused = 0;
            say(&ep.as_ref().unwrap().addr().to_string());
            say(&other.addr().to_string());
            loop {
                keep.progress().unwrap();
                other.progress().unwrap();
                if let Some(e) = ep.as_mut() {
                    e.progress().unwrap();
                }
                match commands.try_recv() {
                    Ok(c) if c == "close" => {
                        refused += ep.take().unwrap().refused();
                        say("closed");
                    }
                    Ok(c) if c == "reopen" => {
                        refused += other.refused();
                        drop(other);
                        other = OmxEndpoint::open_omx(&board, 8, KEY).unwrap();
                        say("reopened");
                    }
                    Ok(c) if c == "count" => {
                        say(&(refused + keep.refused() + other.refused()).to_string());
                    }
                    Ok(c) => panic!("unknown command {c}"),
                    Err(std::sync::mpsc::TryRecvError::Empty) => {}
                    Err(_) => return,
                }
            }
        }
        "refuse-client" => {
            let peer: EndpointAddr = std::env::var("MYRIX_OMX_PEER").unwrap().parse().unwrap();
            let mut ep = OmxEndpoint::open_omx(&board, 1, KEY).unwrap();
            // The connect timeout is long: a refusal must end each connect well
            // before it.
            let refused_connect = |ep: &mut OmxEndpoint, id: u8, want: Code| {
                let mut to = peer.clone();
                to.endpoint = id;
                let start = Instant::now();
                match ep.connect(&to, KEY, T) {
                    Err(MxError::Connect { code, .. }) => assert_eq!(code, want, "id {id}"),
                    other => panic!("connect to id {id}: {other:?}"),
                }
                assert!(start.elapsed() < T / 3, "id {id}: {:?}", start.elapsed());
            };
            refused_connect(&mut ep, 6, Code::NoEndpoint);
            refused_connect(&mut ep, 40, Code::BadEndpoint);
            let p = ep.connect(&peer, KEY, T).unwrap();
            let eight: EndpointAddr = std::env::var("MYRIX_OMX_PEER8").unwrap().parse().unwrap();
            let p8 = ep.connect(&eight, KEY, T).unwrap();
            say("connected");
            let refused_send = |ep: &mut OmxEndpoint, p, want: Code| {
                assert_eq!(commands.recv().unwrap(), "send");
                let start = Instant::now();
                let r = ep.isend(p, &[&[7u8; 100]], 1, 0).unwrap();
                let (st, _) = ep.wait(r, T).unwrap().expect("the send ended");
                assert_eq!(st.code, want);
                assert!(start.elapsed() < T / 3, "{:?}", start.elapsed());
            };
            refused_send(&mut ep, p, Code::NoEndpoint);
            say("refused");
            refused_send(&mut ep, p8, Code::PeerReset);
            say("bad session");
            // Until the test closes our input.
            while commands.recv().is_ok() {}
        }
        "wire-server" => wire_server(&board, &commands, say),
        "wire-client" => wire_client(&board, say),
        other => panic!("unknown role {other}"),
    }
}

/// Lengths of every message class in the MX-compatible mode: tiny, small, mediums of
/// one and of several 4 KiB slots, rendezvous (pulled in 4096-byte replies).
const WIRE_LENS: [usize; 8] = [0, 20, 100, 3000, 4097, 30_000, 100_000, 300_000];

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ salt)
        .collect()
}

/// Echoes each message back, checked.
fn wire_server(board: &str, commands: &std::sync::mpsc::Receiver<String>, say: impl Fn(&str)) {
    let mut ep = OmxMxWireEndpoint::open_omx(board, 0, KEY).unwrap();
    say(&ep.addr().to_string());
    let mut peer = None;
    for len in WIRE_LENS {
        let r = ep
            .irecv(RecvBuf::One(vec![0; len]), len as u64, u64::MAX, 0)
            .unwrap();
        let (st, buf) = ep.wait(r, T).unwrap().expect("a message");
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        assert_eq!(buf.unwrap().to_vec(), pattern(len, 1), "len {len}");
        let p = *peer.get_or_insert(st.source);
        let s = ep.isend(p, &[&pattern(len, 2)], len as u64, 0).unwrap();
        let (st, _) = ep.wait(s, T).unwrap().expect("the echo ended");
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
    }
    // Acks for the last echo until the test ends.
    while commands.try_recv() != Err(std::sync::mpsc::TryRecvError::Disconnected) {
        ep.progress().unwrap();
    }
}

fn wire_client(board: &str, say: impl Fn(&str)) {
    let peer: EndpointAddr = std::env::var("MYRIX_OMX_PEER").unwrap().parse().unwrap();
    let mut ep = OmxMxWireEndpoint::open_omx(board, 1, KEY).unwrap();
    ep.capture_to(std::path::Path::new(
        &std::env::var("MYRIX_OMX_PCAP").unwrap(),
    ))
    .unwrap();
    let p = ep.connect(&peer, KEY, T).unwrap();
    for len in WIRE_LENS {
        let r = ep
            .irecv(RecvBuf::One(vec![0; len]), len as u64, u64::MAX, 0)
            .unwrap();
        let s = ep.isend(p, &[&pattern(len, 1)], len as u64, 0).unwrap();
        let (st, _) = ep.wait(s, T).unwrap().expect("the send ended");
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        let (st, buf) = ep.wait(r, T).unwrap().expect("the echo");
        assert_eq!((st.code, st.xfer_len), (Code::Success, len));
        assert_eq!(buf.unwrap().to_vec(), pattern(len, 2), "len {len}");
    }
    drop(ep); // the capture is complete
    say("done");
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1 (creates and deletes namespaces ox2ma<pid> and ox2mb<pid>)"]
fn mx_wire_mode_between_namespaces_decodes_with_mx_compat_layouts() {
    use myrix_wire::omx::{self, Body, ConnectKind, PacketType, WireMode};
    let Some(_pair) = Pair::up(1) else { return };
    let [a, b, va, vb, _] = names(1);
    let pcap = std::env::temp_dir().join(format!("myrix-omx-mxwire-{}.pcap", std::process::id()));
    let server = Side::spawn(&b, "wire-server", &[("MYRIX_OMX_IFACE", vb)]);
    let addr = server.said();
    let client = Side::spawn(
        &a,
        "wire-client",
        &[
            ("MYRIX_OMX_IFACE", va),
            ("MYRIX_OMX_PEER", addr),
            ("MYRIX_OMX_PCAP", pcap.to_str().unwrap().into()),
        ],
    );
    assert_eq!(client.said(), "done");
    client.finish();
    server.finish();
    let bytes = std::fs::read(&pcap).unwrap();
    std::fs::remove_file(&pcap).unwrap();
    let records = myrix_wire::pcap::read_pcap(&bytes).unwrap();
    let mode = WireMode::MxCompat;
    let mut seen = std::collections::BTreeSet::new();
    // Notified lengths, each the length of a rendezvous the client sent.
    let mut notified = Vec::new();
    // The pullers' endpoints (by their PULLs) and the endpoints the replies' magics name.
    let (mut pullers, mut replied_to) = (std::collections::BTreeSet::new(), Vec::new());
    for r in &records {
        assert_eq!(r.link_type, myrix_wire::pcap::LINKTYPE_ETHERNET);
        assert!(r.data.len() >= omx::ETH_ZLEN && r.data.len() <= mode.mtu());
        let frame = omx::Frame::new_checked(&r.data[..]).unwrap();
        assert_eq!(frame.ethertype(), 0x86df);
        let repr = omx::Repr::parse_bytes(&r.data, mode)
            .unwrap_or_else(|e| panic!("not an MX-compatible frame: {e}: {:02x?}", r.data));
        seen.insert(repr.body.packet_type() as u8);
        match repr.body {
            Body::Connect(c) => {
                assert_eq!(c.lib_seqnum, 0);
                if let ConnectKind::Request { app_key } = c.kind {
                    assert_eq!(app_key, KEY);
                }
            }
            Body::Medium(m) => {
                // Slots of 4 KiB: fragment i at i × 4096, at most 4096 bytes.
                assert!(m.data.len() <= 4096);
                assert_eq!(m.offset(mode), m.frag_seqnum as u64 * 4096);
                assert!(m.offset(mode) + m.data.len() as u64 <= m.msg_length as u64);
            }
            Body::PullReply(p) => {
                assert!(!p.data.is_empty() && p.data.len() <= 4096);
                assert_eq!(p.msg_offset % 4096, 0, "replies on the 4096-byte grid");
                assert_eq!(p.frame_seqnum, (p.msg_offset / 4096) as u8);
                // `dst_magic`: the puller's Open-MX pull magic (`index ^ 0x21071980`).
                replied_to.push(omx::endpoint_of_magic(p.dst_magic).expect("a pull magic"));
            }
            Body::Pull(p) => {
                assert!(p.block_length > 0 && p.block_length <= u16::MAX as u32);
                assert!(p.rdma_id <= 0xff);
                // `total_length`: the whole pull, a rendezvous length; the block inside it.
                let total = p.total_length as usize;
                assert!(WIRE_LENS.contains(&total) && total > 4096, "{p:?}");
                let start = p.frame_index as usize * 4096 + p.first_frame_offset as usize;
                assert!(start + p.block_length as usize <= total, "{p:?}");
                assert_eq!(p.src_magic, omx::pull_magic(p.src_endpoint), "{p:?}");
                pullers.insert(p.src_endpoint);
            }
            Body::Notify(n) => notified.push(n.total_length as usize),
            Body::Rndv(rv) => assert!(rv.msg_length as usize > 4096),
            _ => {}
        }
    }
    for t in [
        PacketType::Connect,
        PacketType::Tiny,
        PacketType::Small,
        PacketType::Medium,
        PacketType::Rndv,
        PacketType::Pull,
        PacketType::PullReply,
        PacketType::Notify,
    ] {
        assert!(seen.contains(&(t as u8)), "no {t} frame captured");
    }
    assert!(
        replied_to.iter().all(|e| pullers.contains(e)),
        "{replied_to:?}"
    );
    // NOTIFY carries the length pulled: each a rendezvous length (the capture holds
    // both directions' notifies; resends repeat one).
    assert!(!notified.is_empty());
    for n in notified {
        assert!(
            WIRE_LENS.contains(&n) && n > 4096,
            "NOTIFY total_length {n}"
        );
    }
}

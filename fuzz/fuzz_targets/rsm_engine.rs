//! Any frames into an RSM engine that exports a segment and has an import with a get
//! pending: it never panics (the vector-backed memory panics on any access outside the
//! segment) and the segment keeps its length.
#![no_main]
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use myrix_rsm_proto::engine::{Config, Engine};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, SegmentId};
use myrix_wire::rsm::{Body, Header, Repr};

const SEG: SegmentId = SegmentId(0x8000_0001);
const WHO: Credentials = Credentials { uid: 1, gid: 1 };

fuzz_target!(|data: &[u8]| {
    let mut e: Engine<u8> = Engine::new(Config::default(), NodeId(0), 1);
    let mut mem: HashMap<SegmentId, Vec<u8>> = HashMap::new();
    mem.insert(SEG, vec![0; 4096]);
    e.publish(SEG, Acl::Open(Perm(0o666)), WHO).unwrap();
    // An import of peer 1's segment, connected by a hand-made reply, with a get pending.
    let imp = e.connect(1, NodeId(1), SEG, Perm::RDWR, WHO).unwrap();
    let reply = Repr {
        header: Header { session: 1, seq: 0, ack: 0, ..Header::default() },
        body: Body::ConnectReply { conn: imp.0, status: 0, exporter_conn: 1, length: 1 << 20 },
    };
    let mut f = vec![0; reply.buffer_len()];
    reply.emit(&mut f).unwrap();
    e.handle_frame(0, &1, &f, &mut mem);
    let _ = e.get(imp, 100, 100_000);
    let mut buf = vec![0; 1500];
    // Frames: a peer byte, a length byte, then the frame.
    let mut rest = data;
    let mut now = 1;
    while let [peer, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        e.handle_frame(now, &(peer % 3), &tail[..n], &mut mem);
        while e.poll_transmit(now, &mut buf).is_some() {}
        while e.poll_event().is_some() {}
        now += 50_000_000;
        e.handle_timeout(now);
        rest = &tail[n..];
    }
    assert_eq!(mem[&SEG].len(), 4096);
});

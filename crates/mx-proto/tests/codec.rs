//! The engine over another frame layout: a codec that puts two bytes of its own before
//! myrix's MX layout stands in for a second layout (Open-MX's would be a module in
//! `wire`), and the engine runs on it unchanged, fast paths included.

use myrix_mx_proto::engine::{Code, Config, Engine, RecvBuf, Request, Status};
use myrix_wire::codec::{Codec, Mx};
use myrix_wire::mx::{Body, Error, Header, Kind, Repr, WholeEager};

/// myrix's layout behind a two-byte magic.
struct Prefixed;

const MAGIC: [u8; 2] = [0xab, 0xcd];

impl Codec for Prefixed {
    const EAGER_HEAD: usize = 2 + Mx::EAGER_HEAD;

    fn head_len(kind: Kind) -> usize {
        2 + Mx::head_len(kind)
    }
    fn parse(bytes: &[u8]) -> Result<Repr<'_>, Error> {
        match bytes.split_first_chunk::<2>() {
            Some((m, rest)) if *m == MAGIC => Mx::parse(rest),
            _ => Err(Error::Field("no magic")),
        }
    }
    fn parse_whole_eager(bytes: &[u8]) -> Option<WholeEager<'_>> {
        match bytes.split_first_chunk::<2>() {
            Some((m, rest)) if *m == MAGIC => Mx::parse_whole_eager(rest),
            _ => None,
        }
    }
    fn emit_head(
        h: &Header,
        body: &Body<'_>,
        buf: &mut [u8],
        data_len: usize,
    ) -> Result<usize, Error> {
        if buf.len() < 2 {
            return Err(Error::Buffer {
                have: buf.len(),
                need: 2,
            });
        }
        buf[..2].copy_from_slice(&MAGIC);
        Ok(2 + Mx::emit_head(h, body, &mut buf[2..], data_len)?)
    }
    fn emit_whole_eager(h: &Header, kind: Kind, match_info: u64, msg_len: u32, out: &mut [u8]) {
        out[..2].copy_from_slice(&MAGIC);
        Mx::emit_whole_eager(h, kind, match_info, msg_len, &mut out[2..]);
    }
}

type E = Engine<usize, Prefixed>;

/// Moves every frame between the two engines until nothing is left to send.
fn pump(e: &mut [E; 2], now: u64) {
    let mut buf = vec![0u8; 2048];
    loop {
        let mut moved = false;
        for i in 0..2 {
            while let Some((to, n)) = e[i].poll_transmit(now, &mut buf) {
                assert_eq!(buf[..2], MAGIC, "every frame in the codec's layout");
                e[to].handle_frame(now, &i, &buf[..n]);
                moved = true;
            }
        }
        if !moved {
            return;
        }
    }
}

/// Moves frames and runs timers (delayed acks) until both engines are idle.
fn settle(e: &mut [E; 2], now: &mut u64) {
    for _ in 0..100 {
        pump(e, *now);
        let Some(t) = e.iter().filter_map(|x| x.poll_timeout()).min() else {
            return;
        };
        *now = (*now).max(t);
        for x in e.iter_mut() {
            x.handle_timeout(*now);
        }
    }
    panic!("the engines never settle");
}

fn done(e: &mut E, r: Request) -> (Status, Option<RecvBuf>) {
    e.test(r).unwrap().expect("complete")
}

#[test]
fn the_engine_runs_on_another_layout() {
    for lossless in [true, false] {
        let cfg = Config {
            reliable_transport: lossless,
            mtu: 1474,
            ..Config::default()
        };
        let mut e: [E; 2] = [0, 1].map(|i| E::with_codec(cfg.clone(), 10 + i as u64, 0, 7, 1 + i));
        let mut now = 0;
        let c = e[0].iconnect(now, 1, 11, 0, 7, 0).unwrap();
        settle(&mut e, &mut now);
        let peer = done(&mut e[0], c).0.source;
        for len in [0usize, 8, 100, 5000, 100_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let r = e[1]
                .irecv(now, RecvBuf::One(vec![0; len]), 1, u64::MAX, 0)
                .unwrap();
            let mut frame = vec![0u8; 2048];
            let (s, fast) = e[0]
                .isend_into(now, peer, &[&data], 1, 0, false, &mut frame)
                .unwrap();
            if let Some((to, n)) = fast {
                assert!(lossless && len <= 5000, "the send fast path");
                assert_eq!(frame[..2], MAGIC);
                e[to].handle_frame(now, &0, &frame[..n]);
            }
            settle(&mut e, &mut now);
            let (st, buf) = done(&mut e[1], r);
            assert_eq!((st.code, st.xfer_len), (Code::Success, len));
            assert_eq!(buf.unwrap().to_vec(), data);
            assert_eq!(done(&mut e[0], s).0.code, Code::Success);
        }
        assert!(e[0].stats().bad_frames + e[1].stats().bad_frames == 0);
        if lossless {
            assert!(e[0].stats().fast_sends > 0 && e[1].stats().fast_recvs > 0);
        }
    }
}

//! Arbitrary frames into a connected MX engine (both lossy and lossless modes): it must
//! drop or absorb them without panicking, and keep working afterwards. In lossless mode
//! every other frame goes the way a blocking receive takes them (`handle_frame_direct`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use myrix_mx_proto::engine::{Config, DirectRecv, Engine, RecvBuf};

fuzz_target!(|data: &[u8]| {
    for reliable in [false, true] {
        let cfg = Config {
            reliable_transport: reliable,
            ..Config::default()
        };
        let mut a: Engine<u8> = Engine::new(cfg.clone(), 1, 0, 7, 11);
        let mut b: Engine<u8> = Engine::new(cfg, 2, 0, 7, 22);
        let mut buf = vec![0u8; 1500];
        let c = a.iconnect(1, 1, 2, 0, 7, 0).unwrap();
        // Deliver the connect handshake.
        for _ in 0..4 {
            while let Some((_, n)) = a.poll_transmit(1, &mut buf) {
                let f = buf[..n].to_vec();
                b.handle_frame(1, &0, &f);
            }
            while let Some((_, n)) = b.poll_transmit(1, &mut buf) {
                let f = buf[..n].to_vec();
                a.handle_frame(1, &1, &f);
            }
        }
        let _ = a.test(c);
        let _ = b.irecv(2, RecvBuf::One(vec![0; 64]), 0, 0, 0);
        // The input, split into frames at each 0xfe byte, as if from the peer.
        let mut now = 2;
        let fresh = || DirectRecv {
            match_info: 0,
            mask: 0,
            buf: RecvBuf::One(vec![0; 16]),
            done: None,
            slow: false,
        };
        let mut d = fresh();
        for (i, chunk) in data.split(|&x| x == 0xfe).enumerate() {
            now += 1_000_000;
            // Most chunks get a header that passes the engine's checks (version, A's
            // NIC, session and index), so the fuzzer reaches the protocol logic.
            let frame = if chunk.len() >= 5 && chunk[0] & 1 == 1 {
                let mut f = vec![1, chunk[1] % 12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 11];
                f.extend_from_slice(&chunk[2..4]); // seq
                f.extend_from_slice(&[chunk[4], 0]); // ack
                f.extend_from_slice(&chunk[5..]);
                f
            } else {
                chunk.to_vec()
            };
            if reliable && i % 2 == 1 {
                b.handle_frame_direct(now, &0, &frame, &mut d);
                if d.done.is_some() {
                    d = fresh();
                }
                d.slow = false;
            } else {
                b.handle_frame(now, &0, &frame);
            }
            b.handle_timeout(now);
            while b.poll_transmit(now, &mut buf).is_some() {}
        }
        let _ = b.poll_timeout();
    }
});

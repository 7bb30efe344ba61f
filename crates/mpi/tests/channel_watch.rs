//! A channel's arrival word (`Fabric::arrival_word`), which a waiting blocking
//! receive polls with one load instead of calling `recv_now` each time: none before
//! the channel exists, unchanged while nothing comes, changed by the next message,
//! which `recv_now` then takes whole.

use myrix_mpi::channel::{ChannelConfig, ChannelFabric, MemDirectory};
use myrix_mpi::p2p::fabric::{Envelope, Fabric};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn env(len: usize) -> Envelope {
    Envelope {
        ctx: 0,
        tag: 7,
        len,
        sync: false,
    }
}

/// Polls `recv_now` from rank 0 (driving progress between) until a message comes.
fn recv_one(f: &mut ChannelFabric, buf: &mut [u8]) -> usize {
    let end = Instant::now() + Duration::from_secs(20);
    let mut ev = Vec::new();
    loop {
        let mut accept = |_: &Envelope| true;
        // SAFETY: (test) `buf` is borrowed for the call.
        if let Some(e) = unsafe { f.recv_now(0, &mut accept, buf.as_mut_ptr(), buf.len()) }.unwrap()
        {
            return e.len;
        }
        f.progress(&mut ev).unwrap();
        assert!(Instant::now() < end, "no message from rank 0");
    }
}

#[test]
fn the_arrival_word_changes_when_a_message_comes() {
    let dir = MemDirectory::new();
    let cfg = ChannelConfig::default();
    let (go_tx, go_rx) = mpsc::channel::<Option<u8>>();
    let (sent_tx, sent_rx) = mpsc::channel::<()>();
    let d0 = dir.clone();
    let c0 = cfg.clone();
    let sender = std::thread::spawn(move || {
        let mut f = ChannelFabric::with_directory(0, 2, vec![0; 2], d0, &c0).unwrap();
        let mut ev = Vec::new();
        let mut msgs: Vec<Box<[u8; 8]>> = Vec::new();
        loop {
            f.progress(&mut ev).unwrap();
            match go_rx.try_recv() {
                Ok(Some(b)) => {
                    msgs.push(Box::new([b; 8]));
                    let p = msgs.last().unwrap().as_ptr();
                    // SAFETY: (test) the message stays in `msgs` until the end.
                    unsafe { f.send(1, env(8), p) }.unwrap();
                    sent_tx.send(()).unwrap();
                }
                Ok(None) => break,
                Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        // Serve until the receiver is done (a drop would look like a loss).
        f
    });
    let mut f = ChannelFabric::with_directory(1, 2, vec![0; 2], dir, &cfg).unwrap();
    assert!(f.arrival_word(0).is_none(), "no channel from rank 0 yet");
    let mut buf = [0u8; 8];
    go_tx.send(Some(1)).unwrap();
    sent_rx.recv().unwrap();
    assert_eq!(recv_one(&mut f, &mut buf), 8);
    assert_eq!(buf, [1; 8]);

    let (w, v) = f.arrival_word(0).expect("a channel from rank 0");
    // SAFETY: (test) valid until the next `&mut` call of `f`.
    let load = || unsafe { (*w).load(Ordering::Acquire) };
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(load(), v, "changed with nothing sent");
    go_tx.send(Some(2)).unwrap();
    sent_rx.recv().unwrap();
    // The sender writes the postbox in its `send` or its next progress call.
    let end = Instant::now() + Duration::from_secs(20);
    while load() == v {
        assert!(Instant::now() < end, "the word did not change");
        std::hint::spin_loop();
    }
    assert_eq!(recv_one(&mut f, &mut buf), 8);
    assert_eq!(buf, [2; 8]);
    go_tx.send(None).unwrap();
    let _sender = sender.join().unwrap();
}

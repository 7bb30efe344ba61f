//! The raw-Ethernet transport's receive ring (`transport::eth_ring`): frames sent across
//! a veth pair arrive whole and in order, through the ring and, with
//! `MYRIX_ETH_RING=0`, through `recvfrom(2)`, over more frames than the ring has slots
//! (it wraps round twice). The pair lives in a namespace of this test's own
//! (`ern<pid>`, veths `erva`/`ervb`), entered by the test's thread and deleted when
//! done, also on panic. Needs root and `MYRIX_NETNS=1`.
#![allow(unsafe_code)]

use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use myrix_mx::transport::eth::Eth;
use myrix_mx::transport::{Loc, Transport, Verdict};

/// More than the ring's 4096 slots of a 1500-byte link: it wraps round.
const FRAMES: usize = 10_000;
/// Frames sent before the receiver takes them in: well under the ring's size.
const BURST: usize = 500;

struct Ns(String);

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().unwrap();
    assert!(st.success(), "ip {args:?}");
}

/// Sends `FRAMES` frames of varied lengths (each carrying its number) from `erva` to
/// `ervb` and checks each arrives whole and in order; returns whether `ervb`'s socket
/// received through the ring.
fn send_and_check() -> bool {
    let mut a = Eth::open("erva", false).unwrap();
    let mut b = Eth::open("ervb", false).unwrap();
    let to = Loc::Eth(b.mac());
    let mtu = a.mtu();
    let frame = |i: usize| -> Vec<u8> {
        let len = 8 + (i * 37) % (mtu - 8);
        let mut f: Vec<u8> = (0..len).map(|k| (i + k * 7) as u8).collect();
        f[..8].copy_from_slice(&(i as u64).to_le_bytes());
        f
    };
    let mut next = 0;
    for start in (0..FRAMES).step_by(BURST) {
        let end = (start + BURST).min(FRAMES);
        for i in start..end {
            assert!(a.send(&to, &frame(i)).unwrap());
        }
        a.flush().unwrap();
        let t = Instant::now();
        while next < end {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "frame {next} never came"
            );
            b.poll_recv(64, |from, f| {
                assert_eq!(*from, Loc::Eth(a.mac()));
                assert_eq!(f, &frame(next)[..], "frame {next}");
                next += 1;
                Verdict::Taken
            })
            .unwrap();
        }
    }
    assert_eq!(next, FRAMES);
    b.has_ring()
}

#[test]
fn eth_frames_arrive_whole_and_in_order_with_the_ring_and_without() {
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!("skipped: needs root and MYRIX_NETNS=1");
        return;
    }
    let ns = Ns(format!("ern{}", std::process::id()));
    ip(&["netns", "add", &ns.0]);
    ip(&[
        "-n", &ns.0, "link", "add", "erva", "type", "veth", "peer", "name", "ervb",
    ]);
    for v in ["erva", "ervb"] {
        ip(&["-n", &ns.0, "link", "set", v, "mtu", "1500", "up"]);
    }
    // This thread only: the harness's other threads stay where they were.
    let f = std::fs::File::open(format!("/var/run/netns/{}", ns.0)).unwrap();
    // SAFETY: a namespace file descriptor, open for the call.
    assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
    assert!(
        send_and_check(),
        "a 1500-byte link receives through the ring"
    );
    // The setting is read when a socket opens; no other test of this binary opens one.
    std::env::set_var("MYRIX_ETH_RING", "0");
    let ring = send_and_check();
    std::env::remove_var("MYRIX_ETH_RING");
    assert!(!ring, "MYRIX_ETH_RING=0 receives with recvfrom");
}

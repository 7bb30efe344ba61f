//! The classic 9-bit Myrinet channel, two ports over a cable.

use myrix_link::classic::{ClassicConfig, ClassicEvent, ClassicPort, ClassicRx, CHAR_PERIOD};
use myrix_link::{Picos, MS, NS, US};
use std::collections::VecDeque;

/// Two classic ports, one character per 12.5 ns each way, `delay_chars` on the cable.
struct Link {
    a: ClassicPort,
    b: ClassicPort,
    wire: [VecDeque<u16>; 2],
    now: Picos,
    cut: bool,
}

impl Link {
    fn new(cfg: ClassicConfig, cable_ns: u64) -> Link {
        let delay = (cable_ns * NS).div_ceil(CHAR_PERIOD) as usize;
        Link {
            a: ClassicPort::new(cfg).unwrap(),
            b: ClassicPort::new(cfg).unwrap(),
            wire: [
                VecDeque::from(vec![0; delay]),
                VecDeque::from(vec![0; delay]),
            ],
            now: Picos::ZERO,
            cut: false,
        }
    }
    /// Characters arriving in this period are taken first, so a port can answer one
    /// (with STOP, say) in the same period: the turnaround is the cable alone.
    fn tick(&mut self) {
        let to_b = self.wire[0].pop_front().unwrap();
        let to_a = self.wire[1].pop_front().unwrap();
        self.b.handle_receive(self.now, to_b);
        self.a.handle_receive(self.now, to_a);
        let ca = self.a.tick(self.now);
        let cb = self.b.tick(self.now);
        self.wire[0].push_back(if self.cut { 0 } else { ca });
        self.wire[1].push_back(cb);
        self.now += CHAR_PERIOD;
    }
}

fn read_packets(p: &mut ClassicPort, cur: &mut Vec<u8>, out: &mut Vec<Result<Vec<u8>, Vec<u8>>>) {
    while let Some(x) = p.read() {
        match x {
            ClassicRx::Byte(b) => cur.push(b),
            ClassicRx::End => out.push(Ok(std::mem::take(cur))),
            ClassicRx::Reset => out.push(Err(std::mem::take(cur))),
        }
    }
}

#[test]
fn packets_cross_10m_and_25m_cables_and_the_80_byte_slack_buffer_never_overflows() {
    // 10 m is the minimal-routing study's cable; 25 m at 0.6 c is ~139 ns one way, 23
    // characters on a round trip as the paper says, and 80 - 56 = 24 B of headroom.
    for cable_ns in [56, 139] {
        slack_run(cable_ns);
    }
}

fn slack_run(cable_ns: u64) {
    let mut l = Link::new(ClassicConfig::default(), cable_ns);
    let pkts: Vec<Vec<u8>> = (0..50)
        .map(|i| (0..(1 + i * 13)).map(|j| (i + j) as u8).collect())
        .collect();
    for p in &pkts {
        l.a.send(p);
    }
    let (mut cur, mut got) = (Vec::new(), Vec::new());
    let mut max_level = 0;
    for t in 0..400_000u64 {
        l.tick();
        max_level = max_level.max(l.b.slack().level());
        // The consumer is blocked 3 µs out of every 5.
        if (t * CHAR_PERIOD) % (5 * US) >= 3 * US {
            read_packets(&mut l.b, &mut cur, &mut got);
        }
    }
    assert_eq!(l.b.slack().overflows(), 0);
    assert!(
        max_level > 56,
        "STOP must have been exercised ({max_level})"
    );
    assert!(max_level <= 80);
    let want: Vec<Result<Vec<u8>, Vec<u8>>> = pkts.into_iter().map(Ok).collect();
    assert_eq!(got, want);
    assert!(l.b.stats.stop_sent > 0 && l.b.stats.go_sent > 0);
}

#[test]
fn an_idle_sender_still_sends_non_idle_and_an_open_link_is_detected() {
    let mut l = Link::new(ClassicConfig::default(), 50);
    for _ in 0..10_000 {
        l.tick();
    }
    assert!(std::iter::from_fn(|| l.b.poll_event()).all(|e| e != ClassicEvent::LinkDown));
    l.cut = true;
    let t0 = l.now;
    let mut down_at = None;
    for _ in 0..10_000 {
        l.tick();
        if std::iter::from_fn(|| l.b.poll_event()).any(|e| e == ClassicEvent::LinkDown) {
            down_at.get_or_insert(l.now);
        }
    }
    let dt = down_at.expect("open link detected") - t0;
    // 4 µs after the last non-Idle, which came at most one heartbeat (800 ns) before the cut.
    assert!(dt > 3 * US && dt <= 4 * US + 100 * NS, "{dt}");
    l.cut = false;
    for _ in 0..1000 {
        l.tick();
    }
    assert!(std::iter::from_fn(|| l.b.poll_event()).any(|e| e == ClassicEvent::LinkUp));
}

#[test]
fn a_packet_blocked_for_50_ms_is_cut_with_fres_and_the_next_one_flows() {
    let mut l = Link::new(ClassicConfig::default(), 50);
    l.a.send(&[7u8; 500]);
    l.a.send(&[9u8; 20]);
    let (mut cur, mut got) = (Vec::new(), Vec::new());
    // The consumer is stuck for 60 ms (4.8 million characters).
    while l.now < 60 * MS {
        l.tick();
    }
    let ev: Vec<ClassicEvent> = std::iter::from_fn(|| l.a.poll_event()).collect();
    let dropped = ev.iter().find_map(|e| match e {
        ClassicEvent::Timeout { dropped_bytes } => Some(*dropped_bytes),
        _ => None,
    });
    // ~56 B up to STOP plus what was in flight got through; the rest was dropped.
    let dropped = dropped.expect("long-period timeout fired");
    assert!(dropped > 400 && dropped < 450, "{dropped}");
    assert_eq!(l.a.stats.fres_sent, 1);
    while l.now < 61 * MS {
        l.tick();
        read_packets(&mut l.b, &mut cur, &mut got);
    }
    assert_eq!(got.len(), 2);
    assert!(matches!(&got[0], Err(part) if part.len() == 500 - dropped));
    assert_eq!(got[1], Ok(vec![9u8; 20]));
}

#[test]
fn a_packet_blocked_for_less_than_the_timeout_survives() {
    let mut l = Link::new(ClassicConfig::default(), 50);
    l.a.send(&[7u8; 500]);
    let (mut cur, mut got) = (Vec::new(), Vec::new());
    while l.now < 40 * MS {
        l.tick();
    }
    while l.now < 41 * MS {
        l.tick();
        read_packets(&mut l.b, &mut cur, &mut got);
    }
    assert_eq!(got, [Ok(vec![7u8; 500])]);
    assert_eq!(l.a.stats.fres_sent, 0);
}

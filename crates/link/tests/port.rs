//! Two Myrinet-2000 ports over a simulated cable: synchronization, framing, clock
//! tolerance, STOP/GO and BEAT, end to end.

use myrix_link::code::{CodeGroup, Octet, Rd};
use myrix_link::duplex::{Duplex, Side};
use myrix_link::port::{Event, Port, PortConfig, Received};
use myrix_link::slack::{Cable, SlackPlan};
use myrix_link::sync::{Cause, State, Transition};
use myrix_link::{Picos, MS, NS, US};

fn port() -> Port {
    Port::new(PortConfig::default()).unwrap()
}

fn transitions(p: &mut Port) -> Vec<Transition> {
    std::iter::from_fn(|| p.poll_event())
        .filter_map(|e| match e {
            Event::State(t) => Some(t),
            _ => None,
        })
        .collect()
}

fn up(d: &mut Duplex) {
    let ok = d.run_while_not(d.now() + 50 * US, |d| {
        d.a.state() == State::InSync && d.b.state() == State::InSync
    });
    assert!(
        ok,
        "link did not come up: A {:?}, B {:?}",
        d.a.state(),
        d.b.state()
    );
}

fn packet(seed: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seed.wrapping_mul(31).wrapping_add(i as u32 * 7)) as u8)
        .collect()
}

fn drain(p: &mut Port) -> Vec<Received> {
    std::iter::from_fn(|| p.recv_packet()).collect()
}

#[test]
fn two_ports_come_up_together_through_sync_and_regain() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 50 * NS);
    up(&mut d);
    for p in [&mut d.a, &mut d.b] {
        let t: Vec<(State, Cause)> = transitions(p).iter().map(|t| (t.to, t.cause)).collect();
        assert_eq!(
            t,
            [
                (State::Sync, Cause::LocalSyncFound),
                (State::Regain, Cause::RemoteNotLost),
                (State::InSync, Cause::RemoteSyncFound)
            ]
        );
    }
    // Bring-up takes a few hundred ns beyond the cable delay, not microseconds.
    assert!(d.now() < 2 * US, "took {}", d.now());
}

#[test]
fn packets_of_every_length_parity_cross_both_ways_exactly_once() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 20 * NS);
    up(&mut d);
    let lens: Vec<usize> = (1..=40).chain([255, 256, 1000, 1001]).collect();
    for (i, &n) in lens.iter().enumerate() {
        d.a.send(&packet(i as u32, n)).unwrap();
        d.b.send(&packet(1000 + i as u32, n)).unwrap();
    }
    let (mut ga, mut gb) = (Vec::new(), Vec::new());
    d.run_while_not(d.now() + MS, |d| {
        ga.extend(drain(&mut d.a));
        gb.extend(drain(&mut d.b));
        ga.len() == lens.len() && gb.len() == lens.len()
    });
    let want_b: Vec<Received> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| Received::Packet(packet(i as u32, n)))
        .collect();
    let want_a: Vec<Received> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| Received::Packet(packet(1000 + i as u32, n)))
        .collect();
    assert_eq!(gb, want_b);
    assert_eq!(ga, want_a);
    assert_eq!(d.a.stats.code_errors + d.b.stats.code_errors, 0);
}

#[test]
fn sender_reset_mid_packet_terminates_it_and_the_link_recovers() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 30 * NS);
    up(&mut d);
    transitions(&mut d.a);
    transitions(&mut d.b);
    d.a.send(&packet(1, 4000)).unwrap();
    d.run_until(d.now() + 4 * US); // ~1000 bytes in
    assert!(d.b.rx_level() > 500);
    d.a.reset();
    up(&mut d);
    let got = drain(&mut d.b);
    assert!(matches!(got.as_slice(), [Received::Terminated(b)] if b.len() > 500 && b.len() < 4000));
    // B saw LOST (remote_sync_lost) and went through SYNC and REGAIN back to IN_SYNC.
    let tb: Vec<State> = transitions(&mut d.b).iter().map(|t| t.to).collect();
    assert_eq!(tb, [State::Sync, State::Regain, State::InSync]);
    d.a.send(&packet(2, 333)).unwrap();
    d.run_until(d.now() + 5 * US);
    assert_eq!(drain(&mut d.b), [Received::Packet(packet(2, 333))]);
}

#[test]
fn receiver_reset_mid_packet_terminates_the_packet_being_forwarded() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 30 * NS);
    up(&mut d);
    d.a.send(&packet(1, 4000)).unwrap();
    d.run_until(d.now() + 4 * US);
    // Entering RX_LOST cuts off the packet the receiver is forwarding.
    d.b.reset();
    assert!(matches!(
        drain(&mut d.b).as_slice(),
        [Received::Terminated(_)]
    ));
    up(&mut d);
    // The rest of the packet was dropped at A (TX_SYNC drops the send stream).
    d.run_until(d.now() + 20 * US);
    assert!(drain(&mut d.b).is_empty());
    assert_eq!(d.a.framer().dropped, 1);
    d.a.send(&packet(3, 77)).unwrap();
    d.run_until(d.now() + 5 * US);
    assert_eq!(drain(&mut d.b), [Received::Packet(packet(3, 77))]);
}

#[test]
fn a_burst_of_bit_errors_loses_sync_and_the_link_resynchronizes() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 30 * NS);
    up(&mut d);
    transitions(&mut d.b);
    let start = d.sent(Side::A) + 100;
    d.fault = Some(Box::new(move |side, i, cg: CodeGroup| {
        if side == Side::A && (start..start + 40).contains(&i) {
            cg.flip((i % 10) as u32).flip(((i + 3) % 10) as u32)
        } else {
            cg
        }
    }));
    d.a.send(&packet(9, 3000)).unwrap();
    d.run_until(d.now() + 2 * US);
    let t = transitions(&mut d.b);
    assert_eq!((t[0].to, t[0].cause), (State::Lost, Cause::LocalSyncLost));
    up(&mut d);
    assert!(d.b.stats.code_errors >= 8);
    d.a.send(&packet(10, 64)).unwrap();
    d.run_until(d.now() + 5 * US);
    let got = drain(&mut d.b);
    assert_eq!(got.last(), Some(&Received::Packet(packet(10, 64))));
}

#[test]
fn sparse_bit_errors_keep_sync_but_damage_packets() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 30 * NS);
    up(&mut d);
    transitions(&mut d.b);
    // One flipped bit every 300 code-groups: at most 3 in any 892-window.
    d.fault = Some(Box::new(|side, i, cg: CodeGroup| {
        if side == Side::A && i % 300 == 7 {
            cg.flip(4)
        } else {
            cg
        }
    }));
    for i in 0..20 {
        d.a.send(&packet(i, 500)).unwrap();
    }
    let mut got = Vec::new();
    d.run_while_not(d.now() + 100 * US, |d| {
        got.extend(drain(&mut d.b));
        d.a.framer().queued() == 0 && got.len() >= 18
    });
    d.run_until(d.now() + 2 * US);
    got.extend(drain(&mut d.b));
    assert!(transitions(&mut d.b).is_empty(), "sync must hold");
    let damaged = got
        .iter()
        .filter(|r| !matches!(r, Received::Packet(_)))
        .count();
    assert!(d.b.stats.code_errors > 0);
    assert!(damaged > 0, "errors must show up as damaged packets");
    // Undetected single-bit flips are possible in 8b/10b (one valid code-group becomes
    // another); that is what the packet CRC above the link is for.
    assert!(got.len() >= 18, "{}", got.len());
}

#[test]
fn clocks_200_ppm_apart_lose_and_duplicate_no_packet_byte() {
    // A runs 100 ppm slow, B 100 ppm fast: B's FIFO must repeat fill pairs, A's drop them.
    let mut d = Duplex::new(port(), port(), 100.0, -100.0, 100 * NS);
    up(&mut d);
    let run: Picos = 20 * MS; // 5 million code-groups each way, 1000 code-groups of skew
    let (mut next_a, mut next_b) = (0u32, 0u32);
    let (mut got_a, mut got_b) = (0u32, 0u32);
    let (mut bytes_a, mut bytes_b) = (0u64, 0u64);
    let len = |i: u32| 1 + (i as usize * 37) % 2000;
    let end = d.now() + run;
    while d.now() < end {
        for _ in 0..1000 {
            d.step();
        }
        while d.a.framer().queued() < 4 {
            d.a.send(&packet(next_a, len(next_a))).unwrap();
            next_a += 1;
        }
        while d.b.framer().queued() < 4 {
            d.b.send(&packet(next_b + 1_000_000, len(next_b))).unwrap();
            next_b += 1;
        }
        while let Some(r) = d.b.recv_packet() {
            assert_eq!(
                r,
                Received::Packet(packet(got_b, len(got_b))),
                "packet {got_b} at B"
            );
            bytes_b += len(got_b) as u64;
            got_b += 1;
        }
        while let Some(r) = d.a.recv_packet() {
            assert_eq!(r, Received::Packet(packet(got_a + 1_000_000, len(got_a))));
            bytes_a += len(got_a) as u64;
            got_a += 1;
        }
    }
    // 20 ms at 250 MB/s is 5 MB each way; GAPs and fill take a little of it.
    assert!(got_b > 4_500 && got_a > 4_500, "{got_a} {got_b}");
    assert!(
        bytes_a > 4_800_000 && bytes_b > 4_800_000,
        "{bytes_a} {bytes_b}"
    );
    let (fa, fb) = (&d.a.elastic().stats, &d.b.elastic().stats);
    // The skew was absorbed by fill pairs only.
    assert!(fb.repeated_pairs > 0, "{fb:?}");
    assert!(fa.dropped_pairs > 0, "{fa:?}");
    assert_eq!(
        fa.overflows + fa.underflows + fb.overflows + fb.underflows,
        0,
        "{fa:?} {fb:?}"
    );
    assert_eq!(d.a.stats.code_errors + d.b.stats.code_errors, 0);
    assert_eq!(d.a.state(), State::InSync);
}

/// One STOP/GO scenario: B's consumer alternates between blocked and reading at line
/// rate, either in fixed 30 µs phases or (`adversarial`) blocking until the buffer is
/// stopped and reading until it has sent GO, which makes STOP/GO as frequent as the
/// watermarks allow. Returns (overflowed bytes, starved reads, STOP/GO share of B's
/// reverse channel in pairs).
fn stop_go(cable: Cable, adversarial: bool) -> (u64, u64, f64, SlackPlan) {
    let plan = SlackPlan::for_cable(&cable, 0.5, 0.01).unwrap();
    let cfg = PortConfig {
        slack: (plan.capacity, plan.stop, plan.go),
        ..PortConfig::default()
    };
    let delay = Picos((cable.length_m * cable.ns_per_m * NS.0 as f64) as u64);
    let mut d = Duplex::new(
        Port::new(cfg).unwrap(),
        Port::new(cfg).unwrap(),
        0.0,
        0.0,
        delay,
    );
    up(&mut d);
    let start_pairs = d.sent(Side::B) / 2;
    let mut starved = 0;
    let mut reading = false;
    let mut phase_start = d.now();
    let mut primed = false;
    let end = d.now() + 2 * MS;
    while d.now() < end {
        while d.a.framer().queued() < 2 {
            d.a.send(&[0x5a; 1500]).unwrap();
        }
        if d.step() == Side::B {
            if reading {
                // Reads one byte per code-group time, the line's own rate.
                match d.b.read() {
                    Some(_) => primed = true,
                    None if primed => starved += 1,
                    None => {}
                }
            }
            let flip = if adversarial {
                d.b.slack().is_stopped() != reading
            } else {
                // 30 µs blocked, then 30 µs reading: fills to STOP, drains to GO.
                d.now() - phase_start > 30 * US
            };
            if flip {
                reading = !reading;
                primed = false;
                phase_start = d.now();
            }
        }
    }
    let pairs = d.sent(Side::B) / 2 - start_pairs;
    let flow = d.b.stats.stop_sent + d.b.stats.go_sent;
    (
        d.b.slack().overflows(),
        starved,
        flow as f64 / pairs as f64,
        plan,
    )
}

#[test]
fn stop_go_never_overflows_or_starves_across_cable_lengths() {
    for (len, adversarial) in [1.0, 10.0, 25.0, 100.0, 200.0, 1000.0]
        .into_iter()
        .flat_map(|l| [(l, false), (l, true)])
    {
        // Turnaround: the two elastic FIFOs (16 code-groups each) plus pair building.
        let cable = Cable {
            length_m: len,
            ns_per_m: 5.0,
            bytes_per_ns: 0.25,
            turnaround_ns: 200.0,
        };
        let (overflow, starved, share, plan) = stop_go(cable, adversarial);
        println!(
            "{len:6} m{}: in flight {:4} B, buffer {:4} B (STOP {:4}, GO {:4}), \
             STOP/GO share {:.3} %, starved reads {starved}",
            if adversarial { " adversarial" } else { "" },
            plan.in_flight,
            plan.capacity,
            plan.stop,
            plan.go,
            share * 100.0
        );
        assert_eq!(overflow, 0, "{len} m overflowed");
        // Starvation: the reader, once data flowed, found the buffer empty while the
        // sender had data queued.
        assert_eq!(starved, 0, "{len} m starved {starved} times");
        assert!(
            share > 0.0 && share <= 0.01,
            "{len} m: STOP/GO share {share}"
        );
    }
}

#[test]
fn beat_is_sent_every_10_us_and_its_absence_reported_after_25_us() {
    let beat = PortConfig {
        beat: true,
        ..PortConfig::default()
    };
    let mut d = Duplex::new(
        Port::new(beat).unwrap(),
        Port::new(beat).unwrap(),
        0.0,
        0.0,
        10 * NS,
    );
    up(&mut d);
    let b0 = d.b.stats.beats_received;
    d.run_until(d.now() + 100 * US);
    let n = d.b.stats.beats_received - b0;
    assert!((9..=11).contains(&n), "{n} beats in 100 µs");
    assert!(std::iter::from_fn(|| d.b.poll_event()).all(|e| e != Event::MissingBeat));

    // A that does not send BEAT: B reports it missing once, 25 µs after the last one.
    let quiet = PortConfig::default();
    let mut d = Duplex::new(
        Port::new(quiet).unwrap(),
        Port::new(beat).unwrap(),
        0.0,
        0.0,
        10 * NS,
    );
    up(&mut d);
    let t0 = d.now();
    let mut when = None;
    d.run_while_not(t0 + 100 * US, |d| {
        if std::iter::from_fn(|| d.b.poll_event()).any(|e| e == Event::MissingBeat) {
            when = Some(d.now());
        }
        when.is_some()
    });
    let dt = when.expect("missing BEAT reported") - t0;
    assert!((25 * US..26 * US).contains(&dt), "{dt}");
}

#[test]
fn a_slow_source_gets_idle_inside_its_packet() {
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 10 * NS);
    up(&mut d);
    let data = packet(5, 101);
    for chunk in data.chunks(7) {
        d.a.write(chunk);
        d.run_until(d.now() + 200 * NS);
    }
    d.a.finish();
    d.run_until(d.now() + 2 * US);
    assert_eq!(drain(&mut d.b), [Received::Packet(data)]);
}

#[test]
fn data_code_groups_starting_from_either_disparity_decode() {
    // The receiver takes its running disparity from the first code-group it sees.
    let mut p = port();
    for rd in [Rd::Neg, Rd::Pos] {
        let (cg, _) = myrix_link::code::encode(Octet::D(3), rd).unwrap();
        p.handle_receive(cg);
    }
    assert_eq!(p.elastic().len(), 2);
}

#[test]
fn a_fill_symbol_goes_out_at_least_every_25_us_even_inside_long_packets() {
    use myrix_link::code::K28_5;
    use std::sync::{Arc, Mutex};
    let mut d = Duplex::new(port(), port(), 0.0, 0.0, 10 * NS);
    up(&mut d);
    // Watch A's code-groups: K28.5 followed by D21.4 (IDLE) or D10.4 (BEAT).
    let fills: Arc<Mutex<Vec<u64>>> = Arc::default();
    let seen = fills.clone();
    let mut prev_comma = false;
    let idle = [Rd::Neg, Rd::Pos].map(|rd| myrix_link::code::encode(Octet::D(0x95), rd).unwrap().0);
    let comma =
        [Rd::Neg, Rd::Pos].map(|rd| myrix_link::code::encode(Octet::K(K28_5), rd).unwrap().0);
    d.fault = Some(Box::new(move |side, i, cg| {
        if side == Side::A {
            if prev_comma && idle.contains(&cg) {
                seen.lock().unwrap().push(i);
            }
            prev_comma = comma.contains(&cg);
        }
        cg
    }));
    let start = d.sent(Side::A);
    // 100 KB packets: 100 µs each, far longer than 25 µs.
    for _ in 0..3 {
        d.a.send(&[0xa5; 100_000]).unwrap();
    }
    let mut got = 0;
    d.run_while_not(d.now() + 2 * MS, |d| {
        got += drain(&mut d.b).len();
        got == 3
    });
    assert_eq!(got, 3);
    let f = fills.lock().unwrap();
    let mut last = start;
    for &i in f.iter() {
        assert!(
            (i - last) * 4 <= 25_000,
            "{} ns without IDLE/BEAT",
            (i - last) * 4
        );
        last = i;
    }
    assert!(f.len() >= 12, "{}", f.len());
}

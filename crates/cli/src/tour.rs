//! `myrix tour`: runs a little of everything that exists, with built-in defaults, and
//! prints what it measured. Every number printed is computed by this run.

use crate::{hex, CliError};
use myrix_link::classic::{ClassicConfig, ClassicPort, ClassicRx, CHAR_PERIOD};
use myrix_link::duplex::Duplex;
use myrix_link::port::{Event, Port, PortConfig, Received};
use myrix_link::slack::{Cable, SlackPlan};
use myrix_link::{Picos, MS, NS, US};
use myrix_wire::myrinet::{crc8, forward, route_byte, Packet, PacketRepr, PacketType};

pub fn run() -> Result<(), CliError> {
    outln!("myrix tour: the link layer and the Myrinet packet, simulated byte by byte\n");

    outln!("1. A Myrinet packet: route 3,0,7 then type, payload, CRC-8 (poly 0x07)");
    let route = [3u8, 0, 7].map(|p| route_byte(p).expect("port < 128"));
    let repr = PacketRepr {
        route: &route,
        packet_type: PacketType::Data,
        payload: b"myrix",
    };
    let mut buf = repr.to_vec().map_err(|e| CliError::Input(e.to_string()))?;
    outln!("   sent     {}", hex(&buf));
    let mut len = buf.len();
    for hop in 1..=3 {
        if hop == 2 {
            buf[4] ^= 0x10; // a bit error on the second link
            outln!("   link 2   one bit flipped in byte 4 (payload)");
        }
        let (port, n) = forward(&mut buf, len).map_err(|e| CliError::Input(e.to_string()))?;
        len = n;
        outln!(
            "   switch {hop} strips route byte, out of port {port}: {}",
            hex(&buf[..len])
        );
    }
    let p = Packet::new_checked(&buf[..len]).map_err(|e| CliError::Input(e.to_string()))?;
    outln!(
        "   at the host: type {}, trailer {:02x}, computed {:02x}: error {}\n",
        p.packet_type(),
        p.crc(),
        crc8(&buf[..len - 1]),
        if p.verify_crc() { "MISSED" } else { "detected" }
    );

    outln!("2. Two Myrinet-2000 ports, 10 m of fibre (50 ns), clocks 200 ppm apart");
    let cfg = PortConfig {
        beat: true,
        ..PortConfig::default()
    };
    let port = || Port::new(cfg).expect("default watermarks are valid");
    let mut d = Duplex::new(port(), port(), 100.0, -100.0, 50 * NS);
    if !d.bring_up(100 * US) {
        return Err(CliError::Found(
            "the simulated link did not synchronize".into(),
        ));
    }
    let steps: Vec<String> = std::iter::from_fn(|| d.b.poll_event())
        .filter_map(|e| match e {
            Event::State(t) => Some(t.to.name().to_string()),
            _ => None,
        })
        .collect();
    outln!(
        "   port B: LOST -> {} after {} ns",
        steps.join(" -> "),
        d.now() / NS
    );
    let run = 5 * MS;
    let (mut sent, mut got, mut bytes) = (0u32, 0u32, 0u64);
    let end = d.now() + run;
    while d.now() < end {
        for _ in 0..500 {
            d.step();
        }
        while d.a.framer().queued() < 2 {
            let n = 64 + (sent as usize * 97) % 1900;
            d.a.send(&vec![sent as u8; n])
                .map_err(|e| CliError::Input(e.to_string()))?;
            sent += 1;
        }
        while let Some(r) = d.b.recv_packet() {
            if let Received::Packet(p) = r {
                bytes += p.len() as u64;
                got += 1;
            }
        }
    }
    let (ea, eb) = (&d.a.elastic().stats, &d.b.elastic().stats);
    outln!(
        "   {} ms: {got} packets, {bytes} bytes delivered intact ({:.0} MB/s of 250)",
        run / MS,
        bytes as f64 / run.as_micros_f64()
    );
    outln!(
        "   elastic FIFOs absorbed the skew: A dropped {} fill pairs, B repeated {}; code errors {}",
        ea.dropped_pairs,
        eb.repeated_pairs,
        d.a.stats.code_errors + d.b.stats.code_errors
    );
    outln!(
        "   BEAT: A sent {} (one per 10 us); B received {}, its elastic FIFO repeating some to make up for its faster clock\n",
        d.a.stats.beats_sent, d.b.stats.beats_received
    );

    outln!("3. STOP/GO slack buffers sized for the cable (250 MB/s, 5 ns/m, 600 ns turnaround)");
    outln!(
        "   {:>7} {:>10} {:>8} {:>6} {:>6}",
        "cable",
        "in flight",
        "buffer",
        "STOP",
        "GO"
    );
    for m in [10.0, 100.0, 200.0, 1000.0] {
        let p = SlackPlan::for_cable(&Cable::myrinet2000_fibre(m), 0.5, 0.01)
            .expect("fibres of 10 m to 1 km fit a plan");
        outln!(
            "   {:>5} m {:>8} B {:>6} B {:>6} {:>6}",
            m,
            p.in_flight,
            p.capacity,
            p.stop,
            p.go
        );
    }
    outln!();

    outln!("4. The classic 9-bit channel: 80 M characters/s, slack buffer 80 B, STOP 56, GO 40");
    let mut a = ClassicPort::new(ClassicConfig::default()).expect("valid");
    let mut b = ClassicPort::new(ClassicConfig::default()).expect("valid");
    let delay = 11; // characters on 25 m of cable, one way
    let mut wire = [
        std::collections::VecDeque::from(vec![0u16; delay]),
        std::collections::VecDeque::from(vec![0u16; delay]),
    ];
    for i in 0..20u8 {
        a.send(&[i; 200]);
    }
    let (mut now, mut peak, mut delivered) = (Picos::ZERO, 0, 0);
    while now < 200 * US {
        b.handle_receive(now, wire[0].pop_front().unwrap_or(0));
        a.handle_receive(now, wire[1].pop_front().unwrap_or(0));
        wire[0].push_back(a.tick(now));
        wire[1].push_back(b.tick(now));
        peak = peak.max(b.slack().level());
        // The consumer takes one byte every other character: the buffer fills and stops.
        if (now / CHAR_PERIOD) % 2 == 0 {
            if let Some(ClassicRx::End) = b.read() {
                delivered += 1;
            }
        }
        now += CHAR_PERIOD;
    }
    outln!(
        "   20 packets of 200 B into a half-speed consumer: {delivered} delivered, peak slack level {peak} B, overflows {}, STOP sent {}, GO sent {}",
        b.slack().overflows(),
        b.stats.stop_sent,
        b.stats.go_sent
    );
    outln!("\nMore: myrix link encode --hex 0102 | myrix link decode; myrix link slack --length-m 200; myrix packet --help");
    Ok(())
}

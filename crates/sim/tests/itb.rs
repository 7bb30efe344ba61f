//! In-transit buffers in the host interface model.

use myrix_fabric::itb::{Policy, RouteTable};
use myrix_fabric::testing::irregular;
use myrix_fabric::topology::{End, Host, Link, Switch, Topology};
use myrix_fabric::updown::{Root, UpDown};
use myrix_link::{Picos, MS, US};
use myrix_sim::{Config, Sim, Ticks};

/// A ring of 6 switches, one host each (host i on switch i, port 0).
fn ring6() -> Topology {
    let hosts = (0..6)
        .map(|s| Host {
            address: s as u64,
            switch: s,
            port: 0,
            length_m: 10.0,
        })
        .collect();
    let links = (0..6)
        .map(|i| Link {
            a: End { switch: i, port: 2 },
            b: End {
                switch: (i + 1) % 6,
                port: 1,
            },
            length_m: 10.0,
        })
        .collect();
    Topology::new("ring6", vec![Switch { ports: 3 }; 6], hosts, links).unwrap()
}

fn one_message(t: &Topology, policy: Policy, src: u32, dst: u32) -> (u64, f64) {
    let ud = UpDown::new(t, Root::LowestId);
    let table = RouteTable::new(t, &ud, policy);
    let cfg = Config {
        warmup: Picos::ZERO,
        measure: MS,
        ..Config::default()
    };
    let mut sim = Sim::new(cfg, t, &table).unwrap();
    sim.quiet();
    sim.inject(src, dst);
    while sim.delivered_by_source()[src as usize] == 0 {
        sim.step();
        assert!(sim.now_ticks() < Ticks(100_000), "never delivered");
    }
    (sim.last_latency_ticks().0, sim.run().itbs_per_message)
}

#[test]
fn an_in_transit_host_adds_its_475_ns_and_a_second_switch_crossing() {
    // From switch 2 to switch 4 up*/down* goes 2-1-0-5-4; the minimal path 2-3-4 turns
    // from down to up at 3 and is split there, at host 3. Ticks of 6.25 ns, cables 8,
    // switches 24, in-transit handling 76 (475 ns), 32-byte payload.
    // up*/down*: 5 switches, 4 links: 6*8 + 5*24 + 33 = 201.
    // Minimal with the in-transit host: source to switch 2 (8), through 2 (24) to 3 (8),
    // through 3 (24) to host 3 (8); 76 later the first byte leaves host 3, to switch 3
    // (8), through 3 (24) to 4 (8), through 4 (24) to host 4 (8): 220 to the first byte
    // of the last leg, whose packet is type + 32 + CRC: 220 + 33 = 253.
    let t = ring6();
    assert_eq!(one_message(&t, Policy::Osud, 2, 4), (201, 0.0));
    assert_eq!(one_message(&t, Policy::Rmit, 2, 4), (253, 1.0));
    // rrmit-min costs the in-transit host as a switch crossing: 2 links + 1 < 4 links.
    assert_eq!(one_message(&t, Policy::RrmitMin, 2, 4), (253, 1.0));
}

#[test]
fn every_policy_survives_overload_and_drains_completely() {
    // Deadlock freedom in the model: past saturation, then traffic stops and every
    // message still arrives.
    let t = irregular(16, 3);
    let ud = UpDown::new(&t, Root::LowestId);
    for policy in Policy::ALL {
        let table = RouteTable::new(&t, &ud, policy);
        let cfg = Config {
            load: 0.12,
            msg_bytes: 128,
            warmup: Picos::ZERO,
            measure: MS,
            ..Config::default()
        };
        let mut sim = Sim::new(cfg, &t, &table).unwrap();
        for _ in 0..16_000 {
            sim.step(); // 100 µs of overload
        }
        assert!(sim.in_flight() > 100, "{policy:?} was not overloaded");
        sim.quiet();
        let mut n = 0;
        while sim.in_flight() > 0 {
            sim.step();
            n += 1;
            assert!(
                n < 2_000_000,
                "{policy:?}: {} messages stuck",
                sim.in_flight()
            );
        }
        assert_eq!(sim.slack_overflows(), 0);
    }
}

#[test]
fn itb_policies_use_few_in_transit_buffers_and_beat_updown_under_load() {
    let t = irregular(16, 1);
    let ud = UpDown::new(&t, Root::LowestId);
    let run = |policy, load| {
        let table = RouteTable::new(&t, &ud, policy);
        let cfg = Config {
            load,
            msg_bytes: 512,
            warmup: 50 * US,
            measure: 500 * US,
            ..Config::default()
        };
        Sim::new(cfg, &t, &table).unwrap().run()
    };
    let rmit = run(Policy::Rmit, 0.01);
    // The study: fewer than 0.4 in-transit buffers per message (16 switches, 512 B).
    assert!(
        rmit.itbs_per_message > 0.05 && rmit.itbs_per_message < 0.4,
        "{rmit:?}"
    );
    assert_eq!(rmit.itb_spills, 0);
    assert!(rmit.itb_pool_peak > 0 && rmit.itb_pool_peak <= 90 * 1024);
    let min = run(Policy::RrmitMin, 0.01);
    assert!(min.itbs_per_message < rmit.itbs_per_message, "{min:?}");
}

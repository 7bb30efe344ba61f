//! A link fails under load: no deadlock, the losses are counted, the remap restores the
//! throughput.

use myrix_fabric::generate::{generate, Params};
use myrix_fabric::itb::Policy;
use myrix_fabric::PortUse;
use myrix_link::{MS, US};
use myrix_sim::fault::{run_with_failure, Failure, FaultConfig, FaultError};
use myrix_sim::Config;

fn net(switches: usize, seed: u64) -> myrix_fabric::Topology {
    generate(
        "irregular",
        &Params {
            switches,
            seed,
            ..Params::default()
        },
    )
    .unwrap()
}

/// The busiest kind of link to lose: one between two switches that both have another
/// link, so the network stays connected.
fn redundant_link(t: &myrix_fabric::Topology) -> usize {
    let degree = |s: u32| {
        (0..t.switches()[s as usize].ports)
            .filter(|&p| matches!(t.port(s, p), PortUse::Link { .. }))
            .count()
    };
    t.links()
        .iter()
        .position(|l| degree(l.a.switch) > 2 && degree(l.b.switch) > 2)
        .expect("a redundant link")
}

fn cfg(seed: u64) -> Config {
    Config {
        load: 0.02,
        msg_bytes: 128,
        seed,
        warmup: 100 * US,
        measure: 30 * MS,
        ..Config::default()
    }
}

#[test]
fn a_link_failure_under_load_recovers_without_deadlock() {
    for (seed, policy) in [(1, Policy::Osud), (2, Policy::Rmit), (3, Policy::RrmitMin)] {
        let t = net(8, seed);
        let link = redundant_link(&t);
        let r = run_with_failure(
            cfg(seed),
            &t,
            policy,
            Failure { link, at: MS },
            &FaultConfig::default(),
        )
        .unwrap();
        println!("{policy:?}: {r:?}");
        assert!(r.drained, "stuck after the failure: {r:?}");
        assert!(r.failed_at_ns < r.detected_at_ns && r.detected_at_ns < r.rerouted_at_ns);
        assert_eq!(r.map_links, t.links().len() - 1);
        assert_eq!(r.map_switches, t.num_switches());
        // Below saturation the network carries what is offered, before and after.
        assert!((r.accepted_before / 0.02 - 1.0).abs() < 0.15, "{r:?}");
        assert!((r.accepted_after / 0.02 - 1.0).abs() < 0.15, "{r:?}");
        // Between failure and reroute, messages through the link were lost and counted.
        assert!(r.lost > 0, "{r:?}");
        assert!(r.accepted_during < r.accepted_before, "{r:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let t = net(6, 4);
    let link = redundant_link(&t);
    let run = || {
        run_with_failure(
            Config {
                measure: 5 * MS,
                ..cfg(4)
            },
            &t,
            Policy::Osud,
            Failure { link, at: MS },
            &FaultConfig::default(),
        )
        .unwrap()
    };
    // Debug text: a window the run never reached is NaN, which is unequal to itself.
    assert_eq!(format!("{:?}", run()), format!("{:?}", run()));
}

#[test]
fn bad_failures_are_refused() {
    let t = net(2, 1);
    let e = run_with_failure(
        cfg(1),
        &t,
        Policy::Osud,
        Failure { link: 0, at: MS },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::Splits(0)), "{e}");
    let e = run_with_failure(
        cfg(1),
        &t,
        Policy::Osud,
        Failure { link: 9, at: MS },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::NoSuchLink(1, 9)), "{e}");
    let e = run_with_failure(
        cfg(1),
        &net(6, 4),
        Policy::Osud,
        Failure {
            link: 0,
            at: 100 * MS,
        },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::Outside { .. }), "{e}");
}

//! A link fails under load: no deadlock, the losses are counted, the remap restores the
//! throughput.

use myrix_fabric::generate::{generate, Params};
use myrix_fabric::itb::Policy;
use myrix_fabric::testing::irregular;
use myrix_fabric::PortUse;
use myrix_link::{MS, US};
use myrix_sim::fault::{run_with_failure, Component, Failure, FaultConfig, FaultError};
use myrix_sim::Config;

fn net(switches: usize, seed: u64) -> myrix_fabric::Topology {
    irregular(switches, seed)
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
            Failure {
                what: Component::Link(link),
                at: MS,
            },
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
            Failure {
                what: Component::Link(link),
                at: MS,
            },
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
        Failure {
            what: Component::Link(0),
            at: MS,
        },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::Splits(_)), "{e}");
    let e = run_with_failure(
        cfg(1),
        &t,
        Policy::Osud,
        Failure {
            what: Component::Link(9),
            at: MS,
        },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::NoSuchLink(1, 9)), "{e}");
    let e = run_with_failure(
        cfg(1),
        &net(6, 4),
        Policy::Osud,
        Failure {
            what: Component::Link(0),
            at: 100 * MS,
        },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::Outside { .. }), "{e}");
}

/// The highest-addressed host: the mapper an intact network elects.
fn elected(t: &myrix_fabric::Topology) -> u32 {
    (0..t.num_hosts() as u32)
        .max_by_key(|&h| t.hosts()[h as usize].address)
        .unwrap()
}

#[test]
fn a_host_switched_off_under_load_is_mapped_out_and_nobody_sends_to_it() {
    for (seed, policy) in [(5, Policy::Osud), (6, Policy::Rmit), (7, Policy::RrmitMin)] {
        let t = net(8, seed);
        let mapper = elected(&t);
        let host = (mapper + 1) % t.num_hosts() as u32;
        let r = run_with_failure(
            cfg(seed),
            &t,
            policy,
            Failure {
                what: Component::Host(host),
                at: MS,
            },
            &FaultConfig::default(),
        )
        .unwrap();
        println!("{policy:?}: {r:?}");
        assert!(r.drained, "stuck after the failure: {r:?}");
        assert!(!r.elected);
        assert_eq!(r.mapper, mapper);
        assert_eq!(r.map_hosts, t.num_hosts() - 1);
        assert_eq!(r.map_switches, t.num_switches());
        assert_eq!(r.map_links, t.links().len());
        // Messages to it were lost in flight before the reroute, and refused after.
        assert!(r.lost > 0, "{r:?}");
        assert!(r.refused > 0, "{r:?}");
        // After: one source fewer, and nobody sends to it.
        let n = t.num_hosts() as f64;
        let expected = 0.02 * (n - 2.0) / n;
        assert!(
            (r.accepted_after / expected - 1.0).abs() < 0.15,
            "{r:?} expected {expected}"
        );
    }
}

#[test]
fn the_mapper_switched_off_is_replaced_by_an_election() {
    let t = net(8, 9);
    let mapper = elected(&t);
    let r = run_with_failure(
        cfg(9),
        &t,
        Policy::Rmit,
        Failure {
            what: Component::Host(mapper),
            at: MS,
        },
        &FaultConfig::default(),
    )
    .unwrap();
    println!("{r:?}");
    assert!(r.elected && r.mapper != mapper, "{r:?}");
    let next = (0..t.num_hosts() as u32)
        .filter(|&h| h != mapper)
        .max_by_key(|&h| t.hosts()[h as usize].address)
        .unwrap();
    assert_eq!(r.mapper, next);
    assert_eq!(r.map_hosts, t.num_hosts() - 1);
    // Noticed a whole monitoring round later than a component the mapper probes.
    let interval = FaultConfig::default().monitor_interval.as_nanos_f64();
    assert!(r.detected_at_ns >= r.failed_at_ns + interval, "{r:?}");
    assert!(r.drained, "{r:?}");
}

/// A switch whose loss leaves the other switches connected.
fn spare_switch(t: &myrix_fabric::Topology) -> u32 {
    (0..t.num_switches() as u32)
        .find(|&s| {
            myrix_sim::fault::survivors(t, Component::Switch(s)).is_ok()
                && !t.hosts_on(s).any(|h| h == elected(t))
        })
        .expect("a switch that does not split the network")
}

#[test]
fn a_switch_failure_under_load_cuts_off_its_hosts_and_recovers() {
    for (seed, policy) in [(11, Policy::Osud), (12, Policy::Rmit), (13, Policy::Pit)] {
        let t = net(8, seed);
        let s = spare_switch(&t);
        let hosts_on = t.hosts_on(s).count();
        let degree = t
            .ports_of(s)
            .iter()
            .filter(|u| matches!(u, PortUse::Link { .. }))
            .count();
        let r = run_with_failure(
            cfg(seed),
            &t,
            policy,
            Failure {
                what: Component::Switch(s),
                at: MS,
            },
            &FaultConfig::default(),
        )
        .unwrap();
        println!("{policy:?} switch {s}: {r:?}");
        assert!(r.drained, "stuck after the failure: {r:?}");
        assert_eq!(r.map_switches, t.num_switches() - 1);
        assert_eq!(r.map_hosts, t.num_hosts() - hosts_on);
        assert_eq!(r.map_links, t.links().len() - degree);
        assert!(r.lost > 0 && r.refused > 0, "{r:?}");
        let n = t.num_hosts() as f64;
        let k = hosts_on as f64;
        // Sources left, each sending only to the hosts left.
        let expected = 0.02 * (n - k) / n * (n - k - 1.0) / (n - 1.0);
        assert!(
            (r.accepted_after / expected - 1.0).abs() < 0.15,
            "{r:?} expected {expected}"
        );
    }
}

#[test]
fn failures_of_unknown_or_splitting_components_are_refused() {
    let t = net(2, 1);
    let run = |what| {
        run_with_failure(
            cfg(1),
            &t,
            Policy::Osud,
            Failure { what, at: MS },
            &FaultConfig::default(),
        )
        .unwrap_err()
    };
    assert!(matches!(
        run(Component::Switch(2)),
        FaultError::NoSuchSwitch(2, 2)
    ));
    assert!(matches!(
        run(Component::Host(8)),
        FaultError::NoSuchHost(8, 8)
    ));
    // A line of three switches loses its middle.
    let line = generate(
        "mesh",
        &Params {
            dims: vec![3, 1],
            ..Params::default()
        },
    )
    .unwrap();
    let e = run_with_failure(
        cfg(1),
        &line,
        Policy::Osud,
        Failure {
            what: Component::Switch(1),
            at: MS,
        },
        &FaultConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FaultError::Splits(_)), "{e}");
}

#[test]
fn a_host_joining_under_load_is_mapped_in_and_starts_sending_and_receiving() {
    let t = net(8, 15);
    let mapper = elected(&t);
    for (host, policy) in [((mapper + 5) % 32, Policy::Osud), (mapper, Policy::Rmit)] {
        let r =
            myrix_sim::fault::run_with_join(cfg(15), &t, policy, host, MS, &FaultConfig::default())
                .unwrap();
        println!("join {host} {policy:?}: {r:?}");
        assert!(r.drained, "{r:?}");
        assert_eq!(r.map_hosts, t.num_hosts());
        // The highest address takes the mapper role over; anyone else is mapped in by the
        // mapper in place.
        assert_eq!(r.elected, host == mapper, "{r:?}");
        assert_eq!(r.mapper, mapper);
        assert!(r.failed_at_ns < r.detected_at_ns && r.detected_at_ns < r.rerouted_at_ns);
        // Nothing to or from it before the new map; plenty after.
        assert!(r.host_sent > 100 && r.host_received > 100, "{r:?}");
        assert_eq!(r.lost, 0, "{r:?}");
        let n = t.num_hosts() as f64;
        let before = 0.02 * (n - 2.0) / n;
        assert!((r.accepted_before / before - 1.0).abs() < 0.15, "{r:?}");
        assert!((r.accepted_after / 0.02 - 1.0).abs() < 0.15, "{r:?}");
    }
}

//! Topologies, formats, up*/down* routes and the deadlock checker.

use myrix_fabric::deadlock::{check, Dependencies};
use myrix_fabric::format::{from_toml, to_anynet, to_dot, to_toml, FormatError};
use myrix_fabric::generate::{generate, GenError, Params};
use myrix_fabric::route::{next_switch, Hop};
use myrix_fabric::testing::irregular;
use myrix_fabric::topology::{End, Link, Switch, Topology, TopologyError};
use myrix_fabric::updown::{minimal_mean_length, Root, UpDown};
use myrix_wire::myrinet::{forward, Packet, PacketRepr, PacketType};

#[test]
fn irregular_networks_follow_the_study_rules() {
    for seed in 0..50 {
        for n in [2, 5, 16, 32, 64] {
            let t = irregular(n, seed);
            assert_eq!(t.num_hosts(), 4 * n);
            assert_eq!(t.parallel_links(), 0);
            for s in 0..n as u32 {
                assert_eq!(t.switches()[s as usize].ports, 8);
                assert_eq!(t.hosts_on(s).count(), 4);
                assert!(t.neighbours(s).count() <= 4);
            }
            // Connectivity is checked by Topology::new; most ports end up used.
            if n >= 16 {
                let used: usize = (0..n as u32).map(|s| t.neighbours(s).count()).sum();
                assert!(used as f64 >= 0.9 * 4.0 * n as f64, "{used}");
            }
        }
    }
    assert_eq!(
        irregular(16, 7),
        irregular(16, 7),
        "same seed, same network"
    );
    assert_ne!(irregular(16, 7), irregular(16, 8));
}

#[test]
fn mesh_torus_and_fattree_shapes() {
    let p = Params {
        dims: vec![4, 3],
        hosts_per_switch: 2,
        ..Params::default()
    };
    let m = generate("mesh", &p).unwrap();
    assert_eq!(
        (m.num_switches(), m.num_hosts(), m.links().len()),
        (12, 24, 3 * 3 + 4 * 2)
    );
    assert_eq!(m.diameter(), 5);
    let p = Params {
        dims: vec![4, 4],
        ..Params::default()
    };
    let t = generate("torus", &p).unwrap();
    assert_eq!(t.links().len(), 32);
    assert!((0..16).all(|s| t.neighbours(s).count() == 4));
    assert_eq!(t.diameter(), 4);
    let f = generate(
        "fattree",
        &Params {
            leaves: 8,
            spines: 4,
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!(
        (f.num_switches(), f.num_hosts(), f.links().len()),
        (12, 32, 32)
    );
    assert_eq!(f.diameter(), 2);
    assert!(matches!(
        generate("hypercube", &p),
        Err(GenError::UnknownKind(_))
    ));
    let bad = Params {
        dims: vec![2, 4],
        ..Params::default()
    };
    assert!(matches!(generate("torus", &bad), Err(GenError::Params(_))));
}

#[test]
fn toml_round_trips_and_exports() {
    for t in [
        irregular(16, 3),
        generate("torus", &Params::default()).unwrap(),
    ] {
        let text = to_toml(&t);
        assert_eq!(from_toml(&text).unwrap(), t);
    }
    let t = irregular(4, 1);
    let dot = to_dot(&t);
    assert!(dot.starts_with("graph \"irregular-4-seed1\" {"));
    assert_eq!(dot.matches(" -- ").count(), t.links().len() + t.num_hosts());
    let any = to_anynet(&t, |m| (m * 4.92 / 6.25).ceil() as u32);
    assert_eq!(any.lines().count(), 4);
    // 10 m at 1.5 ns/ft is 8 flit times of 6.25 ns.
    assert!(any
        .lines()
        .next()
        .unwrap()
        .starts_with("router 0 node 0 node 1 node 2 node 3 router "));
    assert!(any.contains(" 8"));
    let routers: usize = any.lines().map(|l| l.matches(" router ").count()).sum();
    assert_eq!(
        routers,
        2 * t.links().len(),
        "every link listed from both ends"
    );
}

#[test]
fn bad_topology_files_are_rejected_with_the_reason() {
    let ring = include_str!("ring3.toml");
    assert_eq!(from_toml(ring).unwrap().num_switches(), 3);
    let err = |text: &str| from_toml(text).unwrap_err().to_string();
    assert!(err("[[switch]\nports = 8").starts_with("malformed topology file"));
    assert!(err("[[switch]]\nports = 8\ncolour = 1").contains("unknown field"));
    assert!(err(&ring.replace(
        "port = 5 }\nb = { switch = 2",
        "port = 9 }\nb = { switch = 2"
    ))
    .contains("only 8 ports"));
    assert!(
        err(&ring.replace("\"02:00:00:00:00:01\"", "\"02:00:00:00:00:00\""))
            .contains("share the address")
    );
    assert!(err(&ring.replace("\"02:00:00:00:00:01\"", "\"zz\"")).contains("48-bit address"));
    let two = "[[switch]]\nports = 4\n[[switch]]\nports = 4\n";
    assert!(err(two).contains("disconnected"));
    assert!(matches!(
        from_toml(""),
        Err(FormatError::Topology(TopologyError::NoSwitches))
    ));
    let twice = "[[switch]]\nports = 4\n[[switch]]\nports = 4\n[[link]]\na = { switch = 0, port = 1 }\nb = { switch = 1, port = 1 }\n[[link]]\na = { switch = 0, port = 1 }\nb = { switch = 1, port = 2 }\n";
    assert!(err(twice).contains("used twice"));
}

#[test]
fn updown_routes_of_1000_random_irregular_networks_are_legal_shortest_and_deadlock_free() {
    for seed in 0..1000u64 {
        let n = [8, 16, 24, 32][seed as usize % 4];
        let t = irregular(n, seed);
        let root = if seed % 2 == 0 {
            Root::LowestId
        } else {
            Root::Center
        };
        let ud = UpDown::new(&t, root);
        let routes = ud.osud(&t);
        for (s, d, path) in routes.iter() {
            // The path is connected, starts at s, ends at d, and is legal.
            let mut at = s;
            for h in path {
                assert_eq!(h.switch, at);
                at = next_switch(&t, *h).unwrap();
            }
            assert_eq!(at, d);
            assert!(ud.is_legal(&t, path), "seed {seed}: {s}->{d} {path:?}");
            assert!(path.len() as u32 >= t.hops_from(s)[d as usize]);
        }
        check(&t, routes.iter().map(|(_, _, p)| p)).unwrap_or_else(|c| panic!("seed {seed}: {c}"));
        assert!(routes.mean_length() >= minimal_mean_length(&t));
    }
}

#[test]
fn osud_is_shortest_among_legal_routes() {
    // Exhaustive check on small networks: no legal path is shorter than OSUD's.
    for seed in 0..20 {
        let t = irregular(6, seed);
        let ud = UpDown::new(&t, Root::LowestId);
        let routes = ud.osud(&t);
        for (s, d, path) in routes.iter() {
            let best = shortest_legal_by_search(&t, &ud, s, d);
            assert_eq!(path.len(), best, "seed {seed} {s}->{d}");
        }
    }
}

fn shortest_legal_by_search(t: &Topology, ud: &UpDown, s: u32, d: u32) -> usize {
    // Iterative deepening over all simple paths.
    fn dfs(
        t: &Topology,
        ud: &UpDown,
        at: u32,
        d: u32,
        down: bool,
        left: usize,
        seen: &mut Vec<u32>,
    ) -> bool {
        if at == d {
            return true;
        }
        if left == 0 {
            return false;
        }
        for (_, _, e) in t.neighbours(at) {
            let up = ud.goes_up(at, e.switch);
            if (up && down) || seen.contains(&e.switch) {
                continue;
            }
            seen.push(e.switch);
            let ok = dfs(t, ud, e.switch, d, down || !up, left - 1, seen);
            seen.pop();
            if ok {
                return true;
            }
        }
        false
    }
    (0..t.num_switches())
        .find(|&k| dfs(t, ud, s, d, false, k, &mut vec![s]))
        .unwrap()
}

#[test]
fn the_checker_finds_the_cycle_of_shortest_paths_around_a_ring() {
    // Four switches in a ring; every packet goes two hops clockwise: a classic deadlock.
    let switches = vec![Switch { ports: 2 }; 4];
    let links = (0..4)
        .map(|i| Link {
            a: End { switch: i, port: 1 },
            b: End {
                switch: (i + 1) % 4,
                port: 0,
            },
            length_m: 10.0,
        })
        .collect();
    let t = Topology::new("ring", switches, vec![], links).unwrap();
    let paths: Vec<Vec<Hop>> = (0..4)
        .map(|i| {
            vec![
                Hop { switch: i, port: 1 },
                Hop {
                    switch: (i + 1) % 4,
                    port: 1,
                },
            ]
        })
        .collect();
    let cycle = check(&t, paths.iter().map(|p| p.as_slice())).unwrap_err();
    assert_eq!(cycle.channels.len(), 4);
    assert!(
        cycle.to_string().starts_with("channel dependency cycle: s"),
        "{cycle}"
    );
    // Drop one route and the ring is broken.
    assert!(check(&t, paths[..3].iter().map(|p| p.as_slice())).is_ok());
    let mut d = Dependencies::new(&t);
    d.add_path(&paths[0]);
    assert_eq!(d.num_dependencies(), 1);
}

#[test]
fn host_routes_are_route_bytes_that_switches_follow_to_the_destination() {
    let t = irregular(16, 5);
    let routes = UpDown::new(&t, Root::LowestId).osud(&t);
    for (src, dst) in [(0u32, 63u32), (5, 6), (17, 40), (1, 2)] {
        let route = routes.host_route(&t, src, dst);
        let repr = PacketRepr {
            route: &route,
            packet_type: PacketType::Data,
            payload: b"x",
        };
        let mut buf = repr.to_vec().unwrap();
        let mut len = buf.len();
        let mut at = t.hosts()[src as usize].switch;
        loop {
            let (port, n) = forward(&mut buf, len).unwrap();
            len = n;
            match t.port(at, port) {
                myrix_fabric::PortUse::Link { peer, .. } => at = peer.switch,
                myrix_fabric::PortUse::Host(h) => {
                    assert_eq!(h, dst);
                    break;
                }
                myrix_fabric::PortUse::Free => panic!("route leads to a free port"),
            }
        }
        let p = Packet::new_checked(&buf[..len]).unwrap();
        assert!(p.verify_crc() && p.route().is_empty());
    }
}

#[test]
fn channel_loads_add_up_to_every_pair_times_its_path_length() {
    use myrix_fabric::route::{channel_loads, uniform_bound};
    let t = irregular(16, 2);
    let routes = UpDown::new(&t, Root::LowestId).osud(&t);
    let loads = channel_loads(&t, &routes);
    let total: u64 = loads.iter().map(|(_, n)| n).sum();
    // 4 hosts per switch: each switch pair stands for 16 host pairs.
    let want: u64 = routes.iter().map(|(_, _, p)| 16 * p.len() as u64).sum();
    assert_eq!(total, want);
    assert!(
        loads.windows(2).all(|w| w[0].1 >= w[1].1),
        "sorted, busiest first"
    );
    // The bound: at that load the busiest channel carries exactly the link rate.
    let b = uniform_bound(&t, &routes, 0.16, 32.0, 0.0).unwrap();
    let per_pair = b * 16.0 / (64.0 * 63.0);
    assert!((per_pair * loads[0].1 as f64 - 0.16).abs() < 1e-9);
}

/// `topo show`'s streamed figures equal those of the stored routes.
#[test]
fn the_streamed_osud_summary_equals_the_stored_routes_figures() {
    use myrix_fabric::deadlock::check;
    use myrix_fabric::route::channel_loads;
    for (n, seed) in [(2, 1), (4, 1), (16, 1), (16, 2), (40, 3)] {
        let t = irregular(n, seed);
        for root in [Root::LowestId, Root::Center] {
            let ud = UpDown::new(&t, root);
            let routes = ud.osud(&t);
            let s = ud.osud_summary(&t);
            assert_eq!(s.mean_length, routes.mean_length());
            assert_eq!(s.minimal_mean_length, minimal_mean_length(&t));
            assert_eq!(s.diameter, t.diameter());
            let longer = routes
                .iter()
                .filter(|&(a, b, p)| p.len() as u32 > t.hops_from(a)[b as usize])
                .count();
            assert_eq!(s.longer_than_minimal, longer);
            assert_eq!(s.busiest, channel_loads(&t, &routes).first().copied());
            assert_eq!(s.deadlock, check(&t, routes.iter().map(|(_, _, p)| p)));
        }
    }
}

mod toml_props {
    use myrix_fabric::format::{from_toml, to_toml};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Arbitrary text never panics the topology reader.
        #[test]
        fn any_text_is_a_topology_or_an_error(s in "\\PC{0,300}") {
            let _ = from_toml(&s);
        }

        /// A valid file with bytes changed, cut or numbers pushed to extremes: an error or
        /// a topology that round-trips, never a panic.
        #[test]
        fn mutated_files_never_panic(cut in 0usize..2000, at in 0usize..2000, byte in any::<u8>(), big in any::<bool>()) {
            let mut text = include_str!("ring3.toml").to_string();
            if big {
                text = text.replace("10.0", "1e308").replace("port = 4", "port = 255");
            }
            let mut bytes = text.into_bytes();
            let n = bytes.len();
            bytes[at % n] = byte;
            bytes.truncate(cut.max(1) % (n + 1));
            if let Ok(s) = String::from_utf8(bytes) {
                if let Ok(t) = from_toml(&s) {
                    prop_assert_eq!(from_toml(&to_toml(&t)).unwrap(), t);
                }
            }
        }
    }
}

/// Two host-less leaf-like switches X and Y, each with port 0 to switch 0 and port 1 to
/// switch 1 (both with hosts): which of switch 0's ports pairs with which of switch 1's
/// through them is invisible to every probe, so the swapped network is indistinguishable
/// though not the same. Moving a link or a host is seen.
#[test]
fn indistinguishable_networks_differ_only_where_no_probe_can_tell() {
    use myrix_fabric::topology::Host;
    let net = |x1: u8, y1: u8, host_port: u8| {
        let end = |switch, port| End { switch, port };
        let link = |a, b| Link {
            a,
            b,
            length_m: 10.0,
        };
        let hosts = vec![
            Host {
                address: 1,
                switch: 0,
                port: 0,
                length_m: 10.0,
            },
            Host {
                address: 2,
                switch: 1,
                port: host_port,
                length_m: 10.0,
            },
        ];
        let links = vec![
            link(end(2, 0), end(0, 1)),
            link(end(3, 0), end(0, 2)),
            link(end(2, 1), end(1, x1)),
            link(end(3, 1), end(1, y1)),
        ];
        Topology::new("t", vec![Switch { ports: 4 }; 4], hosts, links).unwrap()
    };
    let real = net(1, 2, 0);
    assert_eq!(real.indistinguishable_from(&real, 1), Ok(()));
    // Switch 0 port 1 now reaches switch 1 port 2 through the host-less switch: unseen.
    assert_eq!(net(2, 1, 0).indistinguishable_from(&real, 1), Ok(()));
    assert_eq!(net(2, 1, 0).indistinguishable_from(&real, 2), Ok(()));
    // A link on another port of switch 1, or the host moved, is seen from either host.
    let moved = net(3, 2, 0);
    assert!(moved.indistinguishable_from(&real, 1).is_err());
    assert!(moved.indistinguishable_from(&real, 2).is_err());
    assert!(net(1, 2, 3).indistinguishable_from(&real, 1).is_err());
    assert!(
        real.indistinguishable_from(&real, 9).is_err(),
        "no such host"
    );
}

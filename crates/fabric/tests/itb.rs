//! Minimal routing with in-transit buffers: splits, policies, deadlock freedom.

use myrix_fabric::itb::{
    check, in_transit_host, paths_of_length, split, Policy, RouteTable, MAX_ALTERNATIVES,
};
use myrix_fabric::route::{next_switch, Hop};
use myrix_fabric::testing::irregular;
use myrix_fabric::topology::{End, Host, Link, Switch, Topology};
use myrix_fabric::updown::{Root, UpDown};
use proptest::prelude::*;

const ALL: [Policy; 6] = Policy::ALL;

/// A ring of `n` switches, one host each; link i joins switch i (port 2) to i+1 (port 1).
fn ring(n: u32) -> Topology {
    let hosts = (0..n)
        .map(|s| Host {
            address: s as u64,
            switch: s,
            port: 0,
            length_m: 10.0,
        })
        .collect();
    let links = (0..n)
        .map(|i| Link {
            a: End { switch: i, port: 2 },
            b: End {
                switch: (i + 1) % n,
                port: 1,
            },
            length_m: 10.0,
        })
        .collect();
    Topology::new("ring", vec![Switch { ports: 3 }; n as usize], hosts, links).unwrap()
}

#[test]
fn a_minimal_path_with_a_down_up_turn_is_split_at_the_turn() {
    // Ring of 6, root 0: levels 0,1,2,3,2,1. From 2 to 4 the minimal path 2-3-4 goes down
    // to 3 and up again; up*/down* must go the long way round, 2-1-0-5-4.
    let t = ring(6);
    let ud = UpDown::new(&t, Root::LowestId);
    assert_eq!(ud.osud(&t).path(2, 4).len(), 4);
    let rmit = RouteTable::new(&t, &ud, Policy::Rmit);
    let alts = rmit.alternatives(2, 4);
    assert_eq!(alts.len(), 1);
    let a0 = alts.at(0).to_alternative(&t);
    assert_eq!(
        a0.hops,
        [Hop { switch: 2, port: 2 }, Hop { switch: 3, port: 2 }]
    );
    assert_eq!(a0.splits, [1]);
    assert_eq!(a0.split_switches().collect::<Vec<_>>(), [3]);
    assert_eq!(in_transit_host(&t, 3, 2, 4), Some(3));
    // rrmit-min: 2 links + 1 in-transit node = 3 < 4 for up*/down*: the ITB route wins.
    let min = RouteTable::new(&t, &ud, Policy::RrmitMin);
    assert_eq!(min.alternatives(2, 4), alts);
    // Between 1 and 3 (1-2-3, down-down) no split is needed.
    assert!(rmit.alternatives(1, 3).at(0).splits.is_empty());
    for p in ALL {
        check(&t, &ud, &RouteTable::new(&t, &ud, p)).unwrap();
    }
}

#[test]
fn a_turn_at_a_switch_without_hosts_cannot_be_split() {
    let t = ring(6);
    let ud = UpDown::new(&t, Root::LowestId);
    let path = [Hop { switch: 2, port: 2 }, Hop { switch: 3, port: 2 }];
    assert_eq!(split(&t, &ud, &path), Some(vec![1]));
    // The same ring with no host on switch 3.
    let hosts = (0..6u32)
        .filter(|&s| s != 3)
        .map(|s| Host {
            address: s as u64,
            switch: s,
            port: 0,
            length_m: 10.0,
        })
        .collect();
    let links = t.links().to_vec();
    let t2 = Topology::new("ring-3", vec![Switch { ports: 3 }; 6], hosts, links).unwrap();
    assert_eq!(split(&t2, &ud, &path), None);
    // rmit then falls back to the up*/down* path.
    let rmit = RouteTable::new(&t2, &ud, Policy::Rmit);
    assert_eq!(rmit.alternatives(2, 4).at(0).len(), 4);
    check(&t2, &ud, &rmit).unwrap();
}

fn verify(t: &Topology, ud: &UpDown) {
    let n = t.num_switches() as u32;
    for p in ALL {
        let table = RouteTable::new(t, ud, p);
        check(t, ud, &table).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        for s in 0..n {
            let dist = t.hops_from(s);
            for d in 0..n {
                let alts = table.alternatives(s, d);
                assert!(!alts.is_empty() && alts.len() <= MAX_ALTERNATIVES);
                for a in alts.iter().chain(table.longer(s, d)) {
                    let a = a.to_alternative(t);
                    // The hops form a path from s to d; splits fall on switches with hosts.
                    let mut at = s;
                    for h in &a.hops {
                        assert_eq!(h.switch, at);
                        at = next_switch(t, *h).unwrap();
                    }
                    assert_eq!(at, d);
                    assert!(a.split_switches().all(|x| t.hosts_on(x).next().is_some()));
                    let joined: Vec<Hop> = a.sub_routes().flatten().copied().collect();
                    assert_eq!(joined, a.hops);
                }
                let min = dist[d as usize] as usize;
                match p {
                    // Every ITB route is minimal in switch hops.
                    Policy::Omit | Policy::Rmit | Policy::Rrmit | Policy::Pit => {
                        assert!(alts.iter().all(|a| a.len() == min), "{p:?} {s}->{d}");
                        assert!(table.longer(s, d).iter().all(|a| a.len() == min + 1));
                    }
                    Policy::RrmitMin => {
                        let osud = ud.osud(t).path(s, d).len();
                        let c = alts.at(0).cost();
                        assert!(alts.iter().all(|a| a.cost() == c));
                        assert!(
                            c >= min && c <= osud,
                            "{s}->{d}: cost {c}, min {min}, osud {osud}"
                        );
                    }
                    Policy::Osud => assert!(alts.at(0).splits.is_empty()),
                }
            }
        }
    }
}

#[test]
fn every_policy_on_100_random_networks_is_deadlock_free_and_minimal() {
    for seed in 0..100 {
        let n = [8, 16, 16, 24][seed as usize % 4];
        let t = irregular(n, seed);
        verify(&t, &UpDown::new(&t, Root::LowestId));
    }
}

#[test]
fn itbs_shorten_routes_and_are_used_sparingly() {
    let t = irregular(16, 1);
    let ud = UpDown::new(&t, Root::LowestId);
    let rmit = RouteTable::new(&t, &ud, Policy::Rmit);
    let min = RouteTable::new(&t, &ud, Policy::RrmitMin);
    // The study: fewer than 0.4 in-transit buffers per message on 16 switches.
    assert!(
        rmit.mean_splits() > 0.0 && rmit.mean_splits() < 0.4,
        "{}",
        rmit.mean_splits()
    );
    assert!(min.mean_splits() < rmit.mean_splits());
    assert!(paths_of_length(&t, 0, 0, 0, 10) == vec![Vec::<Hop>::new()]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn random_networks_and_roots(seed in any::<u64>(), n in 2usize..20, root in 0u32..20) {
        let t = irregular(n, seed);
        verify(&t, &UpDown::new(&t, Root::Switch(root)));
    }
}

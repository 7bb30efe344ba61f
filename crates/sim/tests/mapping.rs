//! The mapper discovers the network from probes alone; its map must equal the real
//! network up to switch renaming (and the pairing of parallel links, which probes with
//! absolute port numbers cannot observe).

use myrix_fabric::generate::{generate, Params};
use myrix_fabric::testing::irregular;
use myrix_fabric::topology::{End, Host, Link, Topology};
use myrix_fabric::PortUse;
use myrix_sim::mapping::{elect, run_mapper, MapConfig, MapRun, Outage};
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};

/// Checks the discovered map against the real network.
fn equivalent(real: &Topology, run: &MapRun) -> Result<(), String> {
    let map = run.map.as_ref().map_err(|e| e.to_string())?;
    if map.num_switches() != real.num_switches() {
        return Err(format!(
            "{} switches found, {} real",
            map.num_switches(),
            real.num_switches()
        ));
    }
    // Which real switch each discovered one is: follow its route in the real network.
    let start = real.hosts()[run.mapper as usize].switch;
    let mut real_of = Vec::new();
    for r in &run.switch_routes {
        let mut s = start;
        for &p in r {
            match real.port(s, p) {
                PortUse::Link { peer, .. } => s = peer.switch,
                other => return Err(format!("route {r:?} leads to {other:?}")),
            }
        }
        real_of.push(s);
    }
    let mut seen = real_of.clone();
    seen.sort();
    seen.dedup();
    if seen.len() != real_of.len() {
        return Err("two discovered switches are the same real one".into());
    }
    // Hosts: same addresses, on the same ports of the same (renamed) switches.
    let at: HashMap<u64, (u32, u8)> = real
        .hosts()
        .iter()
        .map(|h| (h.address, (h.switch, h.port)))
        .collect();
    if map.num_hosts() != real.num_hosts() {
        return Err(format!(
            "{} hosts found, {} real",
            map.num_hosts(),
            real.num_hosts()
        ));
    }
    for h in map.hosts() {
        if at.get(&h.address) != Some(&(real_of[h.switch as usize], h.port)) {
            return Err(format!("host {:x} misplaced", h.address));
        }
    }
    // Links: per unordered switch pair, the same ports at each end.
    type Ends = BTreeMap<(u32, u32), (Vec<u8>, Vec<u8>)>;
    let ends = |links: Vec<(End, End)>| -> Ends {
        let mut m: Ends = BTreeMap::new();
        for (a, b) in links {
            let (a, b) = if a.switch <= b.switch { (a, b) } else { (b, a) };
            let e = m.entry((a.switch, b.switch)).or_default();
            e.0.push(a.port);
            e.1.push(b.port);
        }
        for v in m.values_mut() {
            v.0.sort();
            v.1.sort();
        }
        m
    };
    let mine = ends(
        map.links()
            .iter()
            .map(|l| {
                (
                    End {
                        switch: real_of[l.a.switch as usize],
                        port: l.a.port,
                    },
                    End {
                        switch: real_of[l.b.switch as usize],
                        port: l.b.port,
                    },
                )
            })
            .collect(),
    );
    let theirs = ends(real.links().iter().map(|l| (l.a, l.b)).collect());
    if mine != theirs {
        return Err(format!("links differ:\n map  {mine:?}\n real {theirs:?}"));
    }
    Ok(())
}

#[test]
fn maps_regular_networks() {
    for (kind, p) in [
        (
            "mesh",
            Params {
                dims: vec![4, 4],
                ..Params::default()
            },
        ),
        (
            "torus",
            Params {
                dims: vec![4, 3],
                hosts_per_switch: 1,
                ..Params::default()
            },
        ),
        (
            "fattree",
            Params {
                leaves: 6,
                spines: 3,
                ..Params::default()
            },
        ),
    ] {
        let t = generate(kind, &p).unwrap();
        let run = run_mapper(&t, 0, &MapConfig::default());
        equivalent(&t, &run).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let map = run.map.as_ref().unwrap();
        map.indistinguishable_from(&t, t.hosts()[0].address)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// Whether two switches of `t` cannot be told apart by any probe (same hosts on the same
/// ports and, port by port, look-alike neighbours): partition refinement.
fn has_lookalikes(t: &Topology) -> bool {
    let n = t.num_switches();
    let mut class: Vec<usize> = vec![0; n];
    loop {
        let sig = |s: usize, class: &[usize]| -> Vec<(u8, u64)> {
            t.ports_of(s as u32)
                .iter()
                .map(|p| match *p {
                    PortUse::Free => (0, 0),
                    PortUse::Host(h) => (1, t.hosts()[h as usize].address),
                    PortUse::Link { peer, .. } => (2, class[peer.switch as usize] as u64),
                })
                .collect()
        };
        let mut ids: HashMap<(usize, Vec<(u8, u64)>), usize> = HashMap::new();
        let next: Vec<usize> = (0..n)
            .map(|s| {
                let k = (class[s], sig(s, &class));
                let len = ids.len();
                *ids.entry(k).or_insert(len)
            })
            .collect();
        let (before, after) = (
            class.iter().collect::<std::collections::HashSet<_>>().len(),
            ids.len(),
        );
        class = next;
        if before == after {
            return after < n;
        }
    }
}

/// A random irregular network of 2 to 40 switches, with the hosts taken off a random
/// share of the switches (none, a fifth, a third or half; never the mapper's) and, on
/// every third seed, second cables beside some links. Returns it with the mapper's host.
fn random_network(seed: u64) -> (Topology, u32) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x6d61_7070);
    let n = rng.gen_range(2..=40usize);
    let base = irregular(n, seed);
    let share = [0.0, 0.2, 0.35, 0.5][seed as usize % 4];
    let parallel = seed % 3 == 0;
    let home = rng.gen_range(0..n as u32);
    let bare: Vec<bool> = (0..n as u32)
        .map(|s| s != home && rng.gen_bool(share))
        .collect();
    let thin: Vec<bool> = (0..n).map(|_| parallel && rng.gen_bool(0.5)).collect();
    let hosts: Vec<Host> = base
        .hosts()
        .iter()
        .copied()
        .filter(|h| !bare[h.switch as usize])
        .filter(|h| !thin[h.switch as usize] || h.port < 2 || h.switch == home)
        .collect();
    let mut used: Vec<Vec<bool>> = base
        .switches()
        .iter()
        .map(|s| vec![false; s.ports as usize])
        .collect();
    for h in &hosts {
        used[h.switch as usize][h.port as usize] = true;
    }
    let mut links = base.links().to_vec();
    for l in &links {
        used[l.a.switch as usize][l.a.port as usize] = true;
        used[l.b.switch as usize][l.b.port as usize] = true;
    }
    if parallel {
        for l in base.links() {
            if !rng.gen_bool(0.4) {
                continue;
            }
            let fa = used[l.a.switch as usize].iter().position(|u| !u);
            let fb = used[l.b.switch as usize].iter().position(|u| !u);
            if let (Some(pa), Some(pb)) = (fa, fb) {
                used[l.a.switch as usize][pa] = true;
                used[l.b.switch as usize][pb] = true;
                links.push(Link {
                    a: End {
                        switch: l.a.switch,
                        port: pa as u8,
                    },
                    b: End {
                        switch: l.b.switch,
                        port: pb as u8,
                    },
                    length_m: 10.0,
                });
            }
        }
    }
    let t = Topology::new("random", base.switches().to_vec(), hosts, links).unwrap();
    let mapper = t.hosts().iter().position(|h| h.switch == home).unwrap() as u32;
    (t, mapper)
}

/// The criterion: 1000 random irregular networks, with host-less switches and
/// parallel links among them. A network whose switches can all be told apart is mapped
/// exactly (up to switch renaming and the pairing of parallel links); one with
/// look-alike host-less switches is mapped with the right number of switches and
/// indistinguishably from the real one (no probe can do better, see `fabric::mapper`).
#[test]
fn maps_1000_random_networks_with_hostless_switches_and_parallel_links() {
    let (mut hostless, mut parallel, mut lookalike) = (0, 0, 0);
    for seed in 0..1000u64 {
        let (t, mapper) = random_network(seed);
        let run = run_mapper(&t, mapper, &MapConfig::default());
        let me = t.hosts()[mapper as usize].address;
        let map = run
            .map
            .as_ref()
            .unwrap_or_else(|e| panic!("seed {seed}: {e} ({})", run.last_state));
        map.indistinguishable_from(&t, me)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if has_lookalikes(&t) {
            lookalike += 1;
        } else {
            equivalent(&t, &run).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        let bare = (0..t.num_switches() as u32)
            .filter(|&s| t.hosts_on(s).next().is_none())
            .count();
        hostless += (bare > 0) as u32;
        parallel += (t.parallel_links() > 0) as u32;
    }
    println!("{hostless} with host-less switches, {parallel} with parallel links, {lookalike} with look-alikes");
    assert!(
        hostless >= 600 && parallel >= 250 && lookalike >= 1,
        "the cases must be covered"
    );
}

/// The host with the highest address among `hosts`.
fn highest(t: &Topology, hosts: impl Iterator<Item = u32>) -> u32 {
    hosts
        .max_by_key(|&h| t.hosts()[h as usize].address)
        .unwrap()
}

/// With every host starting to map at once, one mapper is left: the highest address;
/// every host receives its map, which is the network's.
#[test]
fn election_leaves_the_highest_host_mapping_and_every_host_gets_the_map() {
    for seed in 0..40u64 {
        let (t, _) = random_network(seed);
        let e = elect(&t, &Outage::default(), &MapConfig::default());
        assert_eq!(e.parts.len(), 1, "seed {seed}: one network, one mapper");
        assert_eq!(e.candidates, t.num_hosts());
        let p = &e.parts[0];
        let top = highest(&t, 0..t.num_hosts() as u32);
        assert_eq!(p.run.mapper, top, "seed {seed}");
        assert_eq!(p.informed, (0..t.num_hosts() as u32).collect::<Vec<_>>());
        let map = p.run.map.as_ref().unwrap();
        map.indistinguishable_from(&t, t.hosts()[top as usize].address)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(e.probes > p.run.probes || t.num_hosts() == 1);
        assert!(p.distributed_at > p.run.time);
    }
}

/// The mapper's host switched off: the next highest maps, and the map lacks the host.
#[test]
fn a_mapper_switched_off_is_replaced_by_the_next_highest_host() {
    for seed in 0..20u64 {
        let (t, _) = random_network(seed);
        let top = highest(&t, 0..t.num_hosts() as u32);
        let outage = Outage {
            hosts_off: vec![top],
            ..Outage::default()
        };
        let e = elect(&t, &outage, &MapConfig::default());
        assert_eq!(e.parts.len(), 1);
        let p = &e.parts[0];
        let next = highest(&t, (0..t.num_hosts() as u32).filter(|&h| h != top));
        assert_eq!(p.run.mapper, next, "seed {seed}");
        assert_eq!(p.informed.len(), t.num_hosts() - 1);
        assert!(!p.informed.contains(&top));
        let map = p.run.map.as_ref().unwrap();
        assert_eq!(map.num_hosts(), t.num_hosts() - 1);
        assert_eq!(map.num_switches(), t.num_switches());
    }
}

/// Links down that cut a 2×3 mesh in two: one mapper per part, each part's own hosts
/// informed, each map the part's switches.
#[test]
fn a_split_network_elects_one_mapper_per_part() {
    let t = generate(
        "mesh",
        &Params {
            dims: vec![3, 2],
            hosts_per_switch: 2,
            ..Params::default()
        },
    )
    .unwrap();
    // Cut between columns 0 and 1 (switches 0, 3 | 1, 2, 4, 5).
    let side = |s: u32| s % 3 == 0;
    let cut: Vec<usize> = (0..t.links().len())
        .filter(|&l| {
            let l = t.links()[l];
            side(l.a.switch) != side(l.b.switch)
        })
        .collect();
    assert_eq!(cut.len(), 2);
    let e = elect(
        &t,
        &Outage {
            links_down: cut,
            ..Outage::default()
        },
        &MapConfig::default(),
    );
    assert_eq!(e.parts.len(), 2);
    for part in [true, false] {
        let hosts: Vec<u32> = (0..t.num_hosts() as u32)
            .filter(|&h| side(t.hosts()[h as usize].switch) == part)
            .collect();
        let p = e
            .parts
            .iter()
            .find(|p| p.run.mapper == highest(&t, hosts.iter().copied()))
            .expect("the part's highest host maps it");
        assert_eq!(p.informed, hosts);
        let map = p.run.map.as_ref().unwrap();
        assert_eq!(map.num_switches(), if part { 2 } else { 4 });
        assert_eq!(map.num_hosts(), hosts.len());
    }
}

//! The mapper discovers the network from probes alone; its map must equal the real
//! network up to switch renaming (and the pairing of parallel links, which probes with
//! absolute port numbers cannot observe).

use myrix_fabric::generate::{generate, Params};
use myrix_fabric::topology::{End, Host, Link, Topology};
use myrix_fabric::PortUse;
use myrix_sim::mapping::{run_mapper, MapConfig, MapRun};
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
fn maps_equal_1000_random_irregular_networks() {
    for seed in 0..1000u64 {
        let n = 2 + (seed as usize * 7) % 31;
        let t = generate(
            "irregular",
            &Params {
                switches: n,
                seed,
                ..Params::default()
            },
        )
        .unwrap();
        let mapper = (seed % t.num_hosts() as u64) as u32;
        let run = run_mapper(&t, mapper, &MapConfig::default());
        equivalent(&t, &run).unwrap_or_else(|e| panic!("seed {seed}, {n} switches: {e}"));
    }
}

/// An irregular network with the hosts taken off about a third of the switches (never
/// the mapper's) and/or a second cable added beside some links. Networks with host-less
/// switches are not mapped reliably yet (45 of 300 such networks come out wrong: route
/// tests cannot always tell look-alike host-less switches apart), so only the
/// parallel-link case is tested here; see the README.
fn odd_network(seed: u64, hostless: bool, parallel: bool) -> Topology {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let base = generate(
        "irregular",
        &Params {
            switches: 12,
            seed,
            ..Params::default()
        },
    )
    .unwrap();
    let hosts: Vec<Host> = base
        .hosts()
        .iter()
        .copied()
        .filter(|h| !hostless || h.switch == 0 || (h.switch as u64 * 7 + seed) % 3 != 0)
        // For parallel cables, free two host ports on every switch (each keeps hosts).
        .filter(|h| !parallel || h.port < 2)
        .collect();
    let mut links = base.links().to_vec();
    let mut used: Vec<Vec<bool>> = base
        .switches()
        .iter()
        .map(|s| vec![false; s.ports as usize])
        .collect();
    for h in &hosts {
        used[h.switch as usize][h.port as usize] = true;
    }
    for l in &links {
        used[l.a.switch as usize][l.a.port as usize] = true;
        used[l.b.switch as usize][l.b.port as usize] = true;
    }
    if parallel {
        for l in base.links().to_vec() {
            if rng.gen_bool(0.3) {
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
    }
    Topology::new("odd", base.switches().to_vec(), hosts, links).unwrap()
}

#[test]
fn maps_networks_with_parallel_links() {
    for seed in 0..300u64 {
        let t = odd_network(seed, false, true);
        assert!(
            seed % 20 != 0 || t.parallel_links() > 0,
            "the case must have parallel links"
        );
        let run = run_mapper(&t, 0, &MapConfig::default());
        equivalent(&t, &run).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
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
    }
}

/// The known limit, as a guard: networks with host-less switches are mapped wrongly in
/// 45 of these 300 (26 with a host-less switch found twice, 19 with links misplaced);
/// the count must not grow. `-- --nocapture` lists the seeds.
#[test]
fn hostless_switches_known_limit() {
    let mut bad = 0;
    for seed in 0..300u64 {
        let t = odd_network(seed, true, false);
        let run = run_mapper(&t, 0, &MapConfig::default());
        if let Err(e) = equivalent(&t, &run) {
            bad += 1;
            println!("seed {seed}: {}", e.lines().next().unwrap_or(""));
        }
    }
    println!("{bad} of 300 wrong");
    assert!(
        bad <= 45,
        "{bad} of 300 networks with host-less switches mapped wrongly"
    );
}

//! Fixtures shared by the tests of fabric, sim and the CLI: the study's irregular
//! network and its routes, built one way. It panics where a caller could go wrong, so
//! library code must never call it.

use crate::generate::{generate, Params};
use crate::itb::{Policy, RouteTable};
use crate::updown::{Root, UpDown};
use crate::Topology;

/// The irregular network of `switches` switches (8 ports, 4 hosts each) from `seed`.
pub fn irregular(switches: usize, seed: u64) -> Topology {
    generate(
        "irregular",
        &Params {
            switches,
            seed,
            ..Params::default()
        },
    )
    .expect("an irregular network of at least one switch")
}

/// [`irregular`] with the routes of `policy` (up*/down* rooted at the lowest id).
pub fn irregular_routes(switches: usize, seed: u64, policy: Policy) -> (Topology, RouteTable) {
    let t = irregular(switches, seed);
    let routes = RouteTable::new(&t, &UpDown::new(&t, Root::LowestId), policy);
    (t, routes)
}

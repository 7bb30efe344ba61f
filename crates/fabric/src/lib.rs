//! The fabric: what a Myrinet network is made of and how packets find their way through
//! it, with no notion of time.
//!
//! * [`topology`]: switches with numbered ports, hosts (network interfaces with a 48-bit
//!   address) on switch ports, full-duplex links between switch ports, validated.
//! * [`generate`]: topologies by name: `irregular` (the minimal-routing study's random
//!   networks), `mesh`, `torus`, `fattree` (a two-level folded Clos).
//! * [`format`]: the TOML topology file, Graphviz DOT, and BookSim2's `anynet` file.
//! * [`updown`]: up*/down* as Myrinet uses it, and OSUD: one shortest legal route per
//!   switch pair.
//! * [`route`]: switch paths as hops and as the route bytes a host prepends.
//! * [`deadlock`]: the channel dependency graph of any route set, and its cycles.
//! * [`mapper`]: discovering a network from probe outcomes alone (sans-IO).
//! * [`named`]: the one mechanism for things chosen by name (policies, generators…).
//! * [`itb`]: minimal routes split at in-transit buffers, and the study's selection
//!   policies (`osud`, `omit`, `rmit`, `rrmit`, `pit`, `rrmit-min`).
//!
//! The simulator (crate `sim`) adds time; the mapper will discover these same structures.

#![forbid(unsafe_code)]

pub mod deadlock;
pub mod format;
pub mod generate;
pub mod itb;
pub mod mapper;
pub mod named;
pub mod route;
pub mod testing;
pub mod topology;
pub mod updown;

pub use topology::{End, Host, HostId, Link, PortUse, Switch, SwitchId, Topology, TopologyError};

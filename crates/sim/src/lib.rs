//! A flit-by-flit model of a Myrinet network, after the minimal-routing study (seed 001).
//!
//! Time advances in **ticks** ([`Ticks`]) of one flit time: a flit is one byte and a link
//! carries one per 6.25 ns at 160 MB/s. The [`Config`] gives durations in
//! [`Picos`](myrix_link::Picos); everything else is expressed in ticks from it:
//!
//! * **Cables** delay every flit by `ceil(length × ns_per_m / flit time)` ticks (10 m at
//!   1.5 ns/ft: 8 ticks, the study's "8 flits on the link").
//! * **Slack buffers**: each channel ends in an 80-byte buffer; STOP goes back when it
//!   fills to 56 bytes and GO when it drains to 40, decided by `link`'s
//!   [`SlackBuffer`](myrix_link::slack::SlackBuffer), and each takes the reverse cable's
//!   delay to reach the sender, which stops or resumes between two flits.
//! * **Switches** (blocking cut-through, no virtual channels): when a packet's leading
//!   route byte reaches the front of an input buffer it waits for the switch's routing
//!   unit, which serves the inputs in round-robin turns of 150 ns; at the end of its turn
//!   the route byte is stripped and the first following byte leaves if the output is
//!   free (and not kept for another input that asked before), so with no contention the
//!   first byte leaves 150 ns after the header arrived. An output serves one packet at a
//!   time. The crossbar has no internal conflicts. A channel takes the next packet only
//!   once the last one's tail has left the buffer at its far end, so a blocked worm holds
//!   the channel behind it. Other readings of the study's switch are options
//!   ([`SwitchModel`], [`ChannelRelease`]).
//! * **MX** and **RSM** engines can sit at the host interfaces and exchange frames as
//!   packets ([`hostnet`], [`mxnet`], [`rsmnet`]).
//! * **Host interfaces** generate messages (exponential inter-arrival times at a constant
//!   mean rate, the same for all hosts), queue them in host memory, prepend the route and
//!   send one flit per tick when not stopped; they absorb arriving flits at once.
//!
//! A packet on the wire is route bytes (one per switch crossed) + 1 type byte + the
//! payload + 1 CRC byte, with a route and type byte more per in-transit host:
//! [`wire_bytes`]. Offered and accepted traffic are counted in the
//! study's unit, flits/ns/switch, where the flits are the **payload** bytes: the route,
//! type and CRC bytes are overhead the network carries on top.
//!
//! The model never reads a clock or allocates per flit; one seed fixes the whole run.

#![forbid(unsafe_code)]

mod engine;
pub mod fault;
pub mod hostnet;
pub mod mapping;
pub mod mxnet;
pub mod rsmnet;
pub mod steady;
mod time;
pub mod traffic;

pub use engine::{ChannelRelease, Config, ConfigError, Results, Sim, SwitchModel};
pub use time::Ticks;

/// Bytes on the wire at injection for a message of `payload` bytes whose route crosses
/// `links` switch-to-switch links in `sub_routes` pieces (1 without in-transit hosts):
/// each sub-route has a route byte per switch it crosses (its links + 1, the last one
/// leading to a host) and a type byte; then the payload and the CRC.
pub const fn wire_bytes(payload: usize, links: usize, sub_routes: usize) -> usize {
    links + 2 * sub_routes + payload + 1
}

//! The engine's parameters.

use crate::reliability::{Params, SeqUnit};

/// Protocol parameters. Defaults follow MX / Open-MX where the paper or its source give a
/// value (message classes, 32 KiB pull blocks, ack after 4 frames); timers are shorter
/// than Open-MX's 0.5 s resend because our links are local.
#[derive(Clone, Debug)]
pub struct Config {
    pub tiny_max: usize,
    pub small_max: usize,
    /// Largest eager message; larger ones use the rendezvous.
    pub medium_max: usize,
    /// Largest frame the transport carries.
    pub mtu: usize,
    /// Largest medium fragment (data bytes), further capped by the MTU.
    pub medium_frag: usize,
    /// Bytes per pull request.
    pub pull_block: usize,
    /// Pull blocks in flight from one peer at first, over all its large receives; flow
    /// control then moves the window between 1 and 64 blocks (`engine::flow`).
    pub pull_window: usize,
    /// Largest message accepted.
    pub max_message: usize,
    /// The transport never loses, duplicates or reorders (self, shm): no acks, no timers.
    pub reliable_transport: bool,
    pub ack_after: u32,
    pub ack_delay_ns: u64,
    pub resend_ns: u64,
    /// After this long without an acknowledgement the peer is unreachable.
    pub request_timeout_ns: u64,
    pub connect_timeout_ns: u64,
    /// Sequenced frames in flight per peer.
    pub send_window: u16,
    /// Out-of-order frames held per peer.
    pub early_window: u16,
    /// Bound on the unexpected queue: messages and bytes.
    pub unexpected_max: usize,
    pub unexpected_max_bytes: usize,
    /// Regions for large sends where the layout names them by an 8-bit region id
    /// (Open-MX: [`myrix_wire::codec::Codec::REGIONS`]); at most 256. A large send
    /// waits while all are held.
    pub large_regions: usize,
}

impl Config {
    /// The reliability layer's parameters. MX's policy: one sequence number per frame.
    pub fn reliability(&self) -> Params {
        Params {
            unit: SeqUnit::Frame,
            lossless: self.reliable_transport,
            ack_after: self.ack_after,
            ack_delay_ns: self.ack_delay_ns,
            resend_ns: self.resend_ns,
            timeout_ns: self.request_timeout_ns,
            send_window: self.send_window,
            early_window: self.early_window,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tiny_max: 32,
            small_max: 128,
            medium_max: 32 * 1024,
            mtu: 1472,
            medium_frag: 8192,
            pull_block: 32 * 1024,
            pull_window: 4,
            max_message: 1 << 30,
            reliable_transport: false,
            ack_after: 4,
            ack_delay_ns: 1_000_000,
            resend_ns: 20_000_000,
            request_timeout_ns: 10_000_000_000,
            connect_timeout_ns: 5_000_000_000,
            send_window: 1024,
            early_window: 1024,
            unexpected_max: 4096,
            unexpected_max_bytes: 64 << 20,
            large_regions: super::regions::REGIONS,
        }
    }
}

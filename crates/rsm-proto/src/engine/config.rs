//! The engine's parameters.

use myrix_mx_proto::reliability::{Params, SeqUnit};

/// The largest block one read request may ask for; an exporter refuses larger ones with
/// [`crate::RsmError::BadLength`], so what a hostile importer makes it buffer is bounded.
pub const MAX_READ_BLOCK: u32 = 64 * 1024;

/// Protocol parameters. Timers default to the MX engine's; windows are sized for a
/// local network (a 256 KiB write window fills a 10 Gb/s link at 200 µs RTT).
#[derive(Clone, Debug)]
pub struct Config {
    /// Largest frame the transport carries (UDP payload, ring slot, Ethernet payload):
    /// writes and read replies are cut to fit.
    pub mtu: usize,
    /// Bytes per read request: a large get is pulled in blocks of this size (at most
    /// [`MAX_READ_BLOCK`]).
    pub read_block: u32,
    /// Read bytes requested and not yet answered, per peer: how many blocks of large
    /// gets are pulled at once.
    pub read_window: usize,
    /// Write and read-reply data bytes sent and not yet acknowledged, per peer: a large
    /// put is pipelined this far ahead and no further.
    pub write_window: usize,
    /// Put bytes queued and not yet sent, per peer, past which `put` refuses with
    /// [`crate::RsmError::InsufficientResources`].
    pub max_queued: usize,
    /// Read-reply bytes an exporter holds for one peer (read, not yet acknowledged);
    /// further reads are answered [`crate::RsmError::InsufficientResources`].
    pub max_reply_buffer: usize,
    /// Largest get.
    pub max_get: u64,
    /// Peers this engine keeps state for: connects from more are dropped.
    pub max_peers: usize,
    /// Connections an exporter accepts, over all its segments.
    pub max_connections: usize,
    /// The transport never loses, duplicates or reorders (shared memory): no acks, no
    /// timers.
    pub reliable_transport: bool,
    /// Frames delivered before an explicit ack is sent.
    pub ack_after: u32,
    pub ack_delay_ns: u64,
    pub resend_ns: u64,
    /// After this long without an acknowledgement the peer is unreachable.
    pub timeout_ns: u64,
    /// Sequenced frames in flight per peer.
    pub send_window: u16,
    /// Out-of-order frames held per peer.
    pub early_window: u16,
}

impl Config {
    /// The reliability layer's parameters: one sequence number per frame, as MX.
    pub fn reliability(&self) -> Params {
        Params {
            unit: SeqUnit::Frame,
            lossless: self.reliable_transport,
            ack_after: self.ack_after,
            ack_delay_ns: self.ack_delay_ns,
            resend_ns: self.resend_ns,
            timeout_ns: self.timeout_ns,
            send_window: self.send_window,
            early_window: self.early_window,
        }
    }

    /// Parameters for a test network whose latency is microseconds.
    pub fn fast_timers() -> Config {
        Config {
            ack_delay_ns: 20_000,
            resend_ns: 200_000,
            timeout_ns: 2_000_000_000,
            ..Config::default()
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mtu: 1472,
            read_block: 32 * 1024,
            read_window: 128 * 1024,
            write_window: 256 * 1024,
            max_queued: 64 << 20,
            max_reply_buffer: 1 << 20,
            max_get: 1 << 30,
            max_peers: 4096,
            max_connections: 65536,
            reliable_transport: false,
            ack_after: 4,
            ack_delay_ns: 1_000_000,
            resend_ns: 20_000_000,
            timeout_ns: 10_000_000_000,
            send_window: 1024,
            early_window: 1024,
        }
    }
}

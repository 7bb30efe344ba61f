//! The engine API's plain types: handles, completion events, statistics.

use crate::error::RsmError;
use crate::types::{NodeId, SegmentId};

/// An import: the importer's end of a connection to a remote segment. Ids are never
/// reused by one engine, so a stale handle is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Import(pub u32);

/// A get in progress; its data comes in [`Event::GetDone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GetId(pub u32);

/// A flush (a barrier's close) in progress; its result comes in [`Event::BarrierDone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlushId(pub u32);

/// Who a signal is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalTarget {
    /// An importer's import (the exporter signalled all its importers).
    Import(Import),
    /// This node's exported segment (an importer signalled it).
    Export(SegmentId),
}

/// What the engine tells its driver, in order ([`super::Engine::poll_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<A> {
    /// A connect finished: the segment's length, or why not. A refused import is gone.
    Connected {
        import: Import,
        result: Result<u64, RsmError>,
    },
    /// A get finished: the bytes, or the first error of its blocks.
    GetDone {
        get: GetId,
        import: Import,
        result: Result<Vec<u8>, RsmError>,
    },
    /// A flush (barrier close) finished: every write queued before it is in remote
    /// memory, and this is the first failure of the import since the barrier opened
    /// ([`RsmError::BarrierFailure`], [`RsmError::ConnAborted`],
    /// [`RsmError::RemoteNodeUnreachable`]).
    BarrierDone {
        flush: FlushId,
        import: Import,
        result: Result<(), RsmError>,
    },
    /// The exporter ended the connection (it unpublished the segment): later accesses
    /// fail with [`RsmError::ConnAborted`].
    Aborted { import: Import },
    /// A signal arrived. `from` is the node the engine knows the sender as (the
    /// connection's), never a value the sender wrote.
    Signal { target: SignalTarget, from: NodeId },
    /// The peer stopped acknowledging: everything with it failed.
    PeerUnreachable { peer: A },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames that did not parse, came from an unknown peer or an older session.
    pub frames_dropped: u64,
    pub duplicates: u64,
    /// Frames dropped because the network held them back while the sender's sequence
    /// numbers went round (their number or their ack is far from the expected one).
    pub old_frames: u64,
    /// Frames dropped while waiting for a peer to start its numbering afresh (sent
    /// before it knew we did).
    pub resync_dropped: u64,
    /// Probes sent to peers declared unreachable.
    pub probes: u64,
    pub resends: u64,
    /// Write frames applied to memory, and their bytes.
    pub writes_applied: u64,
    pub bytes_written: u64,
    /// Write frames refused (unknown or aborted connection, permission, bounds): nothing
    /// of them was applied.
    pub writes_refused: u64,
    pub bytes_read: u64,
    pub signals_dropped: u64,
}

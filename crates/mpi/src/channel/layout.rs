//! Every byte offset of the three kinds of segment the channel uses, in one place
//! (smoltcp's `mod field` style), and the encoding of the postbox flag word. Nothing
//! here touches memory: [`super::window`] does, at these offsets.
//!
//! All words are little-endian native words (shm: the same host; a network window
//! must keep both ends little-endian). Words written by one side and polled by the
//! other are 8-byte aligned and written with one atomic store, last, with release
//! ordering.
//!
//! * **Inbox** (one per rank, exported at open, published as the business card):
//!   `changed` word, then one 64-byte slot per rank of the job (64 bytes per rank: the
//!   one cost that grows with the job before any connection exists).
//! * **Channel area** (written only by S): postbox queues, then the pool. On shared
//!   memory one area per sender for its host, one queue per rank of the host (the
//!   rank's index among the host's ranks) and one pool for all of them (seed 004
//!   §3.1); toward another node or another job's process one per connection S→R, a
//!   single queue (the same layout with one queue).
//! * **Ack segment** (one per connection S→R, in S's memory, written only by R): one
//!   ack byte per postbox, then the match ring (clear-to-send / sync matched).

/// A cache line: the size of a postbox and of an inbox slot.
pub const LINE: usize = 64;

/// Rounds `n` up to a multiple of `to` (a power of two).
pub const fn round_up(n: usize, to: usize) -> usize {
    (n + to - 1) & !(to - 1)
}

/// The inbox: how connections are asked for and answered (seed §3.3, deferred).
pub mod inbox {
    use super::LINE;

    /// u64, set to 1 by any peer after it wrote its slot; cleared by the owner *before*
    /// it scans the slots, so a write after the clear is never missed.
    pub const CHANGED: usize = 0;
    /// The first slot; slot of rank `r` at `SLOTS + r * LINE`.
    pub const SLOTS: usize = LINE;

    /// Offsets inside a slot. The *request* half is written by the slot's rank as
    /// the sender of a connection to the inbox's owner; the *reply* half by the slot's
    /// rank as the receiver of a connection from the owner.
    pub mod slot {
        /// u64: nonzero once a request is complete (written last).
        pub const REQ_GEN: usize = 0;
        /// u32: the sender's ack segment id.
        pub const REQ_ACK_ID: usize = 8;
        /// u32: the sender's inbox id (the receiver replies there).
        pub const REQ_INBOX_ID: usize = 12;
        /// u32: postboxes in the queue the sender wants.
        pub const REQ_QUEUE: usize = 16;
        /// u32: pool bytes.
        pub const REQ_POOL: usize = 20;
        /// u32: small block bytes.
        pub const REQ_SMALL: usize = 24;
        /// u32: large block bytes.
        pub const REQ_LARGE: usize = 28;
        /// u64: nonzero once a reply is complete (written last).
        pub const REP_GEN: usize = 32;
        /// u32: the channel area's segment id.
        pub const REP_AREA_ID: usize = 40;
        /// u32: 0 accepted; otherwise refused (see [`super::super::REFUSED`]).
        pub const REP_STATUS: usize = 44;
        /// u32: the sender's shared area for the receiver's host (0: none, the
        /// receiver makes a channel area for this connection alone).
        pub const REQ_AREA_ID: usize = 48;
        /// u32: queues of that area (ranks of the host).
        pub const REQ_QUEUES: usize = 52;
        /// u32: the receiver's queue in it.
        pub const REQ_INDEX: usize = 56;
        /// u32: toward another node, the shm segment (on the receiver's host) of the
        /// sender's area the receiver made for that host (0: it joined the one the
        /// request named, or the area is the connection's own).
        pub const REP_SHM_ID: usize = 60;
    }

    /// The slot of `rank`.
    pub const fn slot(rank: u32) -> usize {
        SLOTS + rank as usize * LINE
    }

    /// Bytes of an inbox for a job of `size` ranks (before page rounding).
    pub const fn len(size: u32) -> usize {
        SLOTS + size as usize * LINE
    }
}

/// A reply status: the request's geometry was refused.
pub const REFUSED: u32 = 1;

/// A 64-byte postbox of the queue.
pub mod postbox {
    /// u64 flag word, stored last with release ordering: see [`super::Flag`].
    pub const FLAG: usize = 0;
    /// First postbox of a message: u32 context id.
    pub const CTX: usize = 8;
    /// First postbox of a message: i32 tag.
    pub const TAG: usize = 12;
    /// First postbox of a message: u64 length; first postbox of rendezvous data: the
    /// message's length again (checked).
    pub const LEN: usize = 16;
    /// First postbox of rendezvous data: u64 sequence number of the message.
    pub const SEQ: usize = 8;
    /// Payload of a first postbox (inline bytes or block references).
    pub const FIRST_PAYLOAD: usize = 24;
    pub const FIRST_PAYLOAD_LEN: usize = 40;
    /// Payload of a continuation postbox.
    pub const CONT_PAYLOAD: usize = 8;
    pub const CONT_PAYLOAD_LEN: usize = 56;
    /// Block references (u32 each) a first / continuation postbox holds.
    pub const FIRST_REFS: usize = FIRST_PAYLOAD_LEN / 4;
    pub const CONT_REFS: usize = CONT_PAYLOAD_LEN / 4;
}

/// Postbox kinds (the flag word's `kind`).
pub mod kind {
    /// First postbox of an eager message with inline data.
    pub const SHORT: u8 = 1;
    /// First postbox of an eager message in pool blocks.
    pub const LONG: u8 = 2;
    /// A rendezvous envelope (request to send): no data. `count` bit 0: sync.
    pub const RTS: u8 = 3;
    /// First postbox of a rendezvous message's data, in pool blocks.
    pub const RDATA: u8 = 4;
    /// More inline data of the current message.
    pub const CONT_INLINE: u8 = 5;
    /// More block references of the current message.
    pub const CONT_REFS: u8 = 6;
}

/// A block reference: bit 31 set for a large block, the rest the index of its first
/// small block in the pool.
pub const REF_LARGE: u32 = 1 << 31;

/// The flag word of a postbox: `lap` (u32, the queue lap the postbox belongs to, from
/// 1; the receiver waits for the lap it expects, so nobody ever clears a flag
/// remotely), `kind`, `count` (block references, or RTS flags), `nbytes` (inline data
/// bytes in this postbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    pub lap: u32,
    pub kind: u8,
    pub count: u8,
    pub nbytes: u16,
}

impl Flag {
    pub const fn encode(self) -> u64 {
        self.lap as u64
            | (self.kind as u64) << 32
            | (self.count as u64) << 40
            | (self.nbytes as u64) << 48
    }

    pub const fn decode(w: u64) -> Flag {
        Flag {
            lap: w as u32,
            kind: (w >> 32) as u8,
            count: (w >> 40) as u8,
            nbytes: (w >> 48) as u16,
        }
    }
}

/// The lap word of queue position `pos` (a queue of `queue` postboxes).
pub const fn lap(pos: u64, queue: u32) -> u32 {
    (pos / queue as u64 + 1) as u32
}

/// The ack byte of queue position `pos`.
pub const fn ack_lap(pos: u64, queue: u32) -> u8 {
    lap(pos, queue) as u8
}

/// The channel area: `queues` queues of `queue` postboxes each, then the pool. The
/// functions without `queues` are the one-queue area of a single connection.
pub mod area {
    use super::{round_up, LINE};

    pub const QUEUE: usize = 0;

    /// Postbox `i` of the first queue.
    pub const fn postbox(i: u32) -> usize {
        QUEUE + i as usize * LINE
    }

    /// Where queue `q` starts.
    pub const fn queue_at(q: u32, queue: u32) -> usize {
        QUEUE + q as usize * queue as usize * LINE
    }

    /// Where the pool of an area of `queues` queues starts (a multiple of 64).
    pub const fn pool_after(queues: u32, queue: u32) -> usize {
        round_up(queue_at(queues, queue), LINE)
    }

    /// Where the pool of a one-queue area starts.
    pub const fn pool(queue: u32) -> usize {
        pool_after(1, queue)
    }

    /// Bytes of an area of `queues` queues (before page rounding).
    pub const fn len_of(queues: u32, queue: u32, pool_bytes: usize) -> usize {
        pool_after(queues, queue) + pool_bytes
    }

    /// Bytes of a one-queue area (before page rounding).
    pub const fn len(queue: u32, pool_bytes: usize) -> usize {
        len_of(1, queue, pool_bytes)
    }
}

/// The ack segment: ack bytes, then the match ring.
pub mod ack {
    use super::{round_up, LINE};

    /// Ack byte of postbox `i`: the lap byte ([`super::ack_lap`]) of the position
    /// the receiver consumed there.
    pub const ACKS: usize = 0;

    /// Entries of the match ring. The sender keeps at most this many rendezvous and
    /// sync messages waiting for their match, so the receiver never overwrites an
    /// entry the sender has not read.
    pub const RING_LEN: usize = 64;

    /// The match ring: u64 entries, entry `k` (k-th match, from 0) at
    /// `ring(queue) + (k % RING_LEN) * 8`, holding `(k + 1) as u32` in the high half
    /// and the low 32 bits of the matched message's sequence number in the low half.
    pub const fn ring(queue: u32) -> usize {
        round_up(ACKS + queue as usize, LINE)
    }

    pub const fn entry(k: u64) -> u64 {
        k % RING_LEN as u64 * 8
    }

    pub const fn encode(k: u64, seq: u64) -> u64 {
        ((k + 1) as u32 as u64) << 32 | seq as u32 as u64
    }

    /// Bytes of an ack segment (before page rounding).
    pub const fn len(queue: u32) -> usize {
        ring(queue) + RING_LEN * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbox_offsets() {
        assert_eq!(inbox::CHANGED, 0);
        assert_eq!(inbox::slot(0), 64);
        assert_eq!(inbox::slot(3), 64 + 3 * 64);
        assert_eq!(inbox::len(4), 64 * 5);
        use inbox::slot::*;
        let fields = [
            (REQ_GEN, 8),
            (REQ_ACK_ID, 4),
            (REQ_INBOX_ID, 4),
            (REQ_QUEUE, 4),
            (REQ_POOL, 4),
            (REQ_SMALL, 4),
            (REQ_LARGE, 4),
            (REP_GEN, 8),
            (REP_AREA_ID, 4),
            (REP_STATUS, 4),
            (REQ_AREA_ID, 4),
            (REQ_QUEUES, 4),
            (REQ_INDEX, 4),
        ];
        let mut end = 0;
        for (off, size) in fields {
            assert_eq!(off, end, "fields are packed in order");
            assert_eq!(off % size, 0, "aligned");
            end = off + size;
        }
        assert!(end <= LINE);
        assert_eq!(REP_GEN, 32, "reply half starts at half a line");
    }

    #[test]
    fn postbox_offsets() {
        use postbox::*;
        assert_eq!(FLAG, 0);
        assert_eq!((CTX, TAG, LEN, SEQ), (8, 12, 16, 8));
        assert_eq!(FIRST_PAYLOAD + FIRST_PAYLOAD_LEN, LINE);
        assert_eq!(CONT_PAYLOAD + CONT_PAYLOAD_LEN, LINE);
        assert_eq!(LEN + 8, FIRST_PAYLOAD);
        assert_eq!((FIRST_REFS, CONT_REFS), (10, 14));
    }

    #[test]
    fn area_and_ack_offsets() {
        assert_eq!(area::postbox(0), 0);
        assert_eq!(area::postbox(5), 320);
        assert_eq!(area::pool(64), 4096);
        assert_eq!(area::len(64, 8192), 4096 + 8192);
        assert_eq!(area::queue_at(3, 64), 3 * 4096);
        assert_eq!(area::pool_after(4, 64), 4 * 4096);
        assert_eq!(area::len_of(4, 64, 8192), 4 * 4096 + 8192);
        assert_eq!(area::len_of(1, 5, 0), area::len(5, 0));
        assert_eq!(ack::ring(64), 64);
        assert_eq!(ack::ring(65), 128);
        assert_eq!(ack::ring(4), 64);
        assert_eq!(ack::len(64), 64 + 64 * 8);
        assert_eq!(ack::entry(65), 8);
        assert_eq!(ack::encode(0, 7), 1 << 32 | 7);
        assert_eq!(ack::encode(u32::MAX as u64, 1 << 40 | 5), 5);
    }

    #[test]
    fn flags_round_trip_and_laps() {
        let f = Flag {
            lap: 0xdead_beef,
            kind: kind::RDATA,
            count: 14,
            nbytes: 56,
        };
        assert_eq!(Flag::decode(f.encode()), f);
        assert_eq!(lap(0, 8), 1);
        assert_eq!(lap(7, 8), 1);
        assert_eq!(lap(8, 8), 2);
        assert_eq!(ack_lap(255 * 8, 8), 0);
        assert_ne!(ack_lap(255 * 8, 8), ack_lap(254 * 8, 8));
        assert_eq!(round_up(65, 64), 128);
    }
}

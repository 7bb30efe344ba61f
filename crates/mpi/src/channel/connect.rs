//! Deferred, half-duplex connections (seed 004 §3.3), made through the inboxes with
//! plain stores (no locks, no remote atomics):
//!
//! 1. S (first send to R) imports R's inbox, exports an *ack segment* for the
//!    connection, writes a [`Request`] into its slot of R's inbox (generation word
//!    last), then sets R's `changed` word.
//! 2. R, in its progress, sees `changed`, clears it *then* scans the slots (a request
//!    written after the clear sets it again, so none is missed), checks the request's
//!    geometry, imports S's ack segment and inbox, exports a *channel area* open to
//!    S's node only, and writes a [`Reply`] into its slot of S's inbox, then sets S's
//!    `changed`.
//! 3. S maps the area; the channel is up. Sends made meanwhile waited in S's queue.
//!
//! On shared memory S names its own area for the host in the request
//! ([`Request::area`], with R's queue in it): R maps that area instead of making one,
//! and its reply only says yes. S exports the area at its first send to any rank of
//! the host; a rank S never sends to maps nothing of it.
//!
//! Toward another node (session 31, `hostnet`) S asks for a queue in its area for
//! R's host the same way: the first request to that host names no area and R makes
//! one (shm on its host, exported on the network too), replying with both ids; a
//! later request names the shm segment and that R maps it and exports it on its own
//! network endpoint. See docs/mpi-p2p.md.
//!
//! This module reads and writes the slots; what to build is [`super`]'s. It must never
//! trust a slot's content beyond the checks of [`Request::geometry`].

use super::config::{self, ChannelConfig};
use super::layout::inbox::{self, slot};
use super::send::{Geometry, Place};
use super::window::{Mem, OutOfBounds};
use myrix_rsm::{NodeId, SegmentId};

/// What S asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// S's RSM node (the high half of the generation word).
    pub node: NodeId,
    pub ack: SegmentId,
    pub inbox: SegmentId,
    pub queue: u32,
    pub pool: u32,
    pub small: u32,
    pub large: u32,
    /// S's shared area for R's host (`SegmentId(0)`: none, R makes a channel area),
    /// and R's queue in it.
    pub area: SegmentId,
    pub place: Place,
}

impl Request {
    pub fn from_config(
        node: NodeId,
        ack: SegmentId,
        inbox: SegmentId,
        c: &ChannelConfig,
    ) -> Request {
        Request {
            node,
            ack,
            inbox,
            queue: c.queue,
            pool: c.pool as u32,
            small: c.small_block,
            large: c.large_block,
            area: SegmentId(0),
            place: Place::ALONE,
        }
    }

    /// The request to use queue `place` of S's shared area `area`.
    pub fn in_area(self, area: SegmentId, place: Place) -> Request {
        Request {
            area,
            place,
            ..self
        }
    }

    /// The geometry, if within the bounds of [`ChannelConfig::validate`].
    pub fn geometry(&self) -> Option<Geometry> {
        let c = ChannelConfig {
            queue: self.queue,
            pool: self.pool as usize,
            small_block: self.small,
            large_block: self.large,
            short: 0,
            eager: 0,
        };
        c.validate().ok()?;
        if self.pool as usize > config::POOL_MAX {
            return None;
        }
        Some(Geometry {
            queue: self.queue,
            pool_units: c.pool_units(),
            small: self.small,
            large: self.large,
        })
    }

    /// Writes the request into `rank`'s slot of a peer's inbox, generation last.
    pub fn write(&self, peer_inbox: &Mem, rank: u32) -> Result<(), OutOfBounds> {
        let s = inbox::slot(rank);
        peer_inbox.store_u32(s + slot::REQ_ACK_ID, self.ack.0)?;
        peer_inbox.store_u32(s + slot::REQ_INBOX_ID, self.inbox.0)?;
        peer_inbox.store_u32(s + slot::REQ_QUEUE, self.queue)?;
        peer_inbox.store_u32(s + slot::REQ_POOL, self.pool)?;
        peer_inbox.store_u32(s + slot::REQ_SMALL, self.small)?;
        peer_inbox.store_u32(s + slot::REQ_LARGE, self.large)?;
        peer_inbox.store_u32(s + slot::REQ_AREA_ID, self.area.0)?;
        peer_inbox.store_u32(s + slot::REQ_QUEUES, self.place.queues)?;
        peer_inbox.store_u32(s + slot::REQ_INDEX, self.place.index)?;
        peer_inbox.store_u64(s + slot::REQ_GEN, (self.node.0 as u64) << 32 | 1)?;
        ring(peer_inbox)
    }

    /// The request in slot `rank` of this rank's inbox, if one is complete.
    pub fn read(my_inbox: &Mem, rank: u32) -> Result<Option<Request>, OutOfBounds> {
        let s = inbox::slot(rank);
        let gen = my_inbox.load_u64(s + slot::REQ_GEN)?;
        if gen as u32 == 0 {
            return Ok(None);
        }
        Ok(Some(Request {
            node: NodeId((gen >> 32) as u32),
            ack: SegmentId(my_inbox.load_u32(s + slot::REQ_ACK_ID)?),
            inbox: SegmentId(my_inbox.load_u32(s + slot::REQ_INBOX_ID)?),
            queue: my_inbox.load_u32(s + slot::REQ_QUEUE)?,
            pool: my_inbox.load_u32(s + slot::REQ_POOL)?,
            small: my_inbox.load_u32(s + slot::REQ_SMALL)?,
            large: my_inbox.load_u32(s + slot::REQ_LARGE)?,
            area: SegmentId(my_inbox.load_u32(s + slot::REQ_AREA_ID)?),
            place: Place {
                queues: my_inbox.load_u32(s + slot::REQ_QUEUES)?,
                index: my_inbox.load_u32(s + slot::REQ_INDEX)?,
            },
        }))
    }
}

/// What R answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub area: SegmentId,
    /// Toward another node, a shared area the receiver made: its shm segment there
    /// (`SegmentId(0)`: none made).
    pub shm: SegmentId,
    /// 0, or [`super::layout::REFUSED`].
    pub status: u32,
}

impl Reply {
    pub fn write(&self, peer_inbox: &Mem, rank: u32) -> Result<(), OutOfBounds> {
        let s = inbox::slot(rank);
        peer_inbox.store_u32(s + slot::REP_AREA_ID, self.area.0)?;
        peer_inbox.store_u32(s + slot::REP_STATUS, self.status)?;
        peer_inbox.store_u32(s + slot::REP_SHM_ID, self.shm.0)?;
        peer_inbox.store_u64(s + slot::REP_GEN, 1)?;
        ring(peer_inbox)
    }

    pub fn read(my_inbox: &Mem, rank: u32) -> Result<Option<Reply>, OutOfBounds> {
        let s = inbox::slot(rank);
        if my_inbox.load_u64(s + slot::REP_GEN)? == 0 {
            return Ok(None);
        }
        Ok(Some(Reply {
            area: SegmentId(my_inbox.load_u32(s + slot::REP_AREA_ID)?),
            status: my_inbox.load_u32(s + slot::REP_STATUS)?,
            shm: SegmentId(my_inbox.load_u32(s + slot::REP_SHM_ID)?),
        }))
    }
}

/// Sets a peer's `changed` word.
fn ring(peer_inbox: &Mem) -> Result<(), OutOfBounds> {
    peer_inbox.store_u64(inbox::CHANGED, 1)
}

/// Whether this rank's inbox changed since the last call; clears the word first, so
/// the scan that follows sees every slot written before the next set.
#[inline]
pub fn take_changed(my_inbox: &Mem) -> bool {
    match my_inbox.load_u64(inbox::CHANGED) {
        Ok(0) | Err(_) => false,
        Ok(_) => my_inbox.store_u64_seqcst(inbox::CHANGED, 0).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_reply_round_trip_through_an_inbox() {
        let (mine, theirs) = Mem::heap(inbox::len(4));
        let r = Request::from_config(
            NodeId(7),
            SegmentId(0x8000_0001),
            SegmentId(0x8000_0002),
            &ChannelConfig::default(),
        );
        assert_eq!(Request::read(&mine, 2), Ok(None));
        assert!(!take_changed(&mine));
        r.write(&theirs, 2).unwrap();
        assert!(take_changed(&mine));
        assert!(!take_changed(&mine));
        assert_eq!(Request::read(&mine, 2), Ok(Some(r)));
        assert!(r.geometry().is_some());
        let shared = r.in_area(
            SegmentId(0x8000_0009),
            Place {
                index: 2,
                queues: 5,
            },
        );
        shared.write(&theirs, 3).unwrap();
        assert_eq!(Request::read(&mine, 3), Ok(Some(shared)));
        let rep = Reply {
            area: SegmentId(0x8000_0003),
            status: 0,
            shm: SegmentId(0x8000_0004),
        };
        assert_eq!(Reply::read(&mine, 2), Ok(None));
        rep.write(&theirs, 2).unwrap();
        assert_eq!(Reply::read(&mine, 2), Ok(Some(rep)));
        assert_eq!(Request::read(&mine, 4), Err(OutOfBounds));
        let bad = Request {
            queue: 1 << 30,
            ..r
        };
        assert_eq!(bad.geometry(), None);
        let bad = Request { small: 3, ..r };
        assert_eq!(bad.geometry(), None);
    }
}

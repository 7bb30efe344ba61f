//! Where ranks find each other's business card (`node:segment-id` of the inbox).
//!
//! [`super::ChannelFabric::open`] exchanges cards through PMI; the [`Directory`]
//! trait lets tests (and programs without a launcher) put several fabrics together:
//! [`MemDirectory`] for fabrics on threads of one process, [`FileDirectory`] for
//! processes that share a directory. Lookups are lazy: made at the first send to a
//! rank, and retried (not an error) while the rank has not published yet.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use myrix_rsm::{NodeId, SegmentId};

use crate::p2p::fabric::{FabricError, Rank};

/// A rank's business card: where its inbox is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Card {
    pub node: NodeId,
    pub inbox: SegmentId,
}

impl Card {
    /// `node:segment-id`, both in hex.
    pub fn encode(&self) -> String {
        format!("{:x}:{:08x}", self.node.0, self.inbox.0)
    }

    pub fn decode(s: &str) -> Option<Card> {
        let (n, i) = s.trim().split_once(':')?;
        Some(Card {
            node: NodeId(u32::from_str_radix(n, 16).ok()?),
            inbox: SegmentId(u32::from_str_radix(i, 16).ok()?),
        })
    }
}

/// Publishes this rank's card and finds others'.
pub trait Directory: Send {
    fn publish(&mut self, rank: Rank, card: Card) -> Result<(), FabricError>;
    /// `Ok(None)` while `rank` has not published (yet).
    fn lookup(&mut self, rank: Rank) -> Result<Option<Card>, FabricError>;
}

/// Cards in memory, shared by clones (fabrics on threads of one process).
#[derive(Debug, Clone, Default)]
pub struct MemDirectory(Arc<Mutex<HashMap<Rank, Card>>>);

impl MemDirectory {
    pub fn new() -> MemDirectory {
        MemDirectory::default()
    }
}

impl Directory for MemDirectory {
    fn publish(&mut self, rank: Rank, card: Card) -> Result<(), FabricError> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(rank, card);
        Ok(())
    }

    fn lookup(&mut self, rank: Rank) -> Result<Option<Card>, FabricError> {
        Ok(self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&rank)
            .copied())
    }
}

/// One file per rank in a directory (fabrics in several processes without PMI).
#[derive(Debug, Clone)]
pub struct FileDirectory(pub PathBuf);

impl Directory for FileDirectory {
    fn publish(&mut self, rank: Rank, card: Card) -> Result<(), FabricError> {
        let err = |e: std::io::Error| FabricError::Other(format!("card of rank {rank}: {e}"));
        let tmp = self.0.join(format!(".{rank}.tmp"));
        std::fs::write(&tmp, card.encode()).map_err(err)?;
        std::fs::rename(&tmp, self.0.join(rank.to_string())).map_err(err)
    }

    fn lookup(&mut self, rank: Rank) -> Result<Option<Card>, FabricError> {
        match std::fs::read_to_string(self.0.join(rank.to_string())) {
            Ok(s) => Card::decode(&s)
                .map(Some)
                .ok_or_else(|| FabricError::Other(format!("bad card of rank {rank}: {s:?}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FabricError::Other(format!("card of rank {rank}: {e}"))),
        }
    }
}

/// Cards already fetched (through PMI at open).
#[derive(Debug, Clone)]
pub struct CardList(pub Vec<Option<Card>>);

impl Directory for CardList {
    fn publish(&mut self, rank: Rank, card: Card) -> Result<(), FabricError> {
        if let Some(c) = self.0.get_mut(rank as usize) {
            *c = Some(card);
        }
        Ok(())
    }

    fn lookup(&mut self, rank: Rank) -> Result<Option<Card>, FabricError> {
        Ok(self.0.get(rank as usize).copied().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_round_trip_and_bad_ones_are_refused() {
        let c = Card {
            node: NodeId(3),
            inbox: SegmentId(0x8000_1234),
        };
        assert_eq!(Card::decode(&c.encode()), Some(c));
        for bad in ["", "3", "3:", "x:80001234", "3:1234567890"] {
            assert_eq!(Card::decode(bad), None, "{bad}");
        }
        let mut d = MemDirectory::new();
        assert_eq!(d.lookup(1), Ok(None));
        d.clone().publish(1, c).unwrap();
        assert_eq!(d.lookup(1), Ok(Some(c)));
    }
}

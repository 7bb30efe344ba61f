//! Processes of other jobs in a [`ChannelFabric`] (MPI's dynamic processes:
//! `MPI_Comm_accept`/`connect`, `MPI_Comm_join`, spawn): they are appended as ranks
//! `job_size..size`, each with its card and this process's rank in *its* numbering.
//!
//! The handshake slots of an inbox are indexed by the writer's rank in the owner's
//! numbering. Inside a job that is the writer's own rank; a process of another job
//! numbers this one differently (it appended this process at some index of its
//! own), so for those peers the slot written there is [`DynPeer::slot_there`],
//! learnt in the exchange that added them. Every inbox is made with
//! [`DYN_SLOTS`] slots beyond the job's ranks for such peers (64 bytes each,
//! untouched pages cost nothing): a process can take at most that many processes of
//! other jobs in its life.
//!
//! Only processes on this node (shared memory) can be added: a card naming another
//! RSM node is refused. A retired peer (disconnected) that exits later is no loss.

use super::*;
use crate::p2p::fabric::NewPeer;

/// Inbox slots beyond the job's ranks, for processes of other jobs.
pub const DYN_SLOTS: Rank = 1024;

/// A process of another job.
#[derive(Debug, Clone, Copy)]
pub(super) struct DynPeer {
    pub card: Card,
    /// This process's rank in that process's numbering.
    pub slot_there: Rank,
    /// Disconnected: its exit is not reported.
    pub retired: bool,
}

impl ChannelFabric {
    /// The card other jobs' processes use to reach this one: `node:inbox` in hex.
    pub(super) fn dyn_card(&self) -> String {
        Card {
            node: self.ctl.local_node(),
            inbox: self.inbox_id,
        }
        .encode()
    }

    pub(super) fn dyn_peer(&self, r: Rank) -> Option<&DynPeer> {
        r.checked_sub(self.job_size)
            .and_then(|i| self.dyn_peers.get(i as usize))
    }

    /// The slot this process writes in `r`'s inbox.
    #[inline]
    pub(super) fn slot_there(&self, r: Rank) -> Rank {
        self.dyn_peer(r).map_or(self.rank, |d| d.slot_there)
    }

    pub(super) fn dyn_add(&mut self, new: &[NewPeer]) -> Result<Rank, FabricError> {
        let first = self.size;
        let n = Rank::try_from(new.len())
            .ok()
            .filter(|&n| first.checked_add(n).is_some_and(|e| e <= self.slots))
            .ok_or_else(|| {
                FabricError::Other(format!(
                    "this process can take at most {DYN_SLOTS} processes of other jobs"
                ))
            })?;
        let here = self.ctl.local_node();
        let mut add = Vec::with_capacity(new.len());
        for p in new {
            let card = Card::decode(&p.card)
                .ok_or_else(|| FabricError::Other(format!("bad card {:?}", p.card)))?;
            if card.node != here {
                return Err(FabricError::Other(format!(
                    "a process of another job is on RSM node {:x}, this one on {:x}: \
                     dynamic processes are reached over shared memory only",
                    card.node.0, here.0
                )));
            }
            add.push(DynPeer {
                card,
                slot_there: p.slot_there,
                retired: false,
            });
        }
        let node = self.node_of[self.rank as usize];
        self.dyn_peers.extend(add);
        self.node_of.resize(self.node_of.len() + n as usize, node);
        self.peers
            .resize_with(self.peers.len() + n as usize, || None);
        self.size = first + n;
        Ok(first)
    }

    pub(super) fn dyn_retire(&mut self, r: Rank) {
        if let Some(i) = r.checked_sub(self.job_size) {
            if let Some(d) = self.dyn_peers.get_mut(i as usize) {
                d.retired = true;
            }
        }
    }
}

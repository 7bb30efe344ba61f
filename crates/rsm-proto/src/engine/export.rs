//! The exporter: the table of published segments (publish, republish, unpublish,
//! signal all importers) and the requests importers send (connect, disconnect, write,
//! read, flush, signal).
//!
//! Every access is checked at the moment it is applied: the connection must exist and
//! belong to the peer the frame came from, its permission must allow the access, and
//! the range must lie inside [`Memory::len`] of the segment then. A write that fails a
//! check is not applied, and the connection remembers the failure for the next flush;
//! a read that fails is answered with the error.
//!
//! Must never touch memory outside a checked range, whatever a frame says; must never
//! take a signal's sender from the frame.

use crate::hash::FastSet;

use super::flow::{DataKind, Item, Pending, NO_BUF};
use super::memory::check_range;
use super::*;
use crate::acl::{Acl, Credentials};
use crate::types::Perm;
use myrix_wire::rsm::SIGNAL_NO_ACCUMULATE;

/// A published segment.
pub(super) struct Export {
    pub(super) acl: Acl,
    pub(super) owner: Credentials,
    /// Its connections.
    pub(super) conns: FastSet<u32>,
}

/// An importer's connection to one of our segments.
pub(super) struct ExpConn {
    pub(super) peer: u32,
    pub(super) seg: SegmentId,
    pub(super) perm: Perm,
    /// The importer's node, checked at connect.
    pub(super) node: NodeId,
    /// The importer's id for the connection.
    pub(super) imp: u32,
    /// The first failed write since the last flush.
    pub(super) err: Option<RsmError>,
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// Publishes segment `seg` (its memory is reached through [`Memory`]) with access
    /// list `acl`, owned by `owner` (whose user and group the list's digits are read
    /// against).
    pub fn publish(
        &mut self,
        seg: SegmentId,
        acl: Acl,
        owner: Credentials,
    ) -> Result<(), RsmError> {
        if self.exports.contains_key(&seg) {
            return Err(RsmError::SegidInUse);
        }
        self.exports.insert(
            seg,
            Export {
                acl,
                owner,
                conns: FastSet::default(),
            },
        );
        Ok(())
    }

    /// A new access list, for connections made from now on.
    pub fn republish(&mut self, seg: SegmentId, acl: Acl) -> Result<(), RsmError> {
        let e = self
            .exports
            .get_mut(&seg)
            .ok_or(RsmError::SegNotPublished)?;
        e.acl = acl;
        Ok(())
    }

    /// Unpublishes `seg`: its connections end, each importer is sent an abort, and
    /// nothing arriving on them later is applied (accesses are answered
    /// [`RsmError::ConnAborted`]).
    pub fn unpublish(&mut self, seg: SegmentId) -> Result<(), RsmError> {
        let e = self.exports.remove(&seg).ok_or(RsmError::SegNotPublished)?;
        let mut conns: Vec<u32> = e.conns.into_iter().collect();
        conns.sort_unstable();
        for c in conns {
            let Some(conn) = self.exp_conns.remove(&c) else {
                continue;
            };
            self.peers[conn.peer as usize].exports.remove(&c);
            let item = Item::Abort {
                imp: conn.imp,
                status: RsmError::ConnAborted.code() as u32,
            };
            self.push_answer(conn.peer, Pending::Item(item));
        }
        Ok(())
    }

    /// Whether `seg` is published.
    pub fn is_published(&self, seg: SegmentId) -> bool {
        self.exports.contains_key(&seg)
    }

    /// Connections to `seg`.
    pub fn connections(&self, seg: SegmentId) -> usize {
        self.exports.get(&seg).map_or(0, |e| e.conns.len())
    }

    /// Signals every importer of `seg`; how many were signalled.
    pub fn signal_importers(
        &mut self,
        seg: SegmentId,
        no_accumulate: bool,
    ) -> Result<usize, RsmError> {
        let e = self.exports.get(&seg).ok_or(RsmError::SegNotPublished)?;
        let mut conns: Vec<u32> = e.conns.iter().copied().collect();
        conns.sort_unstable();
        let flags = if no_accumulate {
            SIGNAL_NO_ACCUMULATE
        } else {
            0
        };
        for &c in &conns {
            let conn = &self.exp_conns[&c];
            let (pi, imp) = (conn.peer, conn.imp);
            let item = Item::Signal {
                to_importer: true,
                conn: imp,
                flags,
            };
            self.push_answer(pi, Pending::Item(item));
        }
        Ok(conns.len())
    }

    // ------------------------------------------------------------ requests

    /// Our connection `conn`, if peer `pi` holds it.
    fn conn_of(&mut self, pi: u32, conn: u32) -> Option<&mut ExpConn> {
        self.exp_conns.get_mut(&conn).filter(|c| c.peer == pi)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_connect<M: Memory + ?Sized>(
        &mut self,
        pi: u32,
        seg: u32,
        perm: u32,
        node: u32,
        uid: u32,
        gid: u32,
        imp: u32,
        mem: &mut M,
    ) {
        let seg = SegmentId(seg);
        let node = NodeId(node);
        let who = Credentials { uid, gid };
        let addr = self.peers[pi as usize].addr;
        let checked = (|| {
            if self.node_of.get(&addr).is_some_and(|&n| n != node) {
                return Err(RsmError::PermDenied);
            }
            let want = Perm::requested(perm)?;
            let e = self.exports.get(&seg).ok_or(RsmError::SegNotPublished)?;
            e.acl.check(node, who, e.owner, want)?;
            let len = mem.len(seg).ok_or(RsmError::SegNotPublished)?;
            if self.exp_conns.len() >= self.cfg.max_connections {
                return Err(RsmError::InsufficientResources);
            }
            Ok((want, len))
        })();
        let item = match checked {
            Ok((want, len)) => {
                let id = self.fresh_id();
                self.exp_conns.insert(
                    id,
                    ExpConn {
                        peer: pi,
                        seg,
                        perm: want,
                        node,
                        imp,
                        err: None,
                    },
                );
                self.exports
                    .get_mut(&seg)
                    .expect("checked")
                    .conns
                    .insert(id);
                self.peers[pi as usize].exports.insert(id);
                Item::ConnectReply {
                    imp,
                    status: 0,
                    exp: id,
                    len,
                }
            }
            Err(e) => Item::ConnectReply {
                imp,
                status: e.code() as u32,
                exp: 0,
                len: 0,
            },
        };
        self.push_answer(pi, Pending::Item(item));
    }

    pub(super) fn on_disconnect(&mut self, pi: u32, conn: u32) {
        if self.conn_of(pi, conn).is_none() {
            return;
        }
        let c = self.exp_conns.remove(&conn).expect("present");
        self.peers[pi as usize].exports.remove(&conn);
        if let Some(e) = self.exports.get_mut(&c.seg) {
            e.conns.remove(&conn);
        }
    }

    pub(super) fn on_write<M: Memory + ?Sized>(
        &mut self,
        pi: u32,
        conn: u32,
        offset: u64,
        data: &[u8],
        mem: &mut M,
    ) {
        let Some(c) = self.exp_conns.get_mut(&conn).filter(|c| c.peer == pi) else {
            // Unknown or aborted: nothing applied; the next flush says ConnAborted.
            self.stats.writes_refused += 1;
            return;
        };
        // One call finds the segment, checks the range and writes (one lookup of the
        // segment, not two: this is every remote write's path).
        let checked = if !c.perm.can_write() {
            Err(RsmError::PermDenied)
        } else {
            mem.write_checked(c.seg, offset, data)
        };
        match checked {
            Ok(()) => {
                self.stats.writes_applied += 1;
                self.stats.bytes_written += data.len() as u64;
            }
            Err(e) => {
                c.err.get_or_insert(e);
                self.stats.writes_refused += 1;
            }
        }
    }

    pub(super) fn on_read<M: Memory + ?Sized>(
        &mut self,
        pi: u32,
        conn: u32,
        req: u32,
        offset: u64,
        length: u32,
        mem: &mut M,
    ) {
        let buffered = self.peers[pi as usize].reply_buffered;
        let max_buffer = self.cfg.max_reply_buffer;
        let checked = match self.conn_of(pi, conn) {
            None => Err(RsmError::ConnAborted),
            Some(c) if !c.perm.can_read() => Err(RsmError::PermDenied),
            Some(_) if length == 0 || length > MAX_READ_BLOCK => Err(RsmError::BadLength),
            Some(_) if buffered > 0 && buffered + length as usize > max_buffer => {
                Err(RsmError::InsufficientResources)
            }
            Some(c) => {
                let seg = c.seg;
                match mem.len(seg) {
                    None => Err(RsmError::ConnAborted),
                    Some(len) => check_range(len, offset, length as u64).map(|()| seg),
                }
            }
        };
        let w = match checked {
            Ok(seg) => {
                let mut data = vec![0u8; length as usize];
                mem.read(seg, offset, &mut data);
                self.stats.bytes_read += length as u64;
                self.peers[pi as usize].reply_buffered += length as usize;
                Pending::Data {
                    kind: DataKind::Reply { req },
                    buf: self.bufs.alloc(data),
                    at: 0,
                    len: length,
                    offset,
                }
            }
            Err(e) => Pending::Item(Item::ReadReply {
                buf: NO_BUF,
                at: 0,
                len: 0,
                req,
                status: e.code() as u32,
                offset,
            }),
        };
        self.push_answer(pi, w);
    }

    pub(super) fn on_flush(&mut self, pi: u32, conn: u32, token: u32) {
        let status = match self.conn_of(pi, conn) {
            None => Err(RsmError::ConnAborted),
            Some(c) => match c.err.take() {
                None => Ok(()),
                Some(_) => Err(RsmError::BarrierFailure),
            },
        };
        let item = Item::FlushReply {
            token,
            status: status_of(status),
        };
        self.push_answer(pi, Pending::Item(item));
    }

    pub(super) fn on_signal_exporter(&mut self, pi: u32, conn: u32, flags: u32) {
        let Some(c) = self.conn_of(pi, conn) else {
            return;
        };
        let (seg, from) = (c.seg, c.node);
        self.post_signal(
            SignalTarget::Export(seg),
            from,
            flags & SIGNAL_NO_ACCUMULATE != 0,
        );
    }
}

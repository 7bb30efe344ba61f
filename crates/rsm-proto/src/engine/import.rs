//! The importer: connect, disconnect, put, get, barriers and signals on imports of
//! remote segments, and the answers they get (connect replies, read replies, flush
//! replies, aborts, signals from the exporter).
//!
//! Every call checks locally first (connection state, permission, bounds against the
//! length the exporter gave), so a well-behaved program's errors come back at once; the
//! exporter checks again. Answers are taken only from the peer the import is with.
//!
//! Must never trust an answer's numbers to index a buffer without checking them, nor
//! take a signal's sender from anything but the import.

use std::collections::VecDeque;

use super::flow::{Item, Pending};
use super::*;
use crate::acl::Credentials;
use crate::types::Perm;
use myrix_wire::rsm::SIGNAL_NO_ACCUMULATE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ImpState {
    Connecting,
    Connected,
    /// Aborted by the exporter, or the peer failed: every access returns this.
    Failed(RsmError),
}

/// One import.
pub(super) struct ImpConn {
    pub(super) peer: u32,
    /// The exporter's node, as the caller named it.
    pub(super) node: NodeId,
    pub(super) perm: Perm,
    pub(super) state: ImpState,
    /// The exporter's connection id, once connected.
    pub(super) exp: Option<u32>,
    pub(super) len: u64,
    pub(super) barrier_open: bool,
    /// The first failure since the barrier opened.
    pub(super) scope_err: Option<RsmError>,
}

/// A get in progress.
pub(super) struct Get {
    pub(super) imp: u32,
    pub(super) peer: u32,
    /// Segment offset of `data[0]`.
    pub(super) offset: u64,
    pub(super) data: Vec<u8>,
    /// Bytes asked for so far.
    pub(super) requested: u64,
    /// Bytes answered (received, or failed) so far.
    pub(super) answered: u64,
    /// Blocks asked for and not wholly answered, oldest first: (offset, length,
    /// received). The exporter answers in order, so replies are for the front block.
    pub(super) blocks: VecDeque<(u64, u32, u32)>,
    pub(super) err: Option<RsmError>,
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// Connects to segment `seg` exported by node `node` at `addr`, asking for `perm`
    /// (read, write or both) as user `who`. Completes with [`Event::Connected`].
    pub fn connect(
        &mut self,
        addr: A,
        node: NodeId,
        seg: SegmentId,
        perm: Perm,
        who: Credentials,
    ) -> Result<Import, RsmError> {
        let perm = Perm::requested(perm.0)?;
        let pi = self
            .peer_or_new(addr)
            .ok_or(RsmError::InsufficientResources)?;
        if self.peers[pi as usize].rel.is_unreachable() {
            return Err(RsmError::RemoteNodeUnreachable);
        }
        let id = self.fresh_id();
        self.imports.insert(
            id,
            ImpConn {
                peer: pi,
                node,
                perm,
                state: ImpState::Connecting,
                exp: None,
                len: 0,
                barrier_open: false,
                scope_err: None,
            },
        );
        self.peers[pi as usize].imports.insert(id);
        let item = Item::Connect {
            imp: id,
            seg: seg.0,
            perm: perm.0,
            node: self.node.0,
            uid: who.uid,
            gid: who.gid,
        };
        self.push_pending(pi, Pending::Item(item));
        Ok(Import(id))
    }

    /// The import, connected: its state's error otherwise.
    pub(super) fn connected(&self, imp: Import) -> Result<&ImpConn, RsmError> {
        let i = self.imports.get(&imp.0).ok_or(RsmError::BadSegHndl)?;
        match i.state {
            ImpState::Connected => Ok(i),
            ImpState::Connecting => Err(RsmError::SegNotConnected),
            ImpState::Failed(e) => Err(e),
        }
    }

    /// The segment's length, once connected.
    pub fn import_len(&self, imp: Import) -> Result<u64, RsmError> {
        self.connected(imp).map(|i| i.len)
    }

    /// Ends the import. Its gets and flushes still pending complete with
    /// [`RsmError::ConnAborted`]. O(pending gets).
    pub fn disconnect(&mut self, imp: Import) -> Result<(), RsmError> {
        let i = self.imports.remove(&imp.0).ok_or(RsmError::BadSegHndl)?;
        let p = &mut self.peers[i.peer as usize];
        p.imports.remove(&imp.0);
        if let (ImpState::Connected, Some(exp)) = (i.state, i.exp) {
            self.push_pending(i.peer, Pending::Item(Item::Disconnect { exp }));
        }
        self.fail_pending_of(imp.0, RsmError::ConnAborted);
        Ok(())
    }

    /// Writes `data` at `offset`: returns once queued (copied); the writes of one
    /// import are applied in order. Remote failures are reported by the next flush.
    pub fn put(&mut self, imp: Import, offset: u64, data: &[u8]) -> Result<(), RsmError> {
        let i = self.connected(imp)?;
        if !i.perm.can_write() {
            return Err(RsmError::PermDenied);
        }
        check_range(i.len, offset, data.len() as u64)?;
        let (pi, exp) = (i.peer, i.exp.ok_or(RsmError::SegNotConnected)?);
        self.queue_write(pi, exp, offset, data)
    }

    /// Reads `len` bytes from `offset`, pulled in blocks; completes with
    /// [`Event::GetDone`].
    pub fn get(&mut self, imp: Import, offset: u64, len: u64) -> Result<GetId, RsmError> {
        let i = self.connected(imp)?;
        if !i.perm.can_read() {
            return Err(RsmError::PermDenied);
        }
        check_range(i.len, offset, len)?;
        if len > self.cfg.max_get {
            return Err(RsmError::BadLength);
        }
        let pi = i.peer;
        let id = self.fresh_id();
        if len == 0 {
            self.events.push_back(Event::GetDone {
                get: GetId(id),
                import: imp,
                result: Ok(Vec::new()),
            });
            return Ok(GetId(id));
        }
        self.gets.insert(
            id,
            Get {
                imp: imp.0,
                peer: pi,
                offset,
                data: vec![0; len as usize],
                requested: 0,
                answered: 0,
                blocks: VecDeque::new(),
                err: None,
            },
        );
        self.push_pending(pi, Pending::Get { get: id });
        Ok(GetId(id))
    }

    /// Opens the import's barrier scope: failures from now on are reported by
    /// [`Engine::close_barrier`].
    pub fn open_barrier(&mut self, imp: Import) -> Result<(), RsmError> {
        self.connected(imp)?;
        let i = self.imports.get_mut(&imp.0).expect("connected");
        i.barrier_open = true;
        i.scope_err = None;
        Ok(())
    }

    /// Closes the barrier: [`RsmError::BarrierNotOpened`] without an open; otherwise a
    /// flush, which completes with [`Event::BarrierDone`] once every write queued before
    /// it is in remote memory, reporting the scope's first failure.
    pub fn close_barrier(&mut self, imp: Import) -> Result<FlushId, RsmError> {
        let i = self.imports.get_mut(&imp.0).ok_or(RsmError::BadSegHndl)?;
        if !i.barrier_open {
            return Err(RsmError::BarrierNotOpened);
        }
        i.barrier_open = false;
        self.flush(imp)
    }

    /// A flush without a barrier (implicit mode: each transfer its own scope):
    /// completes with [`Event::BarrierDone`] once every write queued before it is in
    /// remote memory, reporting the first failure since the last open or flush.
    pub fn flush(&mut self, imp: Import) -> Result<FlushId, RsmError> {
        let i = self.imports.get(&imp.0).ok_or(RsmError::BadSegHndl)?;
        let (state, exp, pi) = (i.state, i.exp, i.peer);
        let token = self.fresh_id();
        match (state, exp) {
            (ImpState::Connected, Some(exp)) => {
                self.flushes.insert(token, imp.0);
                self.push_pending(pi, Pending::Item(Item::Flush { exp, token }));
            }
            (ImpState::Failed(e), _) => self.events.push_back(Event::BarrierDone {
                flush: FlushId(token),
                import: imp,
                result: Err(e),
            }),
            _ => return Err(RsmError::SegNotConnected),
        }
        Ok(FlushId(token))
    }

    /// Signals the exporter (`no_accumulate`: not if one is already pending there).
    pub fn signal(&mut self, imp: Import, no_accumulate: bool) -> Result<(), RsmError> {
        let i = self.connected(imp)?;
        let (pi, exp) = (i.peer, i.exp.ok_or(RsmError::SegNotConnected)?);
        let flags = if no_accumulate {
            SIGNAL_NO_ACCUMULATE
        } else {
            0
        };
        let item = Item::Signal {
            to_importer: false,
            conn: exp,
            flags,
        };
        self.push_pending(pi, Pending::Item(item));
        Ok(())
    }

    // ------------------------------------------------------------ answers

    /// Our import `pi`'s `conn`, if it is with that peer.
    fn import_of(&mut self, pi: u32, conn: u32) -> Option<&mut ImpConn> {
        self.imports.get_mut(&conn).filter(|i| i.peer == pi)
    }

    pub(super) fn on_connect_reply(&mut self, pi: u32, conn: u32, status: u32, exp: u32, len: u64) {
        let Some(i) = self.import_of(pi, conn) else {
            if status == 0 {
                // Disconnected while connecting: let the exporter forget it too.
                self.push_pending(pi, Pending::Item(Item::Disconnect { exp }));
            }
            return;
        };
        if i.state != ImpState::Connecting {
            return;
        }
        let result = status_result(status);
        if result.is_ok() {
            i.state = ImpState::Connected;
            i.exp = Some(exp);
            i.len = len;
        } else {
            self.imports.remove(&conn);
            self.peers[pi as usize].imports.remove(&conn);
        }
        self.events.push_back(Event::Connected {
            import: Import(conn),
            result: result.map(|()| len),
        });
    }

    pub(super) fn on_read_reply(
        &mut self,
        pi: u32,
        req: u32,
        status: u32,
        offset: u64,
        data: &[u8],
    ) {
        let Some(g) = self.gets.get_mut(&req).filter(|g| g.peer == pi) else {
            return;
        };
        let Some(front) = g.blocks.front_mut() else {
            return;
        };
        let (boff, blen, got) = *front;
        let expect = boff + got as u64;
        let room = (blen - got) as usize;
        let answered = if status != 0 || offset != expect || data.len() > room {
            // A failed block, or an answer that does not fit it: the block fails.
            let e = status_result(status)
                .err()
                .unwrap_or(RsmError::BarrierFailure);
            g.err.get_or_insert(e);
            g.blocks.pop_front();
            room
        } else {
            let at = (offset - g.offset) as usize;
            g.data[at..at + data.len()].copy_from_slice(data);
            front.2 += data.len() as u32;
            if front.2 == blen {
                g.blocks.pop_front();
            }
            data.len()
        };
        g.answered += answered as u64;
        let p = &mut self.peers[pi as usize];
        p.reads_in_flight = p.reads_in_flight.saturating_sub(answered);
        if g.answered == g.data.len() as u64 {
            let g = self.gets.remove(&req).expect("present");
            self.finish_get(req, g);
        }
        self.fill_window(pi);
    }

    fn finish_get(&mut self, id: u32, g: Get) {
        let result = match g.err {
            None => Ok(g.data),
            Some(e) => {
                if let Some(i) = self.imports.get_mut(&g.imp) {
                    i.scope_err.get_or_insert(scope_error(e));
                }
                Err(e)
            }
        };
        self.events.push_back(Event::GetDone {
            get: GetId(id),
            import: Import(g.imp),
            result,
        });
    }

    pub(super) fn on_flush_reply(&mut self, pi: u32, token: u32, status: u32) {
        // Taken out at once (one lookup, not a look and a removal: every completed
        // put's reply comes here); put back in the rare case the reply is not for it.
        let Some(imp) = self.flushes.remove(&token) else {
            return;
        };
        let Some(i) = self.imports.get_mut(&imp).filter(|i| i.peer == pi) else {
            self.flushes.insert(token, imp);
            return;
        };
        let local = i.scope_err.take();
        let result = match (local, status_result(status)) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(scope_error),
        };
        self.events.push_back(Event::BarrierDone {
            flush: FlushId(token),
            import: Import(imp),
            result,
        });
    }

    pub(super) fn on_abort(&mut self, pi: u32, conn: u32, _status: u32) {
        let Some(i) = self.import_of(pi, conn) else {
            return;
        };
        if i.state == ImpState::Connected {
            i.state = ImpState::Failed(RsmError::ConnAborted);
            i.scope_err.get_or_insert(RsmError::ConnAborted);
            self.events.push_back(Event::Aborted {
                import: Import(conn),
            });
            // The exporter answers in order: a flush or get block it had taken before
            // it unpublished was answered before this abort, so what is still pending
            // would be answered `ConnAborted`. Said now, not left to an answer that
            // may never come: an exporter that exits once its abort is acknowledged
            // leaves nobody to answer a request whose frame was lost (issue 21,
            // docs/rsm.md "Disconnect drains", tests/abort_pending.rs).
            self.fail_pending_of(conn, RsmError::ConnAborted);
        }
    }

    pub(super) fn on_signal_importer(&mut self, pi: u32, conn: u32, flags: u32) {
        let Some(i) = self.import_of(pi, conn) else {
            return;
        };
        let from = i.node;
        self.post_signal(
            SignalTarget::Import(Import(conn)),
            from,
            flags & SIGNAL_NO_ACCUMULATE != 0,
        );
    }

    /// Import `imp`'s peer failed with `err`.
    pub(super) fn import_failed(&mut self, imp: u32, err: RsmError) {
        let Some(i) = self.imports.get_mut(&imp) else {
            return;
        };
        match i.state {
            ImpState::Connecting => {
                self.imports.remove(&imp);
                self.events.push_back(Event::Connected {
                    import: Import(imp),
                    result: Err(err),
                });
            }
            _ => {
                i.state = ImpState::Failed(err);
                i.scope_err.get_or_insert(err);
                self.fail_pending_of(imp, err);
            }
        }
    }

    /// Completes the import's pending gets and flushes with `err`. O(pending gets and
    /// flushes): only on failures and disconnects.
    fn fail_pending_of(&mut self, imp: u32, err: RsmError) {
        let gets: Vec<u32> = self
            .gets
            .iter()
            .filter(|(_, g)| g.imp == imp)
            .map(|(&id, _)| id)
            .collect();
        for id in gets {
            let mut g = self.gets.remove(&id).expect("listed");
            let p = &mut self.peers[g.peer as usize];
            let unanswered = (g.requested - g.answered) as usize;
            p.reads_in_flight = p.reads_in_flight.saturating_sub(unanswered);
            g.err = Some(err);
            self.finish_get(id, g);
        }
        let mut flushes: Vec<u32> = self
            .flushes
            .iter()
            .filter(|(_, &i)| i == imp)
            .map(|(&t, _)| t)
            .collect();
        flushes.sort_unstable();
        for t in flushes {
            self.flushes.remove(&t);
            self.events.push_back(Event::BarrierDone {
                flush: FlushId(t),
                import: Import(imp),
                result: Err(err),
            });
        }
    }
}

/// How a failure shows at a barrier's close: aborts and unreachable nodes as
/// themselves, anything else as [`RsmError::BarrierFailure`].
fn scope_error(e: RsmError) -> RsmError {
    match e {
        RsmError::ConnAborted | RsmError::RemoteNodeUnreachable => e,
        _ => RsmError::BarrierFailure,
    }
}

//! The import's data path over the rails: queueing writes on a rail (driving progress
//! while its queue is full), flushing rails, keeping writes in order across rails,
//! puts (one rail, striped, or queued to leave with the next transmit) and gets.
//! The rail bookkeeping it calls (fail-over, rejoin, checks) is in `import.rs`.

use super::*;

impl NetImport {
    /// Queues a write on rail `k` (logged by the rules), driving progress while the
    /// queue is full.
    pub(super) fn queue(
        &self,
        st: &mut State,
        k: usize,
        off: u64,
        data: &[u8],
        striped: bool,
    ) -> Result<(), RsmError> {
        let (rail, imp) = (st.rail(k), st.import(k));
        for (i, piece) in data.chunks(PUT_PIECE).enumerate() {
            let o = off + (i * PUT_PIECE) as u64;
            if i > 0 {
                // Keep the pipeline moving between pieces; the last piece goes out with
                // what the caller does next (a flush, or one progress).
                self.net.progress();
            }
            loop {
                let r = lock(&self.net.rails[rail].core).engine.put(imp, o, piece);
                match r {
                    Err(RsmError::InsufficientResources) => {
                        self.net.progress();
                        std::thread::yield_now();
                    }
                    r => {
                        r?;
                        break;
                    }
                }
            }
        }
        self.net.rails[rail]
            .bytes_put
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        if st.queued(k, off, data, striped) {
            self.flush(st, |j| j == k)?;
        }
        Ok(())
    }

    /// Flushes the live rails `which` selects that hold unflushed writes, failing over
    /// those found unreachable (and flushing where their writes went). The first other
    /// error (a refused write: `BarrierFailure`; `ConnAborted`) is returned after all.
    pub(super) fn flush(
        &self,
        st: &mut State,
        which: impl Fn(usize) -> bool,
    ) -> Result<(), RsmError> {
        // The import's reused lists, taken (a fail-over below may flush again: that
        // one starts with empty lists of its own) and given back at the end.
        let (mut want, mut flushes) = take_lists(st);
        st.rails.to_flush_into(which, &mut want);
        let r = self.flush_rails(st, &mut want, &mut flushes);
        st.want = want;
        st.flushes = flushes;
        r
    }

    /// Waits for `flushes` (started and sent already), then flushes the rails in `want`
    /// and waits for those, until no rail is left to flush (a fail-over adds the new
    /// primary). The first error that is not a rail's loss is returned after all.
    pub(super) fn flush_rails(
        &self,
        st: &mut State,
        want: &mut Vec<usize>,
        flushes: &mut Vec<(usize, FlushId)>,
    ) -> Result<(), RsmError> {
        let mut first_err = None;
        loop {
            if flushes.is_empty() {
                if want.is_empty() {
                    break;
                }
                for &k in want.iter() {
                    if !st.is_live(k) {
                        continue;
                    }
                    let f = lock(&self.net.rails[st.rail(k)].core)
                        .engine
                        .flush(st.import(k));
                    match f {
                        Ok(f) => flushes.push((k, f)),
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                want.clear();
                // Out now; the wait takes the answers in.
                self.net.transmit();
            }
            for &(k, f) in flushes.iter() {
                let r = loop {
                    // In slices, the rails' silence looked at between them: a rail
                    // that went dead while idle (its write here the first since) is
                    // left within the silence hold, not the engine's whole timeout
                    // later (`check_silence`; docs/rsm-net.md, "A silent rail").
                    let slice = Some(Duration::from_nanos(st.config().silent_every_ns));
                    if let Some(r) = self.net.wait(st.rail(k), slice, |c| c.flushes.remove(&f.0)) {
                        break r;
                    }
                    // The flush on a rail declared now ends with its loss (taken in
                    // by the next slice); other rails named are failed over by the
                    // next check.
                    self.declare_silent(st);
                };
                match r {
                    Ok(()) => st.flushed(k),
                    Err(e) if self.rail_lost(st, k, e) => {
                        self.fail_over(st, k)?;
                        // Its writes went to the primary: flush that too.
                        let p = st.primary()?;
                        if !want.contains(&p) {
                            want.push(p);
                        }
                    }
                    Err(e) => {
                        st.flushed(k);
                        first_err.get_or_insert(e);
                    }
                }
            }
            flushes.clear();
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Flushes the rails the order rule names before an access to `off..off+n` on rail
    /// `k` (`None`: a striped put).
    pub(super) fn order_before(
        &self,
        st: &mut State,
        k: Option<usize>,
        off: u64,
        n: usize,
    ) -> Result<(), RsmError> {
        let conflict = st.order_before(k, off, n);
        if !conflict.is_empty() {
            self.flush(st, |j| conflict.contains(&j))?;
        }
        Ok(())
    }

    pub(super) fn put_bytes(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        self.put_runs(&[(offset as u64, data)])
    }

    /// Puts `runs` in their order, then sends them together: one transmit (one
    /// datagram per peer while they fit), or in implicit mode one flush for all. Runs
    /// that are not striped go to the primary rail one after the other, so the engine
    /// applies them in this order (what [`NetImport::put_with_flag`] relies on).
    pub(super) fn put_runs(&self, runs: &[(u64, &[u8])]) -> Result<(), RsmError> {
        let mut st = self.lock();
        if let [(off, data)] = runs {
            if let Some(r) = self.put_one_rail(&mut st, *off, data) {
                return r;
            }
        }
        self.check_rails(&mut st)?;
        for &(off, data) in runs {
            let k = if st.stripes(data.len()) {
                None
            } else {
                Some(st.primary()?)
            };
            self.order_before(&mut st, k, off, data.len())?;
            // After the order's flushes (a fail-over there changes the live rails).
            if k.is_some() {
                // Whole on the primary (what `put_pieces` says), without a list.
                let p = st.primary()?;
                self.queue(&mut st, p, off, data, false)?;
            } else {
                let pieces = st.put_pieces(off, data.len())?;
                let striped = pieces.len() > 1;
                for pc in pieces {
                    self.queue(&mut st, pc.rail, pc.offset, &data[pc.range], striped)?;
                }
            }
        }
        if self.implicit.load(Ordering::Relaxed) {
            // Its own scope: in remote memory when it returns (a fail-over on the way
            // lost nothing, so it is not an error here). The write and the flush leave
            // together, in the flush's progress.
            self.flush(&mut st, |_| true)?;
            st.implicit_done();
        } else {
            self.net.transmit();
        }
        Ok(())
    }

    /// [`NetImport::put_runs`] of one run on an import with one rail, live: the rail's
    /// endpoint and engine are locked once, the engine's state is looked at, the write
    /// (and in implicit mode its flush) queued and the datagram sent from there
    /// ([`myrix_mx::Endpoint::send_with`], [`super::agent::Core::next_datagram`]), where
    /// the general path locks the engine four times and sends through the endpoint's
    /// loop over its protocols. With one rail the rules have no order to keep, no
    /// stripe and nothing to replay. `None` when this does not apply or the engine
    /// refused the write (nothing was queued: the general path does it again and
    /// handles the error as it does).
    pub(super) fn put_one_rail(
        &self,
        st: &mut State,
        off: u64,
        data: &[u8],
    ) -> Option<Result<(), RsmError>> {
        if st.len() != 1 || !st.is_live(0) || data.len() > PUT_PIECE {
            return None;
        }
        let (rail, imp) = (st.rail(0), st.import(0));
        let r = &self.net.rails[rail];
        let implicit = self.implicit.load(Ordering::Relaxed);
        // Lock order: the endpoint, then the core.
        let mut ep = lock(&r.ep);
        let mut c = lock(&r.core);
        // The engine's put looks the import up and refuses one that is not connected
        // (what `check_rails` looks at: a failed import takes the general path), so
        // no separate look at its state (one table lookup less per put).
        let (sent, flush) = if implicit {
            if c.engine.put(imp, off, data).is_err() {
                return None;
            }
            // Connected (just looked at): the flush is queued behind the write.
            let flush = c.engine.flush(imp).ok();
            (ep.send_with(|now, buf| c.next_datagram(now, buf)), flush)
        } else {
            // Queued and sent in one step: a small write with nothing ahead of it is
            // built straight into the endpoint's buffer (`Core::put_now`).
            let (mut called, mut refused) = (false, false);
            let sent = ep.send_with(|now, buf| {
                called = true;
                c.put_now(now, imp, off, data, buf).unwrap_or_else(|_| {
                    refused = true;
                    None
                })
            });
            // `send_with` did not call it (a stalled transport): queued, it leaves
            // with the transmit below.
            if refused || (!called && c.engine.put(imp, off, data).is_err()) {
                return None;
            }
            (sent, None)
        };
        let more = c.more_to_send();
        drop(c);
        if more || !matches!(sent, Ok(true)) {
            // A large write's later frames, a frame for another peer, a stalled
            // transport: the endpoint's general loop.
            let _ = ep.transmit();
        }
        drop(ep);
        r.bytes_put.fetch_add(data.len() as u64, Ordering::Relaxed);
        let full = st.queued(0, off, data, false);
        if !implicit {
            return Some(if full {
                self.flush(st, |j| j == 0)
            } else {
                Ok(())
            });
        }
        let (mut want, mut flushes) = take_lists(st);
        match flush {
            Some(f) => flushes.push((0, f)),
            None => want.push(0),
        }
        let res = self.flush_rails(st, &mut want, &mut flushes);
        st.want = want;
        st.flushes = flushes;
        Some(res.map(|()| st.implicit_done()))
    }

    pub(super) fn get_bytes(&self, offset: usize, out: &mut [u8]) -> Result<(), RsmError> {
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        loop {
            let p = st.primary()?;
            self.order_before(&mut st, Some(p), offset as u64, out.len())?;
            let rail = st.rail(p);
            let g = lock(&self.net.rails[rail].core).engine.get(
                st.import(p),
                offset as u64,
                out.len() as u64,
            )?;
            self.net.transmit();
            let r = self
                .net
                .wait(rail, None, |c| c.gets.remove(&g.0))
                .unwrap_or(Err(RsmError::Timeout));
            match r {
                Ok(data) if data.len() == out.len() => {
                    out.copy_from_slice(&data);
                    return Ok(());
                }
                Ok(_) => return Err(RsmError::BarrierFailure),
                Err(e) if self.rail_lost(&st, p, e) => {
                    // Ask again on the next rail.
                    self.fail_over(&mut st, p)?;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl NetImport {
    /// [`crate::Import::put_deferred`]: a small unstriped write queued on the primary
    /// rail without the transmit that ends [`NetImport::put_runs`]; the next transmit
    /// toward the node (another put's, a progress's) sends it in the same datagram as
    /// what was queued after it. Implicit mode, and writes that are striped or longer
    /// than a piece, take the ordinary path.
    pub(super) fn put_queued(&self, offset: usize, data: &[u8]) -> Result<(), RsmError> {
        if self.implicit.load(Ordering::Relaxed) || data.len() > PUT_PIECE {
            return self.put_bytes(offset, data);
        }
        let mut st = self.lock();
        self.check_rails(&mut st)?;
        if st.stripes(data.len()) {
            drop(st);
            return self.put_bytes(offset, data);
        }
        let off = offset as u64;
        let p = st.primary()?;
        self.order_before(&mut st, Some(p), off, data.len())?;
        // After the order's flushes (a fail-over there changes the primary).
        let p = st.primary()?;
        self.queue(&mut st, p, off, data, false)
    }
}

/// The import's reused flush lists, taken from it and emptied (see [`NetImport::flush`]).
fn take_lists(st: &mut State) -> (Vec<usize>, Vec<(usize, FlushId)>) {
    let mut want = std::mem::take(&mut st.want);
    let mut flushes = std::mem::take(&mut st.flushes);
    want.clear();
    flushes.clear();
    (want, flushes)
}

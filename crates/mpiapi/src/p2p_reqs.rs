//! The C request handles: one table for the requests that need C-side state
//! (`CReq`), and *engine handles* for those that need none, which name the engine's
//! request slot directly so that issuing and completing them touches one table, not
//! two.
//!
//! An engine handle is what `MPI_Irecv` on `MPI_COMM_WORLD` with a predefined
//! contiguous datatype returns (`fast_irecv`): its `CReq` would say only "active,
//! not persistent, nothing to finish, the world's ranks", so nothing is stored.
//! Its value is `base::ENGINE_REQUEST | slot | (generation & 7) << 28`, in a kind
//! range of its own, so it is never mistaken for a table handle; a stale one is
//! refused as a table handle is (the engine's slot generation, of which it keeps the
//! same 3 bits a table handle keeps of its own).
//!
//! The hot paths (`take_one`, `MPI_Wait`) complete an engine handle with one lookup
//! in the engine. Every other use of a handle first calls [`P2p::promote`], which
//! gives an engine handle a `CReq` in a side list under the same value, so the rest
//! of the code sees one kind of handle: what a `CReq` offers (cancel, free, peek,
//! the sweeps of `MPI_Waitany`/`MPI_Testsome`…) works on both without a second
//! implementation. Promotion is rare (a program mixing engine handles with the
//! general calls); the hot paths take it into account only when the list is
//! non-empty.

use super::*;

/// The value range of engine handles (kind 0xd, beside `handles::base`'s kinds).
const ENGINE: usize = 0xd_000_000;
const KIND_MASK: usize = 0xf << 24;
const INDEX_MASK: usize = (1 << 24) - 1;
const GEN_SHIFT: u32 = 28;
/// The generation bits kept (as a table handle keeps: handles stay positive ints).
const GEN_MASK: u32 = 7;

/// Whether `h` is an engine handle (not whether it names a live request).
#[inline(always)]
pub(crate) fn is_engine_handle(h: MPI_Request) -> bool {
    h & KIND_MASK == ENGINE
}

/// The engine handle of request `id`; `None` when its slot is beyond what a handle
/// can name (then the caller makes a table entry).
#[inline(always)]
pub(crate) fn engine_handle(id: ReqId) -> Option<MPI_Request> {
    let index = (id.0 & 0xffff_ffff) as usize;
    let gen = (id.0 >> 32) as u32 & GEN_MASK;
    (index <= INDEX_MASK).then_some(ENGINE | index | ((gen as usize) << GEN_SHIFT))
}

/// The live engine request an engine handle names.
#[inline(always)]
pub(crate) fn engine_req(e: &Engine<Fabric>, h: MPI_Request) -> Option<ReqId> {
    e.req_at((h & INDEX_MASK) as u32, (h >> GEN_SHIFT) as u32, GEN_MASK)
}

/// The ranks an engine handle's statuses are given in: `MPI_COMM_WORLD`'s.
#[inline(always)]
pub(crate) fn world_ranks() -> &'static [u32] {
    comm::predefined_ref(MPI_COMM_WORLD).map_or(&[][..], |c| &c.ranks[..])
}

/// The C request table, and the engine handles given a `CReq` ([`P2p::promote`]).
/// Its methods are the table's, for either kind of handle.
pub(crate) struct Reqs {
    table: Table<CReq>,
    promoted: Vec<(MPI_Request, CReq)>,
}

impl Reqs {
    pub(crate) const fn new() -> Reqs {
        Reqs {
            table: Table::new(base::REQUEST),
            promoted: Vec::new(),
        }
    }

    /// Whether no engine handle has a `CReq`: the hot paths' test.
    #[inline(always)]
    pub(crate) fn none_promoted(&self) -> bool {
        self.promoted.is_empty()
    }

    /// A table handle's entry (`None` for an engine handle, promoted or not).
    #[inline(always)]
    pub(crate) fn table_get(&self, h: MPI_Request) -> Option<&CReq> {
        self.table.get(h)
    }

    /// [`Table::forget`] of a table handle.
    #[inline(always)]
    pub(crate) fn table_forget(&mut self, h: MPI_Request) -> bool {
        self.table.forget(h)
    }

    /// Drops a table handle's entry.
    #[inline(always)]
    pub(crate) fn table_discard(&mut self, h: MPI_Request) -> Option<bool> {
        self.table.discard_if(h, |_| true)
    }

    #[inline]
    pub(crate) fn insert(&mut self, r: CReq) -> Option<MPI_Request> {
        self.table.insert(r)
    }

    fn slot(&self, h: MPI_Request) -> Option<usize> {
        self.promoted.iter().position(|(k, _)| *k == h)
    }

    #[inline]
    pub(crate) fn get(&self, h: MPI_Request) -> Option<&CReq> {
        if is_engine_handle(h) {
            return self.slot(h).map(|i| &self.promoted[i].1);
        }
        self.table.get(h)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, h: MPI_Request) -> Option<&mut CReq> {
        if is_engine_handle(h) {
            return self.slot(h).map(|i| &mut self.promoted[i].1);
        }
        self.table.get_mut(h)
    }

    /// As [`Table::discard_if`].
    #[inline]
    pub(crate) fn discard_if(
        &mut self,
        h: MPI_Request,
        pred: impl FnOnce(&CReq) -> bool,
    ) -> Option<bool> {
        if is_engine_handle(h) {
            let i = self.slot(h)?;
            if !pred(&self.promoted[i].1) {
                return Some(false);
            }
            self.promoted.swap_remove(i);
            return Some(true);
        }
        self.table.discard_if(h, pred)
    }

    pub(crate) fn remove(&mut self, h: MPI_Request) -> Option<CReq> {
        if is_engine_handle(h) {
            let i = self.slot(h)?;
            return Some(self.promoted.swap_remove(i).1);
        }
        self.table.remove(h)
    }
}

impl P2p {
    /// Gives engine handle `h` a `CReq` (active, not persistent, nothing to finish,
    /// the world's ranks) under the same value, unless it has one or names no live
    /// request; does nothing for a table handle. Called by every use of a request
    /// handle but the hot paths, so that they need know only `CReq`s.
    #[inline]
    pub(crate) fn promote(&mut self, h: MPI_Request) {
        if !is_engine_handle(h) || self.reqs.slot(h).is_some() {
            return;
        }
        let Some(id) = engine_req(&self.engine, h) else {
            return;
        };
        self.reqs.promoted.push((
            h,
            CReq {
                id: Some(id),
                active: true,
                ready: None,
                ranks: Ranks::Static(world_ranks()),
                finish: Finish::None,
                persist: None,
                sent: None,
            },
        ));
    }

    /// [`P2p::promote`] for each handle.
    pub(crate) fn promote_all(&mut self, hs: &[MPI_Request]) {
        for &h in hs {
            self.promote(h);
        }
    }

    /// Whether `h` names a live request of either kind (not `MPI_REQUEST_NULL`).
    #[inline]
    pub(crate) fn knows(&self, h: MPI_Request) -> bool {
        if is_engine_handle(h) {
            return engine_req(&self.engine, h).is_some() || self.reqs.slot(h).is_some();
        }
        self.reqs.table.get(h).is_some()
    }
}

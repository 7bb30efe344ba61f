//! The operations of a window: put, get, accumulate (and its fetching forms),
//! compare-and-swap of any datatypes, and where a target's bytes are (the
//! one-element paths are in `fast.rs`).

use super::{rsm, Window};
use crate::datatype::Datatype;
use crate::op::BuiltinOp;
use crate::rma::net::{wire, NetSide, Rec, Remote};
use crate::rma::{acc, Flavor, RmaError};

/// Where a target's bytes are: mapped here, or at a byte offset of a remote window.
pub(super) enum Span<'a> {
    Here(*mut u8),
    There(&'a Remote, usize),
    /// An address attached at a rank of a dynamic window on another node: reached
    /// through records its service thread applies after checking the address.
    Dyn(&'a Remote, usize),
    /// Memory not attached at the target of a dynamic window: nothing is done, the
    /// error waits for the synchronization that ends the epoch.
    Skip,
    /// Address `.1` of an attached region of rank `.0` of this node whose bytes lie
    /// in two of its pieces ([`super::cut`]).
    Cut(usize, usize),
}

pub(super) fn not_attached(rank: usize, addr: u64, n: u64) -> RmaError {
    RmaError::Range {
        rank,
        lo: addr as i128,
        hi: addr as i128 + n as i128,
        len: 0,
    }
}

/// # Safety
/// `p` is readable for `n` bytes (or `n` is 0).
pub(super) unsafe fn bytes<'a>(p: *const u8, n: usize) -> &'a [u8] {
    if n == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// The contiguous pieces `(byte offset, length)` of `count` elements of `dt` whose
/// element 0 is at byte `off`, in type-map order.
pub(super) fn pieces(
    off: usize,
    count: usize,
    dt: &Datatype,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let contiguous = dt.is_contiguous();
    let whole = std::iter::once(((off as isize + dt.true_lb()) as usize, count * dt.size()))
        .filter(move |_| contiguous && count * dt.size() > 0);
    let runs = (0..count)
        .filter(move |_| !contiguous)
        .flat_map(move |i| {
            let e = off as isize + i as isize * dt.extent();
            dt.runs().iter().flat_map(move |run| {
                (0..run.reps)
                    .map(move |k| ((e + run.off + k as isize * run.stride) as usize, run.len))
            })
        })
        .filter(|p| p.1 > 0);
    whole.chain(runs)
}

/// MPI_Put to a rank on another node: one RSM put per contiguous piece of the target.
///
/// # Safety
/// `origin` holds `ocount` elements of `odt` (`n` bytes in all).
#[allow(clippy::too_many_arguments)]
unsafe fn put_remote(
    rem: &Remote,
    origin: *const u8,
    ocount: usize,
    odt: &Datatype,
    off: usize,
    tcount: usize,
    tdt: &Datatype,
    n: usize,
) {
    let packed;
    let src: &[u8] = if odt.is_contiguous() {
        // SAFETY: the caller's contract.
        unsafe { bytes(origin.wrapping_offset(odt.true_lb()), n) }
    } else {
        let mut b = vec![0u8; n];
        // SAFETY: the caller's contract.
        unsafe { odt.pack(origin, ocount, &mut b) };
        packed = b;
        &packed
    };
    let mut at = 0usize;
    rem.put_pieces(pieces(off, tcount, tdt).map(|(o, len)| {
        let s = &src[at..at + len];
        at += len;
        (o, s)
    }));
}

/// MPI_Get from a rank on another node: one RSM get of the range the target type
/// covers, then unpacked.
///
/// # Safety
/// `origin` is writable for `ocount` elements of `odt` (`n` bytes in all).
#[allow(clippy::too_many_arguments)]
unsafe fn get_remote(
    rem: &Remote,
    origin: *mut u8,
    ocount: usize,
    odt: &Datatype,
    off: usize,
    tcount: usize,
    tdt: &Datatype,
    n: usize,
) {
    if odt.is_contiguous() && tdt.is_contiguous() {
        // SAFETY: the caller's contract.
        let out =
            unsafe { std::slice::from_raw_parts_mut(origin.wrapping_offset(odt.true_lb()), n) };
        rem.get((off as isize + tdt.true_lb()) as usize, out);
        return;
    }
    // The range the target elements cover (checked inside the window by span).
    let last = (tcount as isize - 1) * tdt.extent();
    let lo = off as isize + tdt.true_lb() + last.min(0);
    let hi = off as isize + tdt.true_lb() + tdt.true_extent() + last.max(0);
    let mut cover = vec![0u8; (hi - lo) as usize];
    rem.get(lo as usize, &mut cover);
    let mut buf = vec![0u8; n];
    // SAFETY: element 0 lies at off - lo in `cover`, which holds every byte the
    // elements cover; the origin by the caller's contract.
    unsafe {
        tdt.pack(
            cover.as_ptr().wrapping_offset(off as isize - lo),
            tcount,
            &mut buf,
        );
        odt.unpack(&buf, origin, ocount);
    }
}

pub(super) fn byte() -> Datatype {
    Datatype::basic(crate::datatype::Basic::Byte)
}

/// Records carrying `data` (or, without data, `len` bytes to fetch) cut into the
/// contiguous pieces of `tcount` elements of `tdt` at address `off`, at most one
/// record's data each.
fn dyn_records<'a>(
    kind: wire::Kind,
    op: BuiltinOp,
    off: usize,
    tcount: usize,
    tdt: &'a Datatype,
    data: &'a [u8],
) -> impl Iterator<Item = Rec<'a>> + 'a {
    let mut at = 0usize;
    pieces(off, tcount, tdt)
        .flat_map(|(o, len)| {
            (0..len)
                .step_by(wire::DATA)
                .map(move |c| (o + c, wire::DATA.min(len - c)))
        })
        .map(move |(o, len)| {
            let d = &data[at..at + len];
            at += len;
            Rec {
                kind,
                op,
                basic: crate::datatype::Basic::Byte,
                off: o as u64,
                data: d,
            }
        })
}

impl Window {
    /// A put into attached memory of a rank on another node: REPLACE records its
    /// service thread applies once it found the address attached (an error, kept for
    /// the synchronization, otherwise).
    pub(super) fn put_dyn(
        &self,
        rem: &Remote,
        off: usize,
        data: &[u8],
        tcount: usize,
        tdt: &Datatype,
    ) {
        let r = self.net_side().and_then(|side| {
            let mut it = dyn_records(wire::Kind::Acc, BuiltinOp::Replace, off, tcount, tdt, data);
            rem.send(side, &mut it, None)
        });
        if let Err(e) = r {
            rem.defer(e);
        }
    }

    /// A get from attached memory of a rank on another node: fetching NO_OP records.
    pub(super) fn get_dyn(
        &self,
        rem: &Remote,
        off: usize,
        out: &mut [u8],
        tcount: usize,
        tdt: &Datatype,
    ) {
        let zeros = vec![0u8; out.len()];
        let r = self.net_side().and_then(|side| {
            let mut it = dyn_records(
                wire::Kind::FetchAcc,
                BuiltinOp::NoOp,
                off,
                tcount,
                tdt,
                &zeros,
            );
            rem.send(side, &mut it, Some(out))
        });
        if let Err(e) = r {
            rem.defer(e);
        }
    }

    fn net_side(&self) -> Result<&NetSide, RmaError> {
        self.net.as_ref().map(|n| &n.side).ok_or(RmaError::Internal(
            "a remote target in a window without a network side",
        ))
    }
}
use myrix_rsm::{Perm, SegmentId};

impl Window {
    /// The address of element 0 of `count` elements of `dt` at displacement `disp`
    /// of rank `r`'s window, after checking they lie inside it.
    pub(super) fn span(
        &self,
        r: usize,
        disp: isize,
        count: usize,
        dt: &Datatype,
    ) -> Result<Span<'_>, RmaError> {
        let t = self.target(r)?;
        let unit = if self.flavor == Flavor::Dynamic {
            1
        } else {
            t.disp_unit as i128
        };
        let off = disp as i128 * unit;
        if count == 0 || dt.size() == 0 {
            return Ok(Span::Here(std::ptr::null_mut()));
        }
        let last = (count as i128 - 1) * dt.extent() as i128;
        let lo = off + dt.true_lb() as i128 + last.min(0);
        let hi = off + dt.true_lb() as i128 + dt.true_extent() as i128 + last.max(0);
        let range = || RmaError::Range {
            rank: r,
            lo,
            hi,
            len: t.len,
        };
        if self.flavor == Flavor::Dynamic {
            let Ok(lo64) = u64::try_from(lo) else {
                self.defer(range());
                return Ok(Span::Skip);
            };
            if let Some(rem) = &t.remote {
                // The target's service thread checks the address (its table).
                return Ok(Span::Dyn(rem, off as usize));
            }
            return match self.dynamic_addr(r, lo64, (hi - lo) as u64) {
                Ok(p) => Ok(Span::Here(p.wrapping_offset((off - lo) as isize))),
                Err(e @ RmaError::Range { .. }) => {
                    self.defer(e);
                    Ok(Span::Skip)
                }
                // Attached, in two pieces mapped apart here.
                Err(RmaError::Unsupported(_)) if r != self.rank => Ok(Span::Cut(r, off as usize)),
                Err(e) => Err(e),
            };
        }
        if lo < 0 || hi > t.len as i128 {
            return Err(range());
        }
        if let Some(rem) = &t.remote {
            return Ok(Span::There(rem, off as usize));
        }
        Ok(Span::Here(
            (t.base as *mut u8).wrapping_offset(off as isize),
        ))
    }

    /// Where absolute address `addr` of rank `r` (`n` bytes, attached there) is here.
    pub(super) fn dynamic_addr(&self, r: usize, addr: u64, n: u64) -> Result<*mut u8, RmaError> {
        let t = &self.targets[r];
        if r == self.rank {
            // This process's own memory: pieces of one region lie end to end.
            return match t.ctrl().covers(addr, n) {
                true => Ok(addr as *mut u8),
                false => Err(not_attached(r, addr, n)),
            };
        }
        let Some(a) = t.ctrl().find_attachment(addr, n) else {
            // Attached, but in pieces mapped apart here: `span` makes it a
            // `Span::Cut`, which only puts and gets take.
            if t.ctrl().covers(addr, n) {
                return Err(super::cut::refused(r, "one pointer to memory"));
            }
            return Err(not_attached(r, addr, n));
        };
        let mut maps = self.dyn_maps.lock().unwrap_or_else(|p| p.into_inner());
        let key = (r, a.seg, a.page);
        let m = match maps.entry(key) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let nd = self.targets[r]
                    .import
                    .as_ref()
                    .map_or(self.ctl.local_node(), |i| i.node());
                let i = self
                    .ctl
                    .import_connect(nd, SegmentId(a.seg), Perm::RDWR)
                    .map_err(rsm("connecting to attached memory"))?;
                let m = i.map().map_err(rsm("mapping attached memory"))?;
                v.insert((i, m))
            }
        };
        let m = &m.1;
        Ok(m.as_ptr().wrapping_add((addr - a.page) as usize))
    }

    /// MPI_Put: `ocount` elements of `odt` at `origin` into rank `r`'s window.
    ///
    /// # Safety
    /// `origin` holds `ocount` elements of `odt`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put(
        &self,
        origin: *const u8,
        ocount: usize,
        odt: &Datatype,
        r: usize,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<(), RmaError> {
        let n = same_bytes(ocount, odt, tcount, tdt)?;
        let t = match self.span(r, disp, tcount, tdt)? {
            Span::Here(t) => t,
            Span::There(rem, off) => {
                if n > 0 {
                    // SAFETY: the origin's contract.
                    unsafe { put_remote(rem, origin, ocount, odt, off, tcount, tdt, n) };
                }
                return Ok(());
            }
            Span::Dyn(rem, off) => {
                if n > 0 {
                    let mut b = vec![0u8; n];
                    // SAFETY: the origin's contract.
                    unsafe { odt.pack(origin, ocount, &mut b) };
                    self.put_dyn(rem, off, &b, tcount, tdt);
                }
                return Ok(());
            }
            Span::Cut(r, off) => {
                let mut b = vec![0u8; n];
                // SAFETY: the origin's contract.
                unsafe { odt.pack(origin, ocount, &mut b) };
                return self.cut_put(r, off, &b, tcount, tdt);
            }
            Span::Skip => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        if odt.is_contiguous() && tdt.is_contiguous() {
            // SAFETY: the origin's contract; the target range was checked inside the
            // mapped window. They may overlap (a shared window): copy, not
            // copy_nonoverlapping.
            unsafe {
                std::ptr::copy(
                    origin.wrapping_offset(odt.true_lb()),
                    t.wrapping_offset(tdt.true_lb()),
                    n,
                )
            };
            return Ok(());
        }
        let mut buf = vec![0u8; n];
        // SAFETY: the origin's contract; the target range checked.
        unsafe {
            odt.pack(origin, ocount, &mut buf);
            tdt.unpack(&buf, t, tcount);
        }
        Ok(())
    }

    /// MPI_Get: rank `r`'s window into `ocount` elements of `odt` at `origin`.
    ///
    /// # Safety
    /// `origin` is writable for `ocount` elements of `odt`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn get(
        &self,
        origin: *mut u8,
        ocount: usize,
        odt: &Datatype,
        r: usize,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<(), RmaError> {
        let n = same_bytes(ocount, odt, tcount, tdt)?;
        let t = match self.span(r, disp, tcount, tdt)? {
            Span::Here(t) => t,
            Span::There(rem, off) => {
                if n > 0 {
                    // SAFETY: the origin's contract.
                    unsafe { get_remote(rem, origin, ocount, odt, off, tcount, tdt, n) };
                }
                return Ok(());
            }
            Span::Dyn(rem, off) => {
                if n > 0 {
                    let mut b = vec![0u8; n];
                    self.get_dyn(rem, off, &mut b, tcount, tdt);
                    // SAFETY: the origin's contract.
                    unsafe { odt.unpack(&b, origin, ocount) };
                }
                return Ok(());
            }
            Span::Cut(r, off) => {
                let mut b = vec![0u8; n];
                self.cut_get(r, off, &mut b, tcount, tdt)?;
                // SAFETY: the origin's contract.
                unsafe { odt.unpack(&b, origin, ocount) };
                return Ok(());
            }
            Span::Skip => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        if odt.is_contiguous() && tdt.is_contiguous() {
            // SAFETY: as in put.
            unsafe {
                std::ptr::copy(
                    t.wrapping_offset(tdt.true_lb()),
                    origin.wrapping_offset(odt.true_lb()),
                    n,
                )
            };
            return Ok(());
        }
        let mut buf = vec![0u8; n];
        // SAFETY: as in put.
        unsafe {
            tdt.pack(t, tcount, &mut buf);
            odt.unpack(&buf, origin, ocount);
        }
        Ok(())
    }

    /// MPI_Accumulate and MPI_Get_accumulate on packed origin data: `origin`
    /// (whole elements of the target type's basic type; empty for MPI_NO_OP) is
    /// combined into `tcount` elements of `tdt` at `disp` of rank `r`; the old
    /// values, packed, are returned when `fetch`.
    #[allow(clippy::too_many_arguments)]
    pub fn accumulate(
        &self,
        op: BuiltinOp,
        origin: &[u8],
        fetch: bool,
        r: usize,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
    ) -> Result<Vec<u8>, RmaError> {
        let basic = tdt.uniform_basic().ok_or(RmaError::Type(
            "accumulate needs a target type of one predefined type",
        ))?;
        acc::check(op, basic).map_err(|_| RmaError::Op)?;
        let n = tcount
            .checked_mul(tdt.size())
            .ok_or(RmaError::Arg("count overflows".into()))?;
        let zeros;
        let origin = if op == BuiltinOp::NoOp {
            zeros = vec![0u8; n];
            &zeros[..]
        } else {
            origin
        };
        if origin.len() != n {
            return Err(RmaError::Type("origin and target type signatures differ"));
        }
        let span = self.span(r, disp, tcount, tdt)?;
        let mut old = if fetch { vec![0u8; n] } else { Vec::new() };
        if n == 0 {
            return Ok(old);
        }
        let t = match span {
            Span::Here(t) => t,
            Span::Skip => return Ok(old),
            Span::Cut(r, off) => {
                let res = fetch.then_some(&mut old[..]);
                self.cut_acc(r, off, op, basic, origin, res, tcount, tdt)?;
                return Ok(old);
            }
            Span::There(rem, off) | Span::Dyn(rem, off) => {
                let side = self.net_side()?;
                let kind = if fetch {
                    wire::Kind::FetchAcc
                } else {
                    wire::Kind::Acc
                };
                let w = basic.size().max(1);
                let chunk = wire::DATA / w * w;
                let mut at = 0usize;
                let mut recs = pieces(off, tcount, tdt).flat_map(|(o, len)| {
                    (0..len)
                        .step_by(chunk)
                        .map(move |c| (o + c, chunk.min(len - c)))
                });
                let mut it = std::iter::from_fn(|| {
                    let (o, len) = recs.next()?;
                    let d = &origin[at..at + len];
                    at += len;
                    Some(Rec {
                        kind,
                        op,
                        basic,
                        off: o as u64,
                        data: d,
                    })
                });
                rem.send(side, &mut it, fetch.then_some(&mut old[..]))?;
                return Ok(old);
            }
        };
        let ctrl = self.targets[r].ctrl();
        if !tdt.is_contiguous() && tdt.runs().iter().any(|run| run.len % basic.size() != 0) {
            // SAFETY: the target type's runs at t lie in the checked range.
            unsafe {
                gathered(
                    op,
                    basic,
                    origin,
                    t,
                    tcount,
                    tdt,
                    fetch.then_some(&mut old[..]),
                    ctrl,
                )
            }?;
            return Ok(old);
        }
        let mut at = 0usize;
        let mut piece = |p: *mut u8, len: usize| -> Result<(), RmaError> {
            let res = if fetch {
                Some(&mut old[at..at + len])
            } else {
                None
            };
            // SAFETY: p..p+len lies in the checked range of the mapped window.
            unsafe { acc::accumulate(op, basic, &origin[at..at + len], p, res, ctrl) }
                .map_err(|_| RmaError::Op)?;
            at += len;
            Ok(())
        };
        if tdt.is_contiguous() {
            piece(t.wrapping_offset(tdt.true_lb()), n)?;
        } else {
            for i in 0..tcount {
                let e = t.wrapping_offset(i as isize * tdt.extent());
                for run in tdt.runs() {
                    for k in 0..run.reps {
                        piece(
                            e.wrapping_offset(run.off + k as isize * run.stride),
                            run.len,
                        )?;
                    }
                }
            }
        }
        Ok(old)
    }

    /// MPI_Compare_and_swap on one element of `dt` (a predefined type) at `disp`.
    pub fn compare_and_swap(
        &self,
        dt: &Datatype,
        origin: &[u8],
        compare: &[u8],
        r: usize,
        disp: isize,
    ) -> Result<Vec<u8>, RmaError> {
        let basic = dt
            .as_basic()
            .ok_or(RmaError::Type("compare_and_swap needs a predefined type"))?;
        if !acc::cas_allowed(basic) {
            return Err(RmaError::Type(
                "compare_and_swap needs an integer, logical or byte type",
            ));
        }
        let w = basic.size();
        if origin.len() != w || compare.len() != w {
            return Err(RmaError::Type("compare_and_swap arguments"));
        }
        let mut old = vec![0u8; w];
        let t = match self.span(r, disp, 1, dt)? {
            Span::Here(t) => t,
            Span::Skip => return Ok(old),
            Span::Cut(r, _) => return Err(super::cut::refused(r, "a compare-and-swap")),
            Span::There(rem, off) | Span::Dyn(rem, off) => {
                let side = self.net_side()?;
                let data = [origin, compare].concat();
                let rec = Rec {
                    kind: wire::Kind::Cas,
                    op: BuiltinOp::Replace,
                    basic,
                    off: (off as isize + dt.true_lb()) as u64,
                    data: &data,
                };
                rem.send(side, &mut std::iter::once(rec), Some(&mut old))?;
                return Ok(old);
            }
        };
        // SAFETY: one element at t, checked inside the mapped window.
        unsafe {
            acc::compare_and_swap(basic, origin, compare, t, &mut old, self.targets[r].ctrl())
        }
        .map_err(|_| RmaError::Type("compare_and_swap arguments"))?;
        Ok(old)
    }
}

fn same_bytes(oc: usize, odt: &Datatype, tc: usize, tdt: &Datatype) -> Result<usize, RmaError> {
    let o = oc.checked_mul(odt.size());
    let t = tc.checked_mul(tdt.size());
    match (o, t) {
        (Some(o), Some(t)) if o == t => Ok(o),
        _ => Err(RmaError::Type("origin and target type signatures differ")),
    }
}

/// An accumulate on a pair type with a gap (MPI_SHORT_INT: a short, 2 bytes of
/// padding, an int): its runs are parts of elements, which the per-run paths
/// cannot combine (they refused every such accumulate before). The elements'
/// bytes are gathered, combined packed and scattered back, under the target's
/// accumulate lock: such an element (6 bytes) is never one hardware atomic, so
/// every accumulate of it takes that lock and this is atomic beside them.
///
/// # Safety
/// `tcount` elements of `tdt` at `t` lie in mapped window memory.
#[allow(clippy::too_many_arguments)]
unsafe fn gathered(
    op: BuiltinOp,
    basic: crate::datatype::Basic,
    origin: &[u8],
    t: *mut u8,
    tcount: usize,
    tdt: &Datatype,
    result: Option<&mut [u8]>,
    ctrl: &crate::rma::ctrl::Ctrl,
) -> Result<(), RmaError> {
    let mut buf = vec![0u8; origin.len()];
    ctrl.with_acc_lock(|| {
        // SAFETY: the caller's range, read and written under the lock.
        unsafe { tdt.pack(t, tcount, &mut buf) };
        if let Some(r) = result {
            r.copy_from_slice(&buf);
        }
        crate::op::reduce(op, basic, origin, &mut buf).map_err(|_| RmaError::Op)?;
        // SAFETY: as above.
        unsafe { tdt.unpack(&buf, t, tcount) };
        Ok(())
    })
}

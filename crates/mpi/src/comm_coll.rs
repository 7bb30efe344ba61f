//! The collectives of a [`Comm`] on slices of plain data: barrier, bcast, reduce
//! and allreduce (the predefined [`Op`]s or a closure), gather(v), scatter(v),
//! allgather(v), alltoall(v), scan and exscan.
//!
//! They run the C library's code: at the first collective on a communicator its
//! ranks set up a shared segment when they share a node ([`crate::shmseg`], the
//! set-up `libmpi_abi.so` uses), and barrier, bcast, reduce, allreduce, gather,
//! scatter, allgather(v) and alltoall then go through it ([`ShmColl`]); the others,
//! and every collective of a communicator that spans nodes, go through the
//! point-to-point algorithms of [`crate::coll`] on the communicator's collective
//! context. A predefined operation is the C library's ([`crate::op::reduce`] on the
//! element's basic datatype, [`Num`]), so results are bit for bit those of
//! `MPI_Allreduce` on the same inputs. `MYRIX_MPI_COLL=p2p` keeps every collective
//! on point-to-point, as it does the C library's; `MYRIX_MPI_COLL_DEBUG=1` says why
//! a communicator's segment was not set up.
//!
//! Counts are in elements; the receive side of a rooted collective is read or
//! written at the root only (other ranks may pass an empty slice). Arguments every
//! rank passes alike (a root out of range, an operation not defined on the type)
//! fail on every rank before anything is sent; a rank alone with a bad length fails
//! there and may leave its peers waiting, as in MPICH and the C library.

use crate::coll::shm::ShmColl;
use crate::coll::{self, packed_displs, CollError, Pt2Pt, ReduceOp};
use crate::comm::Comm;
use crate::errors::Error;
use crate::op::BuiltinOp;
use crate::p2p::fabric::Rank;
use crate::pod::{bytes, bytes_mut, zeroed, Num, Pod};
use crate::shmseg;

/// How a communicator's collectives go, decided at its first one (alike on every
/// rank).
#[derive(Default)]
pub(crate) enum State {
    #[default]
    Unset,
    P2p,
    Shm(Box<ShmColl>),
}

impl State {
    pub(crate) fn take_shm(&mut self) -> Option<ShmColl> {
        match std::mem::take(self) {
            State::Shm(s) => Some(*s),
            _ => None,
        }
    }
}

/// The collectives' choices from the environment (as the C library reads them).
pub(crate) struct Config {
    p2p: bool,
    debug: bool,
    params: shmseg::Params,
}

impl Config {
    fn from_env() -> Config {
        let warn = |m: &str| eprintln!("{m}");
        Config {
            p2p: std::env::var("MYRIX_MPI_COLL").as_deref() == Ok("p2p"),
            debug: std::env::var("MYRIX_MPI_COLL_DEBUG").is_ok_and(|v| v != "0" && !v.is_empty()),
            params: shmseg::Params::from_env(&warn),
        }
    }
}

/// The predefined reduction operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Sum,
    Prod,
    Min,
    Max,
    /// Bitwise and, or, exclusive or (integers).
    Band,
    Bor,
    Bxor,
    /// Logical and, or, exclusive or (integers; nonzero is true, results 0 or 1).
    Land,
    Lor,
    Lxor,
}

impl Op {
    /// The C library's operation.
    pub fn builtin(self) -> BuiltinOp {
        match self {
            Op::Sum => BuiltinOp::Sum,
            Op::Prod => BuiltinOp::Prod,
            Op::Min => BuiltinOp::Min,
            Op::Max => BuiltinOp::Max,
            Op::Band => BuiltinOp::Band,
            Op::Bor => BuiltinOp::Bor,
            Op::Bxor => BuiltinOp::Bxor,
            Op::Land => BuiltinOp::Land,
            Op::Lor => BuiltinOp::Lor,
            Op::Lxor => BuiltinOp::Lxor,
        }
    }

    /// The operation on `T`, if the standard defines it there.
    fn on<T: Num>(self) -> Result<BuiltinOp, Error> {
        let b = self.builtin();
        if crate::op::allowed(b, T::BASIC) {
            Ok(b)
        } else {
            Err(Error::Op {
                op: b,
                ty: std::any::type_name::<T>(),
            })
        }
    }

    /// `inout = input op inout` on `T`'s basic type, as the C library combines.
    pub fn apply<T: Num>(self, input: &[T], inout: &mut [T]) -> Result<(), Error> {
        let b = self.on::<T>()?;
        crate::op::reduce(b, T::BASIC, bytes(input), bytes_mut(inout))
            .map_err(|e| Error::Coll(CollError::Args(e.to_string())))
    }
}

/// Calls `f` on `input` and `inout` as slices of `T`: in place when both are
/// aligned for `T` (the segment's lines and the callers' buffers are), else on
/// aligned copies.
fn typed<T: Pod>(f: &mut dyn FnMut(&[T], &mut [T]), input: &[u8], inout: &mut [u8]) {
    let size = std::mem::size_of::<T>();
    if size == 0 || input.len() != inout.len() || inout.len() % size != 0 {
        return;
    }
    let n = inout.len() / size;
    let align = std::mem::align_of::<T>();
    if input.as_ptr() as usize % align == 0 && inout.as_ptr() as usize % align == 0 {
        // SAFETY: both are aligned for `T` and hold `n` whole elements (checked
        // above); any bytes are a valid `T` (`Pod`); the borrows are carried over.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(input.as_ptr().cast::<T>(), n),
                std::slice::from_raw_parts_mut(inout.as_mut_ptr().cast::<T>(), n),
            )
        };
        return f(a, b);
    }
    let (mut a, mut b) = (zeroed::<T>(n), zeroed::<T>(n));
    bytes_mut(&mut a).copy_from_slice(input);
    bytes_mut(&mut b).copy_from_slice(inout);
    f(&a, &mut b);
    inout.copy_from_slice(bytes(&b));
}

/// Counts (elements of `size` bytes) as bytes, with packed displacements.
fn blocks(counts: &[usize], size: usize) -> Result<(Vec<usize>, Vec<usize>, usize), Error> {
    let b = counts
        .iter()
        .map(|&c| c.checked_mul(size))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CollError::Args("counts overflow".into()))?;
    let (d, total) = packed_displs(&b)?;
    Ok((b, d, total))
}

fn root_of(root: Rank) -> usize {
    root as usize
}

impl Comm {
    /// The communicator's segment, set up at the first collective; None: its
    /// collectives go point-to-point.
    #[inline]
    fn shm(&mut self) -> Result<Option<&mut ShmColl>, Error> {
        if !(self.sh.live.get() && matches!(self.coll, State::Shm(_))) {
            self.shm_slow()?;
        }
        Ok(match &mut self.coll {
            State::Shm(s) => Some(s),
            _ => None,
        })
    }

    #[cold]
    fn shm_slow(&mut self) -> Result<(), Error> {
        if !self.sh.live.get() {
            return Err(Error::Finalized);
        }
        if matches!(self.coll, State::Unset) {
            let cfg = self.sh.coll_cfg.get_or_init(Config::from_env);
            self.coll = if cfg.p2p {
                State::P2p
            } else {
                let (rank, ctx) = (self.rank, self.ctx);
                let debug = |why: &str| {
                    if cfg.debug {
                        eprintln!(
                            "myrix MPI: rank {rank} of context {ctx}: collectives point-to-point: {why}"
                        );
                    }
                };
                let mut engine = self.sh.engine()?;
                let mut p = self.pt2pt(&mut engine);
                match shmseg::setup(&mut p, self.sh.node, &cfg.params, &debug) {
                    Some(s) => State::Shm(Box::new(s)),
                    None => State::P2p,
                }
            };
        }
        Ok(())
    }

    /// Runs `f` on the communicator's collective point-to-point.
    fn p2p<R>(&self, f: impl FnOnce(&mut dyn Pt2Pt) -> Result<R, CollError>) -> Result<R, Error> {
        let mut engine = self.sh.engine()?;
        let mut p = self.pt2pt(&mut engine);
        Ok(f(&mut p)?)
    }

    /// Returns once every rank has called it (`MPI_Barrier`).
    pub fn barrier(&mut self) -> Result<(), Error> {
        match self.shm()? {
            Some(s) => {
                s.barrier();
                Ok(())
            }
            None => self.p2p(|p| coll::barrier(p)),
        }
    }

    /// The root's `buf` into every rank's (`MPI_Bcast`; the same length everywhere).
    pub fn bcast<T: Pod>(&mut self, root: Rank, buf: &mut [T]) -> Result<(), Error> {
        let b = bytes_mut(buf);
        match self.shm()? {
            Some(s) => Ok(s.bcast(root_of(root), b)?),
            None => self.p2p(|p| coll::bcast(p, root_of(root), b)),
        }
    }

    fn reduce_bytes(
        &mut self,
        root: Option<Rank>,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), Error> {
        match (self.shm()?, root) {
            (Some(s), Some(r)) => Ok(s.reduce(root_of(r), send, recv, elem, op)?),
            (Some(s), None) => Ok(s.allreduce(send, recv, elem, op)?),
            (None, Some(r)) => self.p2p(|p| coll::reduce(p, root_of(r), send, recv, op)),
            (None, None) => self.p2p(|p| coll::allreduce(p, send, recv, op)),
        }
    }

    fn builtin<T: Num>(
        &mut self,
        root: Option<Rank>,
        send: &[T],
        recv: &mut [T],
        op: Op,
    ) -> Result<(), Error> {
        let b = op.on::<T>()?;
        if let Some(r) = root {
            if r >= self.size() {
                return Err(CollError::Root {
                    root: root_of(r),
                    size: self.size() as usize,
                }
                .into());
            }
        }
        let basic = T::BASIC;
        let mut failed = None;
        let mut f = |input: &[u8], inout: &mut [u8]| {
            if let Err(e) = crate::op::reduce(b, basic, input, inout) {
                failed.get_or_insert(e);
            }
        };
        let mut rop = ReduceOp {
            op: &mut f,
            commutative: crate::op::is_commutative(b),
        };
        let r = self.reduce_bytes(root, bytes(send), bytes_mut(recv), basic.size(), &mut rop);
        match failed {
            Some(e) => r.and(Err(CollError::Args(e.to_string()).into())),
            None => r,
        }
    }

    fn with<T: Pod>(
        &mut self,
        root: Option<Rank>,
        send: &[T],
        recv: &mut [T],
        commutative: bool,
        mut f: impl FnMut(&[T], &mut [T]),
    ) -> Result<(), Error> {
        let mut g = |input: &[u8], inout: &mut [u8]| typed::<T>(&mut f, input, inout);
        let mut rop = ReduceOp {
            op: &mut g,
            commutative,
        };
        let elem = std::mem::size_of::<T>();
        self.reduce_bytes(root, bytes(send), bytes_mut(recv), elem, &mut rop)
    }

    /// Every rank's `send` combined with `op` into `recv` at `root` (`MPI_Reduce`).
    pub fn reduce<T: Num>(
        &mut self,
        root: Rank,
        send: &[T],
        recv: &mut [T],
        op: Op,
    ) -> Result<(), Error> {
        self.builtin(Some(root), send, recv, op)
    }

    /// Every rank's `send` combined with `op` into every rank's `recv`
    /// (`MPI_Allreduce`).
    pub fn allreduce<T: Num>(&mut self, send: &[T], recv: &mut [T], op: Op) -> Result<(), Error> {
        self.builtin(None, send, recv, op)
    }

    /// [`Comm::allreduce`] of one value.
    pub fn allreduce_one<T: Num>(&mut self, x: T, op: Op) -> Result<T, Error> {
        let mut out = [x];
        self.builtin(None, &[x], &mut out, op)?;
        Ok(out[0])
    }

    /// [`Comm::reduce`] with the program's operation: `f(input, inout)` sets
    /// `inout[i] = input[i] op inout[i]` (`MPI_User_function`'s shape), where
    /// `input` comes from lower ranks than `inout`; `commutative` says whether
    /// `a op b == b op a` (if not, ranks are combined in order). `op` must be
    /// associative.
    pub fn reduce_with<T: Pod>(
        &mut self,
        root: Rank,
        send: &[T],
        recv: &mut [T],
        commutative: bool,
        f: impl FnMut(&[T], &mut [T]),
    ) -> Result<(), Error> {
        self.with(Some(root), send, recv, commutative, f)
    }

    /// [`Comm::allreduce`] with the program's operation, as [`Comm::reduce_with`].
    pub fn allreduce_with<T: Pod>(
        &mut self,
        send: &[T],
        recv: &mut [T],
        commutative: bool,
        f: impl FnMut(&[T], &mut [T]),
    ) -> Result<(), Error> {
        self.with(None, send, recv, commutative, f)
    }

    /// Every rank's `send` (the same length everywhere) into the root's `recv`, rank
    /// after rank (`MPI_Gather`).
    pub fn gather<T: Pod>(&mut self, root: Rank, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        let (s, r) = (bytes(send), bytes_mut(recv));
        match self.shm()? {
            Some(sh) => Ok(sh.gather(root_of(root), s, r)?),
            None => self.p2p(|p| coll::gather(p, root_of(root), s, r)),
        }
    }

    /// The root's `send`, `size` blocks of `recv.len()` elements, one to each rank
    /// (`MPI_Scatter`).
    pub fn scatter<T: Pod>(&mut self, root: Rank, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        let (s, r) = (bytes(send), bytes_mut(recv));
        match self.shm()? {
            Some(sh) => Ok(sh.scatter(root_of(root), s, r)?),
            None => self.p2p(|p| coll::scatter(p, root_of(root), s, r)),
        }
    }

    /// Every rank's `send` (the same length everywhere) into every rank's `recv`
    /// (`MPI_Allgather`).
    pub fn allgather<T: Pod>(&mut self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        let (s, r) = (bytes(send), bytes_mut(recv));
        match self.shm()? {
            Some(sh) => Ok(sh.allgather(s, r)?),
            None => self.p2p(|p| coll::allgather(p, s, r)),
        }
    }

    /// Block `j` of every rank's `send` (`size` blocks alike) into block `i` of rank
    /// `j`'s `recv`, for rank `i` (`MPI_Alltoall`).
    pub fn alltoall<T: Pod>(&mut self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        let (s, r) = (bytes(send), bytes_mut(recv));
        match self.shm()? {
            Some(sh) => Ok(sh.alltoall(s, r)?),
            None => self.p2p(|p| coll::alltoall(p, s, r)),
        }
    }

    /// Rank `i`'s `send` (`counts[i]` elements) into the root's `recv`, the blocks
    /// one after another (`MPI_Gatherv` with packed displacements; `counts` is read
    /// at the root).
    pub fn gatherv<T: Pod>(
        &mut self,
        root: Rank,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<(), Error> {
        let root_here = self.rank == root;
        let (c, d) = match root_here {
            true => {
                let (c, d, _) = blocks(counts, std::mem::size_of::<T>())?;
                (c, d)
            }
            false => (Vec::new(), Vec::new()),
        };
        let (s, r) = (bytes(send), bytes_mut(recv));
        self.p2p(|p| coll::gatherv(p, root_of(root), s, r, &c, &d))
    }

    /// The root's `send` cut into blocks of `counts[i]` elements, block `i` to rank
    /// `i`'s `recv` (`MPI_Scatterv` with packed displacements; `counts` is read at
    /// the root).
    pub fn scatterv<T: Pod>(
        &mut self,
        root: Rank,
        send: &[T],
        counts: &[usize],
        recv: &mut [T],
    ) -> Result<(), Error> {
        let (c, d) = match self.rank == root {
            true => {
                let (c, d, _) = blocks(counts, std::mem::size_of::<T>())?;
                (c, d)
            }
            false => (Vec::new(), Vec::new()),
        };
        let (s, r) = (bytes(send), bytes_mut(recv));
        self.p2p(|p| coll::scatterv(p, root_of(root), s, &c, &d, r))
    }

    /// Rank `i`'s `send` (`counts[i]` elements, `counts` alike everywhere) into
    /// every rank's `recv`, the blocks one after another (`MPI_Allgatherv`).
    pub fn allgatherv<T: Pod>(
        &mut self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<(), Error> {
        let (c, d, _) = blocks(counts, std::mem::size_of::<T>())?;
        let (s, r) = (bytes(send), bytes_mut(recv));
        match self.shm()? {
            Some(sh) => Ok(sh.allgatherv(s, r, &c, &d)?),
            None => self.p2p(|p| coll::allgatherv(p, s, r, &c, &d)),
        }
    }

    /// Every rank sends `scounts[j]` elements to rank `j` and receives `rcounts[i]`
    /// from rank `i`, the blocks packed in `send` and `recv` (`MPI_Alltoallv`).
    pub fn alltoallv<T: Pod>(
        &mut self,
        send: &[T],
        scounts: &[usize],
        recv: &mut [T],
        rcounts: &[usize],
    ) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        let (sc, sd, _) = blocks(scounts, size)?;
        let (rc, rd, _) = blocks(rcounts, size)?;
        let (s, r) = (bytes(send), bytes_mut(recv));
        self.p2p(|p| coll::alltoallv(p, s, &sc, &sd, r, &rc, &rd))
    }

    /// The inclusive prefix reduction: rank `i`'s `recv` is ranks 0..=i's `send`
    /// combined with `op` (`MPI_Scan`).
    pub fn scan<T: Num>(&mut self, send: &[T], recv: &mut [T], op: Op) -> Result<(), Error> {
        self.prefix(send, recv, op, false)
    }

    /// The exclusive prefix reduction: rank `i > 0`'s `recv` is ranks 0..i's `send`
    /// combined with `op`; rank 0's `recv` is left as it was (`MPI_Exscan`).
    pub fn exscan<T: Num>(&mut self, send: &[T], recv: &mut [T], op: Op) -> Result<(), Error> {
        self.prefix(send, recv, op, true)
    }

    fn prefix<T: Num>(
        &mut self,
        send: &[T],
        recv: &mut [T],
        op: Op,
        ex: bool,
    ) -> Result<(), Error> {
        let b = op.on::<T>()?;
        let basic = T::BASIC;
        let mut f = |input: &[u8], inout: &mut [u8]| {
            let _ = crate::op::reduce(b, basic, input, inout);
        };
        let mut rop = ReduceOp {
            op: &mut f,
            commutative: crate::op::is_commutative(b),
        };
        let (s, r) = (bytes(send), bytes_mut(recv));
        match ex {
            false => self.p2p(|p| coll::scan(p, s, r, &mut rop)),
            true => self.p2p(|p| coll::exscan(p, s, r, &mut rop)),
        }
    }
}

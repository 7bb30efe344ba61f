//! Process topologies at the C boundary: MPI_Dims_create, the Cartesian
//! (MPI_Cart_*), graph (MPI_Graph_*) and distributed-graph (MPI_Dist_graph_*)
//! constructors and queries, MPI_Topo_test. The arithmetic is
//! `myrix_mpi::topo`; this file validates C arguments into it, makes the
//! communicators (through `comm.rs`, which keeps each one's topology) and writes
//! the answers. The neighbourhood collectives are in `topo_nbr.rs`.
//!
//! `reorder` is honoured as the identity (the standard allows it): a process keeps
//! its rank of the old communicator. Never panics on C input: every bad argument is
//! an MPI error through the communicator's error handler.

use crate::abi::*;
use crate::coll::args::coll_code;
use crate::coll_glue::pt2pt;
use crate::comm::{self, lookup};
use crate::ffi::{finish, mpi_fn, put};
use myrix_mpi::coll;
use myrix_mpi::topo::{dims_create, Cart, DistGraph, Edge, Graph, TopoError, Topology};
use std::os::raw::c_int;
use std::sync::Arc;

/// The MPI error class of a refused topology argument.
pub(crate) fn code(e: TopoError) -> c_int {
    match e {
        TopoError::Dims(_) => MPI_ERR_DIMS,
        TopoError::Arg(_) => MPI_ERR_ARG,
        TopoError::Rank(_) => MPI_ERR_RANK,
    }
}

/// `n` ints at `p` (`n` negative: `bad`).
///
/// # Safety
/// `p` is NULL or valid for `n` ints.
pub(crate) unsafe fn ints<'a>(p: *const c_int, n: c_int, bad: c_int) -> Result<&'a [c_int], c_int> {
    let n = usize::try_from(n).map_err(|_| bad)?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, n ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Writes `v` into the C array `p` of `max` ints (`max` must hold them all).
///
/// # Safety
/// `p` is NULL or valid for `max` ints.
unsafe fn put_ints(
    p: *mut c_int,
    max: c_int,
    v: impl ExactSizeIterator<Item = c_int>,
) -> Result<(), c_int> {
    let n = v.len();
    if usize::try_from(max).map_or(true, |m| m < n) {
        return Err(MPI_ERR_ARG);
    }
    if n == 0 {
        return Ok(());
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    for (i, x) in v.enumerate() {
        // SAFETY: i < n <= max ints at p.
        unsafe { p.add(i).write(x) };
    }
    Ok(())
}

fn wide(v: &[c_int]) -> Vec<i64> {
    v.iter().map(|&x| i64::from(x)).collect()
}

/// The topology of `comm` (`MPI_ERR_TOPOLOGY` when it has none).
pub(crate) fn topo_of(comm: MPI_Comm, name: &str) -> Result<(comm::CommRef, Arc<Topology>), c_int> {
    let c = lookup(comm, name)?;
    let t = comm::topology(comm).ok_or(MPI_ERR_TOPOLOGY)?;
    Ok((c, t))
}

fn cart_of(comm: MPI_Comm, name: &str) -> Result<(comm::CommRef, Arc<Topology>), c_int> {
    let (c, t) = topo_of(comm, name)?;
    match &*t {
        Topology::Cart(_) => Ok((c, t)),
        _ => Err(MPI_ERR_TOPOLOGY),
    }
}

fn cart(t: &Topology) -> &Cart {
    match t {
        Topology::Cart(c) => c,
        // cart_of admits only Cartesian topologies.
        _ => unreachable!("not Cartesian"),
    }
}

/// The first `n` ranks of `comm_old` in a new communicator with topology `t`; the
/// others get MPI_COMM_NULL (collective).
fn create_first(comm_old: MPI_Comm, n: usize, t: Topology, name: &str) -> Result<MPI_Comm, c_int> {
    let c = lookup(comm_old, name)?;
    let color = if (c.rank as usize) < n {
        0
    } else {
        MPI_UNDEFINED
    };
    let h = comm::split(comm_old, color, c.rank as c_int, name)?;
    if h != MPI_COMM_NULL {
        comm::set_topology(h, Some(Arc::new(t)))?;
    }
    Ok(h)
}

/// What MPI_Cart_map and MPI_Graph_map answer without reordering.
fn map_identity(comm: MPI_Comm, n: usize, name: &str) -> Result<c_int, c_int> {
    let c = lookup(comm, name)?;
    Ok(if (c.rank as usize) < n {
        c.rank as c_int
    } else {
        MPI_UNDEFINED
    })
}

mpi_fn! {
    /// Fills the zero entries of `dims` with a balanced factorization of `nnodes`.
    fn MPI_Dims_create / PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
        // SAFETY: dims holds ndims ints by the C contract.
        let r = unsafe { ints(dims, ndims, MPI_ERR_DIMS) }.and_then(|d| {
            let mut w = wide(d);
            dims_create(i64::from(nnodes), &mut w).map_err(code)?;
            let out = w.iter().map(|&x| c_int::try_from(x).unwrap_or(c_int::MAX));
            // SAFETY: as above.
            unsafe { put_ints(dims, ndims, out.collect::<Vec<_>>().into_iter()) }
        });
        finish(MPI_COMM_WORLD, "MPI_Dims_create", r)
    }
}

mpi_fn! {
    fn MPI_Cart_create / PMPI_Cart_create(comm_old: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, comm_cart: *mut MPI_Comm) -> c_int {
        let name = "MPI_Cart_create";
        let r = (|| {
            let size = lookup(comm_old, name)?.ranks.len();
            // SAFETY: dims and periods hold ndims ints by the C contract.
            let d = unsafe { ints(dims, ndims, MPI_ERR_DIMS) }?;
            // SAFETY: as above.
            let p = unsafe { ints(periods, ndims, MPI_ERR_DIMS) }?;
            let p: Vec<bool> = p.iter().map(|&x| x != 0).collect();
            if comm_cart.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let c = Cart::new(&wide(d), &p, size).map_err(code)?;
            let h = create_first(comm_old, c.size(), Topology::Cart(c), name)?;
            Ok(h)
        })();
        // SAFETY: comm_cart is NULL or an MPI_Comm by the C contract; a failure leaves
        // MPI_COMM_NULL there (MPICH's errors/topo/cartsmall tests for it).
        let r = unsafe { comm::put_comm(comm_cart, r) };
        finish(comm_old, name, r)
    }
}

mpi_fn! {
    /// Without reordering: this process's rank if it is in the grid.
    fn MPI_Cart_map / PMPI_Cart_map(comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int {
        let name = "MPI_Cart_map";
        let r = (|| {
            let size = lookup(comm, name)?.ranks.len();
            // SAFETY: dims and periods hold ndims ints by the C contract.
            let d = unsafe { ints(dims, ndims, MPI_ERR_DIMS) }?;
            // SAFETY: as above.
            let p = unsafe { ints(periods, ndims, MPI_ERR_DIMS) }?;
            let p: Vec<bool> = p.iter().map(|&x| x != 0).collect();
            let c = Cart::new(&wide(d), &p, size).map_err(code)?;
            let v = map_identity(comm, c.size(), name)?;
            // SAFETY: newrank is NULL or an int.
            unsafe { put(newrank, v) }
        })();
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Cartdim_get / PMPI_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int {
        let name = "MPI_Cartdim_get";
        let r = cart_of(comm, name).and_then(|(_, t)| {
            // SAFETY: ndims is NULL or an int.
            unsafe { put(ndims, cart(&t).dims.len() as c_int) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Cart_get / PMPI_Cart_get(comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
        let name = "MPI_Cart_get";
        let r = cart_of(comm, name).and_then(|(c, t)| {
            let g = cart(&t);
            let co = g.coords(c.rank as usize).map_err(code)?;
            // SAFETY: the three arrays hold maxdims ints by the C contract.
            unsafe {
                put_ints(dims, maxdims, g.dims.iter().map(|&d| d as c_int))?;
                put_ints(periods, maxdims, g.periods.iter().map(|&p| c_int::from(p)))?;
                put_ints(coords, maxdims, co.iter().map(|&x| x as c_int))
            }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// The rank at `coords` (wrapped in periodic dimensions; MPI_ERR_ARG outside a
    /// non-periodic one).
    fn MPI_Cart_rank / PMPI_Cart_rank(comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) -> c_int {
        let name = "MPI_Cart_rank";
        let r = cart_of(comm, name).and_then(|(_, t)| {
            let g = cart(&t);
            // SAFETY: coords holds ndims ints by the C contract.
            let co = unsafe { ints(coords, g.dims.len() as c_int, MPI_ERR_ARG) }?;
            let v = g.rank(&wide(co)).map_err(|_| MPI_ERR_ARG)?;
            // SAFETY: rank is NULL or an int.
            unsafe { put(rank, v as c_int) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Cart_coords / PMPI_Cart_coords(comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
        let name = "MPI_Cart_coords";
        let r = cart_of(comm, name).and_then(|(_, t)| {
            let g = cart(&t);
            let rk = usize::try_from(rank).map_err(|_| MPI_ERR_RANK)?;
            let co = g.coords(rk).map_err(code)?;
            // SAFETY: coords holds maxdims ints by the C contract.
            unsafe { put_ints(coords, maxdims, co.iter().map(|&x| x as c_int)) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// Source and destination of a shift; MPI_PROC_NULL off a non-periodic edge.
    fn MPI_Cart_shift / PMPI_Cart_shift(comm: MPI_Comm, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int {
        let name = "MPI_Cart_shift";
        let r = cart_of(comm, name).and_then(|(c, t)| {
            let g = cart(&t);
            let dir = usize::try_from(direction)
                .ok()
                .filter(|&d| d < g.dims.len())
                .ok_or(MPI_ERR_ARG)?;
            let (s, d) = g.shift(c.rank as usize, dir, i64::from(disp)).map_err(code)?;
            let v = |x: Option<usize>| x.map_or(MPI_PROC_NULL, |r| r as c_int);
            // SAFETY: both are NULL or ints.
            unsafe { put(rank_source, v(s)).and_then(|()| put(rank_dest, v(d))) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// The sub-grids keeping the dimensions marked in `remain_dims` (collective).
    fn MPI_Cart_sub / PMPI_Cart_sub(comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Cart_sub";
        let r = cart_of(comm, name).and_then(|(c, t)| {
            let g = cart(&t);
            // SAFETY: remain_dims holds ndims ints by the C contract.
            let keep = unsafe { ints(remain_dims, g.dims.len() as c_int, MPI_ERR_ARG) }?;
            let keep: Vec<bool> = keep.iter().map(|&x| x != 0).collect();
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let (sub, color, key) = g.sub(c.rank as usize, &keep).map_err(code)?;
            let color = c_int::try_from(color).map_err(|_| MPI_ERR_DIMS)?;
            let h = comm::split(comm, color, key as c_int, name)?;
            comm::set_topology(h, Some(Arc::new(Topology::Cart(sub))))?;
            Ok(h)
        });
        // SAFETY: newcomm is NULL or an MPI_Comm by the C contract; a failure leaves
        // MPI_COMM_NULL there (MPICH's errors/topo/cartsmall tests for it).
        let r = unsafe { comm::put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH, or MPI_UNDEFINED without a topology.
    fn MPI_Topo_test / PMPI_Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int {
        let name = "MPI_Topo_test";
        let r = lookup(comm, name).and_then(|_| {
            let v = match comm::topology(comm).as_deref() {
                Some(Topology::Cart(_)) => MPI_CART,
                Some(Topology::Graph(_)) => MPI_GRAPH,
                Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
                None => MPI_UNDEFINED,
            };
            // SAFETY: status is NULL or an int.
            unsafe { put(status, v) }
        });
        finish(comm, name, r)
    }
}

/// The graph of MPI_Graph_create / MPI_Graph_map's arguments.
///
/// # Safety
/// `index` holds `nnodes` ints and `edges` `index[nnodes - 1]` (the C contract).
unsafe fn graph_args(
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    size: usize,
) -> Result<Graph, c_int> {
    // SAFETY: the caller's contract.
    let idx = unsafe { ints(index, nnodes, MPI_ERR_ARG) }?;
    let ne = idx.last().copied().unwrap_or(0);
    // SAFETY: the caller's contract.
    let e = unsafe { ints(edges, ne, MPI_ERR_ARG) }?;
    Graph::new(&wide(idx), &wide(e), size).map_err(code)
}

mpi_fn! {
    fn MPI_Graph_create / PMPI_Graph_create(comm_old: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, _reorder: c_int, comm_graph: *mut MPI_Comm) -> c_int {
        let name = "MPI_Graph_create";
        let r = (|| {
            let size = lookup(comm_old, name)?.ranks.len();
            // SAFETY: the C contract for index and edges.
            let g = unsafe { graph_args(nnodes, index, edges, size) }?;
            if comm_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = create_first(comm_old, g.nnodes(), Topology::Graph(g), name)?;
            Ok(h)
        })();
        // SAFETY: comm_graph is NULL or an MPI_Comm by the C contract; a failure leaves
        // MPI_COMM_NULL there (MPICH's errors/topo/cartsmall tests for it).
        let r = unsafe { comm::put_comm(comm_graph, r) };
        finish(comm_old, name, r)
    }
}

mpi_fn! {
    fn MPI_Graph_map / PMPI_Graph_map(comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int {
        let name = "MPI_Graph_map";
        let r = (|| {
            let size = lookup(comm, name)?.ranks.len();
            // SAFETY: the C contract for index and edges.
            let g = unsafe { graph_args(nnodes, index, edges, size) }?;
            let v = map_identity(comm, g.nnodes(), name)?;
            // SAFETY: newrank is NULL or an int.
            unsafe { put(newrank, v) }
        })();
        finish(comm, name, r)
    }
}

fn graph_of(comm: MPI_Comm, name: &str) -> Result<Graph, c_int> {
    match &*topo_of(comm, name)?.1 {
        Topology::Graph(g) => Ok(g.clone()),
        _ => Err(MPI_ERR_TOPOLOGY),
    }
}

mpi_fn! {
    fn MPI_Graphdims_get / PMPI_Graphdims_get(comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
        let name = "MPI_Graphdims_get";
        let r = graph_of(comm, name).and_then(|g| {
            // SAFETY: both are NULL or ints.
            unsafe { put(nnodes, g.nnodes() as c_int).and_then(|()| put(nedges, g.edges.len() as c_int)) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Graph_get / PMPI_Graph_get(comm: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int {
        let name = "MPI_Graph_get";
        let r = graph_of(comm, name).and_then(|g| {
            // SAFETY: index holds maxindex ints, edges maxedges (the C contract).
            unsafe {
                put_ints(index, maxindex, g.index.iter().map(|&x| x as c_int))?;
                put_ints(edges, maxedges, g.edges.iter().map(|&x| x as c_int))
            }
        });
        finish(comm, name, r)
    }
}

fn graph_neighbors(comm: MPI_Comm, rank: c_int, name: &str) -> Result<Vec<c_int>, c_int> {
    let g = graph_of(comm, name)?;
    let rk = usize::try_from(rank).map_err(|_| MPI_ERR_RANK)?;
    let n = g.neighbors(rk).map_err(code)?;
    Ok(n.iter().map(|&x| x as c_int).collect())
}

mpi_fn! {
    fn MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count(comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) -> c_int {
        let name = "MPI_Graph_neighbors_count";
        let r = graph_neighbors(comm, rank, name).and_then(|v| {
            // SAFETY: nneighbors is NULL or an int.
            unsafe { put(nneighbors, v.len() as c_int) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Graph_neighbors / PMPI_Graph_neighbors(comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int {
        let name = "MPI_Graph_neighbors";
        let r = graph_neighbors(comm, rank, name).and_then(|v| {
            // SAFETY: neighbors holds maxneighbors ints by the C contract.
            unsafe { put_ints(neighbors, maxneighbors, v.into_iter()) }
        });
        finish(comm, name, r)
    }
}

/// Whether a weights argument means "weighted" (`MPI_UNWEIGHTED` does not).
fn weighted(w: *const c_int) -> bool {
    w as usize != MPI_UNWEIGHTED
}

/// `n` weights (zeros when unweighted); `MPI_WEIGHTS_EMPTY` is only for `n == 0`.
///
/// # Safety
/// A weighted `w` holds `n` ints (the C contract).
unsafe fn weights(w: *const c_int, n: usize) -> Result<Vec<i32>, c_int> {
    if !weighted(w) || n == 0 {
        return Ok(vec![0; n]);
    }
    if w as usize == MPI_WEIGHTS_EMPTY {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    let v = unsafe { ints(w, n as c_int, MPI_ERR_ARG) }?;
    if v.iter().any(|&x| x < 0) {
        return Err(MPI_ERR_ARG);
    }
    Ok(v.to_vec())
}

fn ranks_in(v: &[c_int], size: usize) -> Result<Vec<usize>, c_int> {
    v.iter()
        .map(|&r| {
            usize::try_from(r)
                .ok()
                .filter(|&r| r < size)
                .ok_or(MPI_ERR_RANK)
        })
        .collect()
}

/// A duplicate of `comm_old` with the distributed graph `g` (collective).
fn create_dist(comm_old: MPI_Comm, g: DistGraph, name: &str) -> Result<MPI_Comm, c_int> {
    let h = comm::dup_plain(comm_old, name)?;
    comm::set_topology(h, Some(Arc::new(Topology::DistGraph(g))))?;
    Ok(h)
}

mpi_fn! {
    fn MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent(comm_old: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, _info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
        let name = "MPI_Dist_graph_create_adjacent";
        let r = (|| {
            let size = lookup(comm_old, name)?.ranks.len();
            // SAFETY: sources holds indegree ints, destinations outdegree (C contract).
            let (s, d) = unsafe { (ints(sources, indegree, MPI_ERR_ARG)?, ints(destinations, outdegree, MPI_ERR_ARG)?) };
            let g = DistGraph {
                sources: ranks_in(s, size)?,
                // SAFETY: the weights hold as many ints as their ranks (C contract).
                source_weights: unsafe { weights(sourceweights, s.len()) }?,
                destinations: ranks_in(d, size)?,
                // SAFETY: as above.
                dest_weights: unsafe { weights(destweights, d.len()) }?,
                weighted: weighted(sourceweights) && weighted(destweights),
            };
            if comm_dist_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            create_dist(comm_old, g, name)
        })();
        // SAFETY: comm_dist_graph is NULL or an MPI_Comm by the C contract; a failure leaves
        // MPI_COMM_NULL there (MPICH's errors/topo/cartsmall tests for it).
        let r = unsafe { comm::put_comm(comm_dist_graph, r) };
        finish(comm_old, name, r)
    }
}

mpi_fn! {
    /// Each process names any edges; they are gathered so every process learns its
    /// own (collective).
    fn MPI_Dist_graph_create / PMPI_Dist_graph_create(comm_old: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_in: *const c_int, _info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
        let name = "MPI_Dist_graph_create";
        let r = (|| {
            let c = lookup(comm_old, name)?;
            let size = c.ranks.len();
            // SAFETY: sources and degrees hold n ints (C contract).
            let (s, deg) = unsafe { (ints(sources, n, MPI_ERR_ARG)?, ints(degrees, n, MPI_ERR_ARG)?) };
            let s = ranks_in(s, size)?;
            let total = deg.iter().try_fold(0usize, |a, &d| {
                usize::try_from(d).ok().and_then(|d| a.checked_add(d)).ok_or(MPI_ERR_ARG)
            })?;
            let total_c = c_int::try_from(total).map_err(|_| MPI_ERR_ARG)?;
            // SAFETY: destinations (and weights) hold sum(degrees) ints (C contract).
            let d = ranks_in(unsafe { ints(destinations, total_c, MPI_ERR_ARG) }?, size)?;
            // SAFETY: as above.
            let w = unsafe { weights(weights_in, total) }?;
            if comm_dist_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let mut mine = Vec::with_capacity(12 * total);
            let mut k = 0;
            for (i, &src) in s.iter().enumerate() {
                for _ in 0..deg[i] {
                    for x in [src as u32, d[k] as u32, w[k] as u32] {
                        mine.extend_from_slice(&x.to_le_bytes());
                    }
                    k += 1;
                }
            }
            let edges = gather_edges(&c, &mine, name)?;
            let g = DistGraph::from_edges(c.rank as usize, &edges, weighted(weights_in));
            create_dist(comm_old, g, name)
        })();
        // SAFETY: comm_dist_graph is NULL or an MPI_Comm by the C contract; a failure leaves
        // MPI_COMM_NULL there (MPICH's errors/topo/cartsmall tests for it).
        let r = unsafe { comm::put_comm(comm_dist_graph, r) };
        finish(comm_old, name, r)
    }
}

/// Every process's edges (12 bytes each: source, destination, weight), in rank
/// order (collective).
fn gather_edges(c: &comm::CommRef, mine: &[u8], name: &str) -> Result<Vec<Edge>, c_int> {
    let n = c.ranks.len();
    let mut p = pt2pt(c);
    let mut lens = vec![0u8; 8 * n];
    coll::allgather(&mut p, &(mine.len() as u64).to_le_bytes(), &mut lens)
        .map_err(|e| coll_code(&e, name))?;
    let counts: Vec<usize> = lens
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize)
        .collect();
    let (displs, total) = coll::packed_displs(&counts).map_err(|e| coll_code(&e, name))?;
    let mut all = vec![0u8; total];
    coll::allgatherv(&mut p, mine, &mut all, &counts, &displs).map_err(|e| coll_code(&e, name))?;
    let u = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    Ok(all
        .chunks_exact(12)
        .map(|e| (u(&e[..4]) as usize, u(&e[4..8]) as usize, u(&e[8..]) as i32))
        .collect())
}

fn dist_of(comm: MPI_Comm, name: &str) -> Result<DistGraph, c_int> {
    match &*topo_of(comm, name)?.1 {
        Topology::DistGraph(g) => Ok(g.clone()),
        _ => Err(MPI_ERR_TOPOLOGY),
    }
}

mpi_fn! {
    fn MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count(comm: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted_out: *mut c_int) -> c_int {
        let name = "MPI_Dist_graph_neighbors_count";
        let r = dist_of(comm, name).and_then(|g| {
            // SAFETY: the three are NULL or ints.
            unsafe {
                put(indegree, g.sources.len() as c_int)?;
                put(outdegree, g.destinations.len() as c_int)?;
                put(weighted_out, c_int::from(g.weighted))
            }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors(comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int {
        let name = "MPI_Dist_graph_neighbors";
        let r = dist_of(comm, name).and_then(|g| {
            // SAFETY: each array holds its max count of ints (C contract); weights
            // are written only when the graph is weighted and they are real arrays.
            unsafe {
                put_ints(sources, maxindegree, g.sources.iter().map(|&x| x as c_int))?;
                put_ints(destinations, maxoutdegree, g.destinations.iter().map(|&x| x as c_int))?;
                if g.weighted && weighted(sourceweights) && !sourceweights.is_null() {
                    put_ints(sourceweights, maxindegree, g.source_weights.iter().copied())?;
                }
                if g.weighted && weighted(destweights) && !destweights.is_null() {
                    put_ints(destweights, maxoutdegree, g.dest_weights.iter().copied())?;
                }
            }
            Ok(())
        });
        finish(comm, name, r)
    }
}

//! Process topologies as arithmetic: MPI_Dims_create's balanced factorization,
//! Cartesian rank <-> coordinates, shifts (periodic or not), sub-grids, graph and
//! distributed-graph adjacency, and the neighbour lists the neighbourhood
//! collectives walk.
//!
//! Sans-IO: nothing here communicates or touches C memory; the C layer
//! (`myrix-mpiapi`'s `topo.rs`) validates C arguments into these types and does the
//! communication. Never panics on any input (errors are [`TopoError`]).

use std::fmt;

/// The first tag of the neighbourhood collectives on a communicator's collective
/// context, far above the fixed tags of `coll::tags`. A Cartesian exchange tags
/// each message with the receiver's neighbour slot (`NEIGHBOR_TAG + slot`), so two
/// messages between the same pair of ranks (a periodic dimension of size 1 or 2)
/// land in the right slots; graph exchanges use `NEIGHBOR_TAG` alone and rely on
/// point-to-point's non-overtaking order.
pub const NEIGHBOR_TAG: i32 = 0x2000_0000;

/// Why a topology argument is refused; the C layer maps each to an MPI error class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopoError {
    /// A dimension count or size is invalid (MPI_ERR_DIMS).
    Dims(String),
    /// Another argument is invalid (MPI_ERR_ARG).
    Arg(String),
    /// A rank is out of range (MPI_ERR_RANK).
    Rank(i64),
}

impl fmt::Display for TopoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopoError::Dims(s) | TopoError::Arg(s) => f.write_str(s),
            TopoError::Rank(r) => write!(f, "rank {r} is out of range"),
        }
    }
}

/// MPI_Dims_create: fills the zero entries of `dims` so that the product of all
/// entries is `nnodes`, the filled entries as close to each other as possible
/// (smallest spread between the largest and smallest, then smallest sum of
/// squares) and in non-increasing order; non-zero entries are kept.
pub fn dims_create(nnodes: i64, dims: &mut [i64]) -> Result<(), TopoError> {
    if nnodes < 1 {
        return Err(TopoError::Arg(format!("nnodes {nnodes} is not positive")));
    }
    let mut fixed: i64 = 1;
    let mut free = 0usize;
    for &d in dims.iter() {
        match d {
            d if d < 0 => return Err(TopoError::Dims(format!("dimension {d} is negative"))),
            0 => free += 1,
            d => fixed = fixed.saturating_mul(d),
        }
    }
    if nnodes % fixed != 0 {
        return Err(TopoError::Dims(format!(
            "{nnodes} nodes are not a multiple of the given dimensions' product {fixed}"
        )));
    }
    let m = nnodes / fixed;
    if free == 0 {
        return if m == 1 {
            Ok(())
        } else {
            Err(TopoError::Dims(format!(
                "the given dimensions' product {fixed} is not {nnodes}"
            )))
        };
    }
    let factors = balanced(m, free);
    let mut it = factors.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().unwrap_or(1);
    }
    Ok(())
}

/// The most balanced split of `m` into `k` factors, non-increasing.
fn balanced(m: i64, k: usize) -> Vec<i64> {
    let divs = divisors(m);
    let mut best: Option<Vec<i64>> = None;
    let mut cur = Vec::with_capacity(k);
    search(m, k, m, &divs, &mut cur, &mut best);
    best.unwrap_or_else(|| {
        let mut v = vec![1; k];
        v[0] = m;
        v
    })
}

/// Whether `a` beats `b`: the smaller spread between the largest and smallest
/// factor, then, among equal spreads, the larger smallest factor, then the larger
/// next-smallest and so on. That is MPICH's answer (its test topo/dims5 lists
/// 75 000 of them): 21x16x15 over 20x18x14 for 5040 in three dimensions, 5x2x2x1
/// over 5x4x1x1 for 20 in four.
fn better(a: &[i64], b: &[i64]) -> bool {
    let spread = |v: &[i64]| v[0] - v[v.len() - 1];
    match spread(a).cmp(&spread(b)) {
        std::cmp::Ordering::Equal => a.iter().rev().gt(b.iter().rev()),
        o => o.is_lt(),
    }
}

/// Depth-first over non-increasing factor lists: each factor at most `cap` and at
/// least the `left`-th root of what remains (else a later factor would exceed it).
fn search(
    rem: i64,
    left: usize,
    cap: i64,
    divs: &[i64],
    cur: &mut Vec<i64>,
    best: &mut Option<Vec<i64>>,
) {
    if left == 1 {
        if rem <= cap {
            cur.push(rem);
            if best.as_ref().is_none_or(|b| better(cur, b)) {
                *best = Some(cur.clone());
            }
            cur.pop();
        }
        return;
    }
    // `divs` is ascending: start at the largest divisor not above `cap`.
    let top = divs.partition_point(|&d| d <= cap);
    for &d in divs[..top].iter().rev() {
        if rem % d != 0 {
            continue;
        }
        // d^left < rem means the remaining factors cannot all be <= d.
        if (d as i128)
            .checked_pow(left as u32)
            .is_some_and(|p| p < rem as i128)
        {
            break;
        }
        cur.push(d);
        search(rem / d, left - 1, d, divs, cur, best);
        cur.pop();
    }
}

fn divisors(m: i64) -> Vec<i64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i = 1;
    while i * i <= m {
        if m % i == 0 {
            small.push(i);
            if i * i != m {
                large.push(m / i);
            }
        }
        i += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

/// A Cartesian grid: the size and periodicity of each dimension, row-major ranks
/// (the last dimension varies fastest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<usize>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// Checks the dimensions (each at least 1, at most `size` ranks in all).
    pub fn new(dims: &[i64], periods: &[bool], size: usize) -> Result<Cart, TopoError> {
        let mut n: usize = 1;
        let mut ds = Vec::with_capacity(dims.len());
        for &d in dims {
            let d = usize::try_from(d)
                .ok()
                .filter(|&d| d >= 1)
                .ok_or_else(|| TopoError::Dims(format!("dimension {d} is not positive")))?;
            n = n.saturating_mul(d);
            ds.push(d);
        }
        if n > size {
            return Err(TopoError::Arg(format!(
                "the grid has {n} ranks, the communicator {size}"
            )));
        }
        Ok(Cart {
            dims: ds,
            periods: periods.to_vec(),
        })
    }

    /// The number of ranks in the grid.
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }

    pub fn coords(&self, rank: usize) -> Result<Vec<usize>, TopoError> {
        if rank >= self.size() {
            return Err(TopoError::Rank(rank as i64));
        }
        let mut c = vec![0; self.dims.len()];
        let mut r = rank;
        for (i, &d) in self.dims.iter().enumerate().rev() {
            c[i] = r % d;
            r /= d;
        }
        Ok(c)
    }

    /// The rank at `coords`; a coordinate out of range wraps in a periodic
    /// dimension and is an error in another.
    pub fn rank(&self, coords: &[i64]) -> Result<usize, TopoError> {
        if coords.len() != self.dims.len() {
            return Err(TopoError::Dims("wrong number of coordinates".into()));
        }
        let mut r = 0usize;
        for ((&c, &d), &p) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let c = self.wrap(c, d, p).ok_or(TopoError::Rank(c))?;
            r = r * d + c;
        }
        Ok(r)
    }

    fn wrap(&self, c: i64, d: usize, periodic: bool) -> Option<usize> {
        let d = d as i64;
        if periodic {
            Some(c.rem_euclid(d) as usize)
        } else if (0..d).contains(&c) {
            Some(c as usize)
        } else {
            None
        }
    }

    /// MPI_Cart_shift: `(source, dest)` of `rank` for a shift by `disp` along
    /// `dim`; `None` where the shift leaves a non-periodic dimension.
    pub fn shift(
        &self,
        rank: usize,
        dim: usize,
        disp: i64,
    ) -> Result<(Option<usize>, Option<usize>), TopoError> {
        let d = *self
            .dims
            .get(dim)
            .ok_or_else(|| TopoError::Dims(format!("direction {dim} is not a dimension")))?;
        let c = self.coords(rank)?;
        let at = |off: i64| -> Option<usize> {
            let mut cc: Vec<i64> = c.iter().map(|&x| x as i64).collect();
            cc[dim] = cc[dim].checked_add(off)?;
            self.wrap(cc[dim], d, self.periods[dim])?;
            self.rank(&cc).ok()
        };
        Ok((at(disp.checked_neg().unwrap_or(i64::MAX)), at(disp)))
    }

    /// MPI_Cart_sub: the grid of the kept dimensions, and for `rank` its
    /// `(color, key)`: ranks sharing the dropped coordinates share a color; the key
    /// is the rank in the sub-grid.
    pub fn sub(&self, rank: usize, remain: &[bool]) -> Result<(Cart, usize, usize), TopoError> {
        if remain.len() != self.dims.len() {
            return Err(TopoError::Dims("wrong number of remain_dims".into()));
        }
        let c = self.coords(rank)?;
        let (mut color, mut key) = (0usize, 0usize);
        let mut sub = Cart {
            dims: Vec::new(),
            periods: Vec::new(),
        };
        for i in 0..self.dims.len() {
            if remain[i] {
                key = key * self.dims[i] + c[i];
                sub.dims.push(self.dims[i]);
                sub.periods.push(self.periods[i]);
            } else {
                color = color * self.dims[i] + c[i];
            }
        }
        Ok((sub, color, key))
    }

    /// The neighbours of the neighbourhood collectives: per dimension the rank at
    /// -1 then at +1 (`None`: MPI_PROC_NULL). Sources and destinations are the same.
    pub fn neighbors(&self, rank: usize) -> Result<Vec<Option<usize>>, TopoError> {
        let mut v = Vec::with_capacity(2 * self.dims.len());
        for d in 0..self.dims.len() {
            let (src, dst) = self.shift(rank, d, 1)?;
            v.push(src);
            v.push(dst);
        }
        Ok(v)
    }
}

/// An MPI_Graph_create graph: `index[i]` is the end of node `i`'s edges in `edges`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub index: Vec<usize>,
    pub edges: Vec<usize>,
}

impl Graph {
    /// Checks `index` (non-decreasing) and `edges` (nodes below `nnodes`), with
    /// `nnodes` at most `size`.
    pub fn new(index: &[i64], edges: &[i64], size: usize) -> Result<Graph, TopoError> {
        let n = index.len();
        if n > size {
            return Err(TopoError::Arg(format!(
                "the graph has {n} nodes, the communicator {size} ranks"
            )));
        }
        let mut prev = 0usize;
        let mut idx = Vec::with_capacity(n);
        for &i in index {
            let i = usize::try_from(i)
                .ok()
                .filter(|&i| i >= prev)
                .ok_or_else(|| TopoError::Arg(format!("index {i} is not non-decreasing")))?;
            idx.push(i);
            prev = i;
        }
        if prev != edges.len() {
            return Err(TopoError::Arg(format!(
                "index ends at {prev}, {} edges were given",
                edges.len()
            )));
        }
        let edges = edges
            .iter()
            .map(|&e| {
                usize::try_from(e)
                    .ok()
                    .filter(|&e| e < n)
                    .ok_or(TopoError::Rank(e))
            })
            .collect::<Result<_, _>>()?;
        Ok(Graph { index: idx, edges })
    }

    pub fn nnodes(&self) -> usize {
        self.index.len()
    }

    pub fn neighbors(&self, rank: usize) -> Result<&[usize], TopoError> {
        if rank >= self.nnodes() {
            return Err(TopoError::Rank(rank as i64));
        }
        let lo = if rank == 0 { 0 } else { self.index[rank - 1] };
        Ok(&self.edges[lo..self.index[rank]])
    }
}

/// One rank's view of a distributed graph: where its messages come from and go to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DistGraph {
    pub sources: Vec<usize>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<usize>,
    pub dest_weights: Vec<i32>,
    pub weighted: bool,
}

/// `(src, dst, weight)` edges, as MPI_Dist_graph_create gathers them.
pub type Edge = (usize, usize, i32);

impl DistGraph {
    /// The view of `rank` from every edge of the graph, in the given order (each
    /// rank sees the same order, so multiple edges between two ranks pair up).
    pub fn from_edges(rank: usize, edges: &[Edge], weighted: bool) -> DistGraph {
        let mut g = DistGraph {
            weighted,
            ..DistGraph::default()
        };
        for &(s, d, w) in edges {
            if s == rank {
                g.destinations.push(d);
                g.dest_weights.push(w);
            }
            if d == rank {
                g.sources.push(s);
                g.source_weights.push(w);
            }
        }
        g
    }
}

/// A communicator's topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

/// Whom a neighbourhood collective receives from and sends to (`None`:
/// MPI_PROC_NULL, nothing moves), and the tag of each message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbors {
    pub sources: Vec<Option<usize>>,
    pub dests: Vec<Option<usize>>,
    /// The tag to receive source slot `i` with.
    pub recv_tags: Vec<i32>,
    /// The tag to send destination slot `i` with.
    pub send_tags: Vec<i32>,
}

impl Topology {
    pub fn neighbors(&self, rank: usize) -> Result<Neighbors, TopoError> {
        match self {
            Topology::Cart(c) => {
                let v = c.neighbors(rank)?;
                let n = v.len() as i32;
                // Slot 2d is the -1 neighbour; what I send it arrives in its slot
                // 2d + 1 (I am its +1 neighbour), and the reverse.
                let recv_tags = (0..n).map(|j| NEIGHBOR_TAG + j).collect();
                let send_tags = (0..n).map(|j| NEIGHBOR_TAG + (j ^ 1)).collect();
                Ok(Neighbors {
                    sources: v.clone(),
                    dests: v,
                    recv_tags,
                    send_tags,
                })
            }
            Topology::Graph(g) => {
                let v: Vec<Option<usize>> = g.neighbors(rank)?.iter().map(|&r| Some(r)).collect();
                Ok(Neighbors {
                    recv_tags: vec![NEIGHBOR_TAG; v.len()],
                    send_tags: vec![NEIGHBOR_TAG; v.len()],
                    sources: v.clone(),
                    dests: v,
                })
            }
            Topology::DistGraph(g) => Ok(Neighbors {
                sources: g.sources.iter().map(|&r| Some(r)).collect(),
                dests: g.destinations.iter().map(|&r| Some(r)).collect(),
                recv_tags: vec![NEIGHBOR_TAG; g.sources.len()],
                send_tags: vec![NEIGHBOR_TAG; g.destinations.len()],
            }),
        }
    }
}

#[cfg(test)]
#[path = "topo_tests.rs"]
mod tests;

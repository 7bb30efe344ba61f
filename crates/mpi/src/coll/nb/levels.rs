//! Nonblocking collectives by levels, for a communicator whose ranks are on
//! several nodes: one schedule chains a step among the ranks of each node, a step
//! among one rank per node (its *leader*: the node's lowest rank in the
//! communicator) and another step inside the node, with fences between them
//! ([`Builder::group`] switches the ranks the steps name). Every message stays on
//! the communicator's collective context and the collective's tag: two ranks of
//! one node talk in the node steps only, two leaders in the leader step only, and
//! each step's messages between two ranks are posted in the same order on both
//! sides, so MPI's non-overtaking rule pairs them as in a flat schedule.
//!
//! Nothing here needs a communicator of its own, so starting one is as local as
//! starting a flat schedule (a nonblocking call must not wait for the others).
//! The node map comes from the caller ([`Layout::new`]). Reductions by levels
//! change the order of the operands: commutative operations only (the caller's
//! choice).

use super::build::{self, Block};
use super::sched::{Buf, Builder};
use crate::coll::CollError;

/// Ranks grouped by node: nodes in the order of their first rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeMap {
    /// Per rank: the index of its node.
    pub node_of: Vec<usize>,
    /// Per rank: its rank in its node.
    pub rank_in_node: Vec<usize>,
    /// Per node: its ranks, in order.
    pub members: Vec<Vec<usize>>,
}

impl NodeMap {
    /// The map of ranks `0..nodes.len()`, rank `r` on node id `nodes[r]`.
    pub fn new(nodes: &[u32]) -> NodeMap {
        let mut ids: Vec<u32> = Vec::new();
        let mut m = NodeMap {
            node_of: Vec::with_capacity(nodes.len()),
            rank_in_node: Vec::with_capacity(nodes.len()),
            members: Vec::new(),
        };
        for (r, n) in nodes.iter().enumerate() {
            let i = match ids.iter().position(|x| x == n) {
                Some(i) => i,
                None => {
                    ids.push(*n);
                    m.members.push(Vec::new());
                    ids.len() - 1
                }
            };
            m.rank_in_node.push(m.members[i].len());
            m.members[i].push(r);
            m.node_of.push(i);
        }
        m
    }
}

/// Where the ranks of a communicator are, node by node, as one rank sees it.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Per communicator rank: the index of its node (nodes in the order of their
    /// first rank).
    node_of: Vec<usize>,
    /// Per communicator rank: its rank in its node.
    rank_in_node: Vec<usize>,
    /// Per node: its communicator ranks, in order.
    members: Vec<Vec<usize>>,
    /// World ranks of this rank's node, and of the leaders.
    node_world: Vec<u32>,
    leaders_world: Vec<u32>,
    me: usize,
}

impl Layout {
    /// The layout of the communicator of world ranks `ranks` (this rank `me`), rank
    /// `r` on node `nodes[r]`; `None` when levels would not help: one node, or one
    /// rank per node.
    pub fn new(ranks: &[u32], me: usize, nodes: &[u32]) -> Option<Layout> {
        if nodes.len() != ranks.len() || me >= ranks.len() {
            return None;
        }
        let NodeMap {
            node_of,
            rank_in_node,
            members,
        } = NodeMap::new(nodes);
        if members.len() < 2 || members.len() == nodes.len() {
            return None;
        }
        let node_world = members[node_of[me]].iter().map(|&r| ranks[r]).collect();
        let leaders_world = members.iter().map(|m| ranks[m[0]]).collect();
        Some(Layout {
            node_of,
            rank_in_node,
            members,
            node_world,
            leaders_world,
            me,
        })
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.members.len()
    }

    fn size(&self) -> usize {
        self.node_of.len()
    }

    fn my_node(&self) -> usize {
        self.node_of[self.me]
    }

    fn is_leader(&self) -> bool {
        self.rank_in_node[self.me] == 0
    }

    fn node<'r>(&'r self, b: &mut Builder<'r>) {
        b.group(&self.node_world, self.rank_in_node[self.me]);
    }

    fn leaders<'r>(&'r self, b: &mut Builder<'r>) {
        b.group(&self.leaders_world, self.my_node());
    }

    /// The communicator ranks node after node, and each one's place in that order.
    fn order(&self) -> Vec<usize> {
        self.members.concat()
    }
}

fn check_root(l: &Layout, root: usize) -> Result<(), CollError> {
    if root < l.size() {
        Ok(())
    } else {
        Err(CollError::Root {
            root,
            size: l.size(),
        })
    }
}

/// MPI_Ibarrier: the node's ranks signal their leader, the leaders run a
/// dissemination barrier, the leaders release their ranks.
pub fn barrier<'r>(b: &mut Builder<'r>, l: &'r Layout) {
    let none = b.scratch(0);
    l.node(b);
    let k = b.size();
    if l.is_leader() {
        for r in 1..k {
            b.recv(r, none, 0, 0);
        }
        b.fence();
        l.leaders(b);
        build::barrier(b);
        l.node(b);
        for r in 1..k {
            b.send(r, none, 0, 0);
        }
    } else {
        b.send(0, none, 0, 0);
        b.fence();
        b.recv(0, none, 0, 0);
    }
    b.fence();
    b.whole();
}

/// MPI_Ibcast from `root` of region `buf`: inside the root's node, then among the
/// leaders, then inside every other node.
pub fn bcast<'r>(
    b: &mut Builder<'r>,
    l: &'r Layout,
    root: usize,
    buf: Buf,
) -> Result<(), CollError> {
    check_root(l, root)?;
    let root_node = l.node_of[root];
    if l.my_node() == root_node {
        l.node(b);
        build::bcast(b, l.rank_in_node[root], buf)?;
    }
    if l.is_leader() {
        l.leaders(b);
        build::bcast(b, root_node, buf)?;
    }
    if l.my_node() != root_node {
        l.node(b);
        build::bcast(b, 0, buf)?;
    }
    b.whole();
    Ok(())
}

/// MPI_Ireduce (commutative op) of `len` bytes: the node's reduction at its
/// leader, the leaders' at the root's leader, handed to the root if it is not a
/// leader. `recv` matters at the root only; in place there: `recv == send`.
pub fn reduce<'r>(
    b: &mut Builder<'r>,
    l: &'r Layout,
    root: usize,
    send: Buf,
    recv: Buf,
    len: usize,
) -> Result<(), CollError> {
    check_root(l, root)?;
    let root_node = l.node_of[root];
    let me = l.me;
    let root_leads = l.rank_in_node[root] == 0;
    l.node(b);
    if !l.is_leader() {
        build::reduce(b, 0, send, send, len, true)?;
        if me == root {
            b.recv(0, recv, 0, len);
            b.fence();
        }
        b.whole();
        return Ok(());
    }
    // The node's result: the root's buffer when this leader is the root.
    let acc = if me == root { recv } else { b.scratch(len) };
    build::reduce(b, 0, send, acc, len, true)?;
    l.leaders(b);
    let out = if l.my_node() == root_node && !root_leads {
        b.scratch(len)
    } else {
        acc
    };
    build::reduce(b, root_node, acc, out, len, true)?;
    if l.my_node() == root_node && !root_leads {
        l.node(b);
        b.send(l.rank_in_node[root], out, 0, len);
        b.fence();
    }
    b.whole();
    Ok(())
}

/// MPI_Iallreduce (commutative op) of `len` bytes: the node's reduction at its
/// leader, the leaders' allreduce, the node's broadcast. In place: `recv == send`.
pub fn allreduce<'r>(
    b: &mut Builder<'r>,
    l: &'r Layout,
    send: Buf,
    recv: Buf,
    len: usize,
) -> Result<(), CollError> {
    l.node(b);
    build::reduce(b, 0, send, recv, len, true)?;
    if l.is_leader() {
        l.leaders(b);
        build::allreduce(b, recv, recv, len);
        l.node(b);
    }
    build::bcast(b, 0, recv)?;
    b.whole();
    Ok(())
}

/// MPI_Iallgather(v): rank `r`'s block lands in every rank's `recv[r]`; `send`
/// None: in place (this rank's block is in `recv` already). The blocks gather
/// node after node in scratch (the node's at its leader, then every node's at
/// every leader), the node's leader broadcasts the whole, and each rank copies the
/// blocks to their places.
pub fn allgatherv<'r>(
    b: &mut Builder<'r>,
    l: &'r Layout,
    send: Option<Block>,
    recv: &[Block],
) -> Result<(), CollError> {
    let n = l.size();
    if recv.len() != n {
        return Err(CollError::Args(format!(
            "allgatherv: {} blocks for {n} ranks",
            recv.len()
        )));
    }
    let order = l.order();
    // Each rank's offset in the scratch, node after node.
    let mut off = vec![0usize; n];
    let mut at = 0usize;
    for &r in &order {
        off[r] = at;
        at = at
            .checked_add(recv[r].len)
            .ok_or_else(|| CollError::Args("allgatherv: too many bytes".into()))?;
    }
    let all = b.scratch(at);
    let me = l.me;
    let own = send.unwrap_or(recv[me]);
    if own.len != recv[me].len {
        return Err(CollError::Length {
            from: me,
            expected: recv[me].len,
            got: own.len,
        });
    }
    b.copy(own.buf, own.off, all, off[me], own.len);
    let blk = |r: usize| Block {
        buf: all,
        off: off[r],
        len: recv[r].len,
    };
    let mine = &l.members[l.my_node()];
    let node_blocks: Vec<Block> = mine.iter().map(|&r| blk(r)).collect();
    l.node(b);
    build::gatherv(b, 0, Some(blk(me)), &node_blocks)?;
    if l.is_leader() {
        let whole: Vec<Block> = l
            .members
            .iter()
            .map(|m| Block {
                buf: all,
                off: off[m[0]],
                len: m.iter().map(|&r| recv[r].len).sum(),
            })
            .collect();
        l.leaders(b);
        build::allgatherv(b, None, &whole)?;
        l.node(b);
    }
    build::bcast(b, 0, all)?;
    b.whole();
    for (r, rb) in recv.iter().enumerate() {
        if r != me || send.is_some() {
            b.copy(all, off[r], rb.buf, rb.off, rb.len);
        }
    }
    Ok(())
}

/// MPI_Ialltoall with blocks of `blen` bytes: `send[j]` of every rank goes to
/// rank `j`'s `recv[i]` (`i` the sender). The node's send buffers gather at its
/// leader, the leaders exchange for each pair of nodes every block one node's
/// ranks send the other's, and each leader scatters its ranks' rows. For small
/// blocks: each block is copied three more times than flat.
pub fn alltoall<'r>(
    b: &mut Builder<'r>,
    l: &'r Layout,
    send: &[Block],
    recv: &[Block],
    blen: usize,
) -> Result<(), CollError> {
    let n = l.size();
    if send.len() != n || recv.len() != n || send.iter().chain(recv).any(|x| x.len != blen) {
        return Err(CollError::Args(format!(
            "alltoall: {} send and {} receive blocks for {n} ranks of {blen} bytes",
            send.len(),
            recv.len()
        )));
    }
    let mine = l.my_node();
    let nsz = l.members[mine].len();
    let row = blen
        .checked_mul(n)
        .ok_or_else(|| CollError::Args("alltoall: too many bytes".into()))?;
    // This rank's row: its blocks for every rank, in communicator order.
    let myrow = b.scratch(row);
    for (j, s) in send.iter().enumerate() {
        b.copy(s.buf, s.off, myrow, j * blen, blen);
    }
    let got = b.scratch(row);
    l.node(b);
    if !l.is_leader() {
        b.send(0, myrow, 0, row);
        b.fence();
        b.recv(0, got, 0, row);
        b.fence();
    } else {
        // The node's rows (member k's at k * row), then by destination node.
        let rows = b.scratch(row * nsz);
        b.copy(myrow, 0, rows, 0, row);
        for k in 1..nsz {
            b.recv(k, rows, k * row, row);
        }
        b.fence();
        let nodes = l.nodes();
        // To node d: for each of our ranks k, its blocks for d's ranks.
        let out = b.scratch(row * nsz);
        let inn = b.scratch(row * nsz);
        let (mut so, mut sblocks, mut rblocks) = (0, Vec::new(), Vec::new());
        for m in &l.members {
            let start = so;
            for k in 0..nsz {
                for &r in m {
                    b.copy(rows, k * row + r * blen, out, so, blen);
                    so += blen;
                }
            }
            sblocks.push(Block {
                buf: out,
                off: start,
                len: so - start,
            });
        }
        let mut ro = 0;
        for m in &l.members {
            rblocks.push(Block {
                buf: inn,
                off: ro,
                len: m.len() * nsz * blen,
            });
            ro += m.len() * nsz * blen;
        }
        debug_assert_eq!(sblocks.len(), nodes);
        l.leaders(b);
        build::alltoallv(b, &sblocks, &rblocks)?;
        // From node s: for each of its ranks (the source), its blocks for our ranks
        // k; rank k's row holds the sources in communicator order.
        let back = b.scratch(row * nsz);
        for (s, m) in l.members.iter().enumerate() {
            for (js, &src) in m.iter().enumerate() {
                for k in 0..nsz {
                    let from = rblocks[s].off + (js * nsz + k) * blen;
                    b.copy(inn, from, back, k * row + src * blen, blen);
                }
            }
        }
        l.node(b);
        for k in 1..nsz {
            b.send(k, back, k * row, row);
        }
        b.copy(back, 0, got, 0, row);
        b.fence();
    }
    b.whole();
    for (i, r) in recv.iter().enumerate() {
        b.copy(got, i * blen, r.buf, r.off, blen);
    }
    Ok(())
}

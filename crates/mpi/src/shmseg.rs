//! The OS side of [`crate::coll::shm`]: the set-up of a communicator's shared
//! segment, shared by the C library (`myrix-mpiapi`'s `coll_shm.rs`) and the Rust
//! API ([`crate::comm::Comm`]).
//!
//! At the first collective on a communicator its ranks exchange their node ids
//! (an allgather over the communicator's collective point-to-point); when every
//! rank is on this node, rank 0 creates and publishes one RSM `shm` segment
//! (geometry from [`Params`], rank 0's values win) and broadcasts its id, the
//! others import and map it, and an allgather of everyone's success decides, alike
//! on every rank, whether the communicator's collectives use it. Large blocks then
//! move in one copy between the ranks' memories when every rank can read every
//! other's ([`crate::cma`]). A communicator of one rank uses heap memory.

use crate::cma;
use crate::coll::shm::{heap::HeapMem, Geometry, SharedMem, ShmColl};
use crate::coll::{self, Pt2Pt};
use myrix_rsm::{Controller, Export, ExportFlags, Import, Mapping, NodeId, Perm, SegmentId};

/// The default slot when the job has more ranks on this host than cores.
pub const OVERSUBSCRIBED_SLOT: usize = 256 * 1024;

/// The tunables of a segment and of its collectives (environment variables; `None`:
/// the default).
#[derive(Debug, Clone, Default)]
pub struct Params {
    /// `MYRIX_MPI_SHM_SLOT`, `MYRIX_MPI_SHM_DEPTH`: the geometry.
    pub slot: Option<usize>,
    pub depth: Option<usize>,
    /// `MYRIX_MPI_SHM_SPIN`, `MYRIX_MPI_SHM_SPIN_OVER`: polls before a wait yields.
    pub hard_spin: Option<usize>,
    pub hard_spin_over: Option<usize>,
    /// `MYRIX_MPI_SHM_SPLIT`: the smallest chunk a reduction splits among the ranks.
    pub split_min: Option<usize>,
    /// `MYRIX_MPI_SHM_DIRECT`: the smallest block copied in one copy between the
    /// ranks' memories; None: off (`off` or `never`).
    pub direct_min: Option<usize>,
    /// `MYRIX_MPI_SHM_REDUCE_SOLO`: MPI_Reduce through the slots, combined by the
    /// root alone, while ranks × the message is at most these bytes (default:
    /// [`coll::shm::REDUCE_SOLO_OVER`] when the job has more ranks than cores, else
    /// 0, never).
    pub reduce_solo: Option<usize>,
}

/// A size from the environment: a number of bytes, with `k` or `m` for KiB or MiB;
/// `warn` hears about a value that is not one (then ignored).
pub fn env_size(name: &str, warn: &dyn Fn(&str)) -> Option<usize> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let (num, mul) = match v.as_bytes().last()? {
        b'k' | b'K' => (&v[..v.len() - 1], 1024),
        b'm' | b'M' => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    match num.parse::<usize>() {
        Ok(n) => n.checked_mul(mul),
        Err(_) => {
            warn(&format!("myrix MPI: {name}={v} is not a size; ignored"));
            None
        }
    }
}

impl Params {
    /// The tunables the environment sets; `warn` hears about values ignored.
    pub fn from_env(warn: &dyn Fn(&str)) -> Params {
        Params {
            slot: env_size("MYRIX_MPI_SHM_SLOT", warn),
            depth: env_size("MYRIX_MPI_SHM_DEPTH", warn),
            hard_spin: env_size("MYRIX_MPI_SHM_SPIN", warn),
            hard_spin_over: env_size("MYRIX_MPI_SHM_SPIN_OVER", warn),
            split_min: env_size("MYRIX_MPI_SHM_SPLIT", warn),
            direct_min: match std::env::var("MYRIX_MPI_SHM_DIRECT").as_deref() {
                Ok("off") | Ok("never") => None,
                _ => Some(env_size("MYRIX_MPI_SHM_DIRECT", warn).unwrap_or(coll::shm::DIRECT_MIN)),
            },
            reduce_solo: env_size("MYRIX_MPI_SHM_REDUCE_SOLO", warn),
        }
    }
}

/// The segment of a communicator, as this rank holds it.
enum Segment {
    Exported(Export),
    Imported(#[allow(dead_code)] Import, Mapping),
    Heap(HeapMem),
}

impl SharedMem for Segment {
    fn ptr(&self) -> *mut u8 {
        match self {
            Segment::Exported(e) => e.as_ptr(),
            Segment::Imported(_, m) => m.as_ptr(),
            Segment::Heap(h) => h.ptr(),
        }
    }
    fn len(&self) -> usize {
        match self {
            Segment::Exported(e) => e.len(),
            Segment::Imported(_, m) => m.len(),
            Segment::Heap(h) => h.len(),
        }
    }
}

/// Sets up the segment of the communicator `p` is the collective point-to-point of
/// (collective over it); `node` is this process's node id. None when its ranks are
/// not all on this node or something failed (then alike on every rank); `debug`
/// hears why.
pub fn setup(p: &mut dyn Pt2Pt, node: u32, cfg: &Params, debug: &dyn Fn(&str)) -> Option<ShmColl> {
    let mut s = setup_segment(p, node, cfg, debug)?;
    if let Some(polls) = cfg.hard_spin {
        s.set_hard_spin(polls.min(u32::MAX as usize) as u32);
    }
    if let Some(polls) = cfg.hard_spin_over {
        s.set_hard_spin_over(polls.min(u32::MAX as usize) as u32);
    }
    Some(s)
}

fn setup_segment(
    p: &mut dyn Pt2Pt,
    node: u32,
    cfg: &Params,
    debug: &dyn Fn(&str),
) -> Option<ShmColl> {
    let (n, me) = (p.size(), p.rank());
    if n == 1 {
        let g = Geometry::new(1);
        let h = HeapMem::new(g.len());
        return ShmColl::new(Box::new(Segment::Heap(h)), g, 0).ok();
    }
    let mut nodes = vec![0u8; 4 * n];
    coll::allgather(p, &node.to_le_bytes(), &mut nodes).ok()?;
    if nodes.chunks_exact(4).any(|x| x != node.to_le_bytes()) {
        debug("ranks on other nodes");
        return None;
    }
    // Rank 0: [ok, rsm node, segment id, slot, depth, split (u32::MAX: never),
    // one-copy blocks from (u32::MAX: never), reduce by the root alone up to];
    // rank 0's values win, so every rank agrees.
    let mut card = [0u32; 8];
    let mut made: Result<Option<Segment>, String> = Ok(None);
    if me == 0 {
        // A job with more ranks than cores pays a few context switches per step:
        // fewer, larger steps (bigger slots, shallower) serve it better.
        let over = myrix_rsm::spin::job_oversubscribed();
        let (slot, depth) = if over {
            (OVERSUBSCRIBED_SLOT, 2)
        } else {
            (Geometry::SLOT, Geometry::DEPTH)
        };
        let g = Geometry {
            n,
            slot: cfg.slot.unwrap_or(slot),
            depth: cfg.depth.unwrap_or(depth),
        };
        made = export(&g).map(Some);
        if let Ok(Some(Segment::Exported(e))) = &made {
            if let (Some(id), Ok(ctl)) = (e.id(), Controller::get("shm")) {
                let split = cfg.split_min.unwrap_or(coll::shm::SPLIT_MIN);
                let split = u32::try_from(split).unwrap_or(u32::MAX);
                let direct = cfg
                    .direct_min
                    .map_or(u32::MAX, |d| u32::try_from(d).unwrap_or(u32::MAX));
                // Oversubscribed, a reduce of up to a slot is cheaper combined by the
                // root alone than split or in one copy: the others need not wait
                // for every rank's turn on a core (docs/mpi-coll.md).
                let solo =
                    cfg.reduce_solo
                        .unwrap_or(if over { coll::shm::REDUCE_SOLO_OVER } else { 0 });
                card = [
                    1,
                    ctl.local_node().0,
                    id.0,
                    g.slot as u32,
                    g.depth as u32,
                    split,
                    direct,
                    u32::try_from(solo).unwrap_or(u32::MAX),
                ];
            }
        }
    }
    let mut bytes: Vec<u8> = card.iter().flat_map(|v| v.to_le_bytes()).collect();
    coll::bcast(p, 0, &mut bytes).ok()?;
    for (i, w) in bytes.chunks_exact(4).enumerate() {
        card[i] = u32::from_le_bytes(w.try_into().ok()?);
    }
    let g = Geometry {
        n,
        slot: card[3] as usize,
        depth: card[4] as usize,
    };
    if me != 0 && card[0] == 1 {
        made = import(NodeId(card[1]), SegmentId(card[2])).map(Some);
    }
    let shm = match made {
        Ok(Some(seg)) if card[0] == 1 => ShmColl::new(Box::new(seg), g, me)
            .map(|mut s| {
                s.set_split_min(if card[5] == u32::MAX {
                    usize::MAX
                } else {
                    card[5] as usize
                });
                s.set_reduce_solo_max(card[7] as usize);
                s
            })
            .map_err(|e| e.to_string()),
        Ok(_) => Err("rank 0 made no segment".into()),
        Err(e) => Err(e),
    };
    // [ok, 0, 0, 0, pid, probe address] per rank.
    let (pid, probe) = cma::card();
    let mut ok = [0u8; 16];
    ok[0] = u8::from(shm.is_ok());
    ok[4..8].copy_from_slice(&pid.to_le_bytes());
    ok[8..].copy_from_slice(&probe.to_le_bytes());
    let mut oks = vec![0u8; 16 * n];
    coll::allgather(p, &ok, &mut oks).ok()?;
    match shm {
        Ok(mut s) if oks.chunks_exact(16).all(|x| x[0] == 1) => {
            if card[6] != u32::MAX {
                one_copy(p, &mut s, &oks, card[6] as usize, debug)?;
            }
            Some(s)
        }
        Ok(_) => {
            debug("another rank could not map the segment");
            None
        }
        Err(e) => {
            debug(&e);
            None
        }
    }
}

/// Gives `s` the one-copy way for blocks of `min` bytes or more when every rank can
/// read every other's memory (each probes each; an allgather of the verdicts, so
/// alike everywhere). `cards`: every rank's [ok, pid, probe address] of 16 bytes.
fn one_copy(
    p: &mut dyn Pt2Pt,
    s: &mut ShmColl,
    cards: &[u8],
    min: usize,
    debug: &dyn Fn(&str),
) -> Option<()> {
    let n = cards.len() / 16;
    let field = |q: usize, at: usize, len: usize| {
        let mut w = [0u8; 8];
        w[..len].copy_from_slice(&cards[16 * q + at..16 * q + at + len]);
        u64::from_le_bytes(w)
    };
    let pids: Vec<u32> = (0..n).map(|q| field(q, 4, 4) as u32).collect();
    let me = s.rank();
    let can = (0..n)
        .filter(|&q| q != me)
        .all(|q| cma::probe(pids[q], field(q, 8, 8)));
    let mut all = vec![0u8; n];
    coll::allgather(p, &[u8::from(can)], &mut all).ok()?;
    if all.iter().all(|&x| x == 1) {
        s.set_peer(Box::new(cma::Cma { pids }), min);
    } else {
        debug("large blocks through the segment's slots: a rank cannot read another's memory (process_vm_readv)");
    }
    Some(())
}

fn export(g: &Geometry) -> Result<Segment, String> {
    let ctl = Controller::get("shm").map_err(|e| format!("shm controller: {e}"))?;
    let page = ctl.attr().page_size;
    let len = g.len().div_ceil(page) * page;
    let e = ctl
        .export_create(len, ExportFlags::default())
        .map_err(|e| format!("segment of {len} bytes: {e}"))?;
    e.publish(None, &[])
        .map_err(|e| format!("publishing the segment: {e}"))?;
    Ok(Segment::Exported(e))
}

fn import(node: NodeId, id: SegmentId) -> Result<Segment, String> {
    let ctl = Controller::get("shm").map_err(|e| format!("shm controller: {e}"))?;
    let i = ctl
        .import_connect(node, id, Perm::RDWR)
        .map_err(|e| format!("importing segment {}: {e}", id.0))?;
    let m = i
        .map()
        .map_err(|e| format!("mapping segment {}: {e}", id.0))?;
    Ok(Segment::Imported(i, m))
}

//! The job as one rank sees it: rank, size, where the ranks run (node id, local rank
//! and size), and the key exchange through PMI that carries business cards.

use crate::pmi::client::{process_env, Env};
use crate::pmi::{Mode, PmiClient, PmiError};

/// The most ranks a process mapping is expanded for (bounds memory on hostile input).
pub const MAX_MAPPED_RANKS: u32 = 1 << 20;

/// This process's place in the job, and its PMI connection.
#[derive(Debug)]
pub struct Job {
    pmi: PmiClient,
    pub rank: u32,
    pub size: u32,
    pub local_rank: u32,
    pub local_size: u32,
    pub node_id: u32,
    pub nnodes: u32,
    /// The node of every rank, once known from the ranks' node identities
    /// ([`Job::set_layout`]); empty before.
    pub node_of: Vec<u32>,
}

/// Where ranks run: `node_of[rank]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub node_of: Vec<u32>,
}

impl Layout {
    /// Everything on node 0.
    pub fn one_node(size: u32) -> Layout {
        Layout {
            node_of: vec![0; size as usize],
        }
    }

    /// `(local_rank, local_size, node_id, nnodes)` of `rank`.
    pub fn place(&self, rank: u32) -> Option<(u32, u32, u32, u32)> {
        let node = *self.node_of.get(rank as usize)?;
        let before = self.node_of[..rank as usize]
            .iter()
            .filter(|&&n| n == node)
            .count() as u32;
        let here = self.node_of.iter().filter(|&&n| n == node).count() as u32;
        let mut nodes: Vec<u32> = self.node_of.clone();
        nodes.sort_unstable();
        nodes.dedup();
        Some((before, here, node, nodes.len() as u32))
    }
}

/// Parses MPICH's `PMI_process_mapping`, `(vector,(start,nodes,ppn),…)`, for a job of
/// `size` ranks: block `(s,n,p)` puts `p` consecutive ranks on each of the nodes
/// `s..s+n`; the blocks repeat until every rank is placed.
pub fn parse_process_mapping(text: &str, size: u32) -> Option<Layout> {
    if size > MAX_MAPPED_RANKS {
        return None;
    }
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = t.strip_prefix("(vector,")?.strip_suffix(')')?;
    let mut blocks = Vec::new();
    for part in inner.split("),(") {
        let part = part.trim_start_matches('(').trim_end_matches(')');
        let nums: Vec<u32> = part
            .split(',')
            .map(|n| n.parse().ok())
            .collect::<Option<_>>()?;
        let [s, n, p] = nums[..] else { return None };
        if n == 0 || p == 0 {
            return None;
        }
        blocks.push((s, n, p));
    }
    if blocks.is_empty() {
        return None;
    }
    let mut node_of = Vec::with_capacity(size as usize);
    'fill: loop {
        for &(s, n, p) in &blocks {
            for node in 0..n {
                for _ in 0..p {
                    if node_of.len() == size as usize {
                        break 'fill;
                    }
                    node_of.push(s.checked_add(node)?);
                }
            }
        }
        if size == 0 {
            break;
        }
    }
    Some(Layout { node_of })
}

/// Slurm's `SLURM_STEP_TASKS_PER_NODE`, e.g. `2(x3),1`, as tasks per node.
pub fn parse_slurm_tasks_per_node(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (count, rep) = match part.split_once("(x") {
            Some((c, r)) => (c, r.strip_suffix(')')?),
            None => (part, "1"),
        };
        let count: u32 = count.trim().parse().ok()?;
        let rep: u32 = rep.trim().parse().ok()?;
        if out.len() + rep as usize > MAX_MAPPED_RANKS as usize {
            return None;
        }
        out.extend(std::iter::repeat_n(count, rep as usize));
    }
    Some(out)
}

/// This process's node identity, `host/netns`: the host name and the inode of its
/// network namespace (`/proc/self/ns/net`). Ranks with different identities are
/// different nodes (they talk over the network, not shared memory), even under a
/// launcher that thinks they share a host (hydra with `ip netns exec`).
pub fn node_identity() -> String {
    use std::os::unix::fs::MetadataExt;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let ns = std::fs::metadata("/proc/self/ns/net").map_or(0, |m| m.ino());
    // The identity travels in PMI values: keep it free of separators and spaces.
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '|' && c != '/' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{host}/{ns}")
}

/// Node ids from every rank's identity: the index of the identity among the sorted
/// unique identities, so every rank computes the same ids.
pub fn assign_nodes(idents: &[String]) -> Vec<u32> {
    let mut uniq: Vec<&String> = idents.iter().collect();
    uniq.sort_unstable();
    uniq.dedup();
    idents
        .iter()
        .map(|i| uniq.binary_search(&i).expect("present") as u32)
        .collect()
}

/// The PMI key of `rank`'s card `name`.
fn card_key(name: &str, rank: u32) -> String {
    format!("myrix-{name}-{rank}")
}

fn env_u32(env: Env, key: &str) -> Option<u32> {
    env(key).and_then(|v| v.trim().parse().ok())
}

impl Job {
    /// Connects to the launcher named by the process environment (or runs as a
    /// singleton) and learns the layout.
    pub fn init() -> Result<Job, PmiError> {
        Job::init_with(&process_env)
    }

    /// As [`init`](Self::init), reading `env`.
    pub fn init_with(env: Env) -> Result<Job, PmiError> {
        let pmi = PmiClient::from_env(env)?;
        Ok(Job::from_client(pmi, env))
    }

    /// The layout from `PMI_process_mapping`, else the launcher's variables (hydra's
    /// `MPI_LOCALRANKID`/`MPI_LOCALNRANKS`, Slurm's `SLURM_LOCALID`/`SLURM_NODEID`/
    /// `SLURM_STEP_TASKS_PER_NODE`), else one node.
    pub fn from_client(mut pmi: PmiClient, env: Env) -> Job {
        let (rank, size) = (pmi.rank(), pmi.size());
        let mapped = match pmi.mode() {
            Mode::Singleton => None,
            _ => pmi
                .job_attr("PMI_process_mapping")
                .ok()
                .and_then(|m| parse_process_mapping(&m, size)),
        };
        let place = mapped
            .and_then(|l| l.place(rank))
            .or_else(|| {
                let lr = env_u32(env, "MPI_LOCALRANKID")?;
                let ls = env_u32(env, "MPI_LOCALNRANKS")?;
                (lr < ls).then_some((lr, ls, 0, 1))
            })
            .or_else(|| {
                let lr = env_u32(env, "SLURM_LOCALID")?;
                let node = env_u32(env, "SLURM_NODEID")?;
                let per = parse_slurm_tasks_per_node(&env("SLURM_STEP_TASKS_PER_NODE")?)?;
                let ls = *per.get(node as usize)?;
                (lr < ls).then_some((lr, ls, node, per.len() as u32))
            })
            .unwrap_or((rank, size, 0, 1));
        Job {
            pmi,
            rank,
            size,
            local_rank: place.0,
            local_size: place.1,
            node_id: place.2,
            nnodes: place.3,
            node_of: Vec::new(),
        }
    }

    /// Replaces the launcher's idea of where ranks run by `node_of` (from the ranks'
    /// [`node_identity`]s): node id, local rank and size, node count.
    pub fn set_layout(&mut self, node_of: &[u32]) {
        let l = Layout {
            node_of: node_of.to_vec(),
        };
        if let Some((lr, ls, node, n)) = l.place(self.rank) {
            (self.local_rank, self.local_size, self.node_id, self.nnodes) = (lr, ls, node, n);
            self.node_of = l.node_of;
        }
    }

    pub fn pmi(&mut self) -> &mut PmiClient {
        &mut self.pmi
    }

    /// Publishes this rank's `value` under `name` (a business card). Others can
    /// [`lookup`](Self::lookup) it after the next [`barrier`](Self::barrier).
    pub fn publish(&mut self, name: &str, value: &str) -> Result<(), PmiError> {
        let key = card_key(name, self.rank);
        self.pmi.put(&key, value)
    }

    /// Reads the card `rank` published under `name` before the last barrier: one PMI
    /// round trip, made only for the ranks this one actually talks to (deferred
    /// connections build no state for the others).
    pub fn lookup(&mut self, name: &str, rank: u32) -> Result<String, PmiError> {
        self.pmi.get(&card_key(name, rank))
    }

    /// Every rank publishes `value` under `name`; returns all ranks' values, in rank
    /// order. Collective: every rank must call it with the same `name`. For large jobs
    /// prefer [`publish`](Self::publish), one barrier, and [`lookup`](Self::lookup)
    /// of the peers needed.
    pub fn exchange(&mut self, name: &str, value: &str) -> Result<Vec<String>, PmiError> {
        self.publish(name, value)?;
        self.pmi.fence()?;
        (0..self.size)
            .map(|r| {
                if r == self.rank {
                    Ok(value.to_string())
                } else {
                    self.lookup(name, r)
                }
            })
            .collect()
    }

    /// A barrier through the launcher (PMI fence).
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        self.pmi.fence()
    }

    /// Ends the whole job.
    pub fn abort(&mut self, code: i32, msg: &str) -> ! {
        self.pmi.abort(code, msg)
    }

    pub fn finalize(&mut self) -> Result<(), PmiError> {
        self.pmi.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mappings() {
        let l = parse_process_mapping("(vector,(0,2,2))", 4).unwrap();
        assert_eq!(l.node_of, vec![0, 0, 1, 1]);
        assert_eq!(l.place(3), Some((1, 2, 1, 2)));
        let l = parse_process_mapping("(vector,(0,1,3),(1,1,1))", 5).unwrap();
        assert_eq!(l.node_of, vec![0, 0, 0, 1, 0]);
        assert!(parse_process_mapping("(vector,(0,0,3))", 5).is_none());
        assert!(parse_process_mapping("garbage", 5).is_none());
        assert_eq!(
            parse_slurm_tasks_per_node("2(x3),1"),
            Some(vec![2, 2, 2, 1])
        );
    }

    #[test]
    fn hydra_env_gives_local_rank_in_a_singleton_free_way() {
        let env = |k: &str| match k {
            "MPI_LOCALRANKID" => Some("1".into()),
            "MPI_LOCALNRANKS" => Some("2".into()),
            _ => None,
        };
        let j = Job::from_client(PmiClient::singleton(), &env);
        assert_eq!((j.local_rank, j.local_size), (1, 2));
    }

    #[test]
    fn node_ids_are_the_same_everywhere() {
        let ids: Vec<String> = ["b/2", "a/1", "b/2", "a/3", "a/1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(assign_nodes(&ids), vec![2, 0, 2, 1, 0]);
        let me = node_identity();
        assert!(me.contains('/') && !me.contains('|'), "{me}");
        assert_eq!(me, node_identity());
        let mut j = Job::from_client(PmiClient::singleton(), &|_| None);
        j.set_layout(&[0]);
        assert_eq!(
            (j.local_rank, j.local_size, j.node_id, j.nnodes),
            (0, 1, 0, 1)
        );
    }

    proptest! {
        #[test]
        fn mapping_parser_never_panics(s in "\\PC{0,60}", size in 0u32..100) {
            if let Some(l) = parse_process_mapping(&s, size) {
                prop_assert_eq!(l.node_of.len(), size as usize);
            }
            let _ = parse_slurm_tasks_per_node(&s);
        }
    }
}

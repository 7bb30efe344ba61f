//! Load points split over the ranks of an MPI job (`mpiexec -n 4 myrix sim --sweep`),
//! gathered to rank 0 through the launcher's PMI key-value space.
//!
//! Rank `r` of `N` measures the load points `i` (0-based, in load order) with
//! `i % N == r`, on all its cores ([`runner`]). After each round every rank publishes
//! its points, the ranks meet at a barrier, every rank reads the others' saturation
//! flags (the stopping rule needs them, so all ranks agree on when to stop) and rank 0
//! reads their whole results. Rank 0 ends up with exactly the points one process
//! measures, in the same order; the other ranks with none.
//!
//! **Same numbers as one process.** A point is one [`Sim`] built from its [`Config`]
//! alone, and the simulator's only random stream is seeded from `Config::seed` (the
//! command's `--seed`, the same for every point, as in a one-process sweep). Nothing of
//! it depends on which rank, thread or order runs the point, and the loads are the same
//! floats (`step * i`, [`Search::run_wide`]). The results travel as the bits of every
//! field ([`encode`]), so rank 0 holds the very values the measuring rank computed. A
//! sweep measures `N` rounds of [`Search::batch`] loads at a time (rank 0's batch, so
//! every rank agrees) and keeps the points up to the round one process would have
//! stopped at. (The `--seed` also picks the topology, built by each rank the same way.)
//!
//! **The key-value space.** PMI-1 values are ASCII 33–126 without spaces, and MPICH's
//! PMI-1 lines are at most 1024 bytes with the command around the value
//! (`myrix mpiexec`'s server takes values up to 1024 bytes:
//! `myrix_mpi::pmi::server::VALLEN_MAX`): the encoded points are cut into values of at
//! most [`CHUNK`] bytes. Per rank and round there is a header (`ok,CHUNKS,FLAGS`, one
//! `0`/`1` saturation flag per point, or `err,HEX` with the error's message) and the
//! chunks; a rank measures at most [`MAX_SHARE`] points a round, so the header fits
//! (long `--loads` lists take several rounds). A rank whose points fail publishes the
//! error; every rank then returns it, so no rank waits at a barrier for one that left.

use crate::runner::{self, Watch};
use crate::saturation::Search;
use crate::LabError;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::named::Named;
use myrix_fabric::Topology;
use myrix_sim::{ChannelRelease, Config, Results, SwitchModel, Ticks};

/// The longest value published (bytes): well inside MPICH's 1024-byte PMI-1 lines.
pub const CHUNK: usize = 512;

/// The most points one rank measures in a round: its header carries a flag per point
/// and must fit in a value. [`load_points`] gathers longer lists in several rounds.
pub const MAX_SHARE: usize = 256;

/// What splitting needs from a job: this rank, the job's size, and a key-value space
/// with a barrier (PMI's put, fence and get). [`myrix_mpi::Job`] is one; tests use
/// threads sharing a map.
pub trait Exchange {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Publishes this rank's `value` under `name`, for the others to read after the
    /// next barrier.
    fn publish(&mut self, name: &str, value: &str) -> Result<(), LabError>;
    /// Every rank of the job arrives here before any leaves.
    fn barrier(&mut self) -> Result<(), LabError>;
    /// What `rank` published under `name` before the last barrier.
    fn lookup(&mut self, name: &str, rank: u32) -> Result<String, LabError>;
}

fn pmi_error(e: myrix_mpi::pmi::PmiError) -> LabError {
    LabError::Failed(format!("gathering the load points: {e}"))
}

impl Exchange for myrix_mpi::Job {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn publish(&mut self, name: &str, value: &str) -> Result<(), LabError> {
        myrix_mpi::Job::publish(self, name, value).map_err(pmi_error)
    }
    fn barrier(&mut self) -> Result<(), LabError> {
        myrix_mpi::Job::barrier(self).map_err(pmi_error)
    }
    fn lookup(&mut self, name: &str, rank: u32) -> Result<String, LabError> {
        myrix_mpi::Job::lookup(self, name, rank).map_err(pmi_error)
    }
}

/// This process's place in its MPI job: the launcher's (PMI in the environment:
/// `myrix mpiexec`, hydra, Slurm) or a job of one. Call [`myrix_mpi::Job::finalize`]
/// when done, or launchers take the rank for one that failed.
pub fn join() -> Result<myrix_mpi::Job, LabError> {
    myrix_mpi::Job::init().map_err(|e| LabError::Failed(format!("joining the MPI job: {e}")))
}

/// The indices `first..first + n` that `rank` of `size` measures: `i % size == rank`.
pub fn share(first: usize, n: usize, rank: u32, size: u32) -> Vec<usize> {
    let size = size.max(1) as usize;
    (first..first + n)
        .filter(|i| i % size == rank as usize)
        .collect()
}

/// A load point as a rank holds it after a round: every rank knows whether it
/// saturated, rank 0 also has its results.
#[derive(Clone, Debug, PartialEq)]
pub struct Gathered {
    pub saturated: bool,
    pub results: Option<Results>,
}

/// `fixed`'s loads measured by the job's ranks: on rank 0 all the results in the order
/// of `cfgs`, on the others `None`. Collective: every rank calls it with the same
/// `cfgs` and `tag` (a name no other gathering of this job uses).
pub fn load_points(
    ex: &mut dyn Exchange,
    tag: &str,
    t: &Topology,
    routes: &RouteTable,
    cfgs: &[Config],
    watch: &Watch,
) -> Result<Option<Vec<Results>>, LabError> {
    let mut got = Vec::with_capacity(cfgs.len());
    let per_round = MAX_SHARE * ex.size().max(1) as usize;
    for (k, first) in (0..cfgs.len()).step_by(per_round).enumerate() {
        let n = per_round.min(cfgs.len() - first);
        got.extend(gather(ex, &format!("{tag}-{k}"), first, n, &mut |mine| {
            let mine: Vec<Config> = mine.iter().map(|&i| cfgs[i].clone()).collect();
            runner::load_points_watched(t, routes, &mine, watch)
        })?);
    }
    Ok(on_rank0(ex, got))
}

/// The saturation search `search` as one process runs it (`Search::run_sim_watched`),
/// its rounds measured by the job's ranks: on rank 0 exactly one process's points, on
/// the others `None`. Collective, as [`load_points`].
pub fn sweep(
    ex: &mut dyn Exchange,
    tag: &str,
    search: &Search,
    t: &Topology,
    routes: &RouteTable,
    cfg_at: &dyn Fn(f64) -> Config,
    watch: &Watch,
) -> Result<Option<Vec<Results>>, LabError> {
    // Rank 0's batch for everyone: the rounds (and so the points kept) are its.
    let name = format!("{tag}-batch");
    if ex.rank() == 0 {
        ex.publish(&name, &search.batch.to_string())?;
    }
    ex.barrier()?;
    let batch = if ex.rank() == 0 {
        search.batch
    } else {
        let v = ex.lookup(&name, 0)?;
        v.parse()
            .map_err(|_| LabError::Failed(format!("rank 0 published a bad batch {v:?}")))?
    };
    let search = Search { batch, ..*search };
    let mut round = 0;
    let mut first = 0;
    let got = search.run_wide(
        ex.size() as usize,
        |g: &Gathered| g.saturated,
        |loads| {
            round += 1;
            let g = gather(
                ex,
                &format!("{tag}-{round}"),
                first,
                loads.len(),
                &mut |mine| {
                    let cfgs: Vec<Config> =
                        mine.iter().map(|&i| cfg_at(loads[i - first])).collect();
                    runner::load_points_watched(t, routes, &cfgs, watch)
                },
            );
            first += loads.len();
            g
        },
    )?;
    Ok(on_rank0(ex, got))
}

fn on_rank0(ex: &dyn Exchange, got: Vec<Gathered>) -> Option<Vec<Results>> {
    (ex.rank() == 0).then(|| got.into_iter().filter_map(|g| g.results).collect())
}

/// Measures the load points of the given indices; their results in that order.
pub type Measure<'a> = dyn FnMut(&[usize]) -> Result<Vec<Results>, LabError> + 'a;

/// One round: this rank measures its share of the points `first..first + n` with
/// `measure` (given their indices, it returns their results in that order), publishes
/// them, meets the others and reads theirs (rank 0 all of them, the others the flags).
pub fn gather(
    ex: &mut dyn Exchange,
    name: &str,
    first: usize,
    n: usize,
    measure: &mut Measure,
) -> Result<Vec<Gathered>, LabError> {
    let (rank, size) = (ex.rank(), ex.size().max(1));
    // Checked alike on every rank, before anyone publishes: all fail together.
    if n.div_ceil(size as usize) > MAX_SHARE {
        return Err(LabError::Invalid(format!(
            "{n} load points in one round over {size} ranks: at most {MAX_SHARE} per rank"
        )));
    }
    let mine = share(first, n, rank, size);
    let measured = measure(&mine).and_then(|r| {
        if r.len() == mine.len() {
            Ok(r)
        } else {
            Err(LabError::Failed(format!(
                "{} results for {} load points",
                r.len(),
                mine.len()
            )))
        }
    });
    let header = match &measured {
        Ok(points) => {
            let text: Vec<String> = points.iter().map(encode).collect();
            let chunks = chunks(&text.join("/"));
            for (c, chunk) in chunks.iter().enumerate() {
                ex.publish(&format!("{name}-{c}"), chunk)?;
            }
            let flags: String = points
                .iter()
                .map(|p| if p.saturated { '1' } else { '0' })
                .collect();
            format!("ok,{},{flags}", chunks.len())
        }
        Err(e) => format!("err,{}", hex(e.to_string().as_bytes())),
    };
    ex.publish(&format!("{name}-h"), &header)?;
    ex.barrier()?;
    let mut out: Vec<Option<Gathered>> = vec![None; n];
    let mut failed: Option<LabError> = None;
    for r in 0..size {
        let (head, theirs) = if r == rank {
            (header.clone(), mine.clone())
        } else {
            (
                ex.lookup(&format!("{name}-h"), r)?,
                share(first, n, r, size),
            )
        };
        let bad = |why: &str| LabError::Failed(format!("rank {r}'s load points: {why}"));
        let fields: Vec<&str> = head.splitn(3, ',').collect();
        match fields[..] {
            ["err", msg] | ["err", msg, _] => {
                let msg = unhex(msg).ok_or_else(|| bad("a bad error report"))?;
                failed.get_or_insert(LabError::Failed(if r == rank {
                    msg
                } else {
                    format!("rank {r}: {msg}")
                }));
            }
            ["ok", count, flags] => {
                let count: usize = count.parse().map_err(|_| bad("a bad header"))?;
                if flags.len() != theirs.len() || !flags.bytes().all(|b| b == b'0' || b == b'1') {
                    return Err(bad("flags for other points than its share"));
                }
                let results = match (&measured, rank) {
                    (Ok(points), _) if r == rank => points.iter().cloned().map(Some).collect(),
                    (_, 0) => {
                        let mut text = String::new();
                        for c in 0..count {
                            text.push_str(&ex.lookup(&format!("{name}-{c}"), r)?);
                        }
                        let points: Vec<Results> = if text.is_empty() {
                            Vec::new()
                        } else {
                            text.split('/')
                                .map(decode)
                                .collect::<Option<_>>()
                                .ok_or_else(|| bad("results that do not decode"))?
                        };
                        if points.len() != theirs.len() {
                            return Err(bad("results for other points than its share"));
                        }
                        points.into_iter().map(Some).collect()
                    }
                    _ => vec![None; theirs.len()],
                };
                for ((&i, flag), results) in theirs.iter().zip(flags.bytes()).zip(results) {
                    out[i - first] = Some(Gathered {
                        saturated: flag == b'1',
                        results,
                    });
                }
            }
            _ => return Err(bad("a bad header")),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| LabError::Failed("a load point no rank measured".into()))
}

/// `text` cut into pieces of at most [`CHUNK`] bytes (ASCII: any cut is a boundary);
/// none for an empty text (a rank with no point this round).
fn chunks(text: &str) -> Vec<String> {
    text.as_bytes()
        .chunks(CHUNK)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    if s.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// A point's results as text without spaces, `/`, `;` or `=`: the fields in order,
/// comma-separated, floats as the hexadecimal of their bits (exact, NaN included).
pub fn encode(r: &Results) -> String {
    // Every field named (no `..`): a field added to `Results` stops this compiling
    // until it travels too.
    let Results {
        switch_model,
        channel_release,
        switches,
        hosts,
        msg_bytes,
        seed,
        offered,
        generated,
        accepted,
        messages_delivered,
        avg_latency_ns,
        p50_latency_ns,
        p99_latency_ns,
        latency_ci95_ns,
        accepted_batches,
        mser_truncated,
        undelivered,
        saturated,
        slack_overflows,
        itbs_per_message,
        itb_pool_peak,
        itb_spills,
        link_utilization,
        max_link_utilization,
        flit_hops,
        wire_flits_delivered,
        ticks,
    } = r;
    let f = |x: &f64| format!("{:x}", x.to_bits());
    [
        switch_model.name().to_string(),
        channel_release.name().to_string(),
        switches.to_string(),
        hosts.to_string(),
        msg_bytes.to_string(),
        seed.to_string(),
        f(offered),
        f(generated),
        f(accepted),
        messages_delivered.to_string(),
        f(avg_latency_ns),
        f(p50_latency_ns),
        f(p99_latency_ns),
        f(latency_ci95_ns),
        f(&accepted_batches.0),
        f(&accepted_batches.1),
        f(mser_truncated),
        undelivered.to_string(),
        u8::from(*saturated).to_string(),
        slack_overflows.to_string(),
        f(itbs_per_message),
        itb_pool_peak.to_string(),
        itb_spills.to_string(),
        f(link_utilization),
        f(max_link_utilization),
        flit_hops.to_string(),
        wire_flits_delivered.to_string(),
        ticks.0.to_string(),
    ]
    .join(",")
}

/// [`encode`]'s text back to the results; `None` if it is not such text.
pub fn decode(s: &str) -> Option<Results> {
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != 28 {
        return None;
    }
    let f = |i: usize| u64::from_str_radix(v[i], 16).ok().map(f64::from_bits);
    let u = |i: usize| v[i].parse::<u64>().ok();
    let us = |i: usize| v[i].parse::<usize>().ok();
    Some(Results {
        switch_model: SwitchModel::from_name(v[0]).ok()?,
        channel_release: ChannelRelease::from_name(v[1]).ok()?,
        switches: us(2)?,
        hosts: us(3)?,
        msg_bytes: us(4)?,
        seed: u(5)?,
        offered: f(6)?,
        generated: f(7)?,
        accepted: f(8)?,
        messages_delivered: u(9)?,
        avg_latency_ns: f(10)?,
        p50_latency_ns: f(11)?,
        p99_latency_ns: f(12)?,
        latency_ci95_ns: f(13)?,
        accepted_batches: (f(14)?, f(15)?),
        mser_truncated: f(16)?,
        undelivered: u(17)?,
        saturated: match v[18] {
            "0" => false,
            "1" => true,
            _ => return None,
        },
        slack_overflows: u(19)?,
        itbs_per_message: f(20)?,
        itb_pool_peak: us(21)?,
        itb_spills: u(22)?,
        link_utilization: f(23)?,
        max_link_utilization: f(24)?,
        flit_hops: u(25)?,
        wire_flits_delivered: u(26)?,
        ticks: Ticks(u(27)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_fabric::itb::Policy;
    use myrix_fabric::testing::irregular_routes;
    use myrix_sim::Sim;
    use std::collections::HashMap;
    use std::sync::{Arc, Barrier, Mutex};

    /// A job of threads: one map for the key-value space, a thread barrier.
    struct Threads {
        rank: u32,
        size: u32,
        kvs: Arc<Mutex<HashMap<String, String>>>,
        barrier: Arc<Barrier>,
        published: usize,
    }

    impl Exchange for Threads {
        fn rank(&self) -> u32 {
            self.rank
        }
        fn size(&self) -> u32 {
            self.size
        }
        fn publish(&mut self, name: &str, value: &str) -> Result<(), LabError> {
            // What PMI-1 can carry.
            assert!(value.len() <= CHUNK, "{} bytes", value.len());
            assert!(value
                .bytes()
                .all(|b| (33..=126).contains(&b) && b != b';' && b != b'='));
            self.published += 1;
            let key = format!("{name}-{}", self.rank);
            self.kvs.lock().unwrap().insert(key, value.to_string());
            Ok(())
        }
        fn barrier(&mut self) -> Result<(), LabError> {
            self.barrier.wait();
            Ok(())
        }
        fn lookup(&mut self, name: &str, rank: u32) -> Result<String, LabError> {
            let key = format!("{name}-{rank}");
            self.kvs
                .lock()
                .unwrap()
                .get(&key)
                .cloned()
                .ok_or_else(|| LabError::Failed(format!("{key} not found")))
        }
    }

    /// Runs `f` on every rank of a job of `size` threads; results in rank order.
    fn job<R: Send>(size: u32, f: impl Fn(&mut Threads) -> R + Sync) -> Vec<R> {
        let kvs = Arc::new(Mutex::new(HashMap::new()));
        let barrier = Arc::new(Barrier::new(size as usize));
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..size)
                .map(|rank| {
                    let mut ex = Threads {
                        rank,
                        size,
                        kvs: kvs.clone(),
                        barrier: barrier.clone(),
                        published: 0,
                    };
                    let f = &f;
                    s.spawn(move || f(&mut ex))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn cfg(load: f64) -> Config {
        Config {
            load,
            warmup: myrix_link::US,
            measure: 20 * myrix_link::US,
            seed: 3,
            ..Config::default()
        }
    }

    fn quiet() -> Watch<'static> {
        Watch {
            done: &|_| {},
            advanced: &|_| {},
        }
    }

    /// Compared as text: points with few messages have NaN figures.
    fn same(a: &[Results], b: &[Results]) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn each_rank_takes_every_nth_point() {
        assert_eq!(share(0, 7, 0, 3), [0, 3, 6]);
        assert_eq!(share(0, 7, 2, 3), [2, 5]);
        assert_eq!(share(5, 4, 1, 3), [7]);
        assert!(share(0, 2, 3, 4).is_empty());
        let all: Vec<usize> = (0..4).flat_map(|r| share(10, 9, r, 4)).collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (10..19).collect::<Vec<_>>(), "each point once");
    }

    #[test]
    fn results_travel_bit_for_bit() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let mut r = Sim::new(cfg(0.01), &t, &routes).unwrap().run();
        let text = encode(&r);
        assert!(!text.contains([' ', '/', ';', '=']));
        // (Compared as text: this point has NaN figures, and Debug shows every float's
        // shortest exact form.)
        assert_eq!(format!("{:?}", decode(&text)), format!("{:?}", Some(&r)));
        r.avg_latency_ns = f64::NAN;
        r.p99_latency_ns = -0.0;
        r.saturated = true;
        let back = decode(&encode(&r)).unwrap();
        assert_eq!(back.avg_latency_ns.to_bits(), f64::NAN.to_bits());
        assert_eq!(back.p99_latency_ns.to_bits(), (-0.0f64).to_bits());
        assert!(back.saturated);
        assert_eq!(decode(""), None);
        assert_eq!(decode(&text.replace("shared-unit", "nonsense")), None);
        assert_eq!(decode(&format!("{text},1")), None);
        assert_eq!(
            unhex(&hex("rank 3: é".as_bytes())).as_deref(),
            Some("rank 3: é")
        );
        assert_eq!(unhex("abc"), None);
    }

    #[test]
    fn fixed_loads_split_over_ranks_equal_one_process() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let cfgs: Vec<Config> = (1..=5).map(|i| cfg(0.004 * i as f64)).collect();
        let one = runner::load_points(&t, &routes, &cfgs, |_| {}).unwrap();
        for size in [1, 2, 3, 7] {
            let got = job(size, |ex| {
                load_points(ex, "fixed", &t, &routes, &cfgs, &quiet()).unwrap()
            });
            assert!(same(got[0].as_ref().unwrap(), &one), "{size} ranks");
            assert!(got[1..].iter().all(Option::is_none));
        }
    }

    #[test]
    fn a_sweep_split_over_ranks_equals_one_process() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let cfg_at = |load: f64| cfg(load);
        for batch in [1, 2, 3] {
            let search = Search {
                step: 0.05,
                batch,
                max_points: 40,
            };
            let one = search.run_sim(&t, &routes, &cfg_at, &|_| {}).unwrap();
            assert!(
                one.iter().any(|r| r.saturated),
                "the sweep reaches saturation"
            );
            for size in [2, 3, 4] {
                let got = job(size, |ex| {
                    // Ranks other than 0 would use another batch: rank 0's counts.
                    let mine = Search {
                        batch: if ex.rank == 0 { batch } else { batch + 1 },
                        ..search
                    };
                    let r = sweep(ex, "sw", &mine, &t, &routes, &cfg_at, &quiet()).unwrap();
                    (r, ex.published)
                });
                let (rank0, _) = &got[0];
                assert!(
                    same(rank0.as_ref().unwrap(), &one),
                    "batch {batch}, {size} ranks"
                );
                assert!(got[1..].iter().all(|(r, _)| r.is_none()));
            }
        }
    }

    #[test]
    fn long_lists_of_fixed_loads_take_several_rounds() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        // More points than two ranks' headers hold in one round; very short points.
        let n = 2 * MAX_SHARE + 3;
        let cfgs: Vec<Config> = (1..=n)
            .map(|i| Config {
                load: 0.0001 * i as f64,
                warmup: myrix_link::Picos(100_000),
                measure: myrix_link::Picos(200_000),
                ..Config::default()
            })
            .collect();
        let one = runner::load_points(&t, &routes, &cfgs, |_| {}).unwrap();
        let got = job(2, |ex| {
            load_points(ex, "long", &t, &routes, &cfgs, &quiet()).unwrap()
        });
        assert!(same(got[0].as_ref().unwrap(), &one));
        assert!(got[1].is_none());
        // In one round it would not go.
        let r = &one[0];
        let too_many = job(2, |ex| {
            gather(ex, "big", 0, n, &mut |m| Ok(vec![r.clone(); m.len()])).is_err()
        });
        assert_eq!(too_many, [true, true], "refused on every rank alike");
    }

    #[test]
    fn a_rank_that_fails_makes_every_rank_fail() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let got = job(3, |ex| {
            let rank = ex.rank;
            gather(ex, "bad", 0, 6, &mut |mine| {
                if rank == 1 {
                    return Err(LabError::Invalid("no good".into()));
                }
                let cfgs: Vec<Config> = mine.iter().map(|&i| cfg(0.004 * (i + 1) as f64)).collect();
                runner::load_points(&t, &routes, &cfgs, |_| {})
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
        });
        assert_eq!(got[0], Err("rank 1: no good".to_string()));
        assert_eq!(got[1], Err("no good".to_string()));
        assert_eq!(got[2], Err("rank 1: no good".to_string()));
    }

    #[test]
    fn many_points_are_cut_into_chunks() {
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let r = Sim::new(cfg(0.01), &t, &routes).unwrap().run();
        // 12 points on 2 ranks: 6 each, several chunks each.
        let got = job(2, |ex| {
            let g = gather(ex, "many", 0, 12, &mut |mine| {
                Ok(vec![r.clone(); mine.len()])
            })
            .unwrap();
            (g, ex.published)
        });
        let (g, published) = &got[0];
        assert_eq!(g.len(), 12);
        let want = format!("{:?}", Some(&r));
        assert!(g
            .iter()
            .all(|p| format!("{:?}", p.results.as_ref()) == want));
        assert!(
            *published > 3,
            "{published} values for 6 points of ~400 bytes"
        );
        // Rank 1 has its own points' results and the others' flags.
        for (i, p) in got[1].0.iter().enumerate() {
            assert_eq!(p.results.is_some(), i % 2 == 1, "point {i}");
            assert_eq!(p.saturated, r.saturated);
        }
    }
}

//! The one parallel runner: independent jobs (load points, whole saturation searches)
//! spread over all cores, results in job order.
//!
//! It owns the threads and nothing else: what a job does is the caller's closure, and
//! progress is reported through a callback. It never prints and never draws a progress
//! bar (the command line does, from the callback).

use crate::LabError;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::Topology;
use myrix_link::Picos;
use myrix_sim::{Config, Results, Sim};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The cores this process may use (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `work` on every job, one thread per core (never more threads than jobs; a
/// single job runs on the calling thread), taking the next job as each finishes.
/// `done(i, job)` is called after job `i` finished, from the thread that ran it.
/// The results are in job order.
pub fn run_all<J, R, W, D>(jobs: &[J], work: W, done: D) -> Vec<R>
where
    J: Sync,
    R: Send,
    W: Fn(&J) -> R + Sync,
    D: Fn(usize, &J) + Sync,
{
    if jobs.len() <= 1 {
        return jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let r = work(j);
                done(i, j);
                r
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..cores().min(jobs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = work(job);
                done(i, job);
                out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// What a run of load points reports as it goes, from whichever thread runs a point.
pub struct Watch<'a> {
    /// After each point, with its configuration.
    pub done: &'a (dyn Fn(&Config) + Sync),
    /// With each stretch of simulated time run (a fraction of a millisecond at a
    /// time: [`Sim::run_watched`]), for progress on long points.
    pub advanced: &'a (dyn Fn(Picos) + Sync),
}

/// Simulates every configuration on `t` with `routes`, on all cores; results in the
/// order of `cfgs`. `done(cfg)` is called as each point finishes. A configuration the
/// simulator refuses is the first such error, in the order of `cfgs`.
pub fn load_points(
    t: &Topology,
    routes: &RouteTable,
    cfgs: &[Config],
    done: impl Fn(&Config) + Sync,
) -> Result<Vec<Results>, LabError> {
    let watch = Watch {
        done: &done,
        advanced: &|_| {},
    };
    load_points_watched(t, routes, cfgs, &watch)
}

/// [`load_points`], reporting to `watch` as the points run.
pub fn load_points_watched(
    t: &Topology,
    routes: &RouteTable,
    cfgs: &[Config],
    watch: &Watch,
) -> Result<Vec<Results>, LabError> {
    run_all(
        cfgs,
        |cfg| {
            Sim::new(cfg.clone(), t, routes)
                .map(|s| s.run_watched(&mut |p| (watch.advanced)(p)))
                .map_err(|e| LabError::Invalid(e.to_string()))
        },
        |_, cfg| (watch.done)(cfg),
    )
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_job_order_and_every_job_is_reported_once() {
        let jobs: Vec<u64> = (0..100).collect();
        let seen = Mutex::new(Vec::new());
        let out = run_all(
            &jobs,
            |&j| {
                // Uneven work, so jobs finish out of order.
                let spin =
                    (0..(j % 7) * 1000).fold(0u64, |a, x| a.wrapping_add(std::hint::black_box(x)));
                std::hint::black_box(spin);
                j
            },
            |i, &j| {
                assert_eq!(i as u64, j);
                seen.lock().unwrap().push(i);
            },
        );
        assert_eq!(out, jobs);
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn no_jobs_and_one_job() {
        let none: Vec<u32> = run_all(&[] as &[u32], |&x| x, |_, _| {});
        assert!(none.is_empty());
        let here = std::thread::current().id();
        let one = run_all(
            &[5u32],
            |&x| (x * 2, std::thread::current().id()),
            |_, _| {},
        );
        assert_eq!(one, [(10, here)], "a single job runs on the calling thread");
    }

    #[test]
    fn load_points_run_each_configuration_and_refuse_bad_ones() {
        use myrix_fabric::itb::Policy;
        use myrix_fabric::testing::irregular_routes;
        let (t, routes) = irregular_routes(4, 1, Policy::Osud);
        let cfg = |load: f64| Config {
            load,
            warmup: myrix_link::US,
            measure: 5 * myrix_link::US,
            ..Config::default()
        };
        let n = AtomicUsize::new(0);
        let r = load_points(&t, &routes, &[cfg(0.004), cfg(0.008)], |_| {
            n.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(n.into_inner(), 2);
        // The stretches reported add up to each point's warm-up and measurement.
        let ps = std::sync::atomic::AtomicU64::new(0);
        let watch = Watch {
            done: &|_| {},
            advanced: &|p: Picos| {
                ps.fetch_add(p.0, Ordering::Relaxed);
            },
        };
        let again = load_points_watched(&t, &routes, &[cfg(0.004), cfg(0.008)], &watch).unwrap();
        // (Compared as text: a point with one message has NaN figures.)
        assert_eq!(
            format!("{again:?}"),
            format!("{r:?}"),
            "watching does not change the run"
        );
        let tick = Config::default().flit.0;
        let per_point = (6 * myrix_link::US.0).div_ceil(tick) * tick;
        assert_eq!(ps.into_inner(), 2 * per_point);
        assert_eq!(
            r.iter().map(|r| r.offered).collect::<Vec<_>>(),
            [0.004, 0.008]
        );
        assert!(load_points(&t, &routes, &[cfg(0.004), cfg(0.0)], |_| {}).is_err());
    }
}

//! The one saturation search: offered loads `step`, `2 step`, `3 step`, … measured a
//! batch at a time until two points in a row saturate (or a point limit is reached).
//!
//! It owns the order of the loads and the stopping rule; how a batch is measured is the
//! caller's (on all cores with [`runner`](crate::runner), or one point at a time inside
//! a job that already has its core). It never prints.

use crate::runner;
use crate::LabError;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::Topology;
use myrix_sim::{Config, Results, Sim};

/// How the loads are stepped and when the search gives up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// The first load and the distance between loads.
    pub step: f64,
    /// Loads measured per round (the stopping rule is checked after each round).
    pub batch: usize,
    /// The search stops once this many loads have been measured, saturated or not.
    pub max_points: usize,
}

impl Search {
    /// `myrix sim --sweep`: 0.002 flits/ns/switch apart, a round of one point per core
    /// (at least two), at most 500 points.
    pub fn sweep() -> Search {
        Search {
            step: 0.002,
            batch: runner::cores().max(2),
            max_points: 500,
        }
    }

    /// One point at a time (for searches that run side by side, one per core), at most
    /// 200 points.
    pub fn one_by_one(step: f64) -> Search {
        Search {
            step,
            batch: 1,
            max_points: 200,
        }
    }

    /// Runs the search: `measure` gets each round's loads and returns one point per
    /// load; `saturated` says whether a point is. Every measured point is returned, in
    /// load order.
    pub fn run<P, E>(
        &self,
        saturated: impl Fn(&P) -> bool,
        measure: impl FnMut(&[f64]) -> Result<Vec<P>, E>,
    ) -> Result<Vec<P>, E> {
        self.run_wide(1, saturated, measure)
    }

    /// [`Search::run`] handing `measure` up to `width` rounds at once (the ranks of a
    /// job each take a share of them: [`crate::ranks`]). The stopping rule is still
    /// checked after every round of [`batch`](Self::batch) loads, in order, and the
    /// points of the rounds after the one it stops at are dropped: the points returned
    /// are exactly [`Search::run`]'s, whatever the width. `measure` must return one
    /// point per load.
    pub fn run_wide<P, E>(
        &self,
        width: usize,
        saturated: impl Fn(&P) -> bool,
        mut measure: impl FnMut(&[f64]) -> Result<Vec<P>, E>,
    ) -> Result<Vec<P>, E> {
        let batch = self.batch.max(1);
        let mut all: Vec<P> = Vec::new();
        let mut loads = Vec::with_capacity(batch * width.max(1));
        // Loads measured so far: `k` is the next load's multiple of the step.
        let mut k = 1;
        loop {
            // Never more rounds than it takes to reach the point limit.
            let left = self.max_points.saturating_sub(k - 1).div_ceil(batch).max(1);
            let rounds = width.clamp(1, left);
            loads.clear();
            loads.extend((k..k + rounds * batch).map(|i| self.step * i as f64));
            all.extend(measure(&loads)?);
            for _ in 0..rounds {
                k += batch;
                let n = (k - 1).min(all.len());
                let two = n >= 2 && saturated(&all[n - 1]) && saturated(&all[n - 2]);
                if two || k > self.max_points {
                    all.truncate(n);
                    return Ok(all);
                }
            }
        }
    }

    /// The search on the simulator: `cfg_at(load)` is the configuration of a point.
    /// Rounds of more than one point run on all cores (`done` is called per point).
    pub fn run_sim(
        &self,
        t: &Topology,
        routes: &RouteTable,
        cfg_at: &dyn Fn(f64) -> Config,
        done: &(dyn Fn(&Config) + Sync),
    ) -> Result<Vec<Results>, LabError> {
        let watch = runner::Watch {
            done,
            advanced: &|_| {},
        };
        self.run_sim_watched(t, routes, cfg_at, &watch)
    }

    /// [`Search::run_sim`], reporting to `watch` as the points run.
    pub fn run_sim_watched(
        &self,
        t: &Topology,
        routes: &RouteTable,
        cfg_at: &dyn Fn(f64) -> Config,
        watch: &runner::Watch,
    ) -> Result<Vec<Results>, LabError> {
        self.run(
            |r: &Results| r.saturated,
            |loads| {
                let cfgs: Vec<Config> = loads.iter().map(|&l| cfg_at(l)).collect();
                if cfgs.len() == 1 {
                    let r = Sim::new(cfgs[0].clone(), t, routes)
                        .map_err(|e| LabError::Invalid(e.to_string()))?
                        .run_watched(&mut |p| (watch.advanced)(p));
                    (watch.done)(&cfgs[0]);
                    return Ok(vec![r]);
                }
                runner::load_points_watched(t, routes, &cfgs, watch)
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that saturates above `at`: the point is its load.
    fn search(s: Search, at: f64) -> (Vec<f64>, Vec<usize>) {
        let mut rounds = Vec::new();
        let pts = s
            .run(
                |&p: &f64| p > at,
                |loads| {
                    rounds.push(loads.len());
                    Ok::<_, ()>(loads.to_vec())
                },
            )
            .unwrap();
        (pts, rounds)
    }

    #[test]
    fn one_by_one_stops_at_the_second_saturated_point() {
        let (pts, rounds) = search(Search::one_by_one(0.004), 0.0161);
        let want: Vec<f64> = (1..=6).map(|i| 0.004 * i as f64).collect();
        assert_eq!(pts, want);
        assert!(rounds.iter().all(|&r| r == 1));
    }

    #[test]
    fn batches_finish_their_round_and_loads_are_multiples_of_the_step() {
        let s = Search {
            step: 0.002,
            batch: 4,
            max_points: 500,
        };
        // Saturates above 0.0105: points 6 and 7 saturate, both in the second round.
        let (pts, rounds) = search(s, 0.0105);
        assert_eq!(rounds, [4, 4]);
        assert_eq!(pts.len(), 8);
        assert_eq!(pts[4], 0.002 * 5.0, "the same float as the loads before");
        // Saturating at the last point of a round needs one more round.
        let (pts, rounds) = search(s, 0.0155);
        assert_eq!((pts.len(), rounds.len()), (12, 3));
    }

    #[test]
    fn a_network_that_never_saturates_stops_at_the_limit() {
        let (pts, _) = search(Search::one_by_one(0.001), f64::INFINITY);
        assert_eq!(pts.len(), 200);
        let s = Search {
            step: 0.002,
            batch: 3,
            max_points: 10,
        };
        // Rounds of 3 until 10 or more points were asked for.
        assert_eq!(search(s, f64::INFINITY).0.len(), 12);
        assert_eq!(Search::sweep().max_points, 500);
        assert!(Search::sweep().batch >= 2);
    }

    /// Any width gives the points of one round at a time, for any saturation point,
    /// point limit and batch (including a model whose saturation comes and goes).
    #[test]
    fn wide_rounds_return_exactly_the_points_of_narrow_ones() {
        for batch in 1..=5 {
            for max_points in [1, 2, 7, 10, 23] {
                let s = Search {
                    step: 0.002,
                    batch,
                    max_points,
                };
                for at in [0.0, 0.0031, 0.0105, 0.0155, 0.02, f64::INFINITY] {
                    // Saturated above `at`, and also at every fifth point (noise).
                    let sat = |&p: &f64| p > at || ((p / 0.002).round() as i64) % 5 == 0;
                    let narrow = s.run(sat, |l| Ok::<_, ()>(l.to_vec())).unwrap();
                    for width in 1..=4 {
                        let mut asked = 0;
                        let wide = s
                            .run_wide(width, sat, |l| {
                                assert!(l.len() <= width * batch && l.len() % batch == 0);
                                asked += l.len();
                                Ok::<_, ()>(l.to_vec())
                            })
                            .unwrap();
                        assert_eq!(
                            wide, narrow,
                            "batch {batch} limit {max_points} at {at} width {width}"
                        );
                        assert!(asked < narrow.len() + width * batch);
                    }
                }
            }
        }
    }

    #[test]
    fn an_error_ends_the_search() {
        let mut n = 0;
        let r = Search::one_by_one(0.1).run(
            |_: &f64| false,
            |l| {
                n += 1;
                if n == 3 {
                    Err("broken")
                } else {
                    Ok(l.to_vec())
                }
            },
        );
        assert_eq!(r, Err("broken"));
    }
}

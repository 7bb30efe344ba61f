//! A component failing, or a host joining, under load: one run per routing policy on
//! the simulator's fault model (`sim::fault`), reported as [`FailRow`]s.
//!
//! It owns finding the named component in the topology and turning each run's report
//! into a row; rendering is [`report::failures`](crate::report::failures). It never
//! prints: a run that did not drain is a row with `drained: false` for the caller to
//! report.

use crate::LabError;
use myrix_fabric::itb::Policy;
use myrix_fabric::Topology;
use myrix_link::Picos;
use myrix_sim::fault::{
    describe, run_with_failure, run_with_join, Component, Failure, FaultConfig,
};
use myrix_sim::Config;
use serde::Serialize;

/// A component as a person names it, before it is looked up in the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The link between two switches.
    Link(u32, u32),
    Switch(u32),
    Host(u32),
}

/// The topology's component `target` names: a link must exist between the two
/// switches (either way round); switch and host ids are checked by the run.
pub fn component(t: &Topology, target: Target) -> Result<Component, LabError> {
    Ok(match target {
        Target::Link(a, b) => Component::Link(
            t.links()
                .iter()
                .position(|l| {
                    (l.a.switch, l.b.switch) == (a, b) || (l.a.switch, l.b.switch) == (b, a)
                })
                .ok_or_else(|| {
                    LabError::Invalid(format!("no link between switches {a} and {b}"))
                })?,
        ),
        Target::Switch(s) => Component::Switch(s),
        Target::Host(h) => Component::Host(h),
    })
}

/// The report of one failure run: these JSON names are stable.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailRow {
    pub routing: String,
    pub topology: String,
    /// "link 3-7", "switch 4", "host 12": what failed, or joined when `joined`.
    pub failed: String,
    pub joined: bool,
    pub offered_flits_ns_switch: f64,
    pub failed_at_ns: f64,
    pub detected_at_ns: f64,
    pub rerouted_at_ns: f64,
    pub remap_ns: f64,
    pub remap_probes: u64,
    pub mapper: u32,
    /// The failure took the mapper away and hosts elected a new one.
    pub elected: bool,
    pub map_switches: usize,
    pub map_hosts: usize,
    pub packets_lost: u64,
    /// Messages that were waiting in a failed host's memory.
    pub dropped: u64,
    /// Messages not sent after the reroute: their destination is off.
    pub refused: u64,
    /// Long-period time-outs (50 ms blocked) that dropped packets.
    pub timeouts: u64,
    /// A host failing or joining: messages from and to it that arrived.
    pub host_sent: u64,
    pub host_received: u64,
    pub accepted_before: Option<f64>,
    pub accepted_during: Option<f64>,
    pub accepted_after: Option<f64>,
    pub drained: bool,
    /// How long the run drained before it was declared stuck (not in the JSON).
    #[serde(skip)]
    pub drain_ns: f64,
}

/// Every policy's run of one failure or join.
#[derive(Clone, Debug, PartialEq)]
pub struct Failures {
    /// "link 3-7", "switch 4", "host 12".
    pub what: String,
    pub joined: bool,
    /// When, from the start of the run.
    pub at: Picos,
    /// Offered load, flits/ns/switch.
    pub load: f64,
    pub rows: Vec<FailRow>,
}

/// Runs `cfg` on `t` once per policy, `what` failing at `at` (or, with `join`, the
/// host `what` joining at `at`).
pub fn run(
    t: &Topology,
    policies: &[Policy],
    cfg: &Config,
    what: Component,
    at: Picos,
    join: bool,
    fc: &FaultConfig,
) -> Result<Failures, LabError> {
    let name = describe(t, what);
    let fin = |x: f64| x.is_finite().then_some(x);
    let mut rows = Vec::with_capacity(policies.len());
    for &policy in policies {
        let r = match what {
            Component::Host(h) if join => run_with_join(cfg.clone(), t, policy, h, at, fc),
            _ => run_with_failure(cfg.clone(), t, policy, Failure { what, at }, fc),
        }
        .map_err(|e| LabError::Invalid(e.to_string()))?;
        rows.push(FailRow {
            routing: policy.name().to_string(),
            topology: t.name().to_string(),
            failed: name.clone(),
            joined: join,
            offered_flits_ns_switch: cfg.load,
            failed_at_ns: r.failed_at_ns,
            detected_at_ns: r.detected_at_ns,
            rerouted_at_ns: r.rerouted_at_ns,
            remap_ns: r.remap_ns,
            remap_probes: r.remap_probes,
            mapper: r.mapper,
            elected: r.elected,
            map_switches: r.map_switches,
            map_hosts: r.map_hosts,
            packets_lost: r.lost,
            dropped: r.dropped,
            refused: r.refused,
            timeouts: r.timeouts,
            host_sent: r.host_sent,
            host_received: r.host_received,
            accepted_before: fin(r.accepted_before),
            accepted_during: fin(r.accepted_during),
            accepted_after: fin(r.accepted_after),
            drained: r.drained,
            drain_ns: r.drain_ns,
        });
    }
    Ok(Failures {
        what: name,
        joined: join,
        at,
        load: cfg.load,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use myrix_fabric::testing::irregular;

    #[test]
    fn a_link_is_found_either_way_round_and_a_missing_one_is_refused() {
        let t = irregular(6, 4);
        let l = &t.links()[0];
        let (a, b) = (l.a.switch, l.b.switch);
        assert_eq!(
            component(&t, Target::Link(a, b)).unwrap(),
            Component::Link(0)
        );
        assert_eq!(
            component(&t, Target::Link(b, a)).unwrap(),
            Component::Link(0)
        );
        let e = component(&t, Target::Link(0, 0)).unwrap_err();
        assert_eq!(e.to_string(), "no link between switches 0 and 0");
        assert_eq!(component(&t, Target::Host(3)).unwrap(), Component::Host(3));
    }
}

//! Randomized: three importer nodes (threads of this process, each its own controller
//! on its own loopback port) run the shared random workload (`model`: puts, gets,
//! scalars with repeat counts, scatter/gather, barriers, refusals, signals) on one
//! exporter's segment, each checked against a model of its own stripe; at the end the
//! exporter's memory is compared with every model, and the signals counted by sender.
//! The same workload between processes in two network namespaces over a lossy link:
//! `net_netns_random.rs`.

mod model;
mod net_common;

use std::time::Duration;

use myrix_rsm::{ExportFlags, NodeId, Perm};

const PLAN: model::Plan = model::Plan {
    stripe: 24 * 1024,
    ops: 1500,
    big: 16384,
};
const IMPORTERS: usize = 3;

#[test]
fn random_ops_against_a_model() {
    let nodes = [81, 82, 83, 84];
    let c = net_common::controllers(&nodes);
    let e = c[0]
        .export_create(PLAN.stripe * IMPORTERS, ExportFlags::default())
        .unwrap();
    let id = e.publish(None, &[]).unwrap();
    let seed = model::seed();

    let outcomes: Vec<model::Outcome> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..IMPORTERS)
            .map(|k| {
                let ctl = c[k + 1].clone();
                s.spawn(move || {
                    let i = ctl.import_connect(NodeId(81), id, Perm::RDWR).unwrap();
                    model::run(seed, k, &PLAN, Some(&i))
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // Every write is in the exporter's memory (each importer's last close or implicit
    // put returned), and every signal arrived, from its sender.
    // SAFETY: the export's live memory; the importers are done.
    #[allow(unsafe_code)]
    let mem = unsafe { std::slice::from_raw_parts(e.as_ptr(), PLAN.stripe * IMPORTERS) };
    let mut want = [0u32; IMPORTERS];
    for (k, o) in outcomes.iter().enumerate() {
        assert!(
            mem[k * PLAN.stripe..(k + 1) * PLAN.stripe] == o.model[..],
            "importer {k}: exporter memory differs from the model (seed {seed})"
        );
        // The replay from the seed alone gives the same model: what the exporter
        // process of the namespace test relies on.
        let replay = model::run(seed, k, &PLAN, None);
        assert!(replay.model == o.model && replay.signals == o.signals);
        assert!(o.checked_gets > 0 && o.scopes > 0 && o.refusals > 0);
        want[k] = o.signals;
    }
    let total: u32 = want.iter().sum();
    let mut got = [0u32; IMPORTERS];
    for n in 0..total {
        let from = e
            .signal_wait_from(Some(Duration::from_secs(5)))
            .unwrap_or_else(|x| panic!("{n} of {total} signals, then {x:?}"));
        got[(from.node.0 - 82) as usize] += 1;
    }
    assert_eq!(got, want, "signals per sender");
    assert!(e.signal_wait(Some(Duration::from_millis(20))).is_err());
}

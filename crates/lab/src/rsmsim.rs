//! The RSM benchmark over the simulated fabric: two hosts of a simulated Myrinet, each
//! exporting a segment the other imports, their RSM engines driven by the flit-level
//! model (`sim::rsmnet`), optionally under background traffic. Times are simulated, so
//! the figures are exact and repeatable.
//!
//! Per size it measures, as `myrix bench rsm` does over the other transports:
//! * **put**: open a barrier, put, close it (the close returns once the bytes are in the
//!   remote memory), per round;
//! * **get**: a get of the range, per round;
//! * **put ping-pong**: each side puts the message into the other's segment and the other
//!   polls its own memory for it (in the simulator, looks after every step) before
//!   answering the same way; half a round trip. The message's bytes all hold the round's
//!   tag and writes of one put are applied in order, so the last byte arriving means the
//!   whole message did; every byte is verified;
//! * **put bandwidth**: `iters` puts back to back, then one flush.
//!
//! It owns the protocol; it never prints ([`crate::report::rsm_rows`] formats the rows).

use crate::fabricbench::Setup;
use crate::LabError;
use myrix_fabric::itb::RouteTable;
use myrix_fabric::Topology;
use myrix_link::Nanos;
use myrix_rsm_proto::engine::{Config as RsmConfig, Import};
use myrix_rsm_proto::{Acl, Perm, RsmError, SegmentId};
use myrix_sim::rsmnet::RsmNet;

/// The segment each of the two hosts exports.
pub const SEGMENT: SegmentId = SegmentId(0x8000_0001);
/// Simulated time allowed per operation before the run is declared stuck.
const LIMIT: Nanos = Nanos(1_000_000_000);

/// One size's figures: the same row as between processes ([`crate::rsmbench`]), in
/// simulated time.
pub use crate::rsmbench::RsmRow;

/// Two hosts, each importing the other's segment, on a running simulated network.
pub struct RsmSimBench<'a> {
    net: RsmNet<'a>,
    x: usize,
    y: usize,
    /// x's import of y's segment, y's of x's.
    to_y: Import,
    to_x: Import,
    iters: u32,
    data: Vec<u8>,
}

fn failed(what: &str, e: RsmError) -> LabError {
    LabError::Failed(format!("{what}: {e}"))
}

impl<'a> RsmSimBench<'a> {
    /// Starts the network; hosts `s.from` and `s.to` export segments of `max_bytes` and
    /// import each other's.
    pub fn new(
        t: &'a Topology,
        routes: &'a RouteTable,
        s: &Setup,
        max_bytes: usize,
    ) -> Result<Self, LabError> {
        let (x, y) = (s.from, s.to);
        let hosts = t.num_hosts();
        if x == y || x >= hosts || y >= hosts {
            return Err(LabError::Invalid(format!(
                "hosts {x} and {y}: two different hosts below {hosts}"
            )));
        }
        let sim = s.carrier(t, routes)?;
        let mut net = RsmNet::new(sim, hosts, &RsmConfig::default());
        let len = max_bytes.max(1);
        let mut imports = [None, None];
        for (i, (a, b)) in [(x, y), (y, x)].into_iter().enumerate() {
            net.publish(b, SEGMENT, len, Acl::Open(Perm(0o666)))
                .map_err(|e| failed("publish", e))?;
            let imp = net
                .connect(a, b, SEGMENT, Perm::RDWR, LIMIT)
                .map_err(|e| failed(&format!("host {a} connecting to {b}"), e))?;
            imports[i] = Some(imp);
        }
        Ok(RsmSimBench {
            net,
            x,
            y,
            to_y: imports[0].expect("connected"),
            to_x: imports[1].expect("connected"),
            iters: s.iters.max(1),
            data: Vec::new(),
        })
    }

    /// Simulated ns since `t0` (an engine clock reading), per round.
    fn per_round(&self, t0: u64, rounds: u32) -> f64 {
        (self.net.now_ns() - t0) as f64 / rounds as f64
    }

    /// All four figures for messages of `len` bytes (0 is measured as 1: a put of
    /// nothing sends nothing).
    pub fn measure(&mut self, len: usize) -> Result<RsmRow, LabError> {
        let len = len.max(1);
        if len as u64 > self.net.memory(self.y, SEGMENT).len() as u64 {
            return Err(LabError::Invalid(format!(
                "{len} B is more than the segment"
            )));
        }
        let (x, y, imp) = (self.x, self.y, self.to_y);
        self.data.clear();
        self.data.resize(len, 0xa5);

        let t0 = self.net.now_ns();
        for _ in 0..self.iters {
            let e = &mut self.net.engines[x].engine;
            e.open_barrier(imp).map_err(|e| failed("open", e))?;
            e.put(imp, 0, &self.data).map_err(|e| failed("put", e))?;
            self.net
                .close_barrier(x, imp, LIMIT)
                .map_err(|e| failed("barrier close", e))?;
        }
        let put_ns = self.per_round(t0, self.iters);

        let t0 = self.net.now_ns();
        for _ in 0..self.iters {
            let got = self
                .net
                .get(x, imp, 0, len as u64, LIMIT)
                .map_err(|e| failed("get", e))?;
            if got != self.data {
                return Err(LabError::Failed(format!("a {len} B get read other bytes")));
            }
        }
        let get_ns = self.per_round(t0, self.iters);

        let t0 = self.net.now_ns();
        for round in 0..self.iters {
            let tag = (round % 255) as u8 + 1;
            for (src, dst, imp) in [(x, y, self.to_y), (y, x, self.to_x)] {
                self.data.fill(tag);
                self.net
                    .put(src, imp, 0, &self.data)
                    .map_err(|e| failed("ping-pong put", e))?;
                let seen = self
                    .net
                    .run_until(LIMIT, |n| n.memory(dst, SEGMENT)[len - 1] == tag);
                if !seen {
                    return Err(LabError::Failed(format!(
                        "a {len} B ping-pong put: not seen within 1 s simulated"
                    )));
                }
                if self.net.memory(dst, SEGMENT)[..len] != self.data[..] {
                    return Err(LabError::Failed(format!(
                        "a {len} B ping-pong put arrived changed"
                    )));
                }
            }
        }
        let pingpong_ns = self.per_round(t0, 2 * self.iters);

        let t0 = self.net.now_ns();
        for _ in 0..self.iters {
            self.net
                .put(x, imp, 0, &self.data)
                .map_err(|e| failed("stream put", e))?;
        }
        self.net
            .flush(
                x,
                imp,
                LIMIT.max(Nanos(len as u64 * self.iters as u64 * 100)),
            )
            .map_err(|e| failed("stream flush", e))?;
        let stream_ns = self.per_round(t0, 1);
        Ok(RsmRow {
            length: len,
            put_us: put_ns / 1000.0,
            get_us: get_ns / 1000.0,
            pingpong_us: pingpong_ns / 1000.0,
            put_mb_s: (len as f64 * self.iters as f64) / stream_ns * 1000.0,
        })
    }
}

/// The benchmark between hosts `s.from` and `s.to` of topology `t` (routes `routes`, see
/// [`crate::fabricbench::routes`]), a row per size in order.
pub fn rsm_sim_bench(
    t: &Topology,
    routes: &RouteTable,
    s: &Setup,
    sizes: &[usize],
) -> Result<Vec<RsmRow>, LabError> {
    let max = sizes.iter().copied().max().unwrap_or(1);
    let mut b = RsmSimBench::new(t, routes, s, max)?;
    sizes.iter().map(|&n| b.measure(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabricbench::routes;
    use myrix_fabric::testing::irregular;
    use myrix_fabric::updown::{Root, UpDown};
    use myrix_sim::Config;

    fn setup(t: &Topology, load: Option<f64>) -> Setup {
        Setup {
            from: 0,
            to: t.num_hosts() - 1,
            iters: 3,
            load,
            seed: 1,
            switch_model: Config::default().switch_model,
            channel_release: Config::default().channel_release,
        }
    }

    #[test]
    fn the_figures_are_plausible_and_repeat() {
        let t = irregular(4, 1);
        let routes = routes(&t, &UpDown::new(&t, Root::LowestId));
        let s = setup(&t, None);
        let rows = rsm_sim_bench(&t, &routes, &s, &[8, 4096]).unwrap();
        let (tiny, big) = (rows[0], rows[1]);
        // A one-way 8 B put is a few hundred ns on a quiet network; put + close and a
        // get are a round trip, so more than a one-way put.
        assert!(tiny.pingpong_us > 0.1 && tiny.pingpong_us < 1.5, "{tiny:?}");
        assert!(tiny.put_us > tiny.pingpong_us, "{tiny:?}");
        assert!(tiny.get_us > tiny.pingpong_us, "{tiny:?}");
        assert!(
            big.put_us > tiny.put_us && big.get_us > tiny.get_us,
            "{big:?}"
        );
        // Payload at most the link's 160 MB/s.
        assert!(big.put_mb_s > 20.0 && big.put_mb_s < 160.0, "{big:?}");
        assert_eq!(
            rsm_sim_bench(&t, &routes, &s, &[8, 4096]).unwrap(),
            rows,
            "simulated time is exact"
        );
        // The report prints them as a table and as JSON.
        let table = crate::report::rsm_rows(&rows, crate::report::Format::Table);
        assert_eq!(table.lines().count(), 3, "{table}");
        assert!(table.starts_with(&crate::report::rsm_columns()));
        let json = crate::report::rsm_rows(&rows, crate::report::Format::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[1]["length"], 4096);
        assert_eq!(v[0]["put_us"].as_f64(), Some(tiny.put_us));
        for key in ["get_us", "pingpong_us", "put_mb_s"] {
            assert!(v[0][key].is_f64(), "{key} in {json}");
        }
    }

    #[test]
    fn it_runs_under_background_traffic_and_refuses_bad_hosts() {
        let t = irregular(4, 1);
        let routes = routes(&t, &UpDown::new(&t, Root::LowestId));
        let rows = rsm_sim_bench(&t, &routes, &setup(&t, Some(0.01)), &[64]).unwrap();
        assert!(rows[0].put_us > 0.0);
        let mut s = setup(&t, None);
        s.to = s.from;
        assert!(matches!(
            rsm_sim_bench(&t, &routes, &s, &[8]),
            Err(LabError::Invalid(_))
        ));
    }

    /// The figures in docs/rsm.md: `cargo test -p myrix-lab --lib rsmsim::tests::figures
    /// -- --ignored --nocapture` (the network of `myrix bench fabric`'s defaults).
    #[test]
    #[ignore = "a measurement: prints the figures of docs/rsm.md, run by hand with cargo test -p myrix-lab --lib rsmsim::tests::figures -- --ignored --nocapture"]
    fn figures() {
        let t = irregular(16, 1);
        let routes = routes(&t, &UpDown::new(&t, Root::LowestId));
        for load in [None, Some(0.015)] {
            let s = Setup {
                iters: 10,
                ..setup(&t, load)
            };
            let rows = rsm_sim_bench(&t, &routes, &s, &[8, 128, 1024, 4096, 32768, 65536]);
            eprintln!("# hosts 0 and 63 of {}, load {load:?}", t.name());
            eprint!(
                "{}",
                crate::report::rsm_rows(&rows.unwrap(), crate::report::Format::Table)
            );
        }
    }
}

//! Reports: a load point's [`Row`] and every table, JSON and CSV the experiments and
//! benchmarks produce, as strings.
//!
//! The JSON names and the column layouts are read by other tools and compared byte for
//! byte across versions: change them only on purpose. This module formats; it never
//! prints and never measures.

use crate::experiment::{Line, Setup};
use crate::fabricbench::FabricRow;
use crate::failure::Failures;
use crate::mxbench::{Mode, MxRow};
use crate::plot::{extent, Plot, Series};
use crate::rsmbench::RsmRow;
use crate::speed::SpeedRow;
use crate::LabError;
use myrix_link::{Nanos, Picos};
use myrix_sim::Results;
use serde::Serialize;
use std::fmt::Write as _;

/// The text form of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// One load point as printed: these JSON names are stable, other tools read them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub routing: String,
    pub topology: String,
    pub switches: usize,
    pub hosts: usize,
    pub msg_bytes: usize,
    pub traffic: String,
    pub seed: u64,
    pub sim_time_ns: f64,
    pub offered_flits_ns_switch: f64,
    pub generated_flits_ns_switch: f64,
    pub accepted_flits_ns_switch: f64,
    pub accepted_batch_min: f64,
    pub accepted_batch_max: f64,
    pub avg_latency_ns: Option<f64>,
    pub p50_latency_ns: Option<f64>,
    pub p99_latency_ns: Option<f64>,
    pub latency_ci95_ns: Option<f64>,
    /// Fraction of the measured messages MSER-5 would discard as transient.
    pub mser_truncated: Option<f64>,
    pub messages_delivered: u64,
    pub link_utilization: f64,
    pub max_link_utilization: f64,
    pub saturated: bool,
    pub slack_overflows: u64,
    pub itbs_per_message: f64,
    pub itb_pool_peak: usize,
    pub switch_model: String,
    pub channel_release: String,
}

/// A point's state as the table prints it: saturated; transient (not saturated, but
/// MSER-5 cuts as far as it looks, 45 % or more of the messages: the warm-up was too
/// short or the point is on its way to saturation); or steady.
pub fn state(r: &Row) -> &'static str {
    if r.saturated {
        "SATURATED"
    } else if r.mser_truncated.is_some_and(|t| t >= 0.45) {
        "transient"
    } else {
        "steady"
    }
}

/// One row from a simulation result (`measure`: the measured time).
pub fn row(routing: &str, topology: &str, traffic: &str, measure: Picos, r: &Results) -> Row {
    let fin = |x: f64| x.is_finite().then_some(x);
    Row {
        routing: routing.to_string(),
        topology: topology.to_string(),
        switches: r.switches,
        hosts: r.hosts,
        msg_bytes: r.msg_bytes,
        traffic: traffic.to_string(),
        seed: r.seed,
        sim_time_ns: measure.as_nanos_f64(),
        offered_flits_ns_switch: r.offered,
        generated_flits_ns_switch: r.generated,
        accepted_flits_ns_switch: r.accepted,
        accepted_batch_min: r.accepted_batches.0,
        accepted_batch_max: r.accepted_batches.1,
        avg_latency_ns: fin(r.avg_latency_ns),
        p50_latency_ns: fin(r.p50_latency_ns),
        p99_latency_ns: fin(r.p99_latency_ns),
        latency_ci95_ns: fin(r.latency_ci95_ns),
        mser_truncated: fin(r.mser_truncated),
        messages_delivered: r.messages_delivered,
        link_utilization: r.link_utilization,
        max_link_utilization: r.max_link_utilization,
        saturated: r.saturated,
        slack_overflows: r.slack_overflows,
        itbs_per_message: r.itbs_per_message,
        itb_pool_peak: r.itb_pool_peak,
        switch_model: r.switch_model.name().to_string(),
        channel_release: r.channel_release.name().to_string(),
    }
}

/// Latency against accepted traffic, one curve per routing (in the rows' order), the
/// steady points only: a saturated point has no meaningful average latency. The x
/// axis reaches past every point, saturated ones included.
pub fn latency_plot(rows: &[Row], title: &str) -> Plot {
    let steady = |r: &&Row| !r.saturated && r.avg_latency_ns.is_some();
    let mut routings: Vec<&str> = rows.iter().map(|r| r.routing.as_str()).collect();
    routings.dedup();
    Plot {
        title: title.to_string(),
        x_label: "accepted traffic (flits/ns/switch)".into(),
        y_label: "average latency (ns)".into(),
        x_max: extent(rows.iter().map(|r| r.accepted_flits_ns_switch), 1e-3),
        y_max: extent(
            rows.iter().filter(steady).filter_map(|r| r.avg_latency_ns),
            1.0,
        ),
        series: routings
            .iter()
            .map(|name| Series {
                name: name.to_string(),
                points: rows
                    .iter()
                    .filter(steady)
                    .filter(|r| r.routing == *name)
                    .filter_map(|r| Some((r.accepted_flits_ns_switch, r.avg_latency_ns?)))
                    .collect(),
            })
            .collect(),
    }
}

/// Load points as a table (with a header line naming the run), pretty JSON or CSV.
pub fn render(rows: &[Row], f: Format) -> String {
    let mut s = String::new();
    match f {
        Format::Json => {
            s = serde_json::to_string_pretty(rows).expect("rows serialize");
            s.push('\n');
        }
        Format::Csv => {
            s.push_str("routing,switches,hosts,msg_bytes,seed,offered_flits_ns_switch,generated_flits_ns_switch,accepted_flits_ns_switch,avg_latency_ns,p50_latency_ns,p99_latency_ns,messages_delivered,saturated,switch_model,channel_release\n");
            for r in rows {
                let o = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{:.4},{:.5},{:.5},{},{},{},{},{},{},{}",
                    r.routing,
                    r.switches,
                    r.hosts,
                    r.msg_bytes,
                    r.seed,
                    r.offered_flits_ns_switch,
                    r.generated_flits_ns_switch,
                    r.accepted_flits_ns_switch,
                    o(r.avg_latency_ns),
                    o(r.p50_latency_ns),
                    o(r.p99_latency_ns),
                    r.messages_delivered,
                    r.saturated,
                    r.switch_model,
                    r.channel_release
                );
            }
        }
        Format::Table => {
            let many = rows.iter().any(|r| r.routing != rows[0].routing);
            if let Some(r) = rows.first() {
                let routing = if many {
                    "several (first column)"
                } else {
                    r.routing.as_str()
                };
                let _ = writeln!(
                    s,
                    "# {} ({} switches, {} hosts), routing {}, {} B messages, {} traffic, seed {}, {} ns measured per point, switch model {}, channel release {}",
                    r.topology, r.switches, r.hosts, routing, r.msg_bytes, r.traffic, r.seed, r.sim_time_ns, r.switch_model, r.channel_release
                );
            }
            if many {
                s.push_str(&format!("{:<10}", "routing"));
            }
            let _ = writeln!(
                s,
                "{:>8} {:>9} {:>9} {:>17} {:>9} {:>9} {:>9} {:>9} {:>6}  state",
                "offered",
                "generated",
                "accepted",
                "batches min-max",
                "avg ns",
                "p50 ns",
                "p99 ns",
                "messages",
                "ITBs",
            );
            for r in rows {
                let o = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0}"));
                if many {
                    s.push_str(&format!("{:<10}", r.routing));
                }
                let _ = writeln!(
                    s,
                    "{:>8.4} {:>9.5} {:>9.5} {:>8.5}-{:<8.5} {:>9} {:>9} {:>9} {:>9} {:>6.3}  {}",
                    r.offered_flits_ns_switch,
                    r.generated_flits_ns_switch,
                    r.accepted_flits_ns_switch,
                    r.accepted_batch_min,
                    r.accepted_batch_max,
                    o(r.avg_latency_ns),
                    o(r.p50_latency_ns),
                    o(r.p99_latency_ns),
                    r.messages_delivered,
                    r.itbs_per_message,
                    state(r)
                );
            }
        }
    }
    s
}

/// Failure (or join) runs: pretty JSON, or a table (for `Table` and `Csv` alike).
pub fn failures(f: &Failures, format: Format) -> Result<String, LabError> {
    let rows = &f.rows;
    if format == Format::Json {
        return Ok(serde_json::to_string_pretty(rows)
            .map_err(|e| LabError::Invalid(e.to_string()))?
            + "\n");
    }
    let join = f.joined;
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
    let mut out = format!(
        "# {} {} at {:.1} us under {} flits/ns/switch; remapped by host {}{}; map: {} switches, {} hosts; accepted traffic in flits/ns/switch ('-': window not reached)\n",
        f.what,
        if join { "joins" } else { "fails" },
        f.at.as_micros_f64(),
        f.load,
        rows.first().map_or(0, |r| r.mapper),
        if rows.first().is_some_and(|r| r.elected) {
            if join {
                " (elected: the newcomer has the highest address)"
            } else {
                " (elected: the mapper was lost)"
            }
        } else {
            ""
        },
        rows.first().map_or(0, |r| r.map_switches),
        rows.first().map_or(0, |r| r.map_hosts),
    );
    let _ = writeln!(
        out,
        "{:>10} {:>12} {:>12} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "routing",
        "detected_us",
        "rerouted_us",
        "remap_us",
        "probes",
        "lost",
        "dropped",
        "refused",
        "timeouts",
        "before",
        "during",
        "after",
        "drained"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:>10} {:>12.1} {:>12.1} {:>10.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
            r.routing,
            r.detected_at_ns / 1e3,
            r.rerouted_at_ns / 1e3,
            r.remap_ns / 1e3,
            r.remap_probes,
            r.packets_lost,
            r.dropped,
            r.refused,
            r.timeouts,
            opt(r.accepted_before),
            opt(r.accepted_during),
            opt(r.accepted_after),
            r.drained
        );
    }
    Ok(out)
}

/// The minimal-routing experiment's two header lines.
pub fn experiment_header(s: &Setup) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# myrix experiment minimal-routing: {} random irregular topologies per configuration (seeds 1..={}), {} measured per load point, uniform traffic, switch model {}, channel release {}",
        s.topologies,
        s.topologies,
        Nanos::from(s.measure),
        s.switch_model.name(),
        s.channel_release.name()
    );
    let _ = writeln!(
        out,
        "{:>4} {:>8} {:>6} {:<10} {:>22} {:>10} {:>9} {:>14} {:>10}",
        "fig",
        "switches",
        "bytes",
        "policy",
        "saturation (min-max)",
        "vs OSUD",
        "paper",
        "lat@0.01 ns",
        "ITBs/msg"
    );
    out
}

/// One policy's line of the minimal-routing table.
pub fn experiment_line(l: &Line) -> String {
    format!(
        "{:>4} {:>8} {:>6} {:<10} {:>8.4} ({:.4}-{:.4}) {:>9.2}x {:>9} {:>14.0} {:>10.3}\n",
        l.figure,
        l.switches,
        l.bytes,
        l.policy.name(),
        l.saturation,
        l.saturation_min,
        l.saturation_max,
        l.vs_osud,
        l.paper,
        l.latency_ns,
        l.itbs_per_message
    )
}

/// `myrix bench pingpong|stream`'s results: a table with a header, or compact JSON
/// (`[{"bandwidth_mb_s":…,"latency_us":…,"length":…},…]`), each ending in a newline.
pub fn mx_rows(
    rows: &[MxRow],
    mode: Mode,
    transport: &str,
    iterations: usize,
    warmup: usize,
    verified: bool,
    format: Format,
) -> String {
    if format == Format::Json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "length": r.length,
                    "latency_us": r.latency_us,
                    "bandwidth_mb_s": r.bandwidth_mb_s,
                })
            })
            .collect();
        return format!("{}\n", serde_json::Value::Array(v));
    }
    let mut out = mx_head(mode, transport, iterations, warmup, verified);
    for r in rows {
        out.push_str(&mx_row(r));
    }
    out
}

/// The MX benchmark table's heading lines, printed before the first length runs.
pub fn mx_head(
    mode: Mode,
    transport: &str,
    iterations: usize,
    warmup: usize,
    verified: bool,
) -> String {
    let mut out = format!(
        "# myrix bench {}: MX over {}, {} iterations ({} warm-up) per length{}\n",
        mode.name(),
        transport,
        iterations,
        warmup,
        if verified {
            ", every byte verified"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "{:>10} {:>12} {:>14}",
        "length", "latency_us", "bandwidth_MB/s"
    );
    out
}

/// One length's row of the MX benchmark table, printed as soon as it is measured.
pub fn mx_row(r: &MxRow) -> String {
    format!(
        "{:>10} {:>12.3} {:>14.1}\n",
        r.length, r.latency_us, r.bandwidth_mb_s
    )
}

/// An endpoint's protocol counters as one `key=value` line (for people and for the
/// namespace test), newline included.
pub fn mx_stats(side: &str, s: &myrix_mx::Stats) -> String {
    format!(
        "stats {side}: frames_in={} frames_out={} retransmits={} duplicates={} early_held={} \
         bad_frames={} stale_frames={} acks_sent={} pull_rerequests={}\n",
        s.frames_in,
        s.frames_out,
        s.retransmits,
        s.duplicates,
        s.early_held,
        s.bad_frames,
        s.stale_frames,
        s.acks_sent,
        s.pull_rerequests
    )
}

/// The RSM benchmark table's heading lines, printed before the first length runs.
pub fn rsm_head(controller: &str, iterations: usize, warmup: usize, verified: bool) -> String {
    format!(
        "# myrix bench rsm: RSM over {controller}, {iterations} iterations ({warmup} warm-up) per length{}\n{}",
        if verified { ", every byte verified" } else { "" },
        rsm_columns()
    )
}

/// The RSM benchmark's column heads (times in µs, bandwidth in MB/s).
pub fn rsm_columns() -> String {
    format!(
        "{:>10} {:>10} {:>10} {:>13} {:>10}\n",
        "length", "put_us", "get_us", "pingpong_us", "put_MB/s"
    )
}

/// The RSM benchmark's rows as a table under its column heads, or as JSON
/// ([`rsm_json`]).
pub fn rsm_rows(rows: &[RsmRow], format: Format) -> String {
    if format == Format::Json {
        return rsm_json(rows);
    }
    let mut out = rsm_columns();
    for r in rows {
        out.push_str(&rsm_row(r));
    }
    out
}

/// One length's row of the RSM benchmark table.
pub fn rsm_row(r: &RsmRow) -> String {
    format!(
        "{:>10} {:>10.3} {:>10.3} {:>13.3} {:>10.1}\n",
        r.length, r.put_us, r.get_us, r.pingpong_us, r.put_mb_s
    )
}

/// The RSM benchmark's rows as one JSON array, newline included.
pub fn rsm_json(rows: &[RsmRow]) -> String {
    let v: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "length": r.length,
                "put_us": r.put_us,
                "get_us": r.get_us,
                "pingpong_us": r.pingpong_us,
                "put_mb_s": r.put_mb_s,
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(v))
}

/// `myrix bench fabric`'s column heads.
pub fn fabric_head() -> String {
    format!(
        "{:>9} {:>14} {:>12} {:>16}\n",
        "bytes", "one-way us", "MB/s", "frames per msg"
    )
}

/// One message size of `myrix bench fabric`.
pub fn fabric_row(r: &FabricRow) -> String {
    format!(
        "{:>9} {:>14.3} {:>12.1} {:>16.1}\n",
        r.bytes,
        r.one_way_ns / 1000.0,
        r.bytes as f64 / r.one_way_ns * 1000.0,
        r.frames_per_message
    )
}

/// `myrix bench fabric --format json`: one compact array, the names of `bench pingpong`'s
/// JSON plus the frames per message
/// (`[{"bandwidth_mb_s":…,"frames_per_message":…,"latency_us":…,"length":…},…]`),
/// ending in a newline.
pub fn fabric_json(rows: &[FabricRow]) -> String {
    let v: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "length": r.bytes,
                "latency_us": r.one_way_ns / 1000.0,
                "bandwidth_mb_s": r.bytes as f64 / r.one_way_ns * 1000.0,
                "frames_per_message": r.frames_per_message,
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::Array(v))
}

/// `myrix bench sim`'s column heads.
pub fn speed_head() -> String {
    format!(
        "{:>8} {:>7} {:>9} {:>12} {:>8} {:>8} {:>16} {:>18} {:>9}\n",
        "switches",
        "load",
        "accepted",
        "flit-hops",
        "cpu s",
        "wall s",
        "flit-hops/cpu s",
        "delivered flits/s",
        "peak MiB"
    )
}

/// One run of `myrix bench sim`.
pub fn speed_row(r: &SpeedRow) -> String {
    format!(
        "{:>8} {:>7.4} {:>9.5} {:>12} {:>8.2} {:>8.2} {:>16.3e} {:>18.3e} {:>9.0}{}\n",
        r.switches,
        r.load,
        r.accepted,
        r.flit_hops,
        r.cpu_s,
        r.wall_s,
        r.flit_hops as f64 / r.cpu_s,
        r.wire_flits_delivered as f64 / r.cpu_s,
        r.peak_mib.unwrap_or(f64::NAN),
        if r.saturated {
            "  saturated"
        } else if r.wire_flits_delivered == 0 {
            // A message longer than the window: the speed columns measure nothing.
            "  nothing delivered (a message outlasts --sim-time)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(routing: &str, offered: f64, lat: Option<f64>, saturated: bool) -> Row {
        Row {
            routing: routing.into(),
            topology: "irregular-4-seed1".into(),
            switches: 4,
            hosts: 16,
            msg_bytes: 32,
            traffic: "uniform".into(),
            seed: 1,
            sim_time_ns: 2000.0,
            offered_flits_ns_switch: offered,
            generated_flits_ns_switch: offered,
            accepted_flits_ns_switch: offered * 0.9,
            accepted_batch_min: offered * 0.8,
            accepted_batch_max: offered,
            avg_latency_ns: lat,
            p50_latency_ns: lat,
            p99_latency_ns: lat.map(|l| l * 2.0),
            latency_ci95_ns: lat.map(|_| 1.0),
            mser_truncated: Some(if saturated { 0.5 } else { 0.1 }),
            messages_delivered: 1234,
            link_utilization: 0.1,
            max_link_utilization: 0.2,
            saturated,
            slack_overflows: 0,
            itbs_per_message: 0.25,
            itb_pool_peak: 3,
            switch_model: "shared-unit".into(),
            channel_release: "drain".into(),
        }
    }

    #[test]
    fn the_table_names_the_run_and_marks_each_state() {
        let mut transient = point("osud", 0.004, Some(310.4), false);
        transient.mser_truncated = Some(0.45);
        let rows = [
            point("osud", 0.002, Some(300.6), false),
            transient,
            point("osud", 0.006, None, true),
        ];
        let t = render(&rows, Format::Table);
        assert_eq!(
            t,
            concat!(
                "# irregular-4-seed1 (4 switches, 16 hosts), routing osud, 32 B messages, uniform traffic, seed 1, 2000 ns measured per point, switch model shared-unit, channel release drain\n",
                " offered generated  accepted   batches min-max    avg ns    p50 ns    p99 ns  messages   ITBs  state\n",
                "  0.0020   0.00200   0.00180  0.00160-0.00200        301       301       601      1234  0.250  steady\n",
                "  0.0040   0.00400   0.00360  0.00320-0.00400        310       310       621      1234  0.250  transient\n",
                "  0.0060   0.00600   0.00540  0.00480-0.00600          -         -         -      1234  0.250  SATURATED\n",
            )
        );
        // Several policies: a first column.
        let two = [
            point("osud", 0.002, Some(1.0), false),
            point("rmit", 0.002, Some(1.0), false),
        ];
        let t = render(&two, Format::Table);
        assert!(t.contains("routing several (first column)"), "{t}");
        assert!(
            t.lines().nth(1).unwrap().starts_with("routing    offered"),
            "{t}"
        );
        assert!(
            t.lines().nth(3).unwrap().starts_with("rmit        0.0020"),
            "{t}"
        );
        assert_eq!(
            render(&[], Format::Table).lines().count(),
            1,
            "just the heads"
        );
    }

    #[test]
    fn csv_and_json_keep_their_names() {
        let rows = [
            point("osud", 0.002, Some(300.64), false),
            point("osud", 0.006, None, true),
        ];
        let csv = render(&rows, Format::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("routing,switches,hosts,msg_bytes,seed,offered_flits_ns_switch,")
        );
        assert_eq!(
            lines[1],
            "osud,4,16,32,1,0.0020,0.00200,0.00180,300.6,300.6,601.3,1234,false,shared-unit,drain"
        );
        assert_eq!(
            lines[2],
            "osud,4,16,32,1,0.0060,0.00600,0.00540,,,,1234,true,shared-unit,drain"
        );
        let json = render(&rows, Format::Json);
        assert!(json.ends_with("]\n"));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["routing"], "osud");
        assert_eq!(v[1]["avg_latency_ns"], serde_json::Value::Null);
        let keys: Vec<&str> = v[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 27);
        assert!(json.find("\"routing\"").unwrap() < json.find("\"channel_release\"").unwrap());
    }

    #[test]
    fn the_latency_plot_has_a_curve_per_routing_of_steady_points() {
        let rows = [
            point("osud", 0.002, Some(300.0), false),
            point("osud", 0.006, Some(900.0), true),
            point("rmit", 0.002, Some(280.0), false),
            point("rmit", 0.004, None, false),
        ];
        let p = latency_plot(&rows, "t");
        assert_eq!(p.series.len(), 2);
        assert_eq!(p.series[0].points, [(0.002 * 0.9, 300.0)]);
        assert_eq!(p.series[1].name, "rmit");
        assert_eq!(p.series[1].points.len(), 1);
        assert_eq!(
            p.x_max,
            extent([0.006 * 0.9], 1e-3),
            "saturated points widen the x axis"
        );
        assert_eq!(p.y_max, 300.0 * 1.1);
    }

    #[test]
    fn benchmark_rows() {
        let r = [MxRow {
            length: 8,
            latency_us: 1.23456,
            bandwidth_mb_s: 6.5,
        }];
        assert_eq!(
            mx_rows(&r, Mode::Pingpong, "shm", 10, 1, false, Format::Json),
            "[{\"bandwidth_mb_s\":6.5,\"latency_us\":1.23456,\"length\":8}]\n"
        );
        assert_eq!(
            mx_rows(&r, Mode::Stream, "udp", 10, 1, true, Format::Table),
            "# myrix bench stream: MX over udp, 10 iterations (1 warm-up) per length, every byte verified\n    length   latency_us bandwidth_MB/s\n         8        1.235            6.5\n"
        );
        let f = FabricRow {
            bytes: 1000,
            one_way_ns: 2000.0,
            frames_per_message: 1.0,
        };
        assert_eq!(
            fabric_row(&f),
            "     1000          2.000        500.0              1.0\n"
        );
        assert_eq!(fabric_head().len(), fabric_row(&f).len());
        assert_eq!(
            fabric_json(&[f]),
            "[{\"bandwidth_mb_s\":500.0,\"frames_per_message\":1.0,\"latency_us\":2.0,\"length\":1000}]\n"
        );
    }
}

//! Latency against accepted traffic, one curve per routing, as SVG (plotters' SVG
//! backend writes text as SVG text, so no font files are needed).

use crate::sim_cmd::Row;
use crate::CliError;
use plotters::prelude::*;
use std::path::Path;

/// Plots are SVG: checked before any simulation runs.
pub fn check_path(path: &Path) -> Result<(), CliError> {
    if path.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(CliError::Input(format!(
            "--plot {}: only .svg plots are supported (PNG would need font files)",
            path.display()
        )));
    }
    Ok(())
}

pub fn latency_vs_traffic(rows: &[Row], path: &Path, title: &str) -> Result<(), CliError> {
    check_path(path)?;
    let err = |e: String| CliError::Input(format!("--plot {}: {e}", path.display()));
    // Saturated points have no meaningful average latency: plot the steady ones.
    let pts: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.saturated && r.avg_latency_ns.is_some())
        .collect();
    let xmax = rows
        .iter()
        .map(|r| r.accepted_flits_ns_switch)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.1;
    let ymax = pts
        .iter()
        .filter_map(|r| r.avg_latency_ns)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("accepted traffic (flits/ns/switch)")
        .y_desc("average latency (ns)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let mut routings: Vec<&str> = rows.iter().map(|r| r.routing.as_str()).collect();
    routings.dedup();
    for (i, name) in routings.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let series: Vec<(f64, f64)> = pts
            .iter()
            .filter(|r| r.routing == *name)
            .filter_map(|r| Some((r.accepted_flits_ns_switch, r.avg_latency_ns?)))
            .collect();
        chart
            .draw_series(LineSeries::new(series.clone(), color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(
                series
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

//! Latency against accepted traffic, one curve per routing, as SVG or PNG. SVG needs no
//! font files (plotters writes text as SVG text); PNG rasterizes text, so it needs a
//! TrueType font on the machine (DejaVu Sans, Debian's `fonts-dejavu-core`, or the file
//! named by `MYRIX_FONT`), loaded with `ab_glyph` rather than a font-kit system lookup.

use crate::sim_cmd::Row;
use crate::CliError;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where a sans-serif TrueType font is looked for, after `MYRIX_FONT`.
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

enum Format {
    Svg,
    Png,
}

fn format_of(path: &Path) -> Result<Format, CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        _ => Err(CliError::Input(format!(
            "--plot {}: the file name must end in .svg or .png",
            path.display()
        ))),
    }
}

fn font_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MYRIX_FONT") {
        return Some(PathBuf::from(p));
    }
    FONT_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Registers the font PNG text is drawn with, once per process.
fn load_font(plot: &Path) -> Result<(), CliError> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let path = font_path().ok_or_else(|| {
                "a PNG plot needs a TrueType font: install fonts-dejavu-core, set MYRIX_FONT \
                 to a .ttf file, or plot to .svg"
                    .to_string()
            })?;
            let bytes =
                std::fs::read(&path).map_err(|e| format!("font {}: {e}", path.display()))?;
            // plotters keeps registered fonts for the whole process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("font {}: not a TrueType font", path.display()))
        })
        .clone()
        .map_err(|e| CliError::Input(format!("--plot {}: {e}", plot.display())))
}

/// Checks the plot's file name (and, for PNG, that a font loads) before any simulation
/// runs.
pub fn check_path(path: &Path) -> Result<(), CliError> {
    match format_of(path)? {
        Format::Svg => Ok(()),
        Format::Png => load_font(path),
    }
}

pub fn latency_vs_traffic(rows: &[Row], path: &Path, title: &str) -> Result<(), CliError> {
    check_path(path)?;
    let err = |e: String| CliError::Input(format!("--plot {}: {e}", path.display()));
    let size = (900, 600);
    match format_of(path)? {
        Format::Svg => draw(rows, SVGBackend::new(path, size).into_drawing_area(), title),
        Format::Png => draw(
            rows,
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
        ),
    }
    .map_err(err)
}

fn draw<DB: DrawingBackend>(
    rows: &[Row],
    root: DrawingArea<DB, Shift>,
    title: &str,
) -> Result<(), String> {
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
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("accepted traffic (flits/ns/switch)")
        .y_desc("average latency (ns)")
        .draw()
        .map_err(|e| e.to_string())?;
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
            .map_err(|e| e.to_string())?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(
                series
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

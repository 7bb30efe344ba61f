//! Latency against accepted traffic, one curve per routing, as SVG or PNG.
//!
//! plotters draws SVG, which writes text as SVG text and needs no font file. A PNG is
//! that SVG rasterized by resvg, which does need a font for the text: the system's
//! fonts (DejaVu Sans preferred) or the file `MYRIX_FONT` names. Without one, a PNG plot
//! is refused before any simulation runs; SVG never depends on fonts.

use crate::sim_cmd::Row;
use crate::CliError;
use plotters::prelude::*;
use resvg::{tiny_skia, usvg};
use std::path::Path;

enum Kind {
    Svg,
    Png,
}

fn kind(path: &Path) -> Result<Kind, CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Kind::Svg),
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(Kind::Png),
        _ => Err(CliError::Input(format!(
            "--plot {}: the file must end in .svg or .png",
            path.display()
        ))),
    }
}

/// The fonts a PNG's text is drawn with, with the generic families pointed at one of
/// them; an error line when there is none.
fn fonts(path: &Path) -> Result<usvg::Options<'static>, CliError> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    if let Some(f) = std::env::var_os("MYRIX_FONT") {
        db.load_font_file(&f).map_err(|e| {
            CliError::Input(format!(
                "--plot {}: MYRIX_FONT={}: {e}",
                path.display(),
                Path::new(&f).display()
            ))
        })?;
    } else {
        db.load_system_fonts();
    }
    let families: Vec<String> = db
        .faces()
        .filter_map(|f| f.families.first().map(|(n, _)| n.clone()))
        .collect();
    let Some(family) = families
        .iter()
        .find(|n| n.as_str() == "DejaVu Sans")
        .or(families.first())
        .cloned()
    else {
        return Err(CliError::Input(format!(
            "--plot {}: a PNG plot needs a TrueType or OpenType font and none was found \
             (install one, e.g. Debian's fonts-dejavu-core, set MYRIX_FONT=FILE, or plot to .svg)",
            path.display()
        )));
    };
    db.set_sans_serif_family(family.clone());
    db.set_serif_family(family.clone());
    opt.font_family = family;
    Ok(opt)
}

/// Checked before any simulation runs: a known format, and a font for PNG.
pub fn check_path(path: &Path) -> Result<(), CliError> {
    match kind(path)? {
        Kind::Svg => Ok(()),
        Kind::Png => fonts(path).map(|_| ()),
    }
}

pub fn latency_vs_traffic(rows: &[Row], path: &Path, title: &str) -> Result<(), CliError> {
    let kind = kind(path)?;
    let err = |e: String| CliError::Input(format!("--plot {}: {e}", path.display()));
    let svg = draw_svg(rows, title).map_err(err)?;
    match kind {
        Kind::Svg => std::fs::write(path, svg).map_err(|e| err(e.to_string())),
        Kind::Png => {
            let opt = fonts(path)?;
            let tree = usvg::Tree::from_str(&svg, &opt).map_err(|e| err(e.to_string()))?;
            let size = tree.size().to_int_size();
            let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
                .ok_or_else(|| err("empty image".into()))?;
            resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
            pixmap.save_png(path).map_err(|e| err(e.to_string()))
        }
    }
}

/// The plot as an SVG document.
fn draw_svg(rows: &[Row], title: &str) -> Result<String, String> {
    let mut out = String::new();
    draw(
        rows,
        title,
        SVGBackend::with_string(&mut out, (900, 600)).into_drawing_area(),
    )?;
    Ok(out)
}

fn draw(
    rows: &[Row],
    title: &str,
    root: DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
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

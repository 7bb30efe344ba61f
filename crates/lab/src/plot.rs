//! Line plots of plain `(x, y)` series, one curve per series, as SVG or PNG.
//!
//! plotters draws SVG, which writes text as SVG text and needs no font file. A PNG is
//! that SVG rasterized by resvg, which does need a font for the text: the system's
//! fonts (DejaVu Sans preferred) or the file `MYRIX_FONT` names. Without one, a PNG
//! plot is refused ([`check_path`], before any simulation runs); SVG never depends on
//! fonts.
//!
//! This module knows nothing of the simulator: callers turn their rows into series
//! (see [`report::latency_plot`](crate::report::latency_plot)). It never prints.

use crate::LabError;
use plotters::prelude::*;
use resvg::{tiny_skia, usvg};
use std::path::Path;

/// One curve: a name for the legend and its points, drawn as a line with dots.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A plot: axes from 0 to `x_max` and `y_max`, curves in the palette's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_max: f64,
    pub y_max: f64,
    pub series: Vec<Series>,
}

/// An axis end with room above the largest value: `max(values, floor) × 1.1`.
pub fn extent(values: impl IntoIterator<Item = f64>, floor: f64) -> f64 {
    values.into_iter().fold(0.0, f64::max).max(floor) * 1.1
}

enum Kind {
    Svg,
    Png,
}

fn kind(path: &Path) -> Result<Kind, LabError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Kind::Svg),
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(Kind::Png),
        _ => Err(LabError::plot(path, "the file must end in .svg or .png")),
    }
}

/// The fonts a PNG's text is drawn with, with the generic families pointed at one of
/// them; an error when there is none.
fn fonts(path: &Path) -> Result<usvg::Options<'static>, LabError> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    if let Some(f) = std::env::var_os("MYRIX_FONT") {
        db.load_font_file(&f).map_err(|e| {
            LabError::plot(path, format!("MYRIX_FONT={}: {e}", Path::new(&f).display()))
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
        return Err(LabError::plot(
            path,
            "a PNG plot needs a TrueType or OpenType font and none was found \
             (install one, e.g. Debian's fonts-dejavu-core, set MYRIX_FONT=FILE, or plot to .svg)",
        ));
    };
    db.set_sans_serif_family(family.clone());
    db.set_serif_family(family.clone());
    opt.font_family = family;
    Ok(opt)
}

/// Checked before any work is done: a known format (.svg or .png), a directory to write
/// it in, and a font for PNG.
pub fn check_path(path: &Path) -> Result<(), LabError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(LabError::plot(
            path,
            format!("no directory {} to write it in", dir.display()),
        ));
    }
    match kind(path)? {
        Kind::Svg => Ok(()),
        Kind::Png => fonts(path).map(|_| ()),
    }
}

/// Draws `plot` into `path`: SVG, or PNG by the file's extension.
pub fn write(plot: &Plot, path: &Path) -> Result<(), LabError> {
    let kind = kind(path)?;
    let err = |e: String| LabError::plot(path, e);
    let svg = svg(plot).map_err(err)?;
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

/// The plot as an SVG document, 900 × 600.
pub fn svg(plot: &Plot) -> Result<String, String> {
    let mut out = String::new();
    draw(
        plot,
        SVGBackend::with_string(&mut out, (900, 600)).into_drawing_area(),
    )?;
    Ok(out)
}

fn draw(
    plot: &Plot,
    root: DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&plot.title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..plot.x_max, 0.0..plot.y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(plot.x_label.as_str())
        .y_desc(plot.y_label.as_str())
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, s) in plot.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plot() -> Plot {
        Plot {
            title: "two curves".into(),
            x_label: "x things".into(),
            y_label: "y things".into(),
            x_max: extent([1.0, 2.0], 1e-3),
            y_max: extent([], 1.0),
            series: vec![
                Series {
                    name: "alpha".into(),
                    points: vec![(0.5, 0.25), (1.0, 0.5), (2.0, 0.75)],
                },
                Series {
                    name: "beta".into(),
                    points: vec![],
                },
            ],
        }
    }

    #[test]
    fn extent_leaves_room_and_has_a_floor() {
        assert_eq!(extent([1.0, 2.0], 1e-3), 2.0 * 1.1);
        assert_eq!(extent([], 1.0), 1.1);
        assert_eq!(extent([0.0], 1e-3), 1e-3 * 1.1);
    }

    #[test]
    fn the_svg_has_the_title_labels_legend_and_a_dot_per_point() {
        let s = svg(&plot()).unwrap();
        assert!(s.starts_with("<svg"), "{s}");
        for text in ["two curves", "x things", "y things", "alpha", "beta"] {
            assert!(s.contains(text), "{text}");
        }
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(svg(&plot()).unwrap(), s, "the same plot, the same bytes");
    }

    #[test]
    fn files_are_svg_or_png_by_name() {
        let dir = std::env::temp_dir().join(format!("myrix-lab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("p.svg");
        check_path(&p).unwrap();
        write(&plot(), &p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), svg(&plot()).unwrap());
        let e = check_path(&dir.join("p.gif")).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("p.gif: the file must end in .svg or .png"),
            "{e}"
        );
        assert!(matches!(e, LabError::Plot { .. }));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Progress of long runs on standard error: drawn only when standard error is a
//! terminal (indicatif draws nothing otherwise), redrawn a few times a second and
//! cleared when the run ends. Standard output, which scripts read, is never touched.

use indicatif::{ProgressBar, ProgressStyle};
use myrix_link::Picos;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Simulated time and load points of `myrix sim`, from any thread.
pub struct SimProgress {
    bar: ProgressBar,
    /// Load points in all, when known (not for a sweep).
    points: Option<usize>,
    done: AtomicUsize,
    simulated_ps: AtomicU64,
    /// The last finished point's load, as f64 bits.
    last: AtomicU64,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A bar (or a spinner, without `len`) that redraws itself while drawn at all.
pub fn bar(len: Option<u64>, template: &str) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::no_length(),
    };
    bar.set_style(style(template));
    if !bar.is_hidden() {
        bar.enable_steady_tick(Duration::from_millis(250));
    }
    bar
}

/// Simulated time, shortly: `12.3 ms`, `4.56 s`.
pub fn simulated(p: Picos) -> String {
    let s = p.0 as f64 * 1e-12;
    match s {
        s if s >= 1.0 => format!("{s:.2} s"),
        s if s >= 1e-3 => format!("{:.1} ms", s * 1e3),
        s => format!("{:.0} us", s * 1e6),
    }
}

impl SimProgress {
    /// `points` load points of `per_point` simulated time each (warm-up included), or a
    /// sweep whose points are not known in advance (`None`); drawn only if `shown` (one
    /// rank of a job draws it).
    pub fn new(points: Option<usize>, per_point: Picos, shown: bool) -> SimProgress {
        let total = points.map(|n| (n as u64).saturating_mul(per_point.0 / 1000).max(1));
        let template = match total {
            Some(_) => "{bar:20} {percent:>3}% {msg}, {elapsed} so far, about {eta} left",
            None => "{spinner} {msg}, {elapsed} so far",
        };
        SimProgress {
            bar: if shown {
                bar(total, template)
            } else {
                ProgressBar::hidden()
            },
            points,
            done: AtomicUsize::new(0),
            simulated_ps: AtomicU64::new(0),
            last: AtomicU64::new(f64::NAN.to_bits()),
        }
    }

    fn refresh(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let ps = self.simulated_ps.load(Ordering::Relaxed);
        let done = self.done.load(Ordering::Relaxed);
        let last = f64::from_bits(self.last.load(Ordering::Relaxed));
        let of = self.points.map_or(String::new(), |n| format!("/{n}"));
        let last = if last.is_nan() {
            String::new()
        } else {
            format!(" (last {last:.4})")
        };
        self.bar.set_message(format!(
            "{} simulated, {done}{of} load points{last}",
            simulated(Picos(ps))
        ));
        if let Some(len) = self.bar.length() {
            self.bar.set_position((ps / 1000).min(len));
        }
    }

    /// A stretch of simulated time run by one of the points.
    pub fn advanced(&self, p: Picos) {
        self.simulated_ps.fetch_add(p.0, Ordering::Relaxed);
        self.refresh();
    }

    /// A load point finished.
    pub fn point_done(&self, load: f64) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.last.store(load.to_bits(), Ordering::Relaxed);
        self.refresh();
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

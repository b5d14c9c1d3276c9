//! Line plots of benchmark results as PNG (or SVG) files, with plotters (pure Rust, no
//! system libraries). Text uses the vendored DejaVu Sans (`data/fonts/`, free licence in
//! `data/fonts/DejaVuSans-LICENSE.txt`), registered once as plotters' `sans-serif`.
//!
//! Usage: build a [`LinePlot`] (one [`Series`] per mechanism, points (x, y)), then
//! [`LinePlot::write`] to a `.png` or `.svg` path. Logarithmic axes are drawn by plotting
//! log10 of the data on linear axes with `10^k` tick labels, so every plot has one
//! coordinate type.

use crate::{BenchError, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// The vendored font (DejaVu Sans, see `data/fonts/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../../../data/fonts/DejaVuSans.ttf");

fn register_font() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(BenchError::Internal(
            "the vendored font could not be loaded".into(),
        ))
    }
}

/// One named line of points (x, y); points with non-finite coordinates, or non-positive
/// ones on a logarithmic axis, are skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points, plotted in the given order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// One series per group, in order of first appearance: for each distinct x of a group
    /// the mean of `y` over its items with that x (e.g. the mean over repeats), sorted by x.
    /// Items whose `group` is `None` are left out.
    pub fn grouped_means<T>(
        items: &[T],
        group: impl Fn(&T) -> Option<String>,
        x: impl Fn(&T) -> f64,
        y: impl Fn(&T) -> f64,
    ) -> Vec<Series> {
        // per group: (x, sum of y, count) for each distinct x
        type Sums = Vec<(f64, f64, usize)>;
        let mut groups: Vec<(String, Sums)> = Vec::new();
        for item in items {
            let Some(g) = group(item) else { continue };
            let k = match groups.iter().position(|(name, _)| *name == g) {
                Some(k) => k,
                None => {
                    groups.push((g, Vec::new()));
                    groups.len() - 1
                }
            };
            let (xi, yi) = (x(item), y(item));
            let sums = &mut groups[k].1;
            match sums.iter_mut().find(|(sx, _, _)| *sx == xi) {
                Some(slot) => {
                    slot.1 += yi;
                    slot.2 += 1;
                }
                None => sums.push((xi, yi, 1)),
            }
        }
        groups
            .into_iter()
            .map(|(label, mut sums)| {
                sums.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    label,
                    points: sums
                        .into_iter()
                        .map(|(x, total, count)| (x, total / count as f64))
                        .collect(),
                }
            })
            .collect()
    }
}

/// The result files `<prefix>*.jsonl` in `dir`, sorted by name, each as (file stem, the
/// lines that parse as `T`; other lines are skipped) — what the figure commands redraw from.
pub fn read_result_files<T: serde::de::DeserializeOwned>(
    dir: &Path,
    prefix: &str,
) -> Result<Vec<(String, Vec<T>)>> {
    let entries = std::fs::read_dir(dir).map_err(crate::io_error(dir))?;
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| f.starts_with(prefix))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(crate::io_error(&path))?;
        let records = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(prefix)
            .to_string();
        out.push((stem, records));
    }
    Ok(out)
}

/// A line plot with a legend.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePlot {
    /// Caption above the plot.
    pub title: String,
    /// x-axis description.
    pub x_label: String,
    /// y-axis description.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
}

fn plot_error(path: &Path, e: impl std::fmt::Display) -> BenchError {
    BenchError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    }
}

impl LinePlot {
    fn transformed(&self) -> Vec<(String, Vec<(f64, f64)>)> {
        let tx = |v: f64, log: bool| if log { v.log10() } else { v };
        self.series
            .iter()
            .map(|s| {
                let pts = s
                    .points
                    .iter()
                    .filter(|(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && (!self.log_x || *x > 0.0)
                            && (!self.log_y || *y > 0.0)
                    })
                    .map(|&(x, y)| (tx(x, self.log_x), tx(y, self.log_y)))
                    .collect();
                (s.label.clone(), pts)
            })
            .collect()
    }

    /// Writes the plot to `path` (`.svg` → SVG, anything else → PNG) at `width × height`
    /// pixels. Fails on an I/O error or when no series has a plottable point.
    pub fn write(&self, path: &Path, width: u32, height: u32) -> Result<()> {
        register_font()?;
        let is_svg = path.extension().is_some_and(|e| e == "svg");
        if is_svg {
            let root = SVGBackend::new(path, (width, height)).into_drawing_area();
            self.draw(root, path)
        } else {
            let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
            self.draw(root, path)
        }
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, plotters::coord::Shift>,
        path: &Path,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let data = self.transformed();
        let all: Vec<(f64, f64)> = data.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        if all.is_empty() {
            return Err(plot_error(path, "nothing to plot"));
        }
        let range = |v: &mut dyn Iterator<Item = f64>| {
            let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
            let pad = if hi > lo { 0.05 * (hi - lo) } else { 0.5 };
            (lo - pad)..(hi + pad)
        };
        let xr = range(&mut all.iter().map(|p| p.0));
        let yr = range(&mut all.iter().map(|p| p.1));
        root.fill(&WHITE).map_err(|e| plot_error(path, e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(xr, yr)
            .map_err(|e| plot_error(path, e))?;
        let fmt = |log: bool| {
            move |v: &f64| {
                if log {
                    format!("{:.2e}", 10f64.powf(*v))
                } else {
                    format!("{v:.3}")
                }
            }
        };
        let (fx, fy) = (fmt(self.log_x), fmt(self.log_y));
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| plot_error(path, e))?;
        for (k, (label, pts)) in data.into_iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| plot_error(path, e))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| plot_error(path, e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| plot_error(path, e))?;
        root.present().map_err(|e| plot_error(path, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_means_average_repeats_per_x_and_sort() {
        // (group, x, y): the means are computed by hand
        let items = [
            ("a", 2.0, 1.0),
            ("b", 1.0, 5.0),
            ("a", 1.0, 4.0),
            ("a", 2.0, 3.0),
            ("skip", 1.0, 9.0),
        ];
        let series = Series::grouped_means(
            &items,
            |t| (t.0 != "skip").then(|| t.0.to_string()),
            |t| t.1,
            |t| t.2,
        );
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].label, "a");
        assert_eq!(series[0].points, vec![(1.0, 4.0), (2.0, 2.0)]);
        assert_eq!(series[1].label, "b");
        assert_eq!(series[1].points, vec![(1.0, 5.0)]);
    }

    #[test]
    fn writes_png_and_svg_and_refuses_empty() {
        let dir = std::env::temp_dir().join(format!("dpqr-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plot = LinePlot {
            title: "test".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                label: "a".into(),
                points: vec![(0.1, 1.0), (1.0, 0.1), (-1.0, 5.0)],
            }],
        };
        let png = dir.join("a.png");
        plot.write(&png, 320, 240).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let svg = dir.join("a.svg");
        plot.write(&svg, 320, 240).unwrap();
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
        let empty = LinePlot {
            series: vec![Series {
                label: "b".into(),
                points: vec![(-1.0, 1.0)],
            }],
            ..plot
        };
        assert!(empty.write(&dir.join("b.png"), 320, 240).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}

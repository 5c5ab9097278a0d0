//! Line charts for the report, each written as SVG and PNG with the same drawing code.
//!
//! Text is drawn in Noto Sans, embedded in the binary (the `ttf-noto-sans` crate): the PNGs
//! look the same on every machine, with no font to install.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Registers the embedded font for chart text, once. `Err` says the font did not load (the
/// report then says why no chart was drawn).
pub fn ensure_font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, ttf_noto_sans::REGULAR)
            .map_err(|_| "the embedded chart font (Noto Sans) did not load".to_string())
    })
    .clone()
}

/// Line colors, chosen to stay apart from one another on white (Palette99 puts yellow on
/// white early).
const COLORS: [RGBColor; 14] = [
    RGBColor(228, 26, 28),
    RGBColor(55, 126, 184),
    RGBColor(77, 175, 74),
    RGBColor(0, 0, 0),
    RGBColor(255, 127, 0),
    RGBColor(152, 78, 163),
    RGBColor(166, 86, 40),
    RGBColor(247, 129, 191),
    RGBColor(120, 120, 120),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(0, 0, 128),
    RGBColor(128, 0, 0),
    RGBColor(0, 100, 0),
];

/// An axis label: integers as they are up to 10^4, powers of ten beyond, three significant
/// digits otherwise.
fn label(v: &f64) -> String {
    let v = *v;
    if v == 0.0 {
        "0".to_string()
    } else if v.abs() >= 1e4 {
        format!("{v:.0e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend text.
    pub label: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Dashed reference line (an optimum, a bound) rather than a measurement.
    pub reference: bool,
}

/// A chart: title, axis descriptions with units, scales and lines.
#[derive(Clone, Debug)]
pub struct Chart {
    /// The title.
    pub title: String,
    /// The x axis, with its unit.
    pub x_desc: String,
    /// The y axis, with its unit.
    pub y_desc: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Put the legend in the upper right corner instead of the upper left (where the data
    /// leaves room).
    pub legend_right: bool,
    /// Put the legend in the lower corner instead of the upper one (for lines that rise from
    /// the lower left to the upper right, such as requested against actual sleep).
    pub legend_bottom: bool,
}

/// Writes `chart` to `dir/stem.svg` and `dir/stem.png`; returns the two paths.
pub fn write(chart: &Chart, dir: &Path, stem: &str) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    let size = (1000, 620);
    draw(chart, SVGBackend::new(&svg, size).into_drawing_area())
        .map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
    draw(chart, BitMapBackend::new(&png, size).into_drawing_area())
        .map_err(|e| format!("cannot draw {}: {e}", png.display()))?;
    Ok(vec![svg, png])
}

fn bounds(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let pts = chart.series.iter().flat_map(|s| &s.points);
    let keep = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    let xs: Vec<f64> = pts
        .clone()
        .map(|p| p.0)
        .filter(|&v| keep(v, chart.log_x))
        .collect();
    let ys: Vec<f64> = pts.map(|p| p.1).filter(|&v| keep(v, chart.log_y)).collect();
    let span = |v: &[f64], log: bool| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.05).max(1e-9);
            (
                (lo - pad)
                    .min(0.0)
                    .max(if lo >= 0.0 { 0.0 } else { f64::MIN }),
                hi + pad,
            )
        }
    };
    (span(&xs, chart.log_x), span(&ys, chart.log_y))
}

/// Writes `charts` side by side under one `title` to `dir/stem.svg` and `dir/stem.png` (one
/// figure with a panel per chart, e.g. idle | loaded); returns the two paths.
pub fn write_panels(
    title: &str,
    charts: &[Chart],
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    let n = charts.len().max(1) as u32;
    let size = (760 * n, 660);
    draw_panels(
        title,
        charts,
        SVGBackend::new(&svg, size).into_drawing_area(),
    )
    .map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
    draw_panels(
        title,
        charts,
        BitMapBackend::new(&png, size).into_drawing_area(),
    )
    .map_err(|e| format!("cannot draw {}: {e}", png.display()))?;
    Ok(vec![svg, png])
}

fn draw_panels<DB: DrawingBackend>(
    title: &str,
    charts: &[Chart],
    root: DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: &dyn std::fmt::Display| err.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let body = root.titled(title, ("sans-serif", 26)).map_err(|x| e(&x))?;
    let panels = body.split_evenly((1, charts.len().max(1)));
    for (chart, panel) in charts.iter().zip(&panels) {
        plot_on(chart, panel, 20)?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

fn draw<DB: DrawingBackend>(chart: &Chart, root: DrawingArea<DB, Shift>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: &dyn std::fmt::Display| err.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    plot_on(chart, &root, 24)?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Draws one chart (caption of `caption_size` points, mesh, lines, legend) on `area`.
fn plot_on<DB: DrawingBackend>(
    chart: &Chart,
    area: &DrawingArea<DB, Shift>,
    caption_size: u32,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: &dyn std::fmt::Display| err.to_string();
    let ((x0, x1), (y0, y1)) = bounds(chart);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&chart.title, ("sans-serif", caption_size))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80);
    macro_rules! body {
        ($ctx:expr) => {{
            let mut ctx = $ctx;
            ctx.configure_mesh()
                .x_desc(chart.x_desc.as_str())
                .y_desc(chart.y_desc.as_str())
                .label_style(("sans-serif", 15))
                .x_label_formatter(&label)
                .y_label_formatter(&label)
                .axis_desc_style(("sans-serif", 17))
                .draw()
                .map_err(|x| e(&x))?;
            for (i, s) in chart.series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()].to_rgba();
                let style = color.stroke_width(2);
                let points: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| (!chart.log_x || p.0 > 0.0) && (!chart.log_y || p.1 > 0.0))
                    .collect();
                if s.reference {
                    // Dashed with crosses, so it stays visible where a measurement lies on it.
                    ctx.draw_series(DashedLineSeries::new(points.clone(), 8, 6, style))
                        .map_err(|x| e(&x))?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| Cross::new((x + 10, y), 5, style));
                    ctx.draw_series(points.iter().map(|&p| Cross::new(p, 7, style)))
                        .map_err(|x| e(&x))?;
                } else {
                    ctx.draw_series(LineSeries::new(points.clone(), style))
                        .map_err(|x| e(&x))?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                    ctx.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|x| e(&x))?;
                }
            }
            ctx.configure_series_labels()
                .position(match (chart.legend_bottom, chart.legend_right) {
                    (false, false) => SeriesLabelPosition::UpperLeft,
                    (false, true) => SeriesLabelPosition::UpperRight,
                    (true, false) => SeriesLabelPosition::LowerLeft,
                    (true, true) => SeriesLabelPosition::LowerRight,
                })
                .label_font(("sans-serif", 14))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|x| e(&x))?;
        }};
    }
    match (chart.log_x, chart.log_y) {
        (true, true) => body!(builder
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|x| e(&x))?),
        (true, false) => body!(builder
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(|x| e(&x))?),
        (false, true) => body!(builder
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|x| e(&x))?),
        (false, false) => body!(builder
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|x| e(&x))?),
    }
    Ok(())
}

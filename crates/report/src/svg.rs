//! Line charts as inline SVG: a few dozen lines of markup each, readable offline in any browser, with
//! no script or font to fetch.

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// A chart: lines over a shared x axis, and shaded x ranges (e.g. GC pauses) behind them.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub shaded: Vec<(f64, f64)>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 340.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// About five round tick values covering `lo..hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::EPSILON);
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(magnitude * 10.0);
    let first = (lo / step).ceil() * step;
    (0..=20)
        .map(|i| first + i as f64 * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect()
}

fn tick_label(v: f64) -> String {
    if v.abs() >= 1000.0 {
        crate::cells::group_thousands(v.round())
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders `chart` as an `<svg>` element.
pub fn line_chart(chart: &Chart) -> String {
    let points = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x_lo, mut x_hi, mut y_hi) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in points {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        y_hi = y_hi.max(y);
    }
    for &(a, b) in &chart.shaded {
        x_lo = x_lo.min(a);
        x_hi = x_hi.max(b);
    }
    if x_lo > x_hi {
        (x_lo, x_hi) = (0.0, 1.0);
    }
    if (x_hi - x_lo).abs() < f64::EPSILON {
        (x_lo, x_hi) = (x_lo - 1.0, x_hi + 1.0);
    }
    let y_hi = if y_hi > 0.0 { y_hi * 1.08 } else { 1.0 };
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let sx = |x: f64| LEFT + (x - x_lo) / (x_hi - x_lo) * plot_w;
    let sy = |y: f64| TOP + plot_h - y / y_hi * plot_h;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{title}">
<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>
<text x="{LEFT}" y="22" font-size="15" font-weight="bold" font-family="sans-serif">{title}</text>
"#,
        title = escape(&chart.title)
    );
    for &(a, b) in &chart.shaded {
        let (x0, x1) = (sx(a), sx(b).max(sx(a) + 1.0));
        svg.push_str(&format!(
            r##"<rect class="shade" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#f4b6b6" opacity="0.7"/>
"##,
            x1 - x0
        ));
    }
    for y in ticks(0.0, y_hi) {
        let py = sy(y);
        svg.push_str(&format!(
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" font-family="sans-serif">{}</text>
"##,
            LEFT + plot_w,
            LEFT - 6.0,
            py + 4.0,
            tick_label(y)
        ));
    }
    for x in ticks(x_lo, x_hi) {
        let px = sx(x);
        svg.push_str(&format!(
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" font-size="11" text-anchor="middle" font-family="sans-serif">{}</text>
"##,
            TOP + plot_h,
            TOP + plot_h + 16.0,
            tick_label(x)
        ));
    }
    svg.push_str(&format!(
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>
<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" font-family="sans-serif">{}</text>
<text x="16" y="{:.1}" font-size="12" text-anchor="middle" font-family="sans-serif" transform="rotate(-90 16 {:.1})">{}</text>
"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0,
        escape(&chart.x_label),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(&chart.y_label)
    ));
    for (i, series) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = series
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let dash = if series.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        svg.push_str(&format!(
            r#"<polyline class="series" points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}><title>{}</title></polyline>
"#,
            path.join(" "),
            escape(&series.name)
        ));
        if series.points.len() <= 40 {
            for &(x, y) in &series.points {
                svg.push_str(&format!(
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}: {} → {}</title></circle>
"#,
                    sx(x),
                    sy(y),
                    escape(&series.name),
                    tick_label(x),
                    tick_label(y)
                ));
            }
        }
        let ly = TOP + 14.0 + i as f64 * 18.0;
        svg.push_str(&format!(
            r#"<line x1="{:.1}" x2="{:.1}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}" font-size="12" font-family="sans-serif">{}</text>
"#,
            WIDTH - RIGHT + 12.0,
            WIDTH - RIGHT + 34.0,
            WIDTH - RIGHT + 40.0,
            ly + 4.0,
            escape(&series.name)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(1000.0, 5000.0);
        assert_eq!(t.first(), Some(&1000.0));
        assert_eq!(t.last(), Some(&5000.0));
    }

    #[test]
    fn a_chart_draws_every_series_and_escapes_names() {
        let chart = Chart {
            title: "p99 <vs> rate".into(),
            x_label: "ops/s".into(),
            y_label: "ms".into(),
            series: vec![
                Series {
                    name: "G1 & co".into(),
                    points: vec![(1000.0, 2.0), (2000.0, 3.5)],
                    dashed: false,
                },
                Series {
                    name: "ZGC".into(),
                    points: vec![(1000.0, 1.0)],
                    dashed: true,
                },
            ],
            shaded: vec![(1200.0, 1300.0)],
        };
        let svg = line_chart(&chart);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("class=\"shade\"").count(), 1);
        assert!(svg.contains("G1 &amp; co") && svg.contains("p99 &lt;vs&gt; rate"));
        assert!(!svg.contains("G1 & co"));
    }
}

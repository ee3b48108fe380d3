//! `cqlbench report` over real runs: a campaign-shaped directory (2 configurations x 2 rates, each
//! cell a real `cqlbench run` against a real node). Every number of the four seed tables in
//! report.md and report.html is checked against the cells' own summary.json by code that does not
//! share the report's path; the page is self-contained and has its charts.

mod run_support;

use std::collections::BTreeMap;
use std::path::Path;

use run_support::{cqlbench, cqlbench_ok, f64_at, one_line_error, read_summary, TestNode};

const CONFIGS: [&str; 2] = ["G1 jdk17", "G1 again"];
const RATES: [u32; 2] = [300, 600];
const SEED_TITLES: [&str; 4] = [
    "Throughput",
    "Writes Average p99",
    "Reads Average p99",
    "Max p99",
];

/// The tables of report.md: title → config → values by column.
fn markdown_tables(md: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut tables = BTreeMap::new();
    let mut title = String::new();
    for line in md.lines() {
        if let Some(t) = line.strip_prefix("## ") {
            title = t.to_string();
            continue;
        }
        if !line.starts_with("| ") || line.starts_with("| ---") {
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let rows: &mut BTreeMap<String, Vec<String>> = tables.entry(title.clone()).or_default();
        rows.insert(cells[0].clone(), cells[1..].to_vec());
    }
    tables
}

/// The seeds print two decimals with thousands grouped.
fn seed_number(value: f64) -> String {
    let text = format!("{value:.2}");
    let (whole, fraction) = text.split_once('.').unwrap();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{grouped}.{fraction}")
}

#[test]
fn report_tables_match_the_cells_and_the_page_stands_alone() {
    let node = TestNode::start("report-runs", "127.0.4.129");
    let dir = tempfile::tempdir().unwrap();
    let campaign = dir.path().join("campaign");
    for config in CONFIGS {
        for rate in RATES {
            let out = campaign.join(config).join(rate.to_string());
            cqlbench_ok(&[
                "run",
                "KeyValue",
                "--host",
                &node.host,
                "--keyspace",
                "report_runs",
                "-d",
                "3s",
                "--rate",
                &rate.to_string(),
                "--p99-window",
                "1s",
                "-o",
                out.to_str().unwrap(),
            ]);
        }
    }
    // An unfinished cell (a campaign's temporary directory) is not part of the report.
    std::fs::create_dir_all(campaign.join(CONFIGS[0]).join(".900.tmp")).unwrap();
    let stdout = cqlbench_ok(&[
        "report",
        campaign.to_str().unwrap(),
        "--order",
        &CONFIGS.join(","),
    ]);
    assert!(stdout.contains("report.html"), "{stdout}");
    assert!(
        stdout.contains("Average p99: the mean of the per-window p99s (1 s windows)"),
        "{stdout}"
    );

    let md = std::fs::read_to_string(campaign.join("report.md"))
        .unwrap()
        // A cell taken while the machine was busy is marked (campaign.rs checks the marks).
        .replace('†', "");
    // The note under the heading says which windows "Average p99" averages (the cells' --p99-window).
    assert!(
        md.contains("mean of the per-window p99s (1 s windows)"),
        "{md}"
    );
    let html = std::fs::read_to_string(campaign.join("report.html"))
        .unwrap()
        // A cell taken while the machine was busy is marked (campaign.rs checks the marks).
        .replace('†', "");
    assert!(html.contains("mean of the per-window p99s (1 s windows)"));
    let tables = markdown_tables(&md);
    let expected_columns: Vec<String> = RATES.iter().map(|r| format!("{r} ops/s")).collect();
    let header = |title: &str, unit: &str| format!("{title} ({unit})");
    for (title, unit) in [
        ("Throughput", "ops/s"),
        ("Writes Average p99", "ms"),
        ("Reads Average p99", "ms"),
        ("Max p99", "ms"),
    ] {
        let table = &tables[title];
        assert_eq!(table[&header(title, unit)], expected_columns, "{title}");
        for config in CONFIGS {
            for (column, rate) in RATES.iter().enumerate() {
                let summary = read_summary(&campaign.join(config).join(rate.to_string()));
                let value = match title {
                    "Throughput" => f64_at(&summary, "achieved_rate"),
                    "Writes Average p99" => f64_at(&summary, "ops.write.avg_p99_ms"),
                    "Reads Average p99" => f64_at(&summary, "ops.read.avg_p99_ms"),
                    _ => f64_at(&summary, "ops.write.max_p99_ms")
                        .max(f64_at(&summary, "ops.read.max_p99_ms")),
                };
                assert_eq!(
                    table[config][column],
                    seed_number(value),
                    "{title}, {config} at {rate} ops/s\n{md}"
                );
            }
        }
    }
    // The second configuration against the first at each rate: the same figures as `cqlbench
    // compare` prints for those two cells.
    for rate in RATES {
        let a = campaign.join(CONFIGS[0]).join(rate.to_string());
        let b = campaign.join(CONFIGS[1]).join(rate.to_string());
        let compared = cqlbench_ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
        let throughput: Vec<&str> = compared
            .lines()
            .find(|l| l.starts_with("throughput"))
            .unwrap()
            .split_whitespace()
            .collect();
        let row = format!(
            "| {rate} ops/s | {} | {} | throughput (ok ops/s) | {} | {} |",
            CONFIGS[0], CONFIGS[1], throughput[3], throughput[4]
        );
        assert!(md.contains(&row), "{row} not in\n{md}");
    }
    // Every cell's percentile rows: counts and corrected percentiles of its own summary.json.
    let percentile_rows: Vec<Vec<&str>> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Percentiles per cell"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---") && !l.starts_with("| config"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(
        percentile_rows.len(),
        CONFIGS.len() * RATES.len() * 2,
        "{md}"
    );
    for row in &percentile_rows {
        // config | rate | repeat | op | ok | failed | p50 | p90 | p99 | p99.9 | max
        let rate = row[1].trim_end_matches(" ops/s");
        let summary = read_summary(&campaign.join(row[0]).join(rate));
        let op = row[3];
        assert_eq!(
            row[4],
            format!("{}", f64_at(&summary, &format!("ops.{op}.count"))),
            "{row:?}"
        );
        let failed: f64 = ["timeout", "unavailable", "overloaded", "other", "unsent"]
            .iter()
            .map(|kind| f64_at(&summary, &format!("ops.{op}.errors.{kind}")))
            .sum();
        assert_eq!(row[5], format!("{failed}"), "{row:?}");
        for (column, quantile) in [(6, "p50"), (7, "p90"), (8, "p99"), (9, "p999"), (10, "max")] {
            let value = f64_at(&summary, &format!("ops.{op}.latency_ms.{quantile}"));
            assert_eq!(row[column], seed_number(value), "{quantile} of {row:?}");
        }
    }
    // Rows in the order asked for, as in the terminal.
    let first = stdout.find(CONFIGS[0]).unwrap();
    let second = stdout.find(CONFIGS[1]).unwrap();
    assert!(first < second, "{stdout}");

    // The page: the same tables, its charts, and nothing to fetch.
    let html = std::fs::read_to_string(campaign.join("report.html"))
        .unwrap()
        // A cell taken while the machine was busy is marked (campaign.rs checks the marks).
        .replace('†', "");
    for (title, rows) in &tables {
        if !SEED_TITLES.contains(&title.as_str()) {
            continue;
        }
        assert!(html.contains(&format!("data-title=\"{title}\"")), "{title}");
        for (config, values) in rows {
            let row = format!(
                "<tr><td>{config}</td>{}</tr>",
                values
                    .iter()
                    .map(|v| format!("<td>{v}</td>"))
                    .collect::<String>()
            );
            if !config.contains('(') {
                assert!(html.contains(&row), "{row} not in report.html");
            }
        }
    }
    // p99 (writes, reads), p99.9, offered/achieved, and per cell its latency over time with the
    // machine's validity evidence beside it.
    assert_eq!(
        html.matches("<svg").count(),
        4 + 2 * CONFIGS.len() * RATES.len()
    );
    let machine_charts = html
        .split("<svg")
        .skip(1)
        .filter(|chart| {
            chart[..chart.find("</svg>").unwrap()].contains("the machine during the window")
        })
        .count();
    assert_eq!(machine_charts, CONFIGS.len() * RATES.len());
    for fetch in ["<script", "src=", "href=", "@import", "url("] {
        assert!(
            !html.contains(fetch),
            "report.html refers to something outside: {fetch}"
        );
    }
    seen_in_a_real_browser(&campaign, &tables);
    compare_two_cells(&campaign);
    report_refusals(dir.path());
}

/// Debian's Chromium (scripts/test.sh installs it) opens report.html headless: the DOM it built has
/// the seed tables with report.md's values and every chart, and its screenshot is not blank.
fn seen_in_a_real_browser(
    campaign: &Path,
    tables: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
) {
    let browser = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| std::process::Command::new(b).arg("--version").output().is_ok())
        .expect("Chromium is needed to check report.html as a person sees it (apt-get install chromium)");
    let page = format!("file://{}", campaign.join("report.html").display());
    // Each run its own profile: one whose helpers are still letting go of the last one's would
    // refuse to open it.
    let runs = std::cell::Cell::new(0);
    let headless = |extra: &[&str]| {
        runs.set(runs.get() + 1);
        let out = std::process::Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .arg(format!(
                "--user-data-dir={}",
                campaign.join(format!(".chromium-{}", runs.get())).display()
            ))
            .args(extra)
            .arg(&page)
            .output()
            .expect("run chromium");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let dom = String::from_utf8(headless(&["--dump-dom"]).stdout)
        .unwrap()
        // As in report.md: a cell taken while the machine was busy carries the doubtful mark.
        .replace('†', "");
    for (title, rows) in tables
        .iter()
        .filter(|(t, _)| SEED_TITLES.contains(&t.as_str()))
    {
        assert!(
            dom.contains(&format!("data-title=\"{title}\"")),
            "{title} not in the DOM"
        );
        for (config, values) in rows.iter().filter(|(c, _)| !c.contains('(')) {
            let cells: String = values.iter().map(|v| format!("<td>{v}</td>")).collect();
            assert!(
                dom.contains(&format!("<tr><td>{config}</td>{cells}</tr>")),
                "{title}: row of {config} not in the DOM as in report.md"
            );
        }
    }
    assert_eq!(
        dom.matches("<svg").count(),
        4 + 2 * CONFIGS.len() * RATES.len()
    );
    assert!(dom.matches("<polyline").count() >= 4 + 2 * CONFIGS.len() * RATES.len());
    let shot = campaign.join("report.png");
    headless(&[
        "--window-size=1200,1600",
        &format!("--screenshot={}", shot.display()),
    ]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let pixels = &pixels[..info.buffer_size()];
    // A blank page is one colour; tables, text and lines make many pixels differ from the first.
    let differing = pixels
        .chunks(info.color_type.samples())
        .filter(|p| *p != &pixels[..info.color_type.samples()])
        .count();
    let share = differing as f64 / (pixels.len() / info.color_type.samples()) as f64;
    assert!(
        share > 0.02,
        "the screenshot is nearly blank ({share:.4} of pixels differ)"
    );
}

/// A run's per-second successful throughput as its intervals.csv has it (the measured rows of each
/// reporting moment added up; moments less than half a second after the previous one, a run's last
/// few milliseconds, left out as `compare` documents), read here apart from it.
fn per_second_values(run: &Path) -> Vec<f64> {
    let rows = run_support::interval_rows(run);
    let mut seconds: Vec<(f64, f64)> = Vec::new();
    for row in rows.iter().filter(|r| r.phase == "measured") {
        match seconds.last_mut() {
            Some((end, total)) if *end == row.end => *total += row.get("achieved_ops_s"),
            _ => seconds.push((row.end, row.get("achieved_ops_s"))),
        }
    }
    let mut previous = 0.0;
    let mut kept = Vec::new();
    for (end, value) in seconds {
        if end - previous >= 0.5 {
            kept.push(value);
        }
        previous = end;
    }
    kept
}

/// The same configuration at 300 and at 600 ops/s. A and B are the runs' per-second means, and the
/// verdict, interval and p are Welch's test on those per-second values. Whether a doubling is called
/// significant depends on how steady three seconds were on this machine (one stall spreads the
/// values), so the test asks for the verdict the values give, not for a verdict fixed in advance;
/// that a real shift is found and noise is not, the report crate's unit tests show.
fn compare_two_cells(campaign: &Path) {
    let a = campaign.join(CONFIGS[0]).join("300");
    let b = campaign.join(CONFIGS[0]).join("600");
    let stdout = cqlbench_ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("throughput"))
        .unwrap_or_else(|| panic!("{stdout}"));
    let numbers: Vec<f64> = row
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == ',')
        .filter_map(|t| t.trim_end_matches('%').parse().ok())
        .collect();
    // A, B, B - A, change %, interval low, interval high (3 decimals), p (4 decimals)
    let (values_a, values_b) = (per_second_values(&a), per_second_values(&b));
    let expected = cqlbench_report::welch(&values_a, &values_b, "throughput")
        .unwrap_or_else(|| panic!("fewer than 2 seconds: {values_a:?} {values_b:?}"));
    let printed = |value: f64, expected: f64| (value - expected).abs() <= 0.0005 + 1e-9;
    assert!(
        printed(numbers[0], expected.a) && printed(numbers[1], expected.b),
        "{row}: per-second values {values_a:?} and {values_b:?}"
    );
    assert!(printed(numbers[2], expected.b - expected.a), "{row}");
    let (low, high) = (numbers[4], numbers[5]);
    assert!(
        printed(low, expected.ci.0) && printed(high, expected.ci.1),
        "{row}: interval {:?} from {values_a:?} and {values_b:?}",
        expected.ci
    );
    assert!(low <= numbers[2] && numbers[2] <= high, "{row}");
    let significant = if row.ends_with(" not significant") {
        false
    } else {
        assert!(row.ends_with(" significant"), "no verdict: {row}");
        true
    };
    assert_eq!(
        significant, expected.significant,
        "{row}: Welch on {values_a:?} and {values_b:?}"
    );
    eprintln!("compare: {row}");
    for op in ["read", "write"] {
        assert!(stdout.contains(&format!("{op} p99 (ms)")), "{stdout}");
    }
    one_line_error(
        &mut run_support::cqlbench_command(&[
            "compare",
            a.to_str().unwrap(),
            campaign.to_str().unwrap(),
        ]),
        "is not a run directory",
    );
}

fn report_refusals(dir: &Path) {
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    one_line_error(
        &mut run_support::cqlbench_command(&["report", empty.to_str().unwrap()]),
        "no results in",
    );
    one_line_error(
        &mut run_support::cqlbench_command(&["report", dir.join("missing").to_str().unwrap()]),
        "is not a directory",
    );
    let broken = dir.join("broken").join("cfg").join("100");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("summary.json"), "{ not json").unwrap();
    one_line_error(
        &mut run_support::cqlbench_command(&["report", dir.join("broken").to_str().unwrap()]),
        "is not a cqlbench summary",
    );
    assert!(!cqlbench(&["report"]).status.success());
}

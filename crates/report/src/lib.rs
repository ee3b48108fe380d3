//! cqlbench-report: the seeds' tables and charts from the result directories of runs and campaigns.
//!
//! A campaign directory holds one cell per configuration and rate: `DIR/<config>/<rate>/summary.json`
//! (or `DIR/<config>/<rate>/<repeat>/summary.json` with repeats), each written by `cqlbench run`. This
//! crate reads the cells, builds the four tables of seed 000 (Throughput; Writes Average p99; Reads
//! Average p99; Max p99 — config × rate) and the percentiles of every cell, and renders them as
//! Markdown, as a self-contained HTML page with inline SVG charts (it opens offline: no script, no
//! font, no request), and as plain text for the terminal.

mod cells;
mod compare;
mod cost;
mod html;
mod markdown;
mod merge;
mod probe_table;
mod server;
mod svg;
mod tables;
mod tail;
mod verdict;

pub use cells::{discover, Campaign, Cell, RateKey, DOUBTFUL_MARK};
pub use compare::{compare_runs, format_comparison, welch, Comparison, FigureDiff};
pub use cost::{cost_tables, CostRow, CostTable};
pub use html::html;
pub use markdown::{markdown, terminal};
pub use merge::{merge_runs, MergeError, MergedRun};
pub use probe_table::{probe_comparison, probe_machine_line, probe_table};
pub use server::{server_figures, ServerFigures};
pub use tables::{doubtful_footnotes, seed_tables, Entry, Table};
pub use tail::{node_stops, parse_timeline, tail_vs_gc, NodeStops, Stop, TailVsGc};
pub use verdict::{verdict, ALIKE_BELOW};

use std::path::{Path, PathBuf};

use cqlbench_results::write_atomically;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Results(#[from] cqlbench_results::ResultsError),
    #[error(
        "no results in {0}: expected <config>/<rate>/summary.json below it (a campaign directory)"
    )]
    NoCells(PathBuf),
    #[error("{0} is not a run directory: it has no summary.json")]
    NotARun(PathBuf),
}

/// Writes `report.md` and `report.html` into `out`; returns their paths.
pub fn write_report(campaign: &Campaign, out: &Path) -> Result<(PathBuf, PathBuf), ReportError> {
    std::fs::create_dir_all(out).map_err(|source| ReportError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let tables = seed_tables(campaign);
    let md = out.join("report.md");
    let page = out.join("report.html");
    // A reader never sees half a report.
    write_atomically(&md, markdown(campaign, &tables).as_bytes())?;
    write_atomically(&page, html(campaign, &tables).as_bytes())?;
    Ok((md, page))
}

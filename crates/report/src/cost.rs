//! Seed 001's price/performance: a plan's `[cost]` prices over each configuration's achieved
//! throughput.

use std::path::Path;

use cqlbench_results::{ConfigRecord, Cost, HOURS_PER_MONTH};

use crate::cells::{group_thousands, Campaign, Cell, DOUBTFUL_MARK};

/// One configuration's cost: what an hour of it costs, and what each rate achieved for the money.
#[derive(Debug, Clone, PartialEq)]
pub struct CostTable {
    pub config: String,
    /// From the configuration's `config.json`; unknown without it (and then no price).
    pub nodes: Option<usize>,
    /// The most load clients any of its cells ran with.
    pub clients: u64,
    pub hourly: Option<f64>,
    pub monthly: Option<f64>,
    pub rows: Vec<CostRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    /// The rate's column heading, or "max throughput"; marked † when a cell of it is doubtful.
    pub label: String,
    /// Successful operations per second (the mean over repeats).
    pub achieved: f64,
    /// `achieved` per currency unit spent in an hour.
    pub per_currency_hour: Option<f64>,
}

/// The configuration directory of a cell (above its rate, and its repeat when it has one).
fn config_dir(cell: &Cell) -> Option<&Path> {
    let rate_dir = if cell.repeat.is_some() {
        cell.dir.parent()?
    } else {
        &cell.dir
    };
    rate_dir.parent()
}

/// One table per configuration, in the report's order.
pub fn cost_tables(campaign: &Campaign, cost: &Cost) -> Vec<CostTable> {
    campaign
        .configs
        .iter()
        .filter_map(|config| {
            let cells: Vec<&Cell> = campaign
                .cells
                .iter()
                .filter(|c| &c.config == config)
                .collect();
            let nodes = cells
                .first()
                .and_then(|c| config_dir(c))
                .and_then(|dir| ConfigRecord::read(dir).ok())
                .and_then(|record| record.spec)
                .map(|spec| spec.nodes);
            let clients = cells.iter().map(|c| c.summary.clients.max(1)).max()?;
            let hourly = nodes.map(|n| cost.hourly(n, clients));
            let per_hour = |achieved: f64| hourly.filter(|h| *h > 0.0).map(|h| achieved / h);
            let mut rows: Vec<CostRow> = campaign
                .rates
                .iter()
                .filter_map(|rate| {
                    let achieved: Vec<f64> = campaign
                        .cells_at(config, rate)
                        .map(|c| c.summary.achieved_rate)
                        .collect();
                    let mean = achieved.iter().sum::<f64>() / achieved.len().max(1) as f64;
                    let doubtful = campaign.cells_at(config, rate).any(Cell::is_doubtful);
                    (!achieved.is_empty()).then(|| CostRow {
                        label: if doubtful {
                            format!("{}{DOUBTFUL_MARK}", rate.label())
                        } else {
                            rate.label()
                        },
                        achieved: mean,
                        per_currency_hour: per_hour(mean),
                    })
                })
                .collect();
            // The highest rate's row stands for the maximum, its mark included.
            let top = rows.iter().max_by(|a, b| a.achieved.total_cmp(&b.achieved));
            let marked = top.is_some_and(|r| r.label.ends_with(DOUBTFUL_MARK));
            let max = top.map_or(0.0, |r| r.achieved);
            rows.push(CostRow {
                label: if marked {
                    format!("max throughput{DOUBTFUL_MARK}")
                } else {
                    "max throughput".into()
                },
                achieved: max,
                per_currency_hour: per_hour(max),
            });
            Some(CostTable {
                config: config.clone(),
                nodes,
                clients,
                hourly,
                monthly: hourly.map(|h| h * HOURS_PER_MONTH),
                rows,
            })
        })
        .collect()
}

/// `0.1234` → `0.1234`, `1234.5` → `1,234.50`: prices keep cents, small ones four places.
pub(crate) fn price(value: f64) -> String {
    if value < 1.0 {
        format!("{value:.4}")
    } else {
        group_thousands((value * 100.0).round() / 100.0)
    }
}

/// The line above a configuration's table: its nodes, clients, and prices.
pub(crate) fn cost_heading(table: &CostTable, cost: &Cost) -> String {
    let currency = &cost.currency;
    match (table.nodes, table.hourly, table.monthly) {
        (Some(nodes), Some(hourly), Some(monthly)) => format!(
            "{nodes} node(s) × {} + {} client(s) × {}{} = {} {currency} per hour, {} {currency} per month ({HOURS_PER_MONTH} h)",
            price(cost.node_hourly),
            table.clients,
            price(cost.client_hourly.unwrap_or(0.0)),
            cost.cluster_monthly
                .map_or(String::new(), |m| format!(" + {} / {HOURS_PER_MONTH} h", price(m))),
            price(hourly),
            price(monthly)
        ),
        _ => "nodes unknown (no config.json): no price".to_string(),
    }
}

pub(crate) fn cost_headings(cost: &Cost) -> Vec<String> {
    vec![
        "rate".into(),
        "achieved ops/s".into(),
        format!("ops/s per {}-hour", cost.currency),
    ]
}

pub(crate) fn cost_rows(table: &CostTable) -> Vec<Vec<String>> {
    table
        .rows
        .iter()
        .map(|row| {
            vec![
                row.label.clone(),
                group_thousands((row.achieved * 10.0).round() / 10.0),
                cqlbench_results::shown(row.per_currency_hour, |v| {
                    group_thousands((v * 10.0).round() / 10.0)
                }),
            ]
        })
        .collect()
}

pub(crate) const COST_NOTE: &str = "The plan's [cost] prices over each configuration's achieved \
throughput (successful operations per second, the mean over repeats): the price of an hour is its \
nodes and load clients at their hourly prices plus the monthly fee over 730 hours (seed 001's \
price/performance).";

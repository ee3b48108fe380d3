//! cqlbench-metrics: a running benchmark's figures for Prometheus.
//!
//! The load loop never touches this crate. Its reporter already drains the client threads' recorders
//! once a second; at that moment it hands the interval to [`LiveMetrics::record_interval`], which adds
//! it to cumulative counters and histogram buckets behind a lock that only the reporter and the
//! exporter thread take. The exporter thread ([`Exporter`]) answers `GET /metrics` with the text
//! exposition format (version 0.0.4), so a scrape sees the figures as of the last reporting tick.

mod buckets;
mod exposition;
mod server;

pub use buckets::{bucket_bounds_us, BucketCounts};
pub use exposition::{LiveInterval, LiveMetrics, LiveOp, RunPhase};
pub use server::{parse_listen_address, Exporter, DEFAULT_PORT};

/// Why metrics cannot be served, as one line for the CLI.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("--prometheus '{given}': not an address and port like 127.0.0.1:{DEFAULT_PORT} or [::1]:{DEFAULT_PORT}")]
    Malformed { given: String },
    #[error("--prometheus {addr}: not a loopback address, so anyone who reaches this machine could read the metrics; add --prometheus-public to serve them there anyway")]
    NotLoopback { addr: std::net::SocketAddr },
    #[error("--prometheus {addr}: the address is in use (another exporter, or another program, listens there); choose another port")]
    InUse { addr: std::net::SocketAddr },
    #[error("--prometheus {addr}: cannot listen there: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}

//! Everything that can stop a campaign, each as one line.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CampaignError {
    /// A plan that cannot run, found before anything starts.
    #[error("{path}, line {line}, `{key}`: {message}")]
    Plan {
        path: String,
        line: usize,
        key: String,
        message: String,
    },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{0}")]
    Directory(String),

    #[error(transparent)]
    Cluster(#[from] cqlbench_cluster::ClusterError),

    /// The cluster a run started for itself failed.
    #[error("the local cluster for the run: {0}")]
    LocalCluster(cqlbench_cluster::ClusterError),

    /// A run that cannot go on, in one line.
    #[error("{0}")]
    Run(String),

    #[error(transparent)]
    Load(#[from] cqlbench_load::LoadError),

    #[error(transparent)]
    Metrics(#[from] cqlbench_metrics::MetricsError),

    #[error(transparent)]
    Results(#[from] cqlbench_results::ResultsError),

    #[error("the machine probe: {0} (--no-probe skips it)")]
    Probe(#[from] cqlbench_probe::ProbeError),

    #[error("the report: {0}")]
    Report(#[from] cqlbench_report::ReportError),

    #[error("interrupted: finished cells are kept, the cell that was running was discarded; run the same plan into the same directory to resume")]
    Interrupted,
}

pub(crate) trait IoContext<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, CampaignError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, CampaignError> {
        self.map_err(|source| CampaignError::Io {
            context: context(),
            source,
        })
    }
}

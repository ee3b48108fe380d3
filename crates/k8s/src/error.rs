//! Everything that can stop a render, each as one line.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum K8sError {
    /// A plan that cannot be rendered, found before anything is written.
    #[error("{path}, line {line}, `{key}`: {message}")]
    Plan {
        path: String,
        line: usize,
        key: String,
        message: String,
    },

    /// The campaign part of the plan ([cluster], [[config]], [load], [sweep], [slo]).
    #[error(transparent)]
    Campaign(#[from] cqlbench_campaign::CampaignError),

    #[error("{0}")]
    Invalid(String),

    /// A result file that could not be written or read back.
    #[error(transparent)]
    Results(#[from] cqlbench_results::ResultsError),

    /// The Kubernetes API refused or failed a request, or objects outlived the wait.
    #[error("{0}")]
    Kube(String),

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl K8sError {
    /// A failed Kubernetes request as one line: what was tried, and the API's own message and code
    /// (not the client's debug dump of the whole status).
    pub fn kube(what: &str, source: &kube::Error) -> K8sError {
        let message = match source {
            kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
            other => with_causes(other),
        };
        K8sError::Kube(format!("{what}: {message}").replace('\n', " "))
    }
}

/// An error and the causes under it, one after another (a connection's `client error (Connect)` says
/// nothing until its cause, `Connection refused`, follows).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = next.source();
    }
    text
}

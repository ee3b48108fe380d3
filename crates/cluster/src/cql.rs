//! What one node says over CQL about the ring: its own tokens, datacenter and rack, and the peers it knows.
//!
//! The driver is async; callers of this crate are synchronous, and may themselves run inside a
//! tokio runtime, so every query runs on a private thread with its own small runtime.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::response::query_result::QueryRowsResult;

use crate::error::{ClusterError, Result};

/// One node's view of the ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    pub local_tokens: Vec<i64>,
    /// The node's own datacenter and rack (`system.local`), as its snitch sees them.
    pub datacenter: Option<String>,
    pub rack: Option<String>,
    /// Every peer in `system.peers` with its tokens (empty while it is still joining).
    pub peers: Vec<(IpAddr, Vec<i64>)>,
}

/// Runs `future` to completion on a fresh thread with its own runtime (safe from inside a runtime).
pub fn block_on<T, F>(future: F) -> T
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread tokio runtime always builds")
            .block_on(future)
    })
    .join()
    .expect("the CQL thread does not panic")
}

/// A session that talks to `address` only, never to the peers the driver discovers.
pub async fn single_node_session(address: SocketAddr, timeout: Duration) -> Result<Session> {
    let filter =
        AllowListHostFilter::new([address]).map_err(|e| ClusterError::Cql(e.to_string()))?;
    let mut builder = SessionBuilder::new()
        .known_node_addr(address)
        .host_filter(Arc::new(filter))
        .connection_timeout(timeout);
    // Nodes with PasswordAuthenticator: the same variables `cqlbench run` reads (a half-set pair
    // is reported by `run`; here it simply means no credentials).
    if let Ok(Some(c)) = cqlbench_cql::Credentials::from_env() {
        builder = builder.user(c.username, c.password);
    }
    match tokio::time::timeout(timeout, builder.build()).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(err)) => Err(ClusterError::Cql(format!("{address}: {err}"))),
        Err(_) => Err(ClusterError::Cql(format!(
            "{address}: no answer within {timeout:?}"
        ))),
    }
}

/// Asks the node at `address` for its tokens and peers. Blocking: the driver's futures are polled
/// here, so that they are compiled once, in this crate, not in every caller.
pub fn node_view(address: SocketAddr, timeout: Duration) -> Result<NodeView> {
    block_on(fetch_node_view(address, timeout))
}

async fn fetch_node_view(address: SocketAddr, timeout: Duration) -> Result<NodeView> {
    let session = single_node_session(address, timeout).await?;
    let cql = |e: &dyn std::fmt::Display| ClusterError::Cql(format!("{address}: {e}"));
    let local = session
        .query_unpaged(
            "SELECT tokens, data_center, rack FROM system.local WHERE key = 'local'",
            &[],
        )
        .await
        .map_err(|e| cql(&e))?
        .into_rows_result()
        .map_err(|e| cql(&e))?;
    let (local_tokens, datacenter, rack) = local
        .single_row::<(Option<Vec<String>>, Option<String>, Option<String>)>()
        .map_err(|e| cql(&e))?;
    let peers_result = session
        .query_unpaged("SELECT peer, tokens FROM system.peers", &[])
        .await
        .map_err(|e| cql(&e))?
        .into_rows_result()
        .map_err(|e| cql(&e))?;
    let mut peers = Vec::new();
    for row in peers_result
        .rows::<(IpAddr, Option<Vec<String>>)>()
        .map_err(|e| cql(&e))?
    {
        let (peer, tokens) = row.map_err(|e| cql(&e))?;
        peers.push((peer, parse_tokens(tokens)));
    }
    Ok(NodeView {
        local_tokens: parse_tokens(local_tokens),
        datacenter,
        rack,
        peers,
    })
}

/// The rows of one query (without bound values) that the node at `address` alone answers.
/// Blocking, for the same reason as [`node_view`].
pub fn query_node(address: SocketAddr, timeout: Duration, cql: &str) -> Result<QueryRowsResult> {
    block_on(fetch_rows(address, timeout, cql.to_string()))
}

async fn fetch_rows(
    address: SocketAddr,
    timeout: Duration,
    cql: String,
) -> Result<QueryRowsResult> {
    let session = single_node_session(address, timeout).await?;
    let failed = |e: &dyn std::fmt::Display| ClusterError::Cql(format!("{address}: {cql}: {e}"));
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map_err(|e| failed(&e))?
        .into_rows_result()
        .map_err(|e| failed(&e))
}

fn parse_tokens(tokens: Option<Vec<String>>) -> Vec<i64> {
    tokens
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// Cheap check before the driver: does anything accept TCP connections on the CQL port yet?
pub fn port_open(address: SocketAddr) -> bool {
    std::net::TcpStream::connect_timeout(&address, Duration::from_millis(300)).is_ok()
}

//! The scylla driver as the test suites use it: to check a node outside cqlbench's own code path.
//!
//! Why a crate, and why blocking: an async function's body is compiled where its future is polled.
//! When each test binary polled the driver's futures itself, each compiled its own optimized copy of
//! the driver's session, query and prepare paths (41–58 s of CPU per binary in a release build,
//! eleven binaries). Here every future is polled inside this crate, behind plain functions whose
//! arguments are concrete types, so it is compiled once; a test only instantiates the row types it
//! reads. Call these from plain code, not from inside an async block (they run their own runtime).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;

pub use scylla::deserialize::row::DeserializeRow;
pub use scylla::errors::{ExecutionError, PrepareError, SchemaAgreementError};
pub use scylla::response::query_result::QueryResult;
pub use scylla::response::{PagingState, PagingStateResponse};
pub use scylla::serialize::row::SerializeRow;
pub use scylla::statement::prepared::PreparedStatement;
pub use scylla::statement::unprepared::Statement;
pub use scylla::statement::Consistency;
pub use scylla::value;

/// Bound values: a tuple (`&(k, v)`), a slice, or [`NONE`].
pub type Values<'a> = &'a (dyn SerializeRow + Sync);

/// No bound values.
pub const NONE: Values<'static> = &();

/// A driver session and the runtime that drives it (one worker thread, so that the driver's own
/// background tasks keep running between calls).
pub struct Driver {
    runtime: tokio::runtime::Runtime,
    session: Session,
}

/// What went wrong talking to a node (boxed: the driver's errors are large).
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    #[error("{0}")]
    Connect(String),
    #[error(transparent)]
    Execution(Box<ExecutionError>),
    #[error(transparent)]
    Prepare(Box<PrepareError>),
    #[error(transparent)]
    SchemaAgreement(Box<SchemaAgreementError>),
}

impl Driver {
    /// A session over the given contact points (the driver discovers the rest of the cluster).
    pub fn connect(contact_points: &[SocketAddr]) -> Result<Driver, CqlError> {
        let mut builder = scylla::client::session_builder::SessionBuilder::new();
        for point in contact_points {
            builder = builder.known_node_addr(*point);
        }
        Self::build(builder)
    }

    /// A session with one contact point given as `host` or `host:port`.
    pub fn connect_to(host: &str) -> Result<Driver, CqlError> {
        Self::build(scylla::client::session_builder::SessionBuilder::new().known_node(host))
    }

    /// A session to `host` that logs in as `user` (nodes with PasswordAuthenticator).
    pub fn connect_as(host: &str, user: &str, password: &str) -> Result<Driver, CqlError> {
        Self::build(
            scylla::client::session_builder::SessionBuilder::new()
                .known_node(host)
                .user(user, password),
        )
    }

    /// A session that only ever coordinates through `coordinators` (e.g. all but a paused node,
    /// which the driver cannot tell from a slow one), while replicas still include every node.
    pub fn connect_through(coordinators: &[SocketAddr]) -> Result<Driver, CqlError> {
        let filter =
            scylla::policies::host_filter::AllowListHostFilter::new(coordinators.iter().copied())
                .map_err(|e| CqlError::Connect(format!("allow list: {e}")))?;
        let mut builder =
            scylla::client::session_builder::SessionBuilder::new().host_filter(Arc::new(filter));
        for point in coordinators {
            builder = builder.known_node_addr(*point);
        }
        Self::build(builder)
    }

    /// cqlbench's own single-node session (`cluster status` uses it): `address` only, never the
    /// peers the driver discovers.
    pub fn connect_single(address: SocketAddr, timeout: Duration) -> Result<Driver, CqlError> {
        let runtime = runtime()?;
        let session = runtime
            .block_on(cqlbench_cluster::cql::single_node_session(address, timeout))
            .map_err(|e| CqlError::Connect(e.to_string()))?;
        Ok(Driver { runtime, session })
    }

    fn build(builder: scylla::client::session_builder::SessionBuilder) -> Result<Driver, CqlError> {
        let runtime = runtime()?;
        let session = runtime
            .block_on(builder.build())
            .map_err(|e| CqlError::Connect(e.to_string()))?;
        Ok(Driver { runtime, session })
    }

    fn run<T>(&self, future: impl Future<Output = T>) -> T {
        self.runtime.block_on(future)
    }

    /// One unpaged query (`Session::query_unpaged`); `statement` is CQL text or a [`Statement`].
    pub fn query(
        &self,
        statement: impl Into<Statement>,
        values: Values<'_>,
    ) -> Result<QueryResult, CqlError> {
        self.query_statement(statement.into(), values)
    }

    fn query_statement(
        &self,
        statement: Statement,
        values: Values<'_>,
    ) -> Result<QueryResult, CqlError> {
        self.run(self.session.query_unpaged(statement, values))
            .map_err(|e| CqlError::Execution(Box::new(e)))
    }

    /// One page of a query from `paging_state` on (`Session::query_single_page`).
    pub fn query_page(
        &self,
        statement: Statement,
        values: Values<'_>,
        paging_state: PagingState,
    ) -> Result<(QueryResult, PagingStateResponse), CqlError> {
        self.run(
            self.session
                .query_single_page(statement, values, paging_state),
        )
        .map_err(|e| CqlError::Execution(Box::new(e)))
    }

    /// Waits until every node the session knows agrees on the schema version.
    pub fn await_schema_agreement(&self) -> Result<(), CqlError> {
        self.run(self.session.await_schema_agreement())
            .map(|_| ())
            .map_err(|e| CqlError::SchemaAgreement(Box::new(e)))
    }

    /// Prepares a statement (`Session::prepare`).
    pub fn prepare(&self, statement: Statement) -> Result<PreparedStatement, CqlError> {
        self.run(self.session.prepare(statement))
            .map_err(|e| CqlError::Prepare(Box::new(e)))
    }

    /// Executes a prepared statement, unpaged (`Session::execute_unpaged`).
    pub fn execute(
        &self,
        prepared: &PreparedStatement,
        values: Values<'_>,
    ) -> Result<QueryResult, CqlError> {
        self.run(self.session.execute_unpaged(prepared, values))
            .map_err(|e| CqlError::Execution(Box::new(e)))
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, CqlError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| CqlError::Connect(format!("tokio runtime: {e}")))
}

/// A statement at the session's default consistency with a bounded request timeout.
pub fn timed_statement(cql: &str, timeout: Duration) -> Statement {
    let mut statement = Statement::new(cql);
    statement.set_request_timeout(Some(timeout));
    statement
}

/// A statement at a chosen consistency level with a bounded request timeout.
pub fn statement(cql: &str, consistency: Consistency, timeout: Duration) -> Statement {
    let mut statement = timed_statement(cql, timeout);
    statement.set_consistency(consistency);
    statement
}

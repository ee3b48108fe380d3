//! Driver session set-up: connection pool per host, DC-aware routing, timeouts, credentials, schema.

use std::num::NonZeroUsize;

use cqlbench_cql::ConnectOptions;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency as DriverConsistency, SerialConsistency};

use crate::bound::{cql_type, Bound, Marker, Prepared};
use crate::options::{Consistency, RunOptions};
use crate::topology::Topology;
use crate::wire::WireConfig;
use crate::workload::{BuiltIn, FileWorkload, Workload};
use crate::LoadError;
use cqlbench_workload::rows::{self, TableShape};
use cqlbench_workload::OpKind;

fn driver_consistency(c: Consistency) -> DriverConsistency {
    match c {
        Consistency::Any => DriverConsistency::Any,
        Consistency::One => DriverConsistency::One,
        Consistency::Two => DriverConsistency::Two,
        Consistency::Three => DriverConsistency::Three,
        Consistency::Quorum => DriverConsistency::Quorum,
        Consistency::All => DriverConsistency::All,
        Consistency::LocalQuorum => DriverConsistency::LocalQuorum,
        Consistency::EachQuorum => DriverConsistency::EachQuorum,
        Consistency::LocalOne => DriverConsistency::LocalOne,
        Consistency::Serial => DriverConsistency::Serial,
        Consistency::LocalSerial => DriverConsistency::LocalSerial,
    }
}

fn driver_serial_consistency(c: Consistency) -> Result<SerialConsistency, LoadError> {
    match c {
        Consistency::Serial => Ok(SerialConsistency::Serial),
        Consistency::LocalSerial => Ok(SerialConsistency::LocalSerial),
        other => Err(LoadError::InvalidOption(format!(
            "--serial-cl must be SERIAL or LOCAL_SERIAL, not {other:?}"
        ))),
    }
}

fn contact_point(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') && host.parse::<std::net::Ipv6Addr>().is_err() {
        host.to_string() // already host:port
    } else if host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Connects with the run's pool size, routing, consistency and timeout.
pub async fn connect(options: &RunOptions) -> Result<Session, LoadError> {
    let mut policy = DefaultPolicy::builder().token_aware(true);
    if let Some(dc) = &options.dc {
        policy = policy
            .prefer_datacenter(dc.clone())
            .permit_dc_failover(false);
    }
    let profile = ExecutionProfile::builder()
        .consistency(driver_consistency(options.consistency))
        .serial_consistency(Some(driver_serial_consistency(options.serial_consistency)?))
        .request_timeout(Some(options.request_timeout))
        .load_balancing_policy(policy.build())
        .build();
    let pool = NonZeroUsize::new(options.connections_per_host).ok_or_else(|| {
        LoadError::InvalidOption("--connections-per-host must be at least 1".into())
    })?;
    let hosts: Vec<String> = options
        .hosts
        .iter()
        .map(|h| contact_point(h, options.port))
        .collect();
    let mut builder = SessionBuilder::new()
        .known_nodes(&hosts)
        .pool_size(PoolSize::PerHost(pool))
        .connection_timeout(
            options
                .request_timeout
                .min(std::time::Duration::from_secs(10)),
        )
        .default_execution_profile_handle(profile.into_handle());
    if let Some(credentials) = &options.credentials {
        builder = builder.user(&credentials.username, &credentials.password);
    }
    if let Some(ca) = &options.tls_ca {
        builder = builder.tls_context(Some(tls_context(ca)?));
    }
    builder.build().await.map_err(|e| {
        let reason = one_line(&e.to_string());
        let reason = if reason.contains("Authentication is required") {
            "the cluster requires authentication: set CQLBENCH_USERNAME and CQLBENCH_PASSWORD, \
             or use --credentials-file"
                .to_string()
        } else {
            reason
        };
        LoadError::Connect {
            hosts: hosts.join(", "),
            reason,
        }
    })
}

/// A TLS context that trusts the given CA certificate (PEM) and verifies the server's certificate chain.
fn tls_context(ca: &std::path::Path) -> Result<openssl::ssl::SslContext, LoadError> {
    use openssl::ssl::{SslContextBuilder, SslMethod, SslMode, SslVerifyMode};
    let fail = |e: openssl::error::ErrorStack| {
        LoadError::Tls(format!(
            "CA file {}: {}",
            ca.display(),
            one_line(&e.to_string())
        ))
    };
    let mut context = SslContextBuilder::new(SslMethod::tls()).map_err(fail)?;
    // The load loop writes from a buffer that may grow (and move) between a short write and its retry.
    context.set_mode(SslMode::ACCEPT_MOVING_WRITE_BUFFER | SslMode::ENABLE_PARTIAL_WRITE);
    context.set_ca_file(ca).map_err(fail)?;
    context.set_verify(SslVerifyMode::PEER);
    Ok(context.build())
}

/// With `--dc`, the datacenter must exist: otherwise no node would take load.
pub fn check_datacenter(session: &Session, options: &RunOptions) -> Result<(), LoadError> {
    let Some(dc) = &options.dc else {
        return Ok(());
    };
    let state = session.get_cluster_state();
    let mut known: Vec<String> = state
        .get_nodes_info()
        .iter()
        .filter_map(|n| n.datacenter.clone())
        .collect();
    known.sort();
    known.dedup();
    if known.iter().any(|k| k == dc) {
        return Ok(());
    }
    Err(LoadError::InvalidOption(format!(
        "--dc {dc}: no node of the cluster is in that datacenter (it has: {})",
        known.join(", ")
    )))
}

/// Error texts from the driver can span lines; the CLI prints one.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The server's own words in a driver error (what follows "Error message: "), else the whole error.
fn server_message(error: &impl std::fmt::Display) -> String {
    let text = one_line(&error.to_string());
    match text.rsplit_once("Error message: ") {
        Some((_, message)) => message.to_string(),
        None => text,
    }
}

/// The replication map to use: the user's (`--replication` is authoritative), or the default for
/// the cluster's datacenters as the driver read them from `system.local` / `system.peers`.
fn replication_map(session: &Session, options: &RunOptions) -> String {
    if let Some(map) = &options.replication {
        return map.to_string();
    }
    let state = session.get_cluster_state();
    let mut per_dc: Vec<(String, usize)> = Vec::new();
    for node in state.get_nodes_info() {
        let dc = node
            .datacenter
            .clone()
            .unwrap_or_else(|| "datacenter1".into());
        match per_dc.iter_mut().find(|(name, _)| *name == dc) {
            Some((_, n)) => *n += 1,
            None => per_dc.push((dc, 1)),
        }
    }
    default_replication(&per_dc)
}

/// NetworkTopologyStrategy over `(datacenter, nodes)`. Several datacenters: RF 3 in each, or its
/// node count if fewer, so that LOCAL_QUORUM in any datacenter is served by its own replicas. One
/// datacenter: RF 3 with at least 3 nodes, else RF 1 (a 1- or 2-node dev cluster stays writable
/// with a node down).
pub fn default_replication(per_dc: &[(String, usize)]) -> String {
    let mut per_dc = per_dc.to_vec();
    per_dc.sort();
    let rf = |n: usize| {
        if per_dc.len() > 1 {
            n.clamp(1, 3)
        } else if n >= 3 {
            3
        } else {
            1
        }
    };
    let dcs: Vec<String> = per_dc
        .iter()
        .map(|(dc, n)| format!("'{}': {}", dc.replace('\'', "''"), rf(*n)))
        .collect();
    format!("{{'class': 'NetworkTopologyStrategy', {}}}", dcs.join(", "))
}

async fn ddl(session: &Session, statement: String) -> Result<(), LoadError> {
    session
        .query_unpaged(statement.as_str(), &[])
        .await
        .map_err(|e| LoadError::Schema {
            statement: statement.clone(),
            reason: one_line(&e.to_string()),
        })?;
    Ok(())
}

/// Creates (or, with `drop_keyspace`, re-creates) the keyspace and table. Returns the replication used.
pub async fn create_schema(session: &Session, options: &RunOptions) -> Result<String, LoadError> {
    let ks = &options.keyspace;
    if options.drop_keyspace {
        ddl(session, format!("DROP KEYSPACE IF EXISTS {ks}")).await?;
    }
    // A profile's own CREATE KEYSPACE, unless the run names its replication.
    let own_definition = match &options.workload {
        Workload::File(file) if options.replication.is_none() => file
            .keyspace
            .as_ref()
            .and_then(|k| Some((file, k.definition.as_ref()?))),
        _ => None,
    };
    let replication = match own_definition {
        Some((file, definition)) => {
            run_file_ddl(session, file, definition).await?;
            cqlbench_workload::replication_in(&definition.value)
        }
        None => {
            let replication = match &options.workload {
                Workload::File(file) if options.replication.is_none() => file
                    .replication
                    .clone()
                    .unwrap_or_else(|| replication_map(session, options)),
                _ => replication_map(session, options),
            };
            ddl(
                session,
                format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {replication}"),
            )
            .await?;
            replication
        }
    };
    match &options.workload {
        Workload::BuiltIn(built_in) => built_in_table(session, options, built_in).await?,
        Workload::File(file) => file_schema(session, ks, file).await?,
    }
    let _ = session.await_schema_agreement().await;
    Ok(replication)
}

/// What a keyspace held before a workload file's schema ran, so that a file that fails (a schema
/// statement or an operation the server refuses) leaves nothing of itself behind.
pub struct SchemaBefore {
    keyspace: String,
    existed: bool,
    tables: Vec<String>,
    views: Vec<String>,
    types: Vec<String>,
}

impl SchemaBefore {
    pub async fn take(session: &Session, keyspace: &str) -> SchemaBefore {
        let _ = session.refresh_metadata().await;
        let state = session.get_cluster_state();
        let found = state.get_keyspace(keyspace);
        let names = |map: Option<Vec<String>>| map.unwrap_or_default();
        SchemaBefore {
            keyspace: keyspace.to_string(),
            existed: found.is_some(),
            tables: names(found.map(|k| k.tables.keys().cloned().collect())),
            views: names(found.map(|k| k.views.keys().cloned().collect())),
            types: names(found.map(|k| k.user_defined_types.keys().cloned().collect())),
        }
    }

    /// Drops what appeared since: the keyspace if it is new, else its new views, tables and types.
    pub async fn restore(&self, session: &Session) {
        let ks = &self.keyspace;
        if !self.existed {
            let _ = ddl(session, format!("DROP KEYSPACE IF EXISTS {ks}")).await;
            return;
        }
        let after = SchemaBefore::take(session, ks).await;
        let new = |now: &[String], before: &[String]| -> Vec<String> {
            now.iter()
                .filter(|n| !before.contains(n))
                .cloned()
                .collect()
        };
        for view in new(&after.views, &self.views) {
            let _ = ddl(
                session,
                format!("DROP MATERIALIZED VIEW IF EXISTS {ks}.\"{view}\""),
            )
            .await;
        }
        for table in new(&after.tables, &self.tables) {
            let _ = ddl(session, format!("DROP TABLE IF EXISTS {ks}.\"{table}\"")).await;
        }
        for udt in new(&after.types, &self.types) {
            let _ = ddl(session, format!("DROP TYPE IF EXISTS {ks}.\"{udt}\"")).await;
        }
    }
}

/// A built-in workload's table, with `--compaction`.
async fn built_in_table(
    session: &Session,
    options: &RunOptions,
    built_in: &BuiltIn,
) -> Result<(), LoadError> {
    let ks = &options.keyspace;
    ddl(
        session,
        built_in.create_table_cql(ks, options.compaction.as_ref()),
    )
    .await?;
    if let Some(compaction) = &options.compaction {
        // The table may predate this run: make the requested compaction (and options) hold anyway.
        ddl(
            session,
            format!(
                "ALTER TABLE {ks}.{} WITH compaction = {compaction}",
                built_in.info.table
            ),
        )
        .await?;
    }
    Ok(())
}

/// A workload file's schema statements, in order, in the run's keyspace; a refusal names the
/// statement's line and gives the server's message.
async fn file_schema(session: &Session, ks: &str, file: &FileWorkload) -> Result<(), LoadError> {
    session
        .use_keyspace(ks, false)
        .await
        .map_err(|e| LoadError::Schema {
            statement: format!("USE {ks}"),
            reason: one_line(&e.to_string()),
        })?;
    for statement in &file.schema {
        run_file_ddl(session, file, statement).await?;
    }
    Ok(())
}

/// One schema statement of a workload file; one the server refuses is `FILE:LINE` with its words,
/// except "already exists" where the file's format allows it (cassandra-stress profiles share
/// keyspaces and tables).
async fn run_file_ddl(
    session: &Session,
    file: &FileWorkload,
    statement: &cqlbench_workload::Located<String>,
) -> Result<(), LoadError> {
    let Err(e) = session.query_unpaged(statement.value.as_str(), &[]).await else {
        return Ok(());
    };
    // The server's error code says so, whatever its words ("Cannot add existing keyspace").
    let exists = matches!(
        &e,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::AlreadyExists { .. },
            _
        ))
    );
    if exists && file.schema_may_exist {
        return Ok(());
    }
    Err(file
        .at(
            statement.line,
            format!(
                "the server refused the schema statement: {}{}",
                server_message(&e),
                setting_hint(&server_message(&e))
            ),
        )
        .into())
}

/// Prepares the workload's statements through the driver once, so that a statement the server
/// rejects is reported with the driver's full explanation before any load starts; a workload file
/// comes back bound to the types of its statements' bind markers.
pub async fn prepare(session: &Session, options: &RunOptions) -> Result<Option<Bound>, LoadError> {
    if let Workload::File(file) = &options.workload {
        return prepare_file(session, &options.keyspace, file)
            .await
            .map(Some);
    }
    let prepare_one = |cql: String| async move {
        session
            .prepare(cql.as_str())
            .await
            .map_err(|e| LoadError::Prepare {
                statement: cql.clone(),
                reason: one_line(&e.to_string()),
            })
    };
    for cql in options.workload.statements(&options.keyspace) {
        let _: PreparedStatement = prepare_one(cql).await?;
    }
    Ok(None)
}

/// Prepares every operation of a workload file and binds its markers to the file's generators.
async fn prepare_file(
    session: &Session,
    keyspace: &str,
    file: &FileWorkload,
) -> Result<Bound, LoadError> {
    let _ = session.refresh_metadata().await;
    let mut prepared = Vec::new();
    for op in &file.ops {
        let shape = match &op.rows {
            Some(model) => Some(table_shape(session, keyspace, &model.table).ok_or_else(|| {
                file.at(
                    op.cql.line,
                    format!(
                        "table {keyspace}.{} does not exist (give the profile a table_definition, or create it first)",
                        model.table
                    ),
                )
            })?),
            None => None,
        };
        let cql = match (&op.kind, &shape) {
            (OpKind::StressInsert { condition }, Some(shape)) => {
                rows::insert_cql(shape, condition.as_deref())
            }
            (OpKind::StressTokenRange { columns, page_size }, Some(shape)) => {
                rows::token_range_cql(shape, columns, *page_size)
            }
            _ => op.cql.value.clone(),
        };
        let statement = session.prepare(cql.as_str()).await.map_err(|e| {
            file.at(
                op.cql.line,
                format!(
                    "operation '{}': the server cannot prepare it: {}",
                    op.name,
                    server_message(&e)
                ),
            )
        })?;
        let mut markers = Vec::new();
        for spec in statement.get_variable_col_specs().iter() {
            let ty = cql_type(spec.typ()).map_err(|what| {
                file.at(
                    op.cql.line,
                    format!(
                        "operation '{}': bind marker '{}': {what}",
                        op.name,
                        spec.name()
                    ),
                )
            })?;
            markers.push(Marker {
                name: spec.name().to_string(),
                ty,
            });
        }
        let pk = statement.get_variable_pk_indexes();
        let routing = (pk.len() == 1).then(|| usize::from(pk[0].index));
        prepared.push(Prepared {
            cql,
            markers,
            routing,
            shape,
        });
    }
    Ok(Bound::new(file, prepared)?)
}

/// A table as the driver read it from the cluster's schema.
fn table_shape(session: &Session, keyspace: &str, table: &str) -> Option<TableShape> {
    use scylla::cluster::metadata::{CollectionType, ColumnKind, ColumnType, NativeType};
    let state = session.get_cluster_state();
    let ks = state.get_keyspace(keyspace.to_ascii_lowercase())?;
    let (name, found) = ks
        .tables
        .iter()
        .find(|(name, _)| name.as_str() == table || name.eq_ignore_ascii_case(table))?;
    let mut regular: Vec<(String, bool)> = found
        .columns
        .iter()
        .filter(|(_, c)| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
        .map(|(column, c)| {
            let adds = match &c.typ {
                ColumnType::Native(NativeType::Counter) => true,
                ColumnType::Collection { frozen, typ } => {
                    !frozen && matches!(typ, CollectionType::List(_) | CollectionType::Set(_))
                }
                _ => false,
            };
            (column.clone(), adds)
        })
        .collect();
    regular.sort();
    Some(TableShape {
        name: name.clone(),
        partition_key: found.partition_key.clone(),
        clustering: found.clustering_key.clone(),
        regular,
    })
}

/// The protocol code of a consistency level.
fn consistency_code(c: Consistency) -> u16 {
    match c {
        Consistency::Any => 0x0000,
        Consistency::One => 0x0001,
        Consistency::Two => 0x0002,
        Consistency::Three => 0x0003,
        Consistency::Quorum => 0x0004,
        Consistency::All => 0x0005,
        Consistency::LocalQuorum => 0x0006,
        Consistency::EachQuorum => 0x0007,
        Consistency::Serial => 0x0008,
        Consistency::LocalSerial => 0x0009,
        Consistency::LocalOne => 0x000A,
    }
}

/// Each of the `ops` operations' (consistency, serial consistency) codes: a workload file's own
/// where it gives them, else the run's `--cl` and `--serial-cl`.
fn op_levels(options: &RunOptions, ops: usize) -> Result<Vec<(u16, u16)>, LoadError> {
    let run = (options.consistency, options.serial_consistency);
    let Workload::File(file) = &options.workload else {
        return Ok(vec![
            (consistency_code(run.0), consistency_code(run.1));
            ops
        ]);
    };
    file.ops
        .iter()
        .map(|op| {
            let level = |name: &Option<String>, default: Consistency| {
                name.as_deref()
                    .map_or(Ok(default), str::parse::<Consistency>)
                    .map(consistency_code)
            };
            Ok((
                level(&op.consistency, run.0)?,
                level(&op.serial_consistency, run.1)?,
            ))
        })
        .collect()
}

/// Which of the `ops` operations read in pages: a workload file's that say so.
fn op_paging(options: &RunOptions, ops: usize) -> Vec<Option<cqlbench_workload::Paging>> {
    match &options.workload {
        Workload::File(file) => file.ops.iter().map(|op| op.paging).collect(),
        _ => vec![None; ops],
    }
}

/// How the load path connects and what it sends: every operation is one request, never retried, so
/// each failure is counted as what it was.
pub fn wire_config(
    options: &RunOptions,
    topology: Topology,
    bound: Option<&Bound>,
) -> Result<WireConfig, LoadError> {
    let statements = match bound {
        Some(bound) => bound.statements.clone(),
        None => options.workload.statements(&options.keyspace),
    };
    let conditional = statements
        .iter()
        .map(|cql| cqlbench_workload::is_conditional(cql))
        .collect();
    let levels = op_levels(options, statements.len())?;
    let statements_len = statements.len();
    Ok(WireConfig {
        topology,
        connect: ConnectOptions {
            timeout: options
                .request_timeout
                .min(std::time::Duration::from_secs(10)),
            credentials: options.credentials.clone(),
            tls: options.tls_ca.as_deref().map(tls_context).transpose()?,
            // A workload file's statements name their tables without the keyspace.
            keyspace: matches!(options.workload, Workload::File(_))
                .then(|| options.keyspace.clone()),
        },
        statements,
        conditional,
        levels,
        request_timeout: options.request_timeout,
        state: bound.and_then(|b| b.state.clone()),
        paging: op_paging(options, statements_len),
        first_errors: std::sync::Arc::new(crate::wire::FirstErrors::new(statements_len)),
    })
}

/// What a refusal comes from (a cassandra.yaml setting, the keyspace's replication), where the
/// server's message does not say.
pub(crate) fn setting_hint(message: &str) -> &'static str {
    let lower = message.to_ascii_lowercase();
    if lower.contains("materialized views are disabled") {
        " (the node's cassandra.yaml needs materialized_views_enabled: true, enable_materialized_views before 4.1; cqlbench's local clusters set it)"
    } else if lower.contains("batch too large") {
        " (the node's batch_size_fail_threshold, 50 KiB by default; a cassandra-stress insert sends every row its select ratio picks from its partitions in one batch)"
    } else if lower.contains("cannot achieve consistency level") {
        " (the keyspace's replication asks for more replicas than are up; --replication overrides a workload file's keyspace definition)"
    } else if lower.contains("sasi indexes are disabled") {
        " (the node's cassandra.yaml needs sasi_indexes_enabled: true)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_from_a_disabled_feature_names_its_setting() {
        // Cassandra 5.0's words when materialized views are off.
        let hint =
            setting_hint("Materialized views are disabled. Enable in cassandra.yaml to use.");
        assert!(hint.contains("materialized_views_enabled: true"), "{hint}");
        assert_eq!(setting_hint("Undefined column name nope"), "");
        assert!(setting_hint("Batch too large").contains("batch_size_fail_threshold"));
        let unavailable = setting_hint("Cannot achieve consistency level LOCAL_QUORUM");
        assert!(unavailable.contains("--replication"), "{unavailable}");
    }

    fn dcs(list: &[(&str, usize)]) -> Vec<(String, usize)> {
        list.iter().map(|(dc, n)| (dc.to_string(), *n)).collect()
    }

    #[test]
    fn one_datacenter_keeps_rf_3_from_3_nodes_else_1() {
        for (nodes, rf) in [(1, 1), (2, 1), (3, 3), (5, 3)] {
            assert_eq!(
                default_replication(&dcs(&[("datacenter1", nodes)])),
                format!("{{'class': 'NetworkTopologyStrategy', 'datacenter1': {rf}}}"),
                "{nodes} nodes"
            );
        }
    }

    #[test]
    fn several_datacenters_get_rf_3_each_or_their_node_count() {
        assert_eq!(
            default_replication(&dcs(&[("dc2", 2), ("dc1", 2)])),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 2}"
        );
        assert_eq!(
            default_replication(&dcs(&[("dc1", 1), ("dc2", 1)])),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}"
        );
        assert_eq!(
            default_replication(&dcs(&[("dc1", 5), ("dc2", 3), ("dc3", 2)])),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 3, 'dc3': 2}"
        );
        assert_eq!(
            default_replication(&dcs(&[("it's", 4), ("dc2", 1)])),
            "{'class': 'NetworkTopologyStrategy', 'dc2': 1, 'it''s': 3}"
        );
    }
}

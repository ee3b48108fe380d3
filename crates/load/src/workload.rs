//! The built-in workloads: their schema, statements, parameters, and the deterministic choice of
//! operation type and key for every operation index (so `--seed` reproduces a run's keys exactly).

use std::sync::Arc;

use crate::cqlmap::TableOptions;
use crate::LoadError;

/// A workload compiled from a file (`cqlbench run FILE.yaml`).
pub use cqlbench_workload::Workload as FileWorkload;
pub use cqlbench_workload::{mix, timeuuid, unit_float, TextPool};

/// An operation of a workload, by its place in the workload's list of operations: what the engine,
/// the recorder and the result files know an operation by (its name comes from the workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpId(pub u16);

impl OpId {
    /// The built-in workloads' read, operation 0.
    pub const READ: OpId = OpId(0);
    /// The built-in workloads' write, operation 1.
    pub const WRITE: OpId = OpId(1);

    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The built-in workloads' operation names, by [`OpId::index`].
pub const BUILT_IN_OPS: [&str; 2] = ["read", "write"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    BasicTimeSeries,
    KeyValue,
    Tabular,
}

/// A workload parameter settable with `--workload.NAME=VALUE`.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: u64,
    pub help: &'static str,
}

/// What `cqlbench workloads` prints about a workload.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    pub kind: WorkloadKind,
    pub name: &'static str,
    pub description: &'static str,
    pub table: &'static str,
    pub schema: &'static str,
    pub write: &'static str,
    pub read: &'static str,
    pub default_read_ratio: f64,
    pub default_consistency: &'static str,
    pub params: &'static [ParamInfo],
}

pub const WORKLOADS: [WorkloadInfo; 3] = [
    WorkloadInfo {
        kind: WorkloadKind::BasicTimeSeries,
        name: "BasicTimeSeries",
        description: "tlp-stress's BasicTimeSeries: sensors appending readings, reads of a sensor's latest 500",
        table: "sensor_data",
        schema: "CREATE TABLE sensor_data (sensor_id text, timestamp timeuuid, data text, \
                 PRIMARY KEY (sensor_id, timestamp)) WITH CLUSTERING ORDER BY (timestamp DESC)",
        write: "INSERT INTO sensor_data (sensor_id, timestamp, data) VALUES (?, ?, ?)   -- timestamp: a client-side timeuuid (as tlp-stress), data: 100-199 chars",
        read: "SELECT * FROM sensor_data WHERE sensor_id = ? LIMIT 500",
        default_read_ratio: 0.01,
        default_consistency: "LOCAL_ONE",
        params: &[],
    },
    WorkloadInfo {
        kind: WorkloadKind::KeyValue,
        name: "KeyValue",
        description: "a key-value store: one row per key, reads of keys written earlier in the run",
        table: "keyvalue",
        schema: "CREATE TABLE keyvalue (key text PRIMARY KEY, value text)",
        write: "INSERT INTO keyvalue (key, value) VALUES (?, ?)",
        read: "SELECT * FROM keyvalue WHERE key = ?",
        default_read_ratio: 0.5,
        default_consistency: "LOCAL_ONE",
        params: &[ParamInfo {
            name: "value_size",
            default: 100,
            help: "length of each value in characters",
        }],
    },
    WorkloadInfo {
        kind: WorkloadKind::Tabular,
        name: "Tabular",
        description: "nosqlbench cql-tabular2's shape: wide partitions of up to partsize rows, 8 value columns, \
                      reads of a row slice; 50/50 at LOCAL_QUORUM",
        table: "tabular",
        schema: "CREATE TABLE tabular (part text, clust text, data0 text, data1 text, data2 text, data3 text, \
                 data4 text, data5 text, data6 text, data7 text, PRIMARY KEY (part, clust))",
        write: "INSERT INTO tabular (part, clust, data0, ..., data7) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        read: "SELECT * FROM tabular WHERE part = ? AND clust >= ? LIMIT ?   -- LIMIT = slice",
        default_read_ratio: 0.5,
        default_consistency: "LOCAL_QUORUM",
        params: &[
            ParamInfo {
                name: "partsize",
                default: 5000,
                help: "rows per partition at most (clustering keys 0..partsize)",
            },
            ParamInfo {
                name: "slice",
                default: 10,
                help: "rows returned by each read",
            },
            ParamInfo {
                name: "value_size",
                default: 32,
                help: "length of each of the 8 value columns in characters",
            },
        ],
    },
];

/// Finds a workload by name, case-insensitively.
pub fn find_workload(name: &str) -> Result<&'static WorkloadInfo, LoadError> {
    WORKLOADS
        .iter()
        .find(|w| w.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| LoadError::UnknownWorkload {
            name: name.to_string(),
            known: WORKLOADS
                .iter()
                .map(|w| w.name)
                .chain(cqlbench_workload::catalog::SHIPPED.iter().map(|w| w.name))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// How partition numbers are drawn (`--pg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionGen {
    /// 0, 1, 2, … wrapping at the partition count (tlp-stress `sequence`).
    Sequence,
    /// Uniformly random.
    Random,
    /// Normally distributed around the middle of the range (σ = count/6): hot partitions.
    Normal,
}

impl std::str::FromStr for PartitionGen {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "sequence" => Ok(PartitionGen::Sequence),
            "random" => Ok(PartitionGen::Random),
            "normal" | "gaussian" => Ok(PartitionGen::Normal),
            _ => Err(LoadError::InvalidOption(format!(
                "unknown partition generator '{s}' (use sequence, random or normal)"
            ))),
        }
    }
}

/// What a run sends: a built-in workload, or one compiled from a file.
#[derive(Debug, Clone)]
pub enum Workload {
    BuiltIn(BuiltIn),
    File(Arc<FileWorkload>),
}

impl Workload {
    /// A built-in workload with `--workload.NAME=VALUE` settings.
    pub fn new(
        info: &'static WorkloadInfo,
        settings: &[(String, String)],
    ) -> Result<Self, LoadError> {
        Ok(Workload::BuiltIn(BuiltIn::new(info, settings)?))
    }

    /// The name results carry.
    pub fn name(&self) -> &str {
        match self {
            Workload::BuiltIn(b) => b.info.name,
            Workload::File(f) => &f.name,
        }
    }

    /// The operations' names, by [`OpId::index`].
    pub fn op_names(&self) -> Vec<String> {
        match self {
            Workload::BuiltIn(_) => BUILT_IN_OPS.iter().map(|name| name.to_string()).collect(),
            Workload::File(f) => f.op_names(),
        }
    }

    /// The operations' CQL, by [`OpId::index`] (a file's statements run in the keyspace the
    /// connections `USE`).
    pub fn statements(&self, keyspace: &str) -> Vec<String> {
        match self {
            Workload::BuiltIn(b) => vec![b.read_cql(keyspace), b.write_cql(keyspace)],
            Workload::File(f) => f.ops.iter().map(|op| op.cql.value.clone()).collect(),
        }
    }

    /// The table whose replicas route the requests.
    pub fn table(&self) -> String {
        match self {
            Workload::BuiltIn(b) => b.info.table.to_string(),
            Workload::File(f) => f.main_table().unwrap_or_default(),
        }
    }

    /// The parameters as resolved, those with whole-number values (what summary.json records).
    pub fn numeric_params(&self) -> Vec<(String, u64)> {
        match self {
            Workload::BuiltIn(b) => b.params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            Workload::File(f) => f
                .params
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), cqlbench_units::parse_count(v).ok()?)))
                .collect(),
        }
    }

    /// The built-in workload, if it is one.
    pub fn built_in(&self) -> Option<&BuiltIn> {
        match self {
            Workload::BuiltIn(b) => Some(b),
            Workload::File(_) => None,
        }
    }
}

/// A built-in workload with its parameters resolved.
#[derive(Debug, Clone)]
pub struct BuiltIn {
    pub info: &'static WorkloadInfo,
    pub params: Vec<(&'static str, u64)>,
}

impl BuiltIn {
    /// Resolves `--workload.NAME=VALUE` settings against the workload's declared parameters.
    pub fn new(
        info: &'static WorkloadInfo,
        settings: &[(String, String)],
    ) -> Result<Self, LoadError> {
        let mut params: Vec<(&'static str, u64)> =
            info.params.iter().map(|p| (p.name, p.default)).collect();
        for (name, value) in settings {
            let slot = params
                .iter_mut()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    let known: Vec<_> = info.params.iter().map(|p| p.name).collect();
                    LoadError::InvalidOption(format!(
                        "workload {} has no parameter '{name}' (it has: {})",
                        info.name,
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ))
                })?;
            let parsed = cqlbench_units::parse_count(value)
                .map_err(|e| LoadError::InvalidOption(format!("--workload.{name}: {e}")))?;
            if parsed == 0 {
                return Err(LoadError::InvalidOption(format!(
                    "--workload.{name} must be at least 1"
                )));
            }
            slot.1 = parsed;
        }
        Ok(BuiltIn { info, params })
    }

    pub fn param(&self, name: &str) -> u64 {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    }

    /// The CREATE TABLE statement, with the user's `--compaction` (and trailing table options).
    pub fn create_table_cql(&self, keyspace: &str, compaction: Option<&TableOptions>) -> String {
        let schema = self.info.schema.replacen(
            "CREATE TABLE ",
            &format!("CREATE TABLE IF NOT EXISTS {keyspace}."),
            1,
        );
        match compaction {
            None => schema,
            Some(options) => {
                let joiner = if schema.contains(" WITH ") {
                    " AND "
                } else {
                    " WITH "
                };
                format!("{schema}{joiner}compaction = {options}")
            }
        }
    }

    pub fn write_cql(&self, keyspace: &str) -> String {
        match self.info.kind {
            WorkloadKind::BasicTimeSeries => format!(
                "INSERT INTO {keyspace}.sensor_data (sensor_id, timestamp, data) VALUES (?, ?, ?)"
            ),
            WorkloadKind::KeyValue => {
                format!("INSERT INTO {keyspace}.keyvalue (key, value) VALUES (?, ?)")
            }
            WorkloadKind::Tabular => format!(
                "INSERT INTO {keyspace}.tabular (part, clust, data0, data1, data2, data3, data4, data5, data6, data7) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
        }
    }

    pub fn read_cql(&self, keyspace: &str) -> String {
        match self.info.kind {
            WorkloadKind::BasicTimeSeries => {
                format!("SELECT * FROM {keyspace}.sensor_data WHERE sensor_id = ? LIMIT 500")
            }
            WorkloadKind::KeyValue => format!("SELECT * FROM {keyspace}.keyvalue WHERE key = ?"),
            WorkloadKind::Tabular => format!(
                "SELECT * FROM {keyspace}.tabular WHERE part = ? AND clust >= ? LIMIT {}",
                self.param("slice")
            ),
        }
    }
}

/// Decides, for every global operation index, whether it reads or writes and which key it uses.
/// Indices below `populate` are the populate phase's writes.
#[derive(Debug, Clone)]
pub struct KeyPlan {
    pub seed: u64,
    pub partitions: u64,
    pub generator: PartitionGen,
    pub read_ratio: f64,
    pub populate: u64,
}

const SALT_OP: u64 = 1;
const SALT_PART: u64 = 2;
const SALT_PART2: u64 = 3;
const SALT_READ: u64 = 4;
const SALT_DATA: u64 = 5;
const SALT_CLUST: u64 = 6;

impl KeyPlan {
    pub fn op_type(&self, index: u64) -> OpId {
        if index < self.populate || unit_float(mix(self.seed, index, SALT_OP)) >= self.read_ratio {
            OpId::WRITE
        } else {
            OpId::READ
        }
    }

    /// The partition written by operation `index`.
    pub fn partition(&self, index: u64) -> u64 {
        let p = self.partitions.max(1);
        match self.generator {
            PartitionGen::Sequence => index % p,
            PartitionGen::Random => mix(self.seed, index, SALT_PART) % p,
            PartitionGen::Normal => {
                // Box–Muller from two uniform draws.
                let u1 = unit_float(mix(self.seed, index, SALT_PART)).max(f64::MIN_POSITIVE);
                let u2 = unit_float(mix(self.seed, index, SALT_PART2));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let value = p as f64 / 2.0 + z * p as f64 / 6.0;
                (value.max(0.0) as u64).min(p - 1)
            }
        }
    }

    /// The partition a read at `index` targets: the partition of an earlier write (reads of data that
    /// exists), falling back to the generator's own choice when no earlier write is found quickly.
    pub fn read_partition(&self, index: u64) -> u64 {
        if index > 0 {
            for attempt in 0..8 {
                let earlier = mix(self.seed, index, SALT_READ + 16 * attempt) % index;
                if self.op_type(earlier) == OpId::WRITE {
                    return self.partition(earlier);
                }
            }
        }
        self.partition(index)
    }

    pub fn clustering(&self, index: u64, partsize: u64) -> u64 {
        mix(self.seed, index, SALT_CLUST) % partsize.max(1)
    }

    pub fn data_pick(&self, index: u64) -> u64 {
        mix(self.seed, index, SALT_DATA)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(generator: PartitionGen, read_ratio: f64) -> KeyPlan {
        KeyPlan {
            seed: 7,
            partitions: 1000,
            generator,
            read_ratio,
            populate: 0,
        }
    }

    #[test]
    fn read_ratio_is_honoured_and_deterministic() {
        let p = plan(PartitionGen::Sequence, 0.2);
        let reads = (0..100_000).filter(|&i| p.op_type(i) == OpId::READ).count();
        assert!((19_000..21_000).contains(&reads), "{reads}");
        assert_eq!(
            p.op_type(1234),
            plan(PartitionGen::Sequence, 0.2).op_type(1234)
        );
    }

    #[test]
    fn generators_stay_in_range_and_reads_hit_written_partitions() {
        for generator in [
            PartitionGen::Sequence,
            PartitionGen::Random,
            PartitionGen::Normal,
        ] {
            let p = plan(generator, 0.5);
            for i in 0..10_000 {
                assert!(p.partition(i) < 1000);
            }
        }
        let p = plan(PartitionGen::Sequence, 0.5);
        let written: std::collections::HashSet<u64> = (0..5000)
            .filter(|&i| p.op_type(i) == OpId::WRITE)
            .map(|i| p.partition(i))
            .collect();
        let hits = (10..5000)
            .filter(|&i| p.op_type(i) == OpId::READ)
            .filter(|&i| written.contains(&p.read_partition(i)))
            .count();
        let reads = (10..5000).filter(|&i| p.op_type(i) == OpId::READ).count();
        assert!(hits * 100 >= reads * 99, "{hits}/{reads}");
    }

    #[test]
    fn workload_parameters_are_validated() {
        let tabular = find_workload("tabular").unwrap();
        let w = BuiltIn::new(tabular, &[("partsize".into(), "100".into())]).unwrap();
        assert_eq!(w.param("partsize"), 100);
        assert_eq!(w.param("slice"), 10);
        assert!(BuiltIn::new(tabular, &[("nope".into(), "1".into())]).is_err());
        assert!(find_workload("Nope").is_err());
    }
}

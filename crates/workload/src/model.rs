//! The compiled workload: what every front end (the native format, cassandra-stress profiles and
//! nosqlbench workloads) lowers a file into, and all the load engine knows of it.

use crate::value::ValueSpec;

/// A workload read from a file, checked and with its parameters resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Its name in results (the file's stem).
    pub name: String,
    /// The file it came from, for messages (`FILE:LINE: …`).
    pub file: String,
    pub description: String,
    /// The keyspace's replication map when the file gives one (else the cluster's default).
    pub replication: Option<String>,
    /// The keyspace the file names (a cassandra-stress profile's), else the run's `--keyspace`.
    pub keyspace: Option<KeyspaceSpec>,
    /// DDL run in order before anything else, in the run's keyspace.
    pub schema: Vec<Located<String>>,
    /// A schema statement refused because its object already exists is passed over (as
    /// cassandra-stress does, so that profiles can share a keyspace and tables).
    pub schema_may_exist: bool,
    /// Operations by index: the names results carry.
    pub ops: Vec<Operation>,
    /// A fixed order of the measured operations (nosqlbench's op sequence): measured operation
    /// `i` is `ops[sequence[i % len]]`. `None`: each is drawn at random by weight.
    pub sequence: Option<Vec<usize>>,
    /// Rows written before the measured phase, by which operation.
    pub populate: Option<Populate>,
    /// Parameters as resolved (defaults, then `--workload.NAME=VALUE`).
    pub params: Vec<(String, String)>,
    /// What the file (a nosqlbench scenario) says about running it, for options the command line
    /// leaves unset.
    pub hints: RunHints,
    /// Warnings and notes to show once before the run (a parameter nothing used, a data file
    /// replaced by built-in text).
    pub notes: Vec<String>,
}

/// Run options a workload file carries (nosqlbench's `cycles`, `cyclerate`, `threads`, `async`,
/// `hosts`), as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunHints {
    /// Measured operations.
    pub ops: Option<String>,
    /// Operations per second.
    pub rate: Option<String>,
    pub threads: Option<String>,
    /// Requests in flight in all.
    pub in_flight: Option<String>,
    /// Contact points, comma-separated.
    pub hosts: Option<String>,
}

/// A value with the line it was written on.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub line: usize,
    pub value: T,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeyspaceSpec {
    pub name: String,
    /// Its CREATE KEYSPACE, run when given (else the keyspace is made with the run's replication).
    pub definition: Option<Located<String>>,
}

/// The replication a CREATE KEYSPACE makes its keyspace with: its `{…}` map (the whole statement
/// when no map follows `replication` in it).
pub fn replication_in(definition: &str) -> String {
    let map = definition
        .to_ascii_lowercase()
        .find("replication")
        .and_then(|at| {
            let open = at + definition[at..].find('{')?;
            let close = open + definition[open..].find('}')?;
            Some(definition[open..=close].to_string())
        });
    map.unwrap_or_else(|| definition.to_string())
}

/// What an operation sends.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// Its `cql`, as written.
    Cql,
    /// cassandra-stress's insert: made from the live table once it exists (an UPDATE of the
    /// non-key columns, `c = c + ?` for counters and non-frozen sets and lists, or an INSERT of a
    /// key-only table), with the profile's `condition` after its WHERE clause.
    StressInsert { condition: Option<String> },
    /// cassandra-stress's token range query: one page of `columns` from a point of the ring.
    StressTokenRange { columns: String, page_size: u32 },
}

/// cassandra-stress's data model: rows generated per partition seed, so that a query finds the
/// rows an insert wrote. Markers bind by column name.
#[derive(Debug, Clone, PartialEq)]
pub struct RowModel {
    pub table: String,
    /// The partition seed of each operation (cassandra-stress's `-pop`).
    pub partitions: crate::Distribution,
    /// The profile's columnspec (columns it does not list take cassandra-stress's defaults).
    pub columns: Vec<ColumnGen>,
    pub fields: Fields,
    /// An insert's `select`: the chance each row of a chosen partition is written, drawn anew at
    /// every visit of a partition (`None`: one row, as a query draws it).
    pub select: Option<Ratio>,
}

/// cassandra-stress's `DIST/DIVISOR` ratio, e.g. `uniform(1..10)/10`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub dist: crate::Distribution,
    pub divisor: u64,
}

impl Ratio {
    /// Every row (`fixed(1)/1`), cassandra-stress's default.
    pub const ALL: Ratio = Ratio {
        dist: crate::Distribution::FIXED_ONE,
        divisor: 1,
    };

    /// The ratio drawn for draw `index` with randomness `random`, within 0..=1.
    pub fn sample(&self, index: u64, random: u64) -> f64 {
        (self.dist.sample(index, random) as f64 / self.divisor as f64).clamp(0.0, 1.0)
    }
}

/// A columnspec entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnGen {
    pub name: String,
    pub line: usize,
    pub population: Option<crate::Distribution>,
    pub size: Option<crate::Distribution>,
    /// Values per parent at this clustering level.
    pub cluster: Option<crate::Distribution>,
}

/// Where a query's markers take their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// All from one row of the partition.
    SameRow,
    /// The partition key from the partition, every other marker from a row of its own.
    MultiRow,
}

/// One named statement of the mix.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub name: String,
    pub cql: Located<String>,
    /// Relative share of the measured mix (0: only run by populate).
    pub weight: f64,
    /// Consistency level names (`LOCAL_QUORUM`, …); `None` takes the run's `--consistency`.
    pub consistency: Option<String>,
    pub serial_consistency: Option<String>,
    /// The generators this operation's bind markers may use, by marker name (the column's name for
    /// `?`, the given name for `:name`).
    pub values: Vec<(String, Located<ValueSpec>)>,
    pub kind: OpKind,
    /// Rows generated per partition (cassandra-stress profiles); `None`: `values` alone.
    pub rows: Option<RowModel>,
    /// Sent as a BATCH of several statements, each with values of its own.
    pub batch: Option<Batch>,
    /// The bind marker whose value names the key the operation's `state` values belong to.
    pub state_key: Option<String>,
    /// Its result read in pages (`None`: the server's answer in one piece).
    pub paging: Option<Paging>,
}

/// A read whose result comes in pages: one request per page, the operation done when the last
/// page it reads arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// Rows per page.
    pub page_size: u32,
    /// Pages read at most (`None`: every page; `Some(1)`: the first alone).
    pub max_pages: Option<u32>,
}

/// A batched operation: its kind, and how many statements a batch holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub kind: BatchType,
    pub rows: crate::Distribution,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchType {
    Logged,
    Unlogged,
    Counter,
}

impl BatchType {
    /// `logged`, `unlogged` or `counter`, in any case.
    pub fn parse(text: &str) -> Option<BatchType> {
        match text.trim().to_ascii_lowercase().as_str() {
            "logged" => Some(BatchType::Logged),
            "unlogged" => Some(BatchType::Unlogged),
            "counter" => Some(BatchType::Counter),
            _ => None,
        }
    }
}

/// Whether a statement is a conditional (lightweight-transaction) write: an `IF` clause
/// (`IF NOT EXISTS`, `IF EXISTS`, `IF col = …`) outside string literals.
pub fn is_conditional(cql: &str) -> bool {
    let mut outside = String::with_capacity(cql.len());
    for (i, part) in cql.split('\'').enumerate() {
        if i % 2 == 0 {
            outside.push_str(part);
        }
        outside.push(' ');
    }
    outside
        .split(|c: char| c.is_whitespace() || c == ';' || c == ')')
        .any(|word| word.eq_ignore_ascii_case("IF"))
}

impl Operation {
    pub fn value(&self, marker: &str) -> Option<&Located<ValueSpec>> {
        self.values
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(marker))
            .map(|(_, spec)| spec)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Populate {
    /// Index into [`Workload::ops`].
    pub op: usize,
    pub rows: u64,
    /// The generators populate binds that operation's markers with: the operation's own, with
    /// populate's `values` over them (e.g. a `seq` key, so that every key is written once).
    pub values: Vec<(String, Located<ValueSpec>)>,
}

impl Populate {
    pub fn value(&self, marker: &str) -> Option<&Located<ValueSpec>> {
        self.values
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(marker))
            .map(|(_, spec)| spec)
    }
}

impl Workload {
    /// The operations' names, by index.
    pub fn op_names(&self) -> Vec<String> {
        self.ops.iter().map(|op| op.name.clone()).collect()
    }

    /// The table the requests' partition keys belong to (for routing): the first one the schema
    /// creates, else the first one an operation names.
    pub fn main_table(&self) -> Option<String> {
        if let Some(rows) = self.ops.iter().find_map(|op| op.rows.as_ref()) {
            return Some(rows.table.clone());
        }
        let created = self
            .schema
            .iter()
            .find_map(|ddl| table_after(&ddl.value, &["CREATE TABLE"]));
        created.or_else(|| {
            self.ops
                .iter()
                .find_map(|op| table_after(&op.cql.value, &["INSERT INTO", "FROM", "UPDATE"]))
        })
    }

    /// `FILE:LINE: message`.
    pub fn at(&self, line: usize, message: impl Into<String>) -> crate::WorkloadError {
        crate::WorkloadError::At {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }
}

/// The table named after the first of `words` in `cql` (without keyspace or quotes).
fn table_after(cql: &str, words: &[&str]) -> Option<String> {
    let tokens: Vec<&str> = cql.split_whitespace().collect();
    let upper: Vec<String> = tokens.iter().map(|t| t.to_ascii_uppercase()).collect();
    for phrase in words {
        let phrase: Vec<&str> = phrase.split(' ').collect();
        let Some(at) = upper
            .windows(phrase.len())
            .position(|w| w.iter().zip(&phrase).all(|(a, b)| a == b))
        else {
            continue;
        };
        let mut next = at + phrase.len();
        if upper.get(next).map(String::as_str) == Some("IF") {
            next += 3; // IF NOT EXISTS
        }
        let name = tokens.get(next)?.split('(').next()?;
        let name = name.rsplit('.').next()?.trim_matches('"');
        return (!name.is_empty()).then(|| name.to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{is_conditional, replication_in, table_after};

    #[test]
    fn a_keyspace_definition_gives_its_replication_map() {
        assert_eq!(
            replication_in(
                "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true"
            ),
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        );
        assert_eq!(replication_in("CREATE KEYSPACE ks"), "CREATE KEYSPACE ks");
    }

    #[test]
    fn conditional_writes_are_told_by_their_if_clause() {
        assert!(is_conditional("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
        assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? if v = ?"));
        assert!(is_conditional("DELETE FROM t WHERE k = ? IF EXISTS"));
        assert!(!is_conditional(
            "INSERT INTO t (k, v) VALUES (?, 'IF only')"
        ));
        assert!(!is_conditional("SELECT * FROM iffy WHERE k = ?"));
    }

    #[test]
    fn the_table_is_found_after_its_keyword() {
        let create = ["CREATE TABLE"];
        assert_eq!(
            table_after(
                "CREATE TABLE IF NOT EXISTS ks.\"Kv\" (k int PRIMARY KEY)",
                &create
            ),
            Some("Kv".into())
        );
        assert_eq!(
            table_after("create table kv(k int primary key)", &create),
            Some("kv".into())
        );
        assert_eq!(
            table_after("SELECT * FROM kv WHERE k = ?", &["INSERT INTO", "FROM"]),
            Some("kv".into())
        );
        assert_eq!(table_after("CREATE INDEX ON kv (v)", &create), None);
    }
}

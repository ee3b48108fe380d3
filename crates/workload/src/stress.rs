//! cassandra-stress user profiles, read unchanged (the keys and meanings of its `StressProfile`;
//! docs/peer-formats/cassandra-stress-profile.md). A profile's insert is made from the live table
//! once the schema exists, as cassandra-stress does; its queries bind their markers by column name
//! from rows generated per partition, so a query finds the rows an insert wrote.

use crate::dist::Distribution;
use crate::keys::{self, entries, get, problem, text, Problem};
use crate::model::{
    Batch, BatchType, ColumnGen, Fields, KeyspaceSpec, Located, OpKind, Operation, Ratio, RowModel,
    Workload,
};
use crate::yaml::{Node, Value};
use crate::WorkloadError;

const TOP: &[&str] = &[
    "specname",
    "keyspace",
    "keyspace_definition",
    "table",
    "table_definition",
    "extra_definitions",
    "columnspec",
    "insert",
    "queries",
    "token_range_queries",
];
const COLUMN: &[&str] = &["name", "size", "population", "cluster"];
const INSERT: &[&str] = &[
    "partitions",
    "select",
    "row-population",
    "batchtype",
    "condition",
];
const QUERY: &[&str] = &["cql", "fields"];
const TOKEN_RANGE: &[&str] = &["columns", "page_size"];
/// Partition seeds when the run does not say how many (cassandra-stress's 1M for duration runs).
pub const DEFAULT_PARTITIONS: i64 = 1_000_000;

/// Whether a parsed YAML document is a cassandra-stress profile (rather than cqlbench's format).
pub fn looks_like_profile(doc: &Node) -> bool {
    let Value::Map(entries) = &doc.value else {
        return false;
    };
    entries.iter().any(|(k, _)| {
        matches!(
            k.text.as_str(),
            "table" | "table_definition" | "queries" | "columnspec" | "keyspace_definition"
        )
    })
}

/// Compiles a profile for the operations of `mix` (`insert=1` when none is given), each a query,
/// a token range query or `insert`.
pub fn compile(
    name: &str,
    file: &str,
    doc: &Node,
    mix: Option<&[(String, f64)]>,
) -> Result<Workload, WorkloadError> {
    let at = |p: Problem| WorkloadError::At {
        file: file.to_string(),
        line: p.line,
        message: p.message,
    };
    let profile = Profile::read(doc).map_err(at)?;
    let default_mix = [("insert".to_string(), 1.0)];
    let mix = mix.unwrap_or(&default_mix);
    let insert_only = mix.len() == 1 && mix[0].0 == "insert";
    let ops = mix
        .iter()
        .map(|(op, weight)| profile.operation(op, *weight, insert_only))
        .collect::<Result<Vec<_>, _>>()
        .map_err(at)?;
    Ok(Workload {
        name: name.to_string(),
        file: file.to_string(),
        description: format!(
            "cassandra-stress profile {}.{}",
            profile.keyspace, profile.table
        ),
        replication: None,
        keyspace: Some(KeyspaceSpec {
            name: profile.keyspace,
            definition: profile.keyspace_definition,
        }),
        schema: profile.schema,
        schema_may_exist: true,
        ops,
        populate: None,
        params: Vec::new(),
        hints: Default::default(),
        sequence: None,
        notes: Vec::new(),
    })
}

/// A profile as read, before a mix chooses its operations.
struct Profile {
    line: usize,
    keyspace: String,
    table: String,
    keyspace_definition: Option<Located<String>>,
    /// table_definition, then extra_definitions.
    schema: Vec<Located<String>>,
    columns: Vec<ColumnGen>,
    insert: InsertOptions,
    queries_line: usize,
    queries: Vec<(Named, Fields)>,
    ranges: Vec<(Named, u32)>,
}

/// A CQL statement of the profile, without its trailing semicolon.
fn statement(node: &Node, what: &str) -> Result<Located<String>, Problem> {
    Ok(Located {
        line: node.line,
        value: text(node, what)?.trim().trim_end_matches(';').to_string(),
    })
}

impl Profile {
    fn read(doc: &Node) -> Result<Profile, Problem> {
        let top = entries(doc, "the profile", TOP)?;
        let required = |key: &str| {
            get(top, key)
                .ok_or_else(|| problem(doc.line, format!("the profile has no '{key}' (required)")))
        };
        // cassandra-stress treats an empty value as an absent one.
        let optional = |key: &str| get(top, key).filter(|n| !n.is_null());
        let definition = |key: &str| -> Result<Option<Located<String>>, Problem> {
            let found = optional(key).map(|n| statement(n, key)).transpose()?;
            Ok(found.filter(|d| !d.value.is_empty()))
        };
        let mut schema: Vec<Located<String>> =
            definition("table_definition")?.into_iter().collect();
        if let Some(extra) = optional("extra_definitions") {
            let Value::Seq(items) = &extra.value else {
                return Err(problem(
                    extra.line,
                    "extra_definitions must be a list of CQL statements",
                ));
            };
            for item in items {
                schema.push(statement(item, "an extra definition")?);
            }
        }
        let queries_node = required("queries")?;
        let profile = Profile {
            line: doc.line,
            keyspace: text(required("keyspace")?, "keyspace")?.to_string(),
            table: text(required("table")?, "table")?.to_string(),
            keyspace_definition: definition("keyspace_definition")?,
            schema,
            columns: optional("columnspec")
                .map(columnspec)
                .transpose()?
                .unwrap_or_default(),
            insert: optional("insert")
                .map(insert_options)
                .transpose()?
                .unwrap_or_default(),
            queries_line: queries_node.line,
            queries: queries(queries_node)?,
            ranges: optional("token_range_queries")
                .map(token_range_queries)
                .transpose()?
                .unwrap_or_default(),
        };
        let both = profile
            .queries
            .iter()
            .find(|(q, _)| profile.ranges.iter().any(|(r, _)| r.name == q.name));
        if let Some((q, _)) = both {
            return Err(problem(
                q.line,
                format!("'{}' is both a query and a token range query", q.name),
            ));
        }
        Ok(profile)
    }

    /// The rows the operations bind from. cassandra-stress: an insert-only run walks the partitions
    /// in order, anything else draws them from a normal distribution over the same range.
    fn model(&self, fields: Fields, insert_only: bool, select: Option<Ratio>) -> RowModel {
        let partitions = if insert_only {
            Distribution::parse(&format!("seq(1..{DEFAULT_PARTITIONS})"))
        } else {
            Distribution::parse(&format!("gaussian(1..{DEFAULT_PARTITIONS})"))
        }
        .expect("a valid built-in distribution");
        RowModel {
            table: self.table.clone(),
            partitions,
            columns: self.columns.clone(),
            fields,
            select,
        }
    }

    /// The operation the mix names `op`.
    fn operation(&self, op: &str, weight: f64, insert_only: bool) -> Result<Operation, Problem> {
        let (name, cql, kind, fields) = if op.eq_ignore_ascii_case("insert") {
            let condition = self.insert.condition.clone();
            let line = self.insert.line.unwrap_or(self.line);
            (
                "insert".to_string(),
                empty(line),
                OpKind::StressInsert { condition },
                Fields::SameRow,
            )
        } else if let Some((query, fields)) = self.queries.iter().find(|(q, _)| q.name == op) {
            (query.name.clone(), query.cql.clone(), OpKind::Cql, *fields)
        } else if let Some((range, page_size)) = self.ranges.iter().find(|(r, _)| r.name == op) {
            let kind = OpKind::StressTokenRange {
                columns: range.cql.value.clone(),
                page_size: *page_size,
            };
            (range.name.clone(), empty(range.line), kind, Fields::SameRow)
        } else {
            return Err(self.unknown_operation(op));
        };
        let select = matches!(kind, OpKind::StressInsert { .. })
            .then(|| self.insert.select.unwrap_or(Ratio::ALL));
        Ok(Operation {
            name,
            cql,
            weight,
            consistency: None,
            serial_consistency: None,
            values: Vec::new(),
            batch: match kind {
                OpKind::StressInsert { .. } => Some(self.insert_batch()),
                _ => None,
            },
            rows: Some(self.model(fields, insert_only, select)),
            kind,
            state_key: None,
            paging: None,
        })
    }

    /// An insert writes the rows it selects from `partitions` partitions as one batch of a
    /// statement per row (`batchtype`, LOGGED unless given); a single row as a single statement.
    fn insert_batch(&self) -> Batch {
        Batch {
            kind: self.insert.batch_type.unwrap_or(BatchType::Logged),
            rows: self.insert.partitions.unwrap_or(Distribution::FIXED_ONE),
        }
    }

    fn unknown_operation(&self, op: &str) -> Problem {
        let mut names = vec!["insert".to_string()];
        names.extend(self.queries.iter().map(|(q, _)| q.name.clone()));
        names.extend(self.ranges.iter().map(|(r, _)| r.name.clone()));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let hint = keys::nearest(op, &refs)
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        problem(
            self.queries_line,
            format!(
                "the mix names '{op}', which is not insert or a query of the profile{hint} (it has: {})",
                names.join(", ")
            ),
        )
    }
}

/// No CQL yet: it is made from the live table.
fn empty(line: usize) -> Located<String> {
    Located {
        line,
        value: String::new(),
    }
}

/// A distribution value of the profile (always a string in cassandra-stress).
fn distribution(node: &Node, what: &str) -> Result<Distribution, Problem> {
    let t = text(node, what)?;
    Distribution::parse(t).map_err(|e| problem(node.line, format!("{what}: {e}")))
}

fn columnspec(node: &Node) -> Result<Vec<ColumnGen>, Problem> {
    let Value::Seq(items) = &node.value else {
        return Err(problem(
            node.line,
            "columnspec must be a list of {name: …, size: …, population: …, cluster: …}",
        ));
    };
    items
        .iter()
        .map(|item| {
            let list = entries(item, "a columnspec entry", COLUMN)?;
            let name = get(list, "name")
                .ok_or_else(|| problem(item.line, "a columnspec entry has no name"))?;
            let name = text(name, "name")?.to_string();
            let dist = |key: &str| {
                get(list, key)
                    .map(|n| distribution(n, &format!("columnspec {name}: {key}")))
                    .transpose()
            };
            Ok(ColumnGen {
                population: dist("population")?,
                size: dist("size")?,
                cluster: dist("cluster")?,
                name,
                line: item.line,
            })
        })
        .collect()
}

#[derive(Debug, Default)]
struct InsertOptions {
    line: Option<usize>,
    condition: Option<String>,
    /// Partitions an insert writes to (one statement each; several make a batch).
    partitions: Option<Distribution>,
    /// The chance each row of a chosen partition is written (every row unless given).
    select: Option<Ratio>,
    batch_type: Option<BatchType>,
}

fn insert_options(node: &Node) -> Result<InsertOptions, Problem> {
    let list = entries(node, "insert", INSERT)?;
    let partitions = get(list, "partitions")
        .map(|n| distribution(n, "insert.partitions"))
        .transpose()?;
    let select = get(list, "select")
        .map(|n| ratio(n, "insert.select"))
        .transpose()?;
    if let Some(n) = get(list, "row-population") {
        ratio(n, "insert.row-population")?;
    }
    let mut batch_type = None;
    if let Some(n) = get(list, "batchtype") {
        let t = text(n, "insert.batchtype")?;
        if !["LOGGED", "UNLOGGED", "COUNTER"].contains(&t) {
            return Err(problem(
                n.line,
                format!("insert.batchtype '{t}': use LOGGED, UNLOGGED or COUNTER"),
            ));
        }
        batch_type = BatchType::parse(t);
    }
    Ok(InsertOptions {
        line: Some(node.line),
        partitions,
        select,
        batch_type,
        condition: get(list, "condition")
            .map(|n| text(n, "insert.condition").map(str::to_string))
            .transpose()?,
    })
}

/// `DIST/DIVISOR`, e.g. `fixed(1)/1`, `uniform(1..10)/10`.
fn ratio(node: &Node, what: &str) -> Result<Ratio, Problem> {
    let t = text(node, what)?;
    let (dist, divisor) = t.rsplit_once('/').ok_or_else(|| {
        problem(
            node.line,
            format!("{what} '{t}': write DIST/DIVISOR, e.g. fixed(1)/1"),
        )
    })?;
    let dist = Distribution::parse(dist).map_err(|e| problem(node.line, format!("{what}: {e}")))?;
    let divisor = cqlbench_units::parse_count(divisor)
        .ok()
        .filter(|d| *d > 0)
        .ok_or_else(|| {
            problem(
                node.line,
                format!("{what} '{t}': the divisor must be a whole number above 0"),
            )
        })?;
    Ok(Ratio { dist, divisor })
}

struct Named {
    name: String,
    line: usize,
    cql: Located<String>,
}

fn queries(node: &Node) -> Result<Vec<(Named, Fields)>, Problem> {
    let Value::Map(list) = &node.value else {
        if node.is_null() {
            return Err(problem(
                node.line,
                "queries must be a mapping (write queries: {} for none)",
            ));
        }
        return Err(problem(
            node.line,
            "queries must be a mapping of NAME: {cql: …, fields: …}",
        ));
    };
    list.iter()
        .map(|(key, body)| {
            let what = format!("query '{}'", key.text);
            let entries = entries(body, &what, QUERY)?;
            let cql = get(entries, "cql")
                .ok_or_else(|| problem(body.line, format!("{what} has no cql")))?;
            let fields = match get(entries, "fields") {
                None => Fields::MultiRow,
                Some(f) => match text(f, "fields")?.to_ascii_lowercase().as_str() {
                    "samerow" => Fields::SameRow,
                    "multirow" => Fields::MultiRow,
                    other => {
                        return Err(problem(
                            f.line,
                            format!("{what}: fields '{other}' is not samerow or multirow"),
                        ))
                    }
                },
            };
            Ok((
                Named {
                    name: key.text.clone(),
                    line: key.line,
                    cql: Located {
                        line: cql.line,
                        value: text(cql, "cql")?.trim().trim_end_matches(';').to_string(),
                    },
                },
                fields,
            ))
        })
        .collect()
}

fn token_range_queries(node: &Node) -> Result<Vec<(Named, u32)>, Problem> {
    let Value::Map(list) = &node.value else {
        return Err(problem(
            node.line,
            "token_range_queries must be a mapping of NAME: {columns: …, page_size: …}",
        ));
    };
    list.iter()
        .map(|(key, body)| {
            let what = format!("token range query '{}'", key.text);
            let entries = entries(body, &what, TOKEN_RANGE)?;
            let columns = match get(entries, "columns") {
                Some(c) => text(c, "columns")?.to_string(),
                None => "*".to_string(),
            };
            let page_size = match get(entries, "page_size") {
                Some(p) => text(p, "page_size")?
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        problem(
                            p.line,
                            format!("{what}: page_size must be a whole number above 0"),
                        )
                    })?,
                None => 5000,
            };
            Ok((
                Named {
                    name: key.text.clone(),
                    line: key.line,
                    cql: Located {
                        line: body.line,
                        value: columns,
                    },
                },
                page_size,
            ))
        })
        .collect()
}

/// `ops(insert=1,simple1=9)` or `insert=1,simple1=9`: operation names and relative weights.
pub fn parse_mix(text: &str) -> Result<Vec<(String, f64)>, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = compact
        .strip_prefix("ops(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(&compact);
    let mut mix: Vec<(String, f64)> = Vec::new();
    for part in inner.split(',') {
        let (name, weight) = part.split_once('=').ok_or_else(|| {
            format!("--mix '{text}': write NAME=WEIGHT,… e.g. insert=1,simple1=9")
        })?;
        let weight: f64 = weight
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| {
                format!("--mix '{text}': the weight of '{name}' must be a number ≥ 0")
            })?;
        if name.is_empty() {
            return Err(format!("--mix '{text}': an operation has no name"));
        }
        if mix.iter().any(|(n, _)| n == name) {
            return Err(format!("--mix '{text}': '{name}' is given twice"));
        }
        mix.push((name.to_string(), weight));
    }
    if mix.iter().all(|(_, w)| *w == 0.0) {
        return Err(format!("--mix '{text}': every weight is 0"));
    }
    Ok(mix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written from cassandra-stress's documentation of the profile format (its own example
    /// profiles are not copied).
    const PROFILE: &str = "\
specname: blog
keyspace: blogks
keyspace_definition: |
  CREATE KEYSPACE blogks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: posts
table_definition: |
  CREATE TABLE posts (domain text, published timestamp, url text, body text,
    PRIMARY KEY (domain, published)) WITH CLUSTERING ORDER BY (published DESC)
columnspec:
  - name: domain
    size: gaussian(5..100)
    population: uniform(1..10k)
  - name: published
    cluster: fixed(100)
  - name: body
    size: uniform(100..1000)
insert:
  partitions: fixed(1)
  select: fixed(1)/100
  batchtype: UNLOGGED
queries:
  latest:
    cql: select * from posts where domain = ? LIMIT 10
    fields: samerow
  one:
    cql: select url from posts where domain = ? and published = ?
token_range_queries:
  scan:
    columns: url
    page_size: 100
";

    fn compile_with(text: &str, mix: &str) -> Result<Workload, WorkloadError> {
        let doc = crate::yaml::parse(text).unwrap();
        assert!(looks_like_profile(&doc));
        compile("blog", "blog.yaml", &doc, Some(&parse_mix(mix).unwrap()))
    }

    #[test]
    fn a_profile_compiles_for_its_mix() {
        let w = compile_with(PROFILE, "ops(insert=1, latest=3, one=1, scan=1)").unwrap();
        assert_eq!(w.op_names(), ["insert", "latest", "one", "scan"]);
        let ks = w.keyspace.as_ref().unwrap();
        assert_eq!(ks.name, "blogks");
        assert!(ks
            .definition
            .as_ref()
            .unwrap()
            .value
            .ends_with("'replication_factor': 1}"));
        assert_eq!(w.schema.len(), 1);
        assert_eq!(w.schema[0].line, 7);
        assert!(matches!(
            w.ops[0].kind,
            OpKind::StressInsert { condition: None }
        ));
        let rows = w.ops[1].rows.as_ref().unwrap();
        assert_eq!(rows.fields, Fields::SameRow);
        assert_eq!(w.ops[2].rows.as_ref().unwrap().fields, Fields::MultiRow);
        assert_eq!(rows.columns[1].cluster, Some(Distribution::fixed(100)));
        assert!(matches!(
            w.ops[3].kind,
            OpKind::StressTokenRange { page_size: 100, .. }
        ));
        // Anything but insert alone draws partitions from a normal distribution.
        assert!(matches!(
            rows.partitions.shape,
            crate::dist::Shape::Gaussian { .. }
        ));
        let insert_only = compile_with(PROFILE, "insert=1").unwrap();
        let seq = insert_only.ops[0].rows.as_ref().unwrap().partitions.shape;
        assert_eq!(seq, crate::dist::Shape::Seq);
    }

    #[test]
    fn refusals_name_the_line_and_the_key_that_was_meant() {
        for (text, mix, line, says) in [
            (
                PROFILE.replace("specname:", "spacenam:"),
                "insert=1",
                1,
                "did you mean 'specname'",
            ),
            (
                PROFILE.replace("    cluster: fixed(100)", "    clutser: fixed(100)"),
                "insert=1",
                14,
                "did you mean 'cluster'",
            ),
            (
                PROFILE.replace("select: fixed(1)/100", "select: fixed(1)"),
                "insert=1",
                19,
                "DIST/DIVISOR",
            ),
            (
                PROFILE.replace("batchtype: UNLOGGED", "batchtype: unlogged"),
                "insert=1",
                20,
                "LOGGED, UNLOGGED or COUNTER",
            ),
            (
                PROFILE.replace("fields: samerow", "fields: onerow"),
                "insert=1",
                24,
                "not samerow or multirow",
            ),
            (PROFILE.to_string(), "latset=1", 22, "did you mean 'latest'"),
            (
                PROFILE.replace("table: posts\n", ""),
                "insert=1",
                1,
                "no 'table'",
            ),
        ] {
            let e = compile_with(&text, mix).unwrap_err().to_string();
            assert!(e.starts_with(&format!("blog.yaml:{line}: ")), "{e}");
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn the_mix_takes_cassandra_stress_spelling() {
        assert_eq!(
            parse_mix("ops(insert=1, simple1=9)").unwrap(),
            [("insert".to_string(), 1.0), ("simple1".to_string(), 9.0)]
        );
        assert_eq!(
            parse_mix("insert=2").unwrap(),
            [("insert".to_string(), 2.0)]
        );
        for bad in ["insert", "insert=x", "a=1,a=2", "insert=0", "=1"] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
    }
}

//! cqlbench's own workload format (YAML): parameters, schema, value generators, named operations
//! with weights and consistency, and a populate phase. The README shows a complete example.

use crate::dist::Distribution;
use crate::keys::{self, entries, get, problem, text, Problem};
use crate::model::{Batch, BatchType, Located, OpKind, Operation, Paging, Populate, Workload};
use crate::value::ValueSpec;
use crate::yaml::{Node, Value};
use crate::WorkloadError;

const TOP: &[&str] = &[
    "description",
    "params",
    "keyspace",
    "schema",
    "values",
    "populate",
    "operations",
];
const KEYSPACE: &[&str] = &["replication"];
const OPERATION: &[&str] = &[
    "cql",
    "weight",
    "consistency",
    "serial_consistency",
    "values",
    "batch",
    "state",
    "page_size",
    "pages",
];
const BATCH: &[&str] = &["type", "rows"];
const VALUE: &[&str] = &["population", "size", "now"];
const POPULATE: &[&str] = &["operation", "rows", "values"];
const CONSISTENCIES: &[&str] = &[
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "SERIAL",
    "LOCAL_SERIAL",
    "LOCAL_ONE",
];

/// Compiles a native workload file's text. `settings` are the `--workload.NAME=VALUE` overrides.
pub fn compile(
    name: &str,
    file: &str,
    source: &str,
    settings: &[(String, String)],
) -> Result<Workload, WorkloadError> {
    let doc = crate::parse_yaml(file, source)?;
    compile_document(name, file, &doc, settings)
}

/// [`compile`] of a parsed document.
pub fn compile_document(
    name: &str,
    file: &str,
    doc: &Node,
    settings: &[(String, String)],
) -> Result<Workload, WorkloadError> {
    let at = |p: Problem| WorkloadError::At {
        file: file.to_string(),
        line: p.line,
        message: p.message,
    };
    let top = entries(doc, "the workload", TOP).map_err(at)?;
    let params = params(get(top, "params"), settings).map_err(at)?;
    let subst = Substitution { params: &params };
    let ops_node = get(top, "operations")
        .ok_or_else(|| at(problem(doc.line, "the workload has no 'operations'")))?;
    let shared = match get(top, "values") {
        Some(node) => values(node, &subst).map_err(at)?,
        None => Vec::new(),
    };
    let ops = operations(ops_node, &shared, &subst).map_err(at)?;
    let populate = match get(top, "populate") {
        Some(node) => Some(populate(node, &ops, &subst).map_err(at)?),
        None => None,
    };
    if ops.iter().all(|op| op.weight == 0.0) {
        return Err(at(problem(
            ops_node.line,
            "every operation has weight 0: the measured mix would be empty",
        )));
    }
    Ok(Workload {
        name: name.to_string(),
        file: file.to_string(),
        description: match get(top, "description") {
            Some(node) => text(node, "description").map_err(at)?.to_string(),
            None => String::new(),
        },
        replication: replication(get(top, "keyspace"), &subst).map_err(at)?,
        keyspace: None,
        schema: schema(get(top, "schema"), &subst).map_err(at)?,
        schema_may_exist: false,
        ops,
        populate,
        params,
        hints: Default::default(),
        sequence: None,
        notes: Vec::new(),
    })
}

/// Resolved parameters: the file's defaults with the overrides applied; an override of a parameter
/// the file does not declare is refused.
fn params(
    node: Option<&Node>,
    settings: &[(String, String)],
) -> Result<Vec<(String, String)>, Problem> {
    let mut params: Vec<(String, String)> = Vec::new();
    let line = node.map_or(1, |n| n.line);
    if let Some(node) = node {
        let Value::Map(list) = &node.value else {
            return Err(problem(
                node.line,
                "params must be a mapping of NAME: DEFAULT",
            ));
        };
        for (key, value) in list {
            params.push((
                key.text.clone(),
                text(value, &format!("params.{}", key.text))?.to_string(),
            ));
        }
    }
    for (name, value) in settings {
        let Some(slot) = params.iter_mut().find(|(p, _)| p == name) else {
            let known: Vec<&str> = params.iter().map(|(p, _)| p.as_str()).collect();
            return Err(problem(
                line,
                format!(
                    "--workload.{name}: the workload has no parameter '{name}' (it has: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        slot.1 = value.clone();
    }
    Ok(params)
}

/// Replaces `{name}` of a declared parameter by its value.
struct Substitution<'a> {
    params: &'a [(String, String)],
}

impl Substitution<'_> {
    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in self.params {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// A scalar with parameters substituted.
    fn scalar(&self, node: &Node, what: &str) -> Result<String, Problem> {
        Ok(self.apply(text(node, what)?))
    }
}

fn replication(node: Option<&Node>, subst: &Substitution) -> Result<Option<String>, Problem> {
    let Some(node) = node else {
        return Ok(None);
    };
    let list = entries(node, "keyspace", KEYSPACE)?;
    get(list, "replication")
        .map(|r| subst.scalar(r, "keyspace.replication"))
        .transpose()
}

fn schema(node: Option<&Node>, subst: &Substitution) -> Result<Vec<Located<String>>, Problem> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    let Value::Seq(items) = &node.value else {
        return Err(problem(
            node.line,
            "schema must be a list of CQL statements",
        ));
    };
    items
        .iter()
        .map(|item| {
            Ok(Located {
                line: item.line,
                value: subst.scalar(item, "a schema statement")?,
            })
        })
        .collect()
}

fn values(node: &Node, subst: &Substitution) -> Result<Vec<(String, Located<ValueSpec>)>, Problem> {
    let Value::Map(list) = &node.value else {
        return Err(problem(
            node.line,
            "values must be a mapping of NAME: GENERATOR",
        ));
    };
    list.iter()
        .map(|(key, value)| {
            let spec = value_spec(value, &key.text, subst)?;
            Ok((
                key.text.clone(),
                Located {
                    line: value.line,
                    value: spec,
                },
            ))
        })
        .collect()
}

/// `uniform(1..100)`, `now`, or `{population: …, size: …, now: true}`.
fn value_spec(node: &Node, name: &str, subst: &Substitution) -> Result<ValueSpec, Problem> {
    let dist = |node: &Node, what: &str| {
        let text = subst.scalar(node, what)?;
        Distribution::parse(&text).map_err(|e| problem(node.line, format!("{what}: {e}")))
    };
    if let Some(word) = node.scalar() {
        let state = match word.split_whitespace().collect::<String>().as_str() {
            "state" => Some(crate::value::StateRef::Current),
            "state+1" => Some(crate::value::StateRef::Next),
            _ => None,
        };
        if state.is_some() {
            return Ok(ValueSpec {
                state,
                ..ValueSpec::of(Distribution::fixed(0))
            });
        }
        if word.trim() == "now" {
            return Ok(ValueSpec {
                now: true,
                function: None,
                state: None,
                ..ValueSpec::of(Distribution::fixed(0))
            });
        }
        return Ok(ValueSpec::of(dist(node, &format!("values.{name}"))?));
    }
    let list = entries(node, &format!("values.{name}"), VALUE)?;
    let now = match get(list, "now") {
        Some(n) => boolean(n, &format!("values.{name}.now"))?,
        None => false,
    };
    let population = match get(list, "population") {
        Some(p) => dist(p, &format!("values.{name}.population"))?,
        None if now => Distribution::fixed(0),
        None => {
            return Err(problem(
                node.line,
                format!("values.{name} needs a population (e.g. population: uniform(1..1000))"),
            ))
        }
    };
    let size = get(list, "size")
        .map(|s| dist(s, &format!("values.{name}.size")))
        .transpose()?;
    if size.is_some_and(|s| s.min < 0) {
        return Err(problem(
            node.line,
            format!("values.{name}.size must not be negative"),
        ));
    }
    Ok(ValueSpec {
        population,
        size,
        now,
        function: None,
        state: None,
    })
}

fn boolean(node: &Node, what: &str) -> Result<bool, Problem> {
    match text(node, what)?.to_ascii_lowercase().as_str() {
        "true" | "yes" => Ok(true),
        "false" | "no" => Ok(false),
        other => Err(problem(
            node.line,
            format!("{what}: '{other}' is not true or false"),
        )),
    }
}

fn operations(
    node: &Node,
    shared: &[(String, Located<ValueSpec>)],
    subst: &Substitution,
) -> Result<Vec<Operation>, Problem> {
    let Value::Map(list) = &node.value else {
        return Err(problem(
            node.line,
            "operations must be a mapping of NAME: {cql: …, weight: …}",
        ));
    };
    if list.is_empty() {
        return Err(problem(node.line, "operations is empty"));
    }
    list.iter()
        .map(|(key, body)| operation(&key.text, body, shared, subst))
        .collect()
}

fn operation(
    name: &str,
    node: &Node,
    shared: &[(String, Located<ValueSpec>)],
    subst: &Substitution,
) -> Result<Operation, Problem> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(problem(
            node.line,
            format!(
                "operation name '{name}': use letters, digits, '_' and '-' (it names result files)"
            ),
        ));
    }
    let what = format!("operation '{name}'");
    let list = entries(node, &what, OPERATION)?;
    let cql_node =
        get(list, "cql").ok_or_else(|| problem(node.line, format!("{what} has no cql")))?;
    let weight = match get(list, "weight") {
        Some(w) => {
            let t = subst.scalar(w, "weight")?;
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    problem(w.line, format!("{what}: weight '{t}' must be a number ≥ 0"))
                })?
        }
        None => 1.0,
    };
    let level = |key: &str| -> Result<Option<String>, Problem> {
        let Some(n) = get(list, key) else {
            return Ok(None);
        };
        let t = subst.scalar(n, key)?.trim().to_ascii_uppercase();
        if CONSISTENCIES.contains(&t.as_str()) {
            Ok(Some(t))
        } else {
            Err(problem(
                n.line,
                format!(
                    "{what}: {key} '{t}' is not a consistency level ({})",
                    CONSISTENCIES.join(", ")
                ),
            ))
        }
    };
    let values = merged(shared, get(list, "values"), subst)?;
    let state_key = state_key(list, &values, &what)?;
    let cql = subst.scalar(cql_node, "cql")?.trim().to_string();
    let batch = get(list, "batch")
        .map(|b| batch(b, &what, subst))
        .transpose()?;
    let paging = paging(list, &what, subst)?;
    if let Some(line) = get(list, "page_size").map(|n| n.line) {
        let select = cql
            .split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("SELECT"));
        if !select || batch.is_some() {
            return Err(problem(
                line,
                format!("{what}: page_size applies to a SELECT that is not batched"),
            ));
        }
    }
    Ok(Operation {
        name: name.to_string(),
        cql: Located {
            line: cql_node.line,
            value: cql,
        },
        weight,
        consistency: level("consistency")?,
        serial_consistency: level("serial_consistency")?,
        values,
        kind: OpKind::Cql,
        rows: None,
        batch,
        state_key,
        paging,
    })
}

/// `page_size: N` reads the result N rows a page, every page unless `pages` says `first` or a
/// number of pages.
fn paging(
    list: &[(crate::yaml::Key, Node)],
    what: &str,
    subst: &Substitution,
) -> Result<Option<Paging>, Problem> {
    let pages = get(list, "pages");
    let Some(size) = get(list, "page_size") else {
        return match pages {
            Some(n) => Err(problem(n.line, format!("{what}: pages needs page_size"))),
            None => Ok(None),
        };
    };
    let text = |n: &Node, key: &str| subst.scalar(n, key).map(|t| t.trim().to_string());
    let count = |t: &str| t.parse::<u32>().ok().filter(|v| *v > 0);
    let t = text(size, "page_size")?;
    let page_size = count(&t).ok_or_else(|| {
        problem(
            size.line,
            format!("{what}: page_size '{t}' must be a whole number above 0"),
        )
    })?;
    let max_pages = match pages {
        None => None,
        Some(n) => {
            let t = text(n, "pages")?;
            match t.to_ascii_lowercase().as_str() {
                "all" => None,
                "first" => Some(1),
                _ => Some(count(&t).ok_or_else(|| {
                    problem(
                        n.line,
                        format!("{what}: pages '{t}' must be all, first or a whole number above 0"),
                    )
                })?),
            }
        }
    };
    Ok(Some(Paging {
        page_size,
        max_pages,
    }))
}

/// `state: MARKER`: the operation keeps a value per value of that marker, which its `state` and
/// `state + 1` generators read (a marker bound to one in an operation without it is refused when
/// the operation is bound).
fn state_key(
    list: &[(crate::yaml::Key, Node)],
    values: &[(String, Located<ValueSpec>)],
    what: &str,
) -> Result<Option<String>, Problem> {
    let key = get(list, "state")
        .map(|n| text(n, "state").map(|t| (n.line, t.trim().to_string())))
        .transpose()?;
    if let Some((line, marker)) = &key {
        let Some((_, spec)) = values.iter().find(|(n, _)| n.eq_ignore_ascii_case(marker)) else {
            return Err(problem(
                *line,
                format!("{what}: state names '{marker}', which has no generator in values"),
            ));
        };
        if spec.value.state.is_some() || spec.value.now {
            return Err(problem(
                *line,
                format!("{what}: state's key '{marker}' must be drawn from a population"),
            ));
        }
    }
    Ok(key.map(|(_, marker)| marker))
}

/// `batch: {type: unlogged, rows: fixed(10)}`: the statement sent that many times in one BATCH,
/// each with values of its own.
fn batch(node: &Node, what: &str, subst: &Substitution) -> Result<Batch, Problem> {
    let list = entries(node, &format!("{what}: batch"), BATCH)?;
    let kind = match get(list, "type") {
        Some(n) => {
            let t = subst.scalar(n, "batch.type")?;
            BatchType::parse(&t).ok_or_else(|| {
                problem(
                    n.line,
                    format!("{what}: batch type '{t}': use logged, unlogged or counter"),
                )
            })?
        }
        None => BatchType::Unlogged,
    };
    let rows_node = get(list, "rows").ok_or_else(|| {
        problem(
            node.line,
            format!("{what}: batch needs rows (statements per batch, e.g. fixed(10))"),
        )
    })?;
    let t = subst.scalar(rows_node, "batch.rows")?;
    let rows = Distribution::parse(&t)
        .map_err(|e| problem(rows_node.line, format!("{what}: batch.rows: {e}")))?;
    if rows.min < 1 || rows.max > 65_535 {
        return Err(problem(
            rows_node.line,
            format!("{what}: batch.rows must lie between 1 and 65535"),
        ));
    }
    Ok(Batch { kind, rows })
}

/// `base` with the generators of the `values` mapping `over` (if any) in place of theirs.
fn merged(
    base: &[(String, Located<ValueSpec>)],
    over: Option<&Node>,
    subst: &Substitution,
) -> Result<Vec<(String, Located<ValueSpec>)>, Problem> {
    let mut values = base.to_vec();
    if let Some(over) = over {
        for (marker, spec) in self::values(over, subst)? {
            match values.iter_mut().find(|(n, _)| *n == marker) {
                Some(slot) => slot.1 = spec,
                None => values.push((marker, spec)),
            }
        }
    }
    Ok(values)
}

fn populate(node: &Node, ops: &[Operation], subst: &Substitution) -> Result<Populate, Problem> {
    let list = entries(node, "populate", POPULATE)?;
    let op_node =
        get(list, "operation").ok_or_else(|| problem(node.line, "populate needs an operation"))?;
    let op_name = subst.scalar(op_node, "populate.operation")?;
    let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
    let op = names.iter().position(|n| *n == op_name).ok_or_else(|| {
        let hint = keys::nearest(&op_name, &names)
            .map(|n| format!(" (did you mean '{n}'?)"))
            .unwrap_or_default();
        problem(
            op_node.line,
            format!("populate.operation '{op_name}' is not an operation{hint}"),
        )
    })?;
    let rows_node = get(list, "rows").ok_or_else(|| problem(node.line, "populate needs rows"))?;
    let rows_text = subst.scalar(rows_node, "populate.rows")?;
    let rows = cqlbench_units::parse_count(&rows_text)
        .map_err(|e| problem(rows_node.line, format!("populate.rows: {e}")))?;
    let values = merged(&ops[op].values, get(list, "values"), subst)?;
    Ok(Populate { op, rows, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KV: &str = "\
description: a key-value store
params:
  keys: 1000
  value_size: 50
schema:
  - CREATE TABLE IF NOT EXISTS kv (key bigint PRIMARY KEY, value text)
values:
  key: seq(1..{keys})
  value: {population: 'uniform(1..{keys})', size: 'fixed({value_size})'}
populate:
  operation: insert
  rows: '{keys}'
operations:
  insert:
    cql: INSERT INTO kv (key, value) VALUES (?, ?)
    weight: 1
  read:
    cql: SELECT * FROM kv WHERE key = ?
    weight: 3
    consistency: local_quorum
    values:
      key: uniform(1..{keys})
";

    fn compile_kv(settings: &[(&str, &str)]) -> Result<Workload, WorkloadError> {
        let settings: Vec<(String, String)> = settings
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        compile("kv", "kv.yaml", KV, &settings)
    }

    #[test]
    fn a_complete_file_compiles_with_its_parameters() {
        let w = compile_kv(&[("keys", "500")]).unwrap();
        assert_eq!(w.op_names(), ["insert", "read"]);
        assert_eq!(w.ops[1].weight, 3.0);
        assert_eq!(w.ops[1].consistency.as_deref(), Some("LOCAL_QUORUM"));
        assert_eq!(w.ops[0].value("key").unwrap().value.population.max, 500);
        assert_eq!(
            w.ops[1].value("KEY").unwrap().value.population.shape,
            crate::dist::Shape::Uniform
        );
        assert_eq!(
            w.ops[0].value("value").unwrap().value.size,
            Some(Distribution::fixed(50))
        );
        let populate = w.populate.as_ref().unwrap();
        assert_eq!((populate.op, populate.rows), (0, 500));
        assert_eq!(
            populate.value("key").unwrap().value.population.shape,
            crate::dist::Shape::Seq
        );
        assert_eq!(w.schema[0].line, 6);
        assert_eq!(w.ops[1].cql.line, 18);
    }

    #[test]
    fn every_refusal_names_its_file_and_line() {
        let cases = [
            (
                KV.replace("  rows: '{keys}'", "  rowz: 5"),
                12,
                "did you mean 'rows'",
            ),
            (KV.replace("weight: 3", "weight: lots"), 19, "weight 'lots'"),
            (
                KV.replace("consistency: local_quorum", "consistency: most"),
                20,
                "not a consistency level",
            ),
            (
                KV.replace("key: seq(1..{keys})", "key: sequence(1.{keys})"),
                8,
                "expected a range",
            ),
            (
                KV.replace("operation: insert", "operation: insrt"),
                11,
                "did you mean 'insert'",
            ),
            (
                KV.replace("description:", "descripton:"),
                1,
                "did you mean 'description'",
            ),
        ];
        for (text, line, says) in cases {
            let e = compile("kv", "kv.yaml", &text, &[])
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("kv.yaml:{line}: ")), "{e}");
            assert!(e.contains(says), "{e}");
        }
        let e = compile_kv(&[("nope", "1")]).unwrap_err().to_string();
        assert!(
            e.contains("no parameter 'nope' (it has: keys, value_size)"),
            "{e}"
        );
    }
}

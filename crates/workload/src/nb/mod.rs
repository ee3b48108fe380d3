//! nosqlbench CQL workloads, read as nosqlbench reads them: template parameters expanded in the
//! text, the chosen scenario's steps (schema and truncate run once, rampup as populate, the last
//! step measured), its blocks' ops with their params (`ratio`, `cl`, …) inherited from the document
//! and the block, and `{binding}` placeholders bound to binding-function chains.

pub mod binding;
pub mod function;
pub mod murmur;
pub mod scenario;
pub mod template;
pub mod write;

use std::path::Path;
use std::sync::Arc;

use crate::keys::{entries, get, problem, text, Problem};
use crate::model::{
    Batch, BatchType, KeyspaceSpec, Located, OpKind, Operation, Paging, Populate, RunHints,
    Workload,
};
use crate::value::ValueSpec;
use crate::yaml::{Key, Node, Value};
use crate::{Distribution, Invocation, WorkloadError};
use binding::CorpusKind;
use function::Corpus;
use scenario::Step;

const TOP: &[&str] = &[
    "description",
    "desc",
    "version_regex",
    "op",
    "operation",
    "statement",
    "stmt",
    "scenarios",
    "bindings",
    "params",
    "blocks",
    "ops",
    "statements",
    "tags",
    "min_version",
    "name",
];
/// The keys that hold a document's or a block's ops.
const OPS: &[&str] = &["ops", "op", "operation", "statements", "statement", "stmt"];
const BLOCK: &[&str] = &[
    "op",
    "operation",
    "statement",
    "stmt",
    "desc",
    "params",
    "ops",
    "statements",
    "bindings",
    "tags",
    "description",
    "name",
];
/// The keys an op's mapping may hold as its statement.
const OP_TEXT: &[&str] = &[
    "prepared",
    "raw",
    "simple",
    "stmt",
    "statement",
    "op",
    "cql",
];
/// Op params nosqlbench's CQL driver takes; those cqlbench does not act on are accepted as given.
const OP_PARAMS: &[&str] = &[
    "ratio",
    "cl",
    "consistency",
    "serial_cl",
    "idempotent",
    "instrument",
    "verify-fields",
    "verify",
    "timeout",
    "maxpages",
    "page_size",
    "fetchsize",
    "retryreplace",
    "trace",
    "start-timers",
    "stop-timers",
    "ifapplied",
    "driver",
];
/// Command-line parameters of a nosqlbench activity (not template parameters).
const ACTIVITY: &[&str] = &[
    "cycles",
    "threads",
    "async",
    "cyclerate",
    "rate",
    "stride",
    "striderate",
    "hosts",
    "host",
    "port",
    "localdc",
    "driver",
    "workload",
    "tags",
    "errors",
    "seq",
    "alias",
    "scenario",
    "username",
    "instrument",
];

/// Whether a file's text is a nosqlbench workload (it has scenarios, blocks or bindings).
pub fn looks_like(source: &str) -> bool {
    source.lines().any(|line| {
        ["scenarios:", "bindings:", "blocks:"]
            .iter()
            .any(|key| line.starts_with(key))
    })
}

/// Compiles a nosqlbench workload file's text.
pub fn compile(
    name: &str,
    path: &Path,
    source: &str,
    invocation: &Invocation,
) -> Result<Workload, WorkloadError> {
    let file = path.display().to_string();
    let at = |p: Problem| WorkloadError::At {
        file: file.clone(),
        line: p.line,
        message: p.message,
    };
    let settings = &invocation.settings;
    let mut used = Vec::new();
    let text = template::expand(source, settings, &mut used)
        .map_err(|e| at(problem(e.line, e.message)))?;
    let doc = crate::parse_yaml(&file, &text)?;
    let top = entries(&doc, "the workload", TOP).map_err(at)?;
    let mut notes = Vec::new();
    let reader = Reader::new(top, &mut notes).map_err(at)?;
    let chosen = setting(settings, "scenario").unwrap_or("default");
    let steps = reader.steps(top, chosen).map_err(at)?;
    let mut corpora = corpus_finder(path);
    let sequencer = setting(settings, "seq");
    let mut compiled = reader.lower(&steps, sequencer, &mut corpora).map_err(at)?;
    notes.extend(corpora.notes());
    let sequence_len = compiled.sequence.as_ref().map(Vec::len);
    compiled.hints = hints(&steps, settings, sequence_len);
    let unused: Vec<&str> = settings
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !used.iter().any(|u| u == n) && !ACTIVITY.contains(n))
        .collect();
    if !unused.is_empty() {
        notes.push(format!(
            "warning: {} not used by {file}: {}",
            if unused.len() == 1 {
                "this parameter is"
            } else {
                "these parameters are"
            },
            unused.join(", ")
        ));
    }
    compiled.notes = notes;
    compiled.name = name.to_string();
    compiled.file = file;
    Ok(compiled)
}

fn setting<'a>(settings: &'a [(String, String)], name: &str) -> Option<&'a str> {
    settings
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// What the run takes from the measured step and the command line: cycles, threads, async,
/// cyclerate (or striderate × stride, the stride being the op sequence's length unless given) and
/// hosts.
fn hints(steps: &[Step], settings: &[(String, String)], sequence_len: Option<usize>) -> RunHints {
    let measured = steps.iter().rev().find(|s| s.cycles.is_some());
    let get = |name: &str| {
        setting(settings, name)
            .or_else(|| measured.and_then(|s| s.param(name)))
            .map(str::to_string)
    };
    let stride = get("stride").or_else(|| sequence_len.map(|n| n.to_string()));
    let stride_rate = match (get("striderate"), stride) {
        (Some(rate), Some(stride)) => {
            let rate: Option<f64> = rate.split(',').next().and_then(|r| r.trim().parse().ok());
            let stride: Option<f64> = stride.trim().parse().ok();
            rate.zip(stride).map(|(r, s)| format!("{}", r * s))
        }
        _ => None,
    };
    RunHints {
        ops: measured.and_then(|s| s.cycles.clone()),
        rate: get("cyclerate")
            .or_else(|| get("rate"))
            .map(|r| r.split(',').next().unwrap_or("").trim().to_string())
            .or(stride_rate),
        threads: get("threads").filter(|t| !t.eq_ignore_ascii_case("auto")),
        in_flight: get("async"),
        hosts: get("hosts").or_else(|| get("host")),
    }
}

/// Data files a binding names: the file beside the workload (or the path as given), else the
/// built-in corpus, said once per file.
struct CorpusFinder {
    dir: std::path::PathBuf,
    loaded: Vec<(String, Arc<Corpus>)>,
    missing: Vec<String>,
}

fn corpus_finder(workload: &Path) -> CorpusFinder {
    CorpusFinder {
        dir: workload.parent().map(Path::to_path_buf).unwrap_or_default(),
        loaded: Vec::new(),
        missing: Vec::new(),
    }
}

impl CorpusFinder {
    fn find(&mut self, name: &str, kind: CorpusKind) -> Arc<Corpus> {
        if let Some((_, corpus)) = self.loaded.iter().find(|(n, _)| n == name) {
            return corpus.clone();
        }
        let found = [self.dir.join(name), Path::new(name).to_path_buf()]
            .into_iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
            .filter(|t| !t.trim().is_empty());
        let corpus = Arc::new(match found {
            Some(text) => Corpus::new(text),
            None => {
                self.missing.push(name.to_string());
                Corpus::builtin(kind)
            }
        });
        self.loaded.push((name.to_string(), corpus.clone()));
        corpus
    }

    fn notes(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|name| format!("note: {name} is not beside the workload; bindings that read it use cqlbench's built-in text"))
            .collect()
    }
}

/// One op of a block, with the params it inherits.
struct RawOp {
    name: String,
    line: usize,
    cql: String,
    block: String,
    params: Vec<(String, String)>,
    /// Bindings of the op and its block, over the document's.
    bindings: Vec<(String, usize, String)>,
    /// Why the op cannot run here; said only if a step of the scenario selects it.
    unsupported: Option<String>,
    batch: Option<Batch>,
}

struct Reader {
    ops: Vec<RawOp>,
}

impl Reader {
    fn new(top: &[(Key, Node)], notes: &mut Vec<String>) -> Result<Reader, Problem> {
        let bindings = binding_texts(get(top, "bindings"))?;
        let doc_params = params(get(top, "params"), &[])?;
        let mut ops = Vec::new();
        if let Some(list) = OPS.iter().find_map(|key| get(top, key)) {
            read_ops(list, "block0", &doc_params, &bindings, &mut ops)?;
        }
        if let Some(blocks) = get(top, "blocks") {
            for (name, block) in named_items(blocks, "block")? {
                let Value::Map(entries) = &block.value else {
                    return Err(problem(
                        block.line,
                        format!("block '{name}' must be a mapping"),
                    ));
                };
                for (key, _) in entries
                    .iter()
                    .filter(|(k, _)| !BLOCK.contains(&k.text.as_str()))
                {
                    notes.push(format!(
                        "warning: line {}: block '{name}' has an unknown key '{}', not read",
                        key.line, key.text
                    ));
                }
                let block_params = params(get(entries, "params"), &doc_params)?;
                let mut block_bindings = binding_texts(get(entries, "bindings"))?;
                block_bindings.extend(bindings.iter().cloned());
                if let Some(list) = OPS.iter().find_map(|key| get(entries, key)) {
                    read_ops(list, &name, &block_params, &block_bindings, &mut ops)?;
                }
            }
        }
        Ok(Reader { ops })
    }

    /// The steps of the scenario named `chosen`; without scenarios, every op is measured.
    fn steps(&self, top: &[(Key, Node)], chosen: &str) -> Result<Vec<Step>, Problem> {
        let Some(scenarios) = get(top, "scenarios") else {
            return Ok(vec![Step {
                name: "main".into(),
                line: 1,
                block: None,
                op_pattern: None,
                cycles: Some("UNDEF-cycles".into()),
                params: Vec::new(),
            }]);
        };
        let Value::Map(list) = &scenarios.value else {
            return Err(problem(
                scenarios.line,
                "scenarios must be a mapping of NAME: steps",
            ));
        };
        let Some((_, scenario)) = list.iter().find(|(k, _)| k.text == chosen) else {
            let names: Vec<&str> = list.iter().map(|(k, _)| k.text.as_str()).collect();
            return Err(problem(
                scenarios.line,
                format!(
                    "no scenario '{chosen}' (the file has: {})",
                    names.join(", ")
                ),
            ));
        };
        let commands: Vec<(String, usize, String)> = match &scenario.value {
            Value::Scalar { text, .. } => vec![("step".into(), scenario.line, text.clone())],
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    Ok((
                        format!("step{}", i + 1),
                        n.line,
                        text(n, "a step")?.to_string(),
                    ))
                })
                .collect::<Result<_, Problem>>()?,
            Value::Map(items) => items
                .iter()
                .map(|(k, n)| Ok((k.text.clone(), n.line, text(n, "a step")?.to_string())))
                .collect::<Result<_, Problem>>()?,
        };
        let mut steps = Vec::new();
        for (name, line, command) in commands {
            if let Some(step) = Step::parse(&name, line, &command).map_err(|e| problem(line, e))? {
                steps.push(step);
            }
        }
        Ok(steps)
    }

    /// The ops a step runs, in the file's order; an op that cannot run here is refused.
    fn selected<'a>(&'a self, step: &Step) -> Result<Vec<&'a RawOp>, Problem> {
        let ops: Vec<&RawOp> = self
            .ops
            .iter()
            .filter(|op| {
                step.block
                    .as_deref()
                    .is_none_or(|p| scenario::matches(p, &op.block))
            })
            .filter(|op| {
                step.op_pattern
                    .as_deref()
                    .is_none_or(|p| scenario::matches(p, &op.name))
            })
            .collect();
        if let Some(op) = ops.iter().find(|op| op.unsupported.is_some()) {
            return Err(problem(op.line, op.unsupported.clone().unwrap_or_default()));
        }
        Ok(ops)
    }

    /// The scenario lowered: steps without cycles make the schema, the last step with cycles is
    /// measured, and one before it populates.
    fn lower(
        &self,
        steps: &[Step],
        sequencer: Option<&str>,
        corpora: &mut CorpusFinder,
    ) -> Result<Workload, Problem> {
        let cycled: Vec<&Step> = steps.iter().filter(|s| s.cycles.is_some()).collect();
        let Some(measured) = cycled.last() else {
            let line = steps.first().map_or(1, |s| s.line);
            return Err(problem(
                line,
                "the scenario has no step with cycles to measure",
            ));
        };
        let mut schema = Vec::new();
        let mut keyspace = None;
        for step in steps.iter().filter(|s| s.cycles.is_none()) {
            for op in self.selected(step)? {
                let cql = statement_text(&op.cql);
                if let Some(name) = placeholders(&cql).first() {
                    return Err(problem(
                        op.line,
                        format!(
                            "op '{}' of step '{}' runs once, but uses the binding {{{name}}}",
                            op.name, step.name
                        ),
                    ));
                }
                match created_keyspace(&cql) {
                    Some(name) if keyspace.is_none() => {
                        keyspace = Some(KeyspaceSpec {
                            name,
                            definition: Some(Located {
                                line: op.line,
                                value: cql,
                            }),
                        })
                    }
                    _ => schema.push(Located {
                        line: op.line,
                        value: cql,
                    }),
                }
            }
        }
        let mut ops = Vec::new();
        for op in self.selected(measured)? {
            ops.push(operation(op, corpora)?);
        }
        if ops.is_empty() {
            return Err(problem(
                measured.line,
                format!("step '{}' selects no op", measured.name),
            ));
        }
        if ops.iter().all(|op| op.weight == 0.0) {
            return Err(problem(
                measured.line,
                format!("every op of step '{}' has ratio 0", measured.name),
            ));
        }
        // The command line's `seq=`, else the step's.
        let sequencer = sequencer.or_else(|| measured.param("seq"));
        let weights: Vec<f64> = ops.iter().map(|op| op.weight).collect();
        let sequence = op_sequence(sequencer.unwrap_or("bucket"), &weights)
            .map_err(|e| problem(measured.line, format!("step '{}': {e}", measured.name)))?;
        let populate = match &cycled[..cycled.len() - 1] {
            [] => None,
            [step] => Some(self.populate(step, &mut ops, corpora)?),
            [_, extra, ..] => {
                return Err(problem(
                    extra.line,
                    format!(
                        "step '{}': cqlbench runs one populate step before the measured one",
                        extra.name
                    ),
                ))
            }
        };
        Ok(Workload {
            name: String::new(),
            file: String::new(),
            description: String::new(),
            replication: None,
            keyspace,
            schema,
            schema_may_exist: true,
            ops,
            populate,
            params: Vec::new(),
            hints: RunHints::default(),
            notes: Vec::new(),
            sequence,
        })
    }

    /// A step before the measured one, as populate: its one op, run `cycles` times (not measured).
    fn populate(
        &self,
        step: &Step,
        ops: &mut Vec<Operation>,
        corpora: &mut CorpusFinder,
    ) -> Result<Populate, Problem> {
        let selected = self.selected(step)?;
        let [op] = selected.as_slice() else {
            return Err(problem(
                step.line,
                format!(
                    "step '{}' selects {} ops; cqlbench populates with one",
                    step.name,
                    selected.len()
                ),
            ));
        };
        let rows = step.cycles.as_deref().unwrap_or("0");
        let rows = count(rows).ok_or_else(|| {
            problem(
                step.line,
                format!(
                    "step '{}': cycles '{rows}' is not a count like 1M",
                    step.name
                ),
            )
        })?;
        let mut operation = operation(op, corpora)?;
        operation.weight = 0.0;
        let values = operation.values.clone();
        let index = match ops.iter().position(|o| o.name == operation.name) {
            Some(i) => i,
            None => {
                ops.push(operation);
                ops.len() - 1
            }
        };
        Ok(Populate {
            op: index,
            rows,
            values,
        })
    }
}

/// An op of the measured or populate step, its `{bindings}` parsed into chains.
fn operation(op: &RawOp, corpora: &mut CorpusFinder) -> Result<Operation, Problem> {
    let (cql, inline) = statement_text_and_inline(&op.cql);
    let mut values = Vec::new();
    for name in placeholders(&cql) {
        if values
            .iter()
            .any(|(n, _): &(String, Located<ValueSpec>)| *n == name)
        {
            continue;
        }
        let found = op
            .bindings
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, l, t)| (*l, t.as_str()));
        let found = found.or_else(|| {
            inline
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| (op.line, t.as_str()))
        });
        let Some((line, recipe)) = found else {
            return Err(problem(
                op.line,
                format!(
                    "op '{}': the binding {{{name}}} is not defined in bindings",
                    op.name
                ),
            ));
        };
        let chain = binding::parse(recipe, &mut |file: &str, kind| corpora.find(file, kind))
            .map_err(|e| problem(line, format!("binding '{name}': {e}")))?;
        let spec = ValueSpec {
            function: Some(Arc::new(chain)),
            ..ValueSpec::of(Distribution::fixed(0))
        };
        values.push((name, Located { line, value: spec }));
    }
    let param = |key: &str| {
        op.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let weight = match param("ratio") {
        Some(r) => r
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|w| *w >= 0.0)
            .ok_or_else(|| {
                problem(
                    op.line,
                    format!("op '{}': ratio '{r}' is not a number ≥ 0", op.name),
                )
            })?,
        None => 1.0,
    };
    Ok(Operation {
        name: op.name.clone(),
        cql: Located {
            line: op.line,
            value: with_markers(&cql),
        },
        weight,
        consistency: param("cl")
            .or_else(|| param("consistency"))
            .map(|c| c.to_ascii_uppercase()),
        serial_consistency: param("serial_cl").map(|c| c.to_ascii_uppercase()),
        values,
        kind: OpKind::Cql,
        rows: None,
        batch: op.batch.clone(),
        state_key: None,
        paging: paging(op, &param)?,
    })
}

/// Sequences longer than this are drawn by weight instead (the shares are the same).
const MAX_SEQUENCE: u64 = 1 << 20;

/// nosqlbench's op sequence for ops of these ratios, as its sequencers build it: `bucket` (the
/// default) takes one of each op that has some left, round after round; `concat` each op's ratio
/// in a row; `interval` spreads op `i` at positions `k / ratio`. `None` for ratios that are not
/// whole numbers or a sequence too long to hold.
fn op_sequence(sequencer: &str, ratios: &[f64]) -> Result<Option<Vec<usize>>, String> {
    if ratios.iter().any(|r| r.fract() != 0.0) {
        return Ok(None);
    }
    let counts: Vec<u64> = ratios.iter().map(|r| *r as u64).collect();
    if counts.iter().sum::<u64>() > MAX_SEQUENCE {
        return Ok(None);
    }
    let mut sequence = Vec::new();
    match sequencer.trim().to_ascii_lowercase().as_str() {
        "bucket" => {
            let mut left = counts.clone();
            while left.iter().any(|n| *n > 0) {
                for (op, n) in left.iter_mut().enumerate() {
                    if *n > 0 {
                        sequence.push(op);
                        *n -= 1;
                    }
                }
            }
        }
        "concat" => {
            for (op, n) in counts.iter().enumerate() {
                sequence.extend(std::iter::repeat_n(op, *n as usize));
            }
        }
        "interval" => {
            let mut slots: Vec<(f64, usize)> = Vec::new();
            for (op, n) in counts.iter().enumerate() {
                slots.extend((0..*n).map(|k| (k as f64 / *n as f64, op)));
            }
            // Stable: equal positions keep the ops' order.
            slots.sort_by(|a, b| a.0.total_cmp(&b.0));
            sequence.extend(slots.into_iter().map(|(_, op)| op));
        }
        other => {
            return Err(format!(
                "seq={other} is not a sequencer (bucket, concat or interval)"
            ))
        }
    }
    Ok(Some(sequence))
}

/// nosqlbench's `page_size` (`fetchsize` in its older driver) and `maxpages` (1 unless given: the
/// first page alone).
fn paging(op: &RawOp, param: &dyn Fn(&str) -> Option<String>) -> Result<Option<Paging>, Problem> {
    let number = |key: &str| -> Result<Option<u32>, Problem> {
        let Some(text) = param(key) else {
            return Ok(None);
        };
        let n = count(&text)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                problem(
                    op.line,
                    format!(
                        "op '{}': {key} '{text}' is not a whole number above 0",
                        op.name
                    ),
                )
            })?;
        Ok(Some(n))
    };
    let page_size = match number("page_size")? {
        Some(n) => Some(n),
        None => number("fetchsize")?,
    };
    let max_pages = number("maxpages")?.unwrap_or(1);
    Ok(page_size.map(|page_size| Paging {
        page_size,
        max_pages: Some(max_pages),
    }))
}

/// Resolved params: the inherited ones, then the mapping's own (later entries win).
fn params(
    node: Option<&Node>,
    inherited: &[(String, String)],
) -> Result<Vec<(String, String)>, Problem> {
    let mut params = inherited.to_vec();
    if let Some(node) = node {
        let Value::Map(list) = &node.value else {
            if node.is_null() {
                return Ok(params);
            }
            return Err(problem(
                node.line,
                "params must be a mapping of NAME: VALUE",
            ));
        };
        for (key, value) in list {
            if let Some(text) = value.scalar() {
                params.push((key.text.clone(), text.to_string()));
            }
        }
    }
    Ok(params)
}

/// `bindings:` as (name, line, recipe).
fn binding_texts(node: Option<&Node>) -> Result<Vec<(String, usize, String)>, Problem> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    let Value::Map(list) = &node.value else {
        if node.is_null() {
            return Ok(Vec::new());
        }
        return Err(problem(
            node.line,
            "bindings must be a mapping of NAME: FUNCTIONS",
        ));
    };
    list.iter()
        .map(|(key, value)| {
            let recipe = text(value, &format!("binding '{}'", key.text))?;
            Ok((key.text.clone(), value.line, recipe.to_string()))
        })
        .collect()
}

/// Blocks as a mapping (name: block) or a list (a block's `name:`, else `block1`, `block2`, …).
fn named_items<'a>(node: &'a Node, default: &str) -> Result<Vec<(String, &'a Node)>, Problem> {
    match &node.value {
        Value::Map(list) => Ok(list.iter().map(|(k, v)| (k.text.clone(), v)).collect()),
        Value::Seq(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let named = match &item.value {
                    Value::Map(entries) => get(entries, "name").and_then(Node::scalar),
                    _ => None,
                };
                (
                    named.map_or_else(|| format!("{default}{}", i + 1), str::to_string),
                    item,
                )
            })
            .collect()),
        _ if node.is_null() => Ok(Vec::new()),
        _ => Err(problem(node.line, "blocks must be a mapping or a list")),
    }
}

/// A block's ops in any of nosqlbench's forms: one statement, a list, or a mapping of name: op.
fn read_ops(
    list: &Node,
    block: &str,
    params: &[(String, String)],
    bindings: &[(String, usize, String)],
    out: &mut Vec<RawOp>,
) -> Result<(), Problem> {
    let mut push = |name: String, node: &Node| -> Result<(), Problem> {
        out.push(raw_op(name, node, block, params, bindings)?);
        Ok(())
    };
    match &list.value {
        Value::Scalar { .. } if list.is_null() => {}
        Value::Scalar { .. } => push("stmt1".into(), list)?,
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                push(format!("stmt{}", i + 1), item)?;
            }
        }
        Value::Map(items) => {
            for (key, item) in items {
                push(key.text.clone(), item)?;
            }
        }
    }
    Ok(())
}

/// One op: a statement, or a mapping of its statement, name, params and bindings.
fn raw_op(
    name: String,
    node: &Node,
    block: &str,
    params_in: &[(String, String)],
    bindings_in: &[(String, usize, String)],
) -> Result<RawOp, Problem> {
    let mut op = RawOp {
        name,
        line: node.line,
        cql: String::new(),
        block: block.to_string(),
        params: params_in.to_vec(),
        bindings: bindings_in.to_vec(),
        unsupported: None,
        batch: None,
    };
    let entries = match &node.value {
        Value::Scalar { text, .. } => {
            op.cql = text.clone();
            return Ok(op);
        }
        Value::Seq(_) => {
            return Err(problem(
                node.line,
                format!("op '{}': a list of statements is not supported", op.name),
            ))
        }
        Value::Map(entries) => entries,
    };
    if let Some(name) = get(entries, "name").and_then(Node::scalar) {
        op.name = name.to_string();
    }
    let mut own_bindings = binding_texts(get(entries, "bindings"))?;
    own_bindings.append(&mut op.bindings);
    op.bindings = own_bindings;
    op.params = params(get(entries, "params"), &op.params)?;
    let skip = ["name", "desc", "description", "bindings", "params", "tags"];
    let mut rest: Vec<&(Key, Node)> = entries
        .iter()
        .filter(|(k, _)| !skip.contains(&k.text.as_str()))
        .collect();
    if rest
        .iter()
        .any(|(k, v)| k.text == "batch" || (k.text == "type" && v.scalar() == Some("batch")))
    {
        return batch_op(op, entries, node);
    }
    let statement = rest
        .iter()
        .position(|(k, _)| OP_TEXT.contains(&k.text.as_str()));
    let statement = match statement {
        Some(at) => rest.remove(at),
        // The list form `- op_name: select …`.
        None if !rest.is_empty()
            && rest[0].1.scalar().is_some()
            && !OP_PARAMS.contains(&rest[0].0.text.as_str()) =>
        {
            let first = rest.remove(0);
            op.name = first.0.text.clone();
            first
        }
        None => {
            return Err(problem(
                node.line,
                format!(
                    "op '{}' has no statement (stmt, prepared, raw or simple)",
                    op.name
                ),
            ))
        }
    };
    op.cql = text(&statement.1, &format!("op '{}'", op.name))?.to_string();
    op.line = statement.1.line;
    for (key, value) in rest {
        if let Some(v) = value.scalar() {
            op.params.push((key.text.clone(), v.to_string()));
        }
    }
    Ok(op)
}

/// nosqlbench's batch op: `op_template` sent `repeat` times in one BATCH (`batchtype`, unlogged
/// by default), cycle `c`'s statements at cycles `c × repeat + i`.
fn batch_op(mut op: RawOp, entries: &[(Key, Node)], node: &Node) -> Result<RawOp, Problem> {
    let name = op.name.clone();
    let repeat = match get(entries, "repeat").and_then(Node::scalar) {
        Some(r) => count(r)
            .filter(|n| (1..=65_535).contains(n))
            .ok_or_else(|| {
                problem(
                    node.line,
                    format!("op '{name}': repeat '{r}' is not a count from 1 to 65535"),
                )
            })?,
        None => 1,
    };
    let kind = match get(entries, "batchtype").and_then(Node::scalar) {
        Some(t) => BatchType::parse(t).ok_or_else(|| {
            problem(
                node.line,
                format!("op '{name}': batchtype '{t}': use logged, unlogged or counter"),
            )
        })?,
        None => BatchType::Unlogged,
    };
    let Some(template) = get(entries, "op_template") else {
        return Err(problem(
            node.line,
            format!("op '{name}': a batch op needs an op_template"),
        ));
    };
    let inner = raw_op(name, template, &op.block, &op.params, &op.bindings)?;
    op.cql = inner.cql;
    op.line = inner.line;
    op.params = inner.params;
    op.unsupported = inner.unsupported;
    op.batch = Some(Batch {
        kind,
        rows: Distribution::fixed(repeat as i64),
    });
    Ok(op)
}

/// A statement as sent: trimmed, without a final `;`, and its inline bindings `{{Recipe()}}`
/// named `inline1`, `inline2`, … in its text.
fn statement_text_and_inline(cql: &str) -> (String, Vec<(String, String)>) {
    let mut text = String::with_capacity(cql.len());
    let mut inline = Vec::new();
    let mut rest = cql.trim();
    while let Some(at) = rest.find("{{") {
        let Some(end) = rest[at..].find("}}") else {
            break;
        };
        let name = format!("inline{}", inline.len() + 1);
        inline.push((name.clone(), rest[at + 2..at + end].to_string()));
        text.push_str(&rest[..at]);
        text.push('{');
        text.push_str(&name);
        text.push('}');
        rest = &rest[at + end + 2..];
    }
    text.push_str(rest);
    let text = text.trim_end().trim_end_matches(';').trim_end().to_string();
    (text, inline)
}

fn statement_text(cql: &str) -> String {
    statement_text_and_inline(cql).0
}

fn anchor() -> &'static regex::Regex {
    static ANCHOR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| regex::Regex::new(r"\{(\w[-_<>,\w.]*)\}").expect("a valid pattern"))
}

/// The binding names of a statement's `{name}` anchors, in order (a CQL map literal such as
/// `{'class': …}` is not one).
fn placeholders(cql: &str) -> Vec<String> {
    anchor()
        .captures_iter(cql)
        .map(|c| c[1].to_string())
        .collect()
}

/// The statement with every anchor a named bind marker (`:"name"`, quoted so that a keyword such
/// as `limit` or a mixed-case name is a marker name too).
fn with_markers(cql: &str) -> String {
    anchor().replace_all(cql, r#":"$1""#).into_owned()
}

/// The keyspace a `CREATE KEYSPACE` makes.
fn created_keyspace(cql: &str) -> Option<String> {
    let words: Vec<&str> = cql.split_whitespace().collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    if lower.first().map(String::as_str) != Some("create")
        || lower.get(1).map(String::as_str) != Some("keyspace")
    {
        return None;
    }
    let at = if lower.get(2).map(String::as_str) == Some("if") {
        5
    } else {
        2
    };
    let name = words.get(at)?.trim_matches('"');
    (!name.is_empty()).then(|| name.to_string())
}

/// nosqlbench's counts: `1000`, `10k`, `1M`, `1.5M`, `1E6`, `2B`, `A..B` (B − A).
pub fn count(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some((a, b)) = t.split_once("..") {
        let a = count(a)?;
        return match b.strip_prefix('+') {
            Some(n) => count(n),
            None => count(b)?.checked_sub(a),
        };
    }
    let (digits, factor) = match t.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let factor: f64 = match c.to_ascii_uppercase() {
                'U' => 1.0,
                'K' => 1e3,
                'M' => 1e6,
                'B' | 'G' => 1e9,
                'T' => 1e12,
                'P' => 1e15,
                _ => return None,
            };
            (&t[..i], factor)
        }
        _ => (t, 1.0),
    };
    let value: f64 = digits.parse().ok()?;
    (value >= 0.0 && value.is_finite()).then_some((value * factor) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_become_named_markers_and_map_literals_stay() {
        let cql = "insert into t (a,b) values ({part_layout},{limit}) -- {'class': 'x'}";
        assert_eq!(placeholders(cql), ["part_layout", "limit"]);
        assert_eq!(
            with_markers(cql),
            r#"insert into t (a,b) values (:"part_layout",:"limit") -- {'class': 'x'}"#
        );
        let (text, inline) = statement_text_and_inline("select * from t where k={{Mod(5)}};\n");
        assert_eq!(text, "select * from t where k={inline1}");
        assert_eq!(inline, [("inline1".to_string(), "Mod(5)".to_string())]);
    }

    #[test]
    fn page_size_reads_the_first_page_unless_maxpages_says_more() {
        let doc = |params: &str| {
            format!(
                "scenarios:\n  default:\n    main: run driver=cql tags=block:main cycles=10\n\
                 bindings:\n  k: Mod(5)\n\
                 blocks:\n  main:\n    params:\n{params}    ops:\n      \
                 read: select * from t where k={{k}}\n"
            )
        };
        let paging = |params: &str| {
            let text = doc(params);
            let workload = compile("w", Path::new("w.yaml"), &text, &Invocation::default());
            workload.map(|w| w.ops[0].paging).map_err(|e| e.to_string())
        };
        assert_eq!(paging("      ratio: 1\n"), Ok(None));
        assert_eq!(
            paging("      page_size: 50\n"),
            Ok(Some(Paging {
                page_size: 50,
                max_pages: Some(1)
            }))
        );
        assert_eq!(
            paging("      fetchsize: 1k\n      maxpages: 3\n"),
            Ok(Some(Paging {
                page_size: 1000,
                max_pages: Some(3)
            }))
        );
        let refused = paging("      page_size: many\n").unwrap_err();
        assert!(refused.contains("page_size 'many'"), "{refused}");
    }

    #[test]
    fn the_measured_step_runs_its_ops_in_sequence_and_striderate_counts_the_sequence() {
        let text = "scenarios:\n  default:\n    main: run driver=cql tags=block:main cycles=10 striderate=100\n\
                    blocks:\n  main:\n    ops:\n      \
                    r:\n        stmt: select * from t\n        ratio: 1\n      \
                    w:\n        stmt: insert into t (k) values (1)\n        ratio: 3\n";
        let compile_with = |settings: &[(&str, &str)]| {
            let invocation = Invocation {
                settings: settings
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..Invocation::default()
            };
            compile("w", Path::new("w.yaml"), text, &invocation).unwrap()
        };
        let workload = compile_with(&[]);
        assert_eq!(workload.sequence, Some(vec![0, 1, 1, 1]));
        // No stride given: nosqlbench's stride is the sequence's length.
        assert_eq!(workload.hints.rate.as_deref(), Some("400"));
        let concat = compile_with(&[("seq", "concat"), ("stride", "2")]);
        assert_eq!(concat.sequence, Some(vec![0, 1, 1, 1]));
        assert_eq!(concat.hints.rate.as_deref(), Some("200"));
    }

    #[test]
    fn ops_follow_nosqlbench_s_sequencers() {
        // cql_tabular2's main: eight reads of ratio 1, then a write of ratio 8.
        let mut tabular = vec![1.0; 8];
        tabular.push(8.0);
        let bucket = op_sequence("bucket", &tabular).unwrap().unwrap();
        let mut expected: Vec<usize> = (0..9).collect();
        expected.extend([8; 7]);
        assert_eq!(bucket, expected);
        assert_eq!(
            op_sequence("bucket", &[3.0, 1.0]).unwrap(),
            Some(vec![0, 1, 0, 0])
        );
        assert_eq!(
            op_sequence("concat", &[2.0, 0.0, 3.0]).unwrap(),
            Some(vec![0, 0, 2, 2, 2])
        );
        assert_eq!(
            op_sequence("interval", &[2.0, 4.0]).unwrap(),
            Some(vec![0, 1, 1, 0, 1, 1])
        );
        assert_eq!(op_sequence("bucket", &[0.5, 1.0]).unwrap(), None);
        assert!(op_sequence("shuffle", &[1.0])
            .unwrap_err()
            .contains("seq=shuffle"));
    }

    #[test]
    fn counts_in_nosqlbench_s_units() {
        assert_eq!(count("1M"), Some(1_000_000));
        assert_eq!(count("10k"), Some(10_000));
        assert_eq!(count("1.5M"), Some(1_500_000));
        assert_eq!(count("1E6"), Some(1_000_000));
        assert_eq!(count("100..250"), Some(150));
        assert_eq!(count("lots"), None);
    }
}

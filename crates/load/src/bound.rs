//! A file workload bound to the server: every operation's bind markers matched, by name, to the
//! file's value generators and typed as the server prepared them. Built once before the load; the
//! loop then picks an operation and writes its values with no allocation and no lookup.

use std::ops::Range;
use std::time::SystemTime;

use cqlbench_cql::{BatchKind, ExecuteFrame};
use cqlbench_workload::rows::{RowBinding, TableShape};
use cqlbench_workload::value::StateRef;
use cqlbench_workload::value::{self, Context};
use cqlbench_workload::{
    mix, nb, unit_float, BatchType, CqlType, Distribution, TextPool, ValueSpec, WorkloadError,
};

use crate::state::{StateTable, StateUpdate};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use std::sync::Arc;

use crate::workload::{FileWorkload, OpId};

/// One bind marker: its generator and the type the server expects.
#[derive(Debug, Clone)]
struct Bind {
    spec: ValueSpec,
    ty: CqlType,
}

/// One operation, ready to be written.
#[derive(Debug, Clone)]
pub struct BoundOp {
    binds: Vec<Bind>,
    /// cassandra-stress's row model, when the operation draws its values from it.
    rows: Option<RowBinding>,
    /// The bind marker that is the whole partition key (routing); `None` for a composite key or a
    /// statement without one (sent to any node).
    routing: Option<usize>,
    /// A marker takes the time of the request (`now`): only then is the clock read.
    needs_time: bool,
    /// Sent as a BATCH of this kind, of this many statements.
    batch: Option<(BatchKind, Distribution)>,
    /// The bind whose drawn number names the key of the operation's state values.
    state_key: Option<usize>,
}

impl BoundOp {
    fn new(
        binds: Vec<Bind>,
        rows: Option<RowBinding>,
        routing: Option<usize>,
        op: &cqlbench_workload::Operation,
    ) -> Self {
        let needs_time = binds.iter().any(|b| b.spec.now);
        let batch = op.batch.as_ref().map(|b| {
            let kind = match b.kind {
                BatchType::Logged => BatchKind::Logged,
                BatchType::Unlogged => BatchKind::Unlogged,
                BatchType::Counter => BatchKind::Counter,
            };
            (kind, b.rows)
        });
        BoundOp {
            binds,
            rows,
            routing,
            needs_time,
            batch,
            state_key: None,
        }
    }
}

/// A bind marker as the server described it.
pub struct Marker {
    pub name: String,
    pub ty: CqlType,
}

/// An operation as the server prepared it.
pub struct Prepared {
    /// The CQL sent (a cassandra-stress insert is made from the table).
    pub cql: String,
    pub markers: Vec<Marker>,
    /// The marker that is the whole partition key.
    pub routing: Option<usize>,
    /// The table, for an operation of cassandra-stress's row model.
    pub shape: Option<TableShape>,
}

/// The file workload bound to the server's statement types.
#[derive(Debug)]
pub struct Bound {
    /// The statements as prepared, by operation index.
    pub statements: Vec<String>,
    ops: Vec<BoundOp>,
    /// Cumulative shares of the measured mix, by operation index.
    cumulative: Vec<f64>,
    /// The measured operations in a fixed order, when the workload gives one.
    sequence: Option<Vec<OpId>>,
    /// The operation populate runs, bound with populate's generators.
    populate: Option<(OpId, BoundOp)>,
    /// Values kept per key between operations, when an operation has `state`.
    pub state: Option<Arc<StateTable>>,
}

const SALT_OP: u64 = 1;
const SALT_BIND: u64 = 0xB1D0;
const SALT_ROWS: u64 = 0xBA7C;
/// Statements a batch holds at most (the protocol's count is 16 bits).
const MAX_BATCH: usize = u16::MAX as usize;

impl Bound {
    /// Binds `workload`; `prepared[i]` are operation `i`'s bind markers and the index of its whole
    /// partition key among them, as the server prepared it.
    pub fn new(workload: &FileWorkload, prepared: Vec<Prepared>) -> Result<Self, WorkloadError> {
        let mut ops = Vec::new();
        for (op, prepared) in workload.ops.iter().zip(&prepared) {
            ops.push(bind_op(workload, op, prepared, |m| op.value(m))?);
        }
        let populate = match &workload.populate {
            Some(populate) => {
                let op = &workload.ops[populate.op];
                let bound = bind_op(workload, op, &prepared[populate.op], |m| populate.value(m))?;
                Some((OpId(populate.op as u16), bound))
            }
            None => None,
        };
        let keys = ops
            .iter()
            .chain(populate.iter().map(|(_, op)| op))
            .filter_map(|op| op.state_key.map(|k| op.binds[k].spec.population.span()))
            .max();
        let state = keys.map(|keys| Arc::new(StateTable::new(keys)));
        let total: f64 = workload.ops.iter().map(|op| op.weight).sum();
        let mut running = 0.0;
        let cumulative = workload
            .ops
            .iter()
            .map(|op| {
                running += op.weight / total;
                running
            })
            .collect();
        Ok(Bound {
            statements: prepared.into_iter().map(|p| p.cql).collect(),
            ops,
            cumulative,
            sequence: workload
                .sequence
                .as_ref()
                .filter(|s| !s.is_empty())
                .map(|s| s.iter().map(|&op| OpId(op as u16)).collect()),
            populate,
            state,
        })
    }

    /// The operation of global index `index`: populate's below `populate`, else the workload's
    /// sequence at its place, else drawn by weight.
    pub fn op_at(&self, seed: u64, index: u64, populate: u64) -> OpId {
        if let Some((op, _)) = self.populate.as_ref().filter(|_| index < populate) {
            return *op;
        }
        if let Some(sequence) = &self.sequence {
            let measured = index.saturating_sub(populate);
            return sequence[(measured % sequence.len() as u64) as usize];
        }
        let u = unit_float(mix(seed, index, SALT_OP));
        let at = self.cumulative.partition_point(|&c| c <= u);
        OpId(at.min(self.cumulative.len() - 1) as u16)
    }

    /// Writes operation `index`'s values (populate's generators below `populate`); returns the
    /// partition key's bytes (empty when unknown) and the state the operation sets if it succeeds.
    pub fn bind(
        &self,
        seed: u64,
        index: u64,
        populate: u64,
        op: OpId,
        text: &TextPool,
        frame: &mut ExecuteFrame,
    ) -> (Range<usize>, Option<StateUpdate>) {
        let bound = match &self.populate {
            Some((_, bound)) if index < populate => bound,
            _ => &self.ops[op.index()],
        };
        let now_nanos = if bound.needs_time {
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        } else {
            0
        };
        // A nosqlbench binding takes the cycle: populate's from 0, the measured phase's from 0 again.
        let cycle = if index < populate {
            index
        } else {
            index - populate
        };
        let row = Row {
            seed,
            index,
            cycle,
            text,
            now_nanos,
            state: self.state.as_deref(),
            choices: None,
        };
        if let Some(rows) = bound.rows.as_ref().filter(|rows| rows.selects()) {
            return write_selected_rows(bound, rows, row, frame);
        }
        let Some((kind, rows)) = &bound.batch else {
            return row.write(bound, frame);
        };
        // A batch's statements are rows of their own: sub-numbers index × max + r, so that a
        // `seq` or a nosqlbench cycle walks every row once.
        frame.into_batch(*kind);
        let max = rows.max.max(1) as u64;
        let count = rows
            .sample(index, mix(seed, index, SALT_ROWS))
            .clamp(1, max as i64) as u64;
        let (key, mut update) = Row {
            index: index.wrapping_mul(max),
            cycle: cycle.wrapping_mul(max),
            ..row
        }
        .write(bound, frame);
        for r in 1..count {
            frame.next_statement();
            let (_, next) = Row {
                index: index.wrapping_mul(max) + r,
                cycle: cycle.wrapping_mul(max) + r,
                ..row
            }
            .write(bound, frame);
            update = next.or(update);
        }
        (key, update)
    }
}

/// What one statement's values are made from.
#[derive(Clone, Copy)]
struct Row<'t> {
    seed: u64,
    /// The number the generators draw with.
    index: u64,
    /// nosqlbench's cycle.
    cycle: u64,
    text: &'t TextPool,
    now_nanos: u128,
    state: Option<&'t StateTable>,
    /// The row of a cassandra-stress partition (a choice per clustering level), when the
    /// operation writes a row it selected rather than one it draws.
    choices: Option<&'t [u64]>,
}

/// cassandra-stress's insert: the rows it selects from each of the partitions it draws, a
/// statement each, in one batch of the profile's type; a single row is a single statement. The
/// partitions are sub-numbers index × max + r, as any batch's statements are.
fn write_selected_rows(
    bound: &BoundOp,
    rows: &RowBinding,
    row: Row,
    frame: &mut ExecuteFrame,
) -> (Range<usize>, Option<StateUpdate>) {
    let (kind, partitions) = bound
        .batch
        .unwrap_or((BatchKind::Logged, Distribution::FIXED_ONE));
    let max = partitions.max.max(1) as u64;
    let count = partitions
        .sample(row.index, mix(row.seed, row.index, SALT_ROWS))
        .clamp(1, max as i64) as u64;
    let partition = |r: u64| Row {
        index: row.index.wrapping_mul(max) + r,
        cycle: row.cycle.wrapping_mul(max) + r,
        ..row
    };
    // Whether none, one or several rows are selected decides the request's kind: count to two.
    let mut selected = 0;
    for r in 0..count {
        let p = partition(r);
        let seed = rows.partition(p.seed, p.index);
        rows.select_rows(p.seed, p.index, seed, &mut |_| {
            selected += 1;
            selected < 2
        });
        if selected >= 2 {
            break;
        }
    }
    if selected == 0 {
        // Nothing selected this time: still one row, drawn, so that an insert always writes.
        return partition(0).write(bound, frame);
    }
    if selected > 1 {
        frame.into_batch(kind);
    }
    let mut written = 0;
    let mut key = None;
    for r in 0..count {
        let p = partition(r);
        let seed = rows.partition(p.seed, p.index);
        rows.select_rows(p.seed, p.index, seed, &mut |choices| {
            if written > 0 {
                frame.next_statement();
            }
            let row = Row {
                choices: Some(choices),
                ..p
            };
            let (k, _) = row.write(bound, frame);
            key.get_or_insert(k);
            written += 1;
            written < MAX_BATCH
        });
        if written >= MAX_BATCH {
            break;
        }
    }
    (key.unwrap_or(0..0), None)
}

impl Row<'_> {
    /// Writes the statement's values; returns the partition key's bytes (empty when unknown) and
    /// the key's next state when a value is `state + 1`.
    fn write(
        &self,
        bound: &BoundOp,
        frame: &mut ExecuteFrame,
    ) -> (Range<usize>, Option<StateUpdate>) {
        let (seed, index) = (self.seed, self.index);
        let ctx = Context {
            text: self.text,
            now_nanos: self.now_nanos,
            unique: mix(seed, index, 0x7157),
        };
        let mut key = 0..0;
        let partition = bound.rows.as_ref().map(|rows| rows.partition(seed, index));
        let drawn = |i: usize, spec: &ValueSpec| {
            spec.population
                .sample(index, mix(seed, index, SALT_BIND + i as u64))
        };
        // The key's slot and value, read before any value is written (a new value may come
        // before the key in the statement).
        let state = match (bound.state_key, self.state) {
            (Some(k), Some(table)) => {
                let spec = &bound.binds[k].spec;
                let slot = table.slot(drawn(k, spec) - spec.population.min);
                Some((slot, table.get(slot)))
            }
            _ => None,
        };
        let mut update = None;
        for (i, bind) in bound.binds.iter().enumerate() {
            let range = if let (Some(reads), Some((slot, current))) = (bind.spec.state, state) {
                let n = match reads {
                    StateRef::Current => current,
                    StateRef::Next => {
                        update = Some((slot, current + 1));
                        current + 1
                    }
                };
                frame.value_with(|out| value::write(&bind.ty, &bind.spec, n, &ctx, out))
            } else if let Some(chain) = &bind.spec.function {
                let v = chain.eval(self.cycle);
                frame.value_with(|out| nb::write::write(&bind.ty, &v, out))
            } else {
                let n = match (&bound.rows, partition) {
                    (Some(rows), Some(partition)) => {
                        rows.number_in_row(seed, index, partition, i, self.choices)
                    }
                    _ => drawn(i, &bind.spec),
                };
                frame.value_with(|out| value::write(&bind.ty, &bind.spec, n, &ctx, out))
            };
            if bound.routing == Some(i) {
                key = range;
            }
        }
        (key, update)
    }
}

/// An operation bound: to cassandra-stress's row model over its table, or its markers to the
/// generators `value` finds for their names.
fn bind_op<'v>(
    workload: &FileWorkload,
    op: &cqlbench_workload::Operation,
    prepared: &Prepared,
    value: impl Fn(&str) -> Option<&'v cqlbench_workload::Located<ValueSpec>>,
) -> Result<BoundOp, WorkloadError> {
    let routing = prepared.routing;
    let (Some(model), Some(shape)) = (&op.rows, &prepared.shape) else {
        let binds = bind_markers(workload, op, &prepared.markers, value)?;
        let state_key = state_key(workload, op, &prepared.markers, &binds)?;
        return Ok(BoundOp {
            state_key,
            ..BoundOp::new(binds, None, routing, op)
        });
    };
    let typed: Vec<(String, CqlType)> = prepared
        .markers
        .iter()
        .map(|m| (m.name.clone(), m.ty.clone()))
        .collect();
    let rows = RowBinding::new(model, shape, &typed)
        .map_err(|e| workload.at(op.cql.line, format!("operation '{}': {e}", op.name)))?;
    let binds = rows
        .markers
        .iter()
        .zip(&prepared.markers)
        .map(|(row, marker)| Bind {
            spec: row.spec.clone(),
            ty: marker.ty.clone(),
        })
        .collect();
    Ok(BoundOp::new(binds, Some(rows), routing, op))
}

/// The bind that names the key of the operation's `state` values; a `state` generator in an
/// operation without one is refused.
fn state_key(
    workload: &FileWorkload,
    op: &cqlbench_workload::Operation,
    markers: &[Marker],
    binds: &[Bind],
) -> Result<Option<usize>, WorkloadError> {
    let reads = markers
        .iter()
        .zip(binds)
        .find(|(_, b)| b.spec.state.is_some())
        .map(|(m, _)| m.name.as_str());
    let Some(key) = &op.state_key else {
        return match reads {
            Some(marker) => Err(workload.at(
                op.cql.line,
                format!(
                    "operation '{}': marker '{marker}' reads state, but the operation has no 'state: MARKER' naming its key",
                    op.name
                ),
            )),
            None => Ok(None),
        };
    };
    let at = markers
        .iter()
        .position(|m| m.name.eq_ignore_ascii_case(key));
    at.map(Some).ok_or_else(|| {
        workload.at(
            op.cql.line,
            format!(
                "operation '{}': state names '{key}', which is no bind marker of its statement",
                op.name
            ),
        )
    })
}

/// An operation's markers bound to the generators `value` finds for their names.
fn bind_markers<'v>(
    workload: &FileWorkload,
    op: &cqlbench_workload::Operation,
    markers: &[Marker],
    value: impl Fn(&str) -> Option<&'v cqlbench_workload::Located<ValueSpec>>,
) -> Result<Vec<Bind>, WorkloadError> {
    markers
        .iter()
        .map(|marker| {
            let Some(spec) = value(&marker.name) else {
                let known: Vec<&str> = op.values.iter().map(|(n, _)| n.as_str()).collect();
                // A marker inside a function call is named after the function's argument.
                let hint = if marker.name.contains('(') {
                    "; name the marker, e.g. token(:id), and give that name a value"
                } else {
                    ""
                };
                return Err(workload.at(
                    op.cql.line,
                    format!(
                        "operation '{}': no value for bind marker '{}' (values has: {}){hint}",
                        op.name,
                        marker.name,
                        if known.is_empty() {
                            "nothing".into()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            };
            if let Some(chain) = &spec.value.function {
                if let Some(why) = nb::write::mismatch(&marker.ty, &chain.eval(0)) {
                    return Err(workload.at(
                        spec.line,
                        format!(
                            "op '{}': binding '{}' ({}) {why}",
                            op.name, marker.name, chain.text
                        ),
                    ));
                }
            }
            Ok(Bind {
                spec: spec.value.clone(),
                ty: marker.ty.clone(),
            })
        })
        .collect()
}

/// The type of a bind marker, as cqlbench writes values of it.
pub fn cql_type(ty: &ColumnType) -> Result<CqlType, String> {
    Ok(match ty {
        ColumnType::Native(native) => native_type(native)?,
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(e) => CqlType::List(Box::new(cql_type(e)?)),
            CollectionType::Set(e) => CqlType::Set(Box::new(cql_type(e)?)),
            CollectionType::Map(k, v) => {
                CqlType::Map(Box::new(cql_type(k)?), Box::new(cql_type(v)?))
            }
            other => return Err(format!("the collection type {other:?} is not supported")),
        },
        ColumnType::Vector { typ, dimensions } => {
            CqlType::Vector(Box::new(cql_type(typ)?), *dimensions)
        }
        ColumnType::UserDefinedType { definition, .. } => CqlType::Udt(
            definition
                .field_types
                .iter()
                .map(|(name, t)| Ok((name.to_string(), cql_type(t)?)))
                .collect::<Result<_, String>>()?,
        ),
        ColumnType::Tuple(fields) => {
            CqlType::Tuple(fields.iter().map(cql_type).collect::<Result<_, _>>()?)
        }
        other => return Err(format!("the type {other:?} is not supported")),
    })
}

fn native_type(native: &NativeType) -> Result<CqlType, String> {
    Ok(match native {
        NativeType::Ascii => CqlType::Ascii,
        NativeType::Boolean => CqlType::Boolean,
        NativeType::Blob => CqlType::Blob,
        NativeType::Counter => CqlType::Counter,
        NativeType::Date => CqlType::Date,
        NativeType::Decimal => CqlType::Decimal,
        NativeType::Double => CqlType::Double,
        NativeType::Duration => CqlType::Duration,
        NativeType::Float => CqlType::Float,
        NativeType::Int => CqlType::Int,
        NativeType::BigInt => CqlType::BigInt,
        NativeType::Text => CqlType::Text,
        NativeType::Timestamp => CqlType::Timestamp,
        NativeType::Inet => CqlType::Inet,
        NativeType::SmallInt => CqlType::SmallInt,
        NativeType::TinyInt => CqlType::TinyInt,
        NativeType::Time => CqlType::Time,
        NativeType::Timeuuid => CqlType::Timeuuid,
        NativeType::Uuid => CqlType::Uuid,
        NativeType::Varint => CqlType::Varint,
        other => return Err(format!("the type {other:?} is not supported")),
    })
}

//! cassandra-stress's data model, bound to a live table: every operation draws a partition seed;
//! the partition key comes from the seed, each clustering level has `cluster` values per parent,
//! and the other columns come from the row. Everything is a pure function of the seed and the row,
//! so a query that draws a partition and a row an insert wrote names that row.

use crate::dist::{mix, Distribution};
use crate::model::{ColumnGen, Fields, Ratio, RowModel};
use crate::value::{CqlType, ValueSpec};

/// A table as the server describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableShape {
    pub name: String,
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
    /// The other columns (static ones too), each with whether an insert adds to it (`c = c + ?`:
    /// counters, and sets and lists that are not frozen).
    pub regular: Vec<(String, bool)>,
}

/// A bind marker's place in the row model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Partition(usize),
    Clustering(usize),
    Value,
    /// A point of the token ring (a token range query's start).
    Token,
}

/// One marker of an operation, ready to draw.
#[derive(Debug, Clone)]
pub struct RowMarker {
    pub role: Role,
    pub spec: ValueSpec,
    /// Distinguishes the columns' values from one another.
    salt: u64,
}

/// An operation's markers bound to the table's rows.
#[derive(Debug, Clone)]
pub struct RowBinding {
    partitions: Distribution,
    /// Each partition-key column's population and salt, in key order: the key's values, and from
    /// them alone the partition's rows (two seeds that give the same key give the same partition).
    keys: Vec<(Distribution, u64)>,
    /// Values per parent at each clustering level.
    levels: Vec<Distribution>,
    pub markers: Vec<RowMarker>,
    multirow: bool,
    /// An insert's chance of writing each row of a partition it visits.
    select: Option<Ratio>,
}

/// Clustering levels a row model walks at most (a row is its choice at each level).
pub const MAX_LEVELS: usize = 32;
/// Rows of one partition an insert looks at at most, written or not, so that a partition of
/// millions of rows cannot hold the load loop.
const MAX_VISITED: u64 = 1 << 20;
const SALT_PARTITION: u64 = 0x9A27;
const SALT_LEVEL: u64 = 0x1E7E;
const SALT_PICK: u64 = 0x91C4;
const SALT_TOKEN: u64 = 0x70CE;
const SALT_SELECT: u64 = 0x5E1E;

/// The name the server gives the marker of `token(…) > ?`.
pub const TOKEN_MARKER: &str = "partition key token";

/// cassandra-stress's defaults for a column the columnspec does not list.
fn column_spec(gen: Option<&ColumnGen>, ty: &CqlType) -> ValueSpec {
    let time_like = matches!(
        ty,
        CqlType::Timestamp | CqlType::Timeuuid | CqlType::Date | CqlType::Time
    );
    let default_population = if time_like {
        Distribution::uniform(1, 1_576_800_000_000)
    } else {
        Distribution::uniform(1, 100_000_000_000)
    };
    ValueSpec {
        population: gen.and_then(|g| g.population).unwrap_or(default_population),
        size: Some(
            gen.and_then(|g| g.size)
                .unwrap_or(Distribution::uniform(4, 8)),
        ),
        now: false,
        function: None,
        state: None,
    }
}

fn salt_of(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

impl RowBinding {
    /// Binds `markers` (name and type, as prepared) to `model` over `shape`; a marker that is not
    /// a column of the table (nor a token) is refused with its name.
    pub fn new(
        model: &RowModel,
        shape: &TableShape,
        markers: &[(String, CqlType)],
    ) -> Result<Self, String> {
        let gen = |name: &str| {
            model
                .columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(name))
        };
        let levels = shape
            .clustering
            .iter()
            .map(|c| {
                gen(c)
                    .and_then(|g| g.cluster)
                    .unwrap_or(Distribution::fixed(1))
            })
            .collect();
        let position =
            |list: &[String], name: &str| list.iter().position(|c| c.eq_ignore_ascii_case(name));
        let keys = shape
            .partition_key
            .iter()
            .map(|k| {
                let ty = markers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(k))
                    .map_or(CqlType::BigInt, |(_, t)| t.clone());
                (
                    column_spec(gen(k), &ty).population,
                    salt_of(&k.to_ascii_lowercase()),
                )
            })
            .collect();
        if shape.clustering.len() > MAX_LEVELS {
            return Err(format!(
                "table {} has {} clustering columns; cqlbench's row model takes {MAX_LEVELS} at most",
                shape.name,
                shape.clustering.len()
            ));
        }
        let mut bound = Vec::new();
        for (name, ty) in markers {
            let role = if name == TOKEN_MARKER {
                Role::Token
            } else if let Some(k) = position(&shape.partition_key, name) {
                Role::Partition(k)
            } else if let Some(level) = position(&shape.clustering, name) {
                Role::Clustering(level)
            } else if shape
                .regular
                .iter()
                .any(|(c, _)| c.eq_ignore_ascii_case(name))
            {
                Role::Value
            } else {
                return Err(format!(
                    "bind marker '{name}' is not a column of table {} (cassandra-stress binds markers by column name)",
                    shape.name
                ));
            };
            bound.push(RowMarker {
                role,
                spec: column_spec(gen(name), ty),
                salt: salt_of(&name.to_ascii_lowercase()),
            });
        }
        Ok(RowBinding {
            partitions: model.partitions,
            keys,
            levels,
            markers: bound,
            multirow: model.fields == Fields::MultiRow,
            select: model.select,
        })
    }

    /// Whether operations write the rows [`RowBinding::select_rows`] selects (an insert).
    pub fn selects(&self) -> bool {
        self.select.is_some()
    }

    /// The path of partition seed `partition`'s rows: they hang off the key's values, not the
    /// seed.
    fn root(&self, partition: u64) -> u64 {
        (0..self.keys.len()).fold(0x5EED, |h, k| {
            mix(h, self.key(partition, k) as u64, k as u64)
        })
    }

    /// Values under a parent at clustering `level`.
    fn values_at(&self, path: u64, level: usize) -> u64 {
        self.levels[level]
            .sample(path, mix(path, level as u64, SALT_LEVEL))
            .max(1) as u64
    }

    /// Calls `visit` with each row of partition seed `partition` that operation `index` writes
    /// (its choice at each clustering level), in clustering order: each row with the chance the
    /// `select` ratio gives this visit, as cassandra-stress's inserts choose. `visit` returns
    /// `false` to stop. Returns the rows selected (up to where `visit` stopped the walk).
    pub fn select_rows(
        &self,
        seed: u64,
        index: u64,
        partition: u64,
        visit: &mut dyn FnMut(&[u64]) -> bool,
    ) -> usize {
        let Some(select) = self.select else {
            return 0;
        };
        let chance = select.sample(index, mix(seed, index, SALT_SELECT));
        let mut walk = Walk {
            rows: self,
            chance,
            pick: mix(seed, index, SALT_SELECT + 1),
            choices: [0; MAX_LEVELS],
            looked_at: 0,
            selected: 0,
            visit,
        };
        walk.level(0, self.root(partition));
        walk.selected
    }

    /// The partition seed of operation `index`.
    pub fn partition(&self, seed: u64, index: u64) -> u64 {
        self.partitions
            .sample(index, mix(seed, index, SALT_PARTITION)) as u64
    }

    /// Partition-key column `k`'s value (as a number) for partition seed `partition`.
    fn key(&self, partition: u64, k: usize) -> i64 {
        let (population, salt) = &self.keys[k];
        population.sample(partition, mix(partition, k as u64, *salt))
    }

    /// The number marker `m` of operation `index` draws from partition `partition`.
    pub fn number(&self, seed: u64, index: u64, partition: u64, m: usize) -> i64 {
        self.number_in_row(seed, index, partition, m, None)
    }

    /// [`RowBinding::number`] from the row `choices` names (one choice per clustering level, as
    /// [`RowBinding::select_rows`] gives them), else from a row drawn for the operation.
    pub fn number_in_row(
        &self,
        seed: u64,
        index: u64,
        partition: u64,
        m: usize,
        choices: Option<&[u64]>,
    ) -> i64 {
        let marker = &self.markers[m];
        let population = &marker.spec.population;
        // Same row for every marker (samerow, and an insert), or a row per marker (multirow).
        let pick = if self.multirow { m as u64 } else { 0 };
        let depth = match marker.role {
            Role::Partition(k) => return self.key(partition, k),
            Role::Token => return mix(seed, index, SALT_TOKEN) as i64,
            Role::Clustering(level) => level + 1,
            Role::Value => self.levels.len(),
        };
        let mut path = self.root(partition);
        for level in 0..depth {
            let choice = match choices {
                Some(choices) => choices[level],
                None => {
                    mix(seed, index, SALT_PICK + 64 * pick + level as u64)
                        % self.values_at(path, level)
                }
            };
            path = mix(path, choice, level as u64);
        }
        population.sample(path, mix(path, 0, marker.salt))
    }
}

/// A depth-first walk over one partition's rows, selecting each with a chance.
struct Walk<'a, 'v> {
    rows: &'a RowBinding,
    chance: f64,
    pick: u64,
    choices: [u64; MAX_LEVELS],
    looked_at: u64,
    selected: usize,
    visit: &'v mut dyn FnMut(&[u64]) -> bool,
}

impl Walk<'_, '_> {
    /// Walks the rows under `path` at clustering `level`; `false` once the walk stops.
    fn level(&mut self, level: usize, path: u64) -> bool {
        let depth = self.rows.levels.len();
        if level == depth {
            self.looked_at += 1;
            if crate::unit_float(mix(self.pick, path, SALT_SELECT)) < self.chance {
                self.selected += 1;
                if !(self.visit)(&self.choices[..depth]) {
                    return false;
                }
            }
            return self.looked_at < MAX_VISITED;
        }
        for choice in 0..self.rows.values_at(path, level) {
            self.choices[level] = choice;
            if !self.level(level + 1, mix(path, choice, level as u64)) {
                return false;
            }
        }
        true
    }
}

/// cassandra-stress's insert for `shape`: an UPDATE of the non-key columns (`c = c + ?` where it
/// adds) with `condition` after the WHERE clause, or an INSERT of a key-only table.
pub fn insert_cql(shape: &TableShape, condition: Option<&str>) -> String {
    let keys: Vec<&String> = shape
        .partition_key
        .iter()
        .chain(&shape.clustering)
        .collect();
    if shape.regular.is_empty() {
        let names: Vec<String> = keys.iter().map(|k| quote(k)).collect();
        let markers = vec!["?"; names.len()].join(", ");
        return format!(
            "INSERT INTO {} ({}) VALUES ({markers})",
            quote(&shape.name),
            names.join(", ")
        );
    }
    let set: Vec<String> = shape
        .regular
        .iter()
        .map(|(c, adds)| {
            let c = quote(c);
            if *adds {
                format!("{c} = {c} + ?")
            } else {
                format!("{c} = ?")
            }
        })
        .collect();
    let filter: Vec<String> = keys.iter().map(|k| format!("{} = ?", quote(k))).collect();
    let mut cql = format!(
        "UPDATE {} SET {} WHERE {}",
        quote(&shape.name),
        set.join(", "),
        filter.join(" AND ")
    );
    if let Some(condition) = condition.map(str::trim).filter(|c| !c.is_empty()) {
        cql.push(' ');
        cql.push_str(condition);
    }
    cql
}

/// cassandra-stress's token range query: one page of `columns` after a point of the ring.
pub fn token_range_cql(shape: &TableShape, columns: &str, page_size: u32) -> String {
    let key: Vec<String> = shape.partition_key.iter().map(|k| quote(k)).collect();
    let key = key.join(", ");
    // `*` cannot follow token(…) in a selection: it stands for every column, named.
    let every: Vec<String>;
    let columns = if columns.trim() == "*" {
        every = shape
            .partition_key
            .iter()
            .chain(&shape.clustering)
            .chain(shape.regular.iter().map(|(c, _)| c))
            .map(|c| quote(c))
            .collect();
        every.join(", ")
    } else {
        columns.to_string()
    };
    format!(
        "SELECT token({key}), {columns} FROM {} WHERE token({key}) > ? LIMIT {page_size}",
        quote(&shape.name)
    )
}

/// An identifier as CQL needs it: plain lower-case names as they are, others quoted.
fn quote(name: &str) -> String {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> TableShape {
        TableShape {
            name: "posts".into(),
            partition_key: vec!["domain".into()],
            clustering: vec!["published".into(), "Seq".into()],
            regular: vec![("body".into(), false), ("hits".into(), true)],
        }
    }

    fn model(fields: Fields) -> RowModel {
        RowModel {
            table: "posts".into(),
            partitions: Distribution::uniform(1, 1000),
            columns: vec![ColumnGen {
                name: "published".into(),
                line: 1,
                population: None,
                size: None,
                cluster: Some(Distribution::fixed(5)),
            }],
            fields,
            select: None,
        }
    }

    #[test]
    fn an_insert_writes_each_row_of_its_partition_with_the_select_chance() {
        let markers: Vec<(String, CqlType)> = ["domain", "published", "Seq"]
            .iter()
            .map(|n| (n.to_string(), CqlType::BigInt))
            .collect();
        let insert = |select: &str| {
            let (dist, divisor) = select.split_once('/').unwrap();
            let model = RowModel {
                select: Some(Ratio {
                    dist: Distribution::parse(dist).unwrap(),
                    divisor: divisor.parse().unwrap(),
                }),
                ..model(Fields::SameRow)
            };
            RowBinding::new(&model, &shape(), &markers).unwrap()
        };
        // 5 published values, each with one Seq: every one of the 5 rows, in order, each time.
        let all = insert("fixed(1)/1");
        let mut rows = Vec::new();
        let selected = all.select_rows(1, 0, 7, &mut |choices| {
            rows.push(all.number_in_row(1, 0, 7, 1, Some(choices)));
            true
        });
        assert_eq!(selected, 5);
        let queried: std::collections::BTreeSet<i64> =
            (0..200).map(|i| all.number(1, i, 7, 1)).collect();
        assert_eq!(
            rows.iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>(),
            queried
        );
        // A tenth of the rows over many visits; a visit may stop early.
        let tenth = insert("fixed(1)/10");
        let total: usize = (0..2000)
            .map(|i| tenth.select_rows(1, i, i % 50, &mut |_| true))
            .sum();
        let share = total as f64 / (2000.0 * 5.0);
        assert!((share - 0.1).abs() < 0.02, "{share}");
        assert_eq!(all.select_rows(1, 0, 7, &mut |_| false), 1);
        // A query selects nothing: it draws one row.
        assert!(
            !RowBinding::new(&model(Fields::SameRow), &shape(), &markers)
                .unwrap()
                .selects()
        );
    }

    #[test]
    fn inserts_and_token_ranges_are_made_from_the_table() {
        assert_eq!(
            insert_cql(&shape(), Some("IF body = NULL")),
            "UPDATE posts SET body = ?, hits = hits + ? WHERE domain = ? AND published = ? AND \"Seq\" = ? IF body = NULL"
        );
        let key_only = TableShape {
            regular: Vec::new(),
            ..shape()
        };
        assert_eq!(
            insert_cql(&key_only, None),
            "INSERT INTO posts (domain, published, \"Seq\") VALUES (?, ?, ?)"
        );
        assert_eq!(
            token_range_cql(&shape(), "*", 100),
            "SELECT token(domain), domain, published, \"Seq\", body, hits FROM posts WHERE token(domain) > ? LIMIT 100"
        );
    }

    #[test]
    fn a_query_names_rows_an_insert_wrote() {
        let markers = |names: &[&str]| -> Vec<(String, CqlType)> {
            names
                .iter()
                .map(|n| (n.to_string(), CqlType::BigInt))
                .collect()
        };
        let insert = RowBinding::new(
            &model(Fields::SameRow),
            &shape(),
            &markers(&["body", "hits", "domain", "published", "Seq"]),
        )
        .unwrap();
        let query = RowBinding::new(
            &model(Fields::SameRow),
            &shape(),
            &markers(&["domain", "published"]),
        )
        .unwrap();
        // Every (domain, published) an insert writes in partition 7 is one of 5 values, and the
        // queries of partition 7 draw from the same 5.
        let written: std::collections::BTreeSet<(i64, i64)> = (0..500)
            .map(|i| (insert.number(1, i, 7, 2), insert.number(1, i, 7, 3)))
            .collect();
        assert_eq!(written.len(), 5, "{written:?}");
        let asked: std::collections::BTreeSet<(i64, i64)> = (1000..1500)
            .map(|i| (query.number(1, i, 7, 0), query.number(1, i, 7, 1)))
            .collect();
        assert_eq!(asked, written);
        // Another partition has other keys.
        assert_ne!(insert.number(1, 0, 8, 2), insert.number(1, 0, 7, 2));
        // A marker that is not a column is refused by name.
        let e =
            RowBinding::new(&model(Fields::SameRow), &shape(), &markers(&["[limit]"])).unwrap_err();
        assert!(
            e.contains("'[limit]' is not a column of table posts"),
            "{e}"
        );
    }
}

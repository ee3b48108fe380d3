//! cassandra-stress's data model, bound to a live table: every operation draws a partition seed;
//! the partition key comes from the seed, each clustering level has `cluster` values per parent,
//! and the other columns come from the row. Everything is a pure function of the seed and the row,
//! so a query that draws a partition and a row an insert wrote names that row.

use crate::dist::{mix, Distribution};
use crate::model::{ColumnGen, Fields, RowModel};
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
}

const SALT_PARTITION: u64 = 0x9A27;
const SALT_LEVEL: u64 = 0x1E7E;
const SALT_PICK: u64 = 0x91C4;
const SALT_TOKEN: u64 = 0x70CE;

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
        })
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
        // The rows hang off the key's values, not the seed.
        let mut path = (0..self.keys.len()).fold(0x5EED, |h, k| {
            mix(h, self.key(partition, k) as u64, k as u64)
        });
        for (level, count) in self.levels.iter().take(depth).enumerate() {
            let values = count
                .sample(path, mix(path, level as u64, SALT_LEVEL))
                .max(1) as u64;
            let choice = mix(seed, index, SALT_PICK + 64 * pick + level as u64) % values;
            path = mix(path, choice, level as u64);
        }
        population.sample(path, mix(path, 0, marker.salt))
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
        }
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

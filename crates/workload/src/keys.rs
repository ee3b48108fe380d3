//! Reading a mapping of a workload file: known keys only (a near miss names the key that was
//! meant), each value of the kind expected, every problem with its line.

use crate::yaml::{Key, Node, Value};

/// A problem at a line of the file (the front end adds the file's name).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub line: usize,
    pub message: String,
}

pub fn problem(line: usize, message: impl Into<String>) -> Problem {
    Problem {
        line,
        message: message.into(),
    }
}

/// A mapping's entries, checked against the keys allowed in it (`what` names the mapping).
pub fn entries<'a>(
    node: &'a Node,
    what: &str,
    allowed: &[&str],
) -> Result<&'a [(Key, Node)], Problem> {
    let Value::Map(entries) = &node.value else {
        if node.is_null() {
            return Ok(&[]);
        }
        return Err(problem(
            node.line,
            format!("{what} must be a mapping, not {}", node.kind()),
        ));
    };
    for (key, _) in entries {
        if !allowed.contains(&key.text.as_str()) {
            return Err(problem(key.line, unknown_key(&key.text, what, allowed)));
        }
    }
    Ok(entries)
}

/// The value of `key` in checked entries.
pub fn get<'a>(entries: &'a [(Key, Node)], key: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k.text == key).map(|(_, v)| v)
}

/// A scalar's text (numbers and words alike), or a problem naming `what`.
pub fn text<'a>(node: &'a Node, what: &str) -> Result<&'a str, Problem> {
    node.scalar().ok_or_else(|| {
        problem(
            node.line,
            format!("{what} must be a single value, not {}", node.kind()),
        )
    })
}

/// "unknown key 'spacenam' in the profile (did you mean 'specname'?)".
pub fn unknown_key(key: &str, what: &str, allowed: &[&str]) -> String {
    match nearest(key, allowed) {
        Some(meant) => format!("unknown key '{key}' in {what} (did you mean '{meant}'?)"),
        None => format!(
            "unknown key '{key}' in {what} (known: {})",
            allowed.join(", ")
        ),
    }
}

/// The allowed word closest to `word`, when it is close enough to be a typing slip.
pub fn nearest<'a>(word: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    allowed
        .iter()
        .map(|a| (distance(&lower, &a.to_ascii_lowercase()), *a))
        .filter(|(d, a)| *d <= a.len().div_ceil(3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// Optimal string alignment distance: edits, with a swap of two neighbours counting as one.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_names_the_key_that_was_meant() {
        let allowed = ["specname", "keyspace", "table", "queries"];
        assert_eq!(nearest("spacenam", &allowed), Some("specname"));
        assert_eq!(nearest("tabel", &allowed), Some("table"));
        assert_eq!(nearest("completely_else", &allowed), None);
        assert!(unknown_key("nope", "the profile", &allowed).contains("known: specname"));
    }

    #[test]
    fn unknown_keys_are_refused_at_their_line() {
        let doc = crate::yaml::parse("table: t\ntabel: u\n").unwrap();
        let e = entries(&doc, "the profile", &["table"]).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("did you mean 'table'"), "{}", e.message);
    }
}

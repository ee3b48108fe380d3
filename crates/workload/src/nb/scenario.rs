//! A nosqlbench scenario: named steps, each a command line such as
//! `run driver=cql tags==block:"main.*" cycles===TEMPLATE(main-cycles,10M) threads=auto`.

/// One step of a scenario, as far as cqlbench needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    pub line: usize,
    /// The block-name pattern of `tags==block:PATTERN` (anchored regex), if any.
    pub block: Option<String>,
    /// Other tag filters (`name:…`, `op:…`), kept to match op names.
    pub op_pattern: Option<String>,
    /// `cycles`, when the step gives a count (not `UNDEF`).
    pub cycles: Option<String>,
    /// Every `NAME=VALUE` of the step, `=`, `==` and `===` alike, in order.
    pub params: Vec<(String, String)>,
}

impl Step {
    /// Parses a step's command; `None` for a step that runs no activity (e.g. `waitmillis`).
    pub fn parse(name: &str, line: usize, command: &str) -> Result<Option<Step>, String> {
        let words = words(command)?;
        let Some(first) = words.first() else {
            return Ok(None);
        };
        if !matches!(first.as_str(), "run" | "start" | "activity") {
            return Ok(None);
        }
        let mut step = Step {
            name: name.to_string(),
            line,
            block: None,
            op_pattern: None,
            cycles: None,
            params: Vec::new(),
        };
        for word in &words[1..] {
            let Some((key, value)) = word.split_once('=') else {
                continue;
            };
            let value = value.trim_start_matches('=').to_string();
            match key {
                "tags" | "tag" => step.tags(&value),
                "cycles" if !value.eq_ignore_ascii_case("UNDEF") => {
                    step.cycles = Some(value.clone())
                }
                _ => {}
            }
            step.params.push((key.to_string(), value));
        }
        Ok(Some(step))
    }

    /// `block:schema`, `block:"main.*"`, several joined by commas.
    fn tags(&mut self, value: &str) {
        for filter in value.split(',') {
            let Some((tag, pattern)) = filter.split_once(':') else {
                continue;
            };
            let pattern = pattern.trim_matches(|c| c == '"' || c == '\'').to_string();
            match tag.trim() {
                "block" => self.block = Some(pattern),
                "name" | "op" => self.op_pattern = Some(pattern),
                _ => {}
            }
        }
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A command's words, split at spaces outside quotes, the quotes then removed as nosqlbench
/// removes them (`tags==block:"main.*"` and `tags=='block:main-.*'` give `block:main…`).
fn words(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (_, c) => word.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("a quote is not closed in '{command}'"));
    }
    if !word.is_empty() {
        words.push(word);
    }
    Ok(words)
}

/// Whether `name` matches a tag pattern (a regex matched against the whole name, as nosqlbench
/// does); a pattern that is not a valid regex is compared as text.
pub fn matches(pattern: &str, name: &str) -> bool {
    match regex::Regex::new(&format!("^(?:{pattern})$")) {
        Ok(re) => re.is_match(name),
        Err(_) => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::{matches, Step};

    #[test]
    fn steps_of_the_cql_baselines() {
        let schema = Step::parse(
            "schema",
            3,
            "run driver=cql tags==block:schema threads==1 cycles==UNDEF",
        )
        .unwrap()
        .unwrap();
        assert_eq!(schema.block.as_deref(), Some("schema"));
        assert_eq!(schema.cycles, None);
        let main = Step::parse(
            "main",
            5,
            r#"run driver=cql tags==block:"main.*" cycles===1M threads=auto"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(main.block.as_deref(), Some("main.*"));
        assert_eq!(main.cycles.as_deref(), Some("1M"));
        assert_eq!(main.param("threads"), Some("auto"));
        assert!(matches("main.*", "main_read"));
        let quoted = Step::parse("main", 6, "run tags=='block:main-.*' cycles=10")
            .unwrap()
            .unwrap();
        assert_eq!(quoted.block.as_deref(), Some("main-.*"));
        assert!(!matches("schema", "schema_astra"));
        assert_eq!(Step::parse("wait", 6, "waitmillis 1000").unwrap(), None);
        assert!(Step::parse("x", 7, "run tags==block:'main").is_err());
    }
}

//! The TOML plan: what clusters to compare, under what load. Parsed with serde (unknown keys refused)
//! and checked as a whole before anything starts, every error one line naming the key and its line.

use std::net::Ipv4Addr;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use cqlbench_cluster::{ClusterError, ClusterSpec, Gc, GcProfile, JdkChoice};
use cqlbench_load::{RunArgs, RunOptions};
use cqlbench_results::{Cost, ValidityThresholds};
use serde::Deserialize;
use toml::Spanned;

use crate::error::CampaignError;

/// A checked plan, ready to become a matrix of cells.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The plan's own text, kept in the campaign's environment record.
    pub source: String,
    pub configs: Vec<ConfigPlan>,
    pub load: LoadPlan,
    /// `[cost]`: prices for the report's Cost section.
    pub cost: Option<Cost>,
}

/// One cluster configuration: a row of the seed tables.
#[derive(Debug, Clone)]
pub struct ConfigPlan {
    /// As written in the plan, e.g. "Shenandoah jdk17": the row label.
    pub name: String,
    /// The directory name under the campaign directory (the name with anything but letters, digits,
    /// '.', '_' and '-' replaced by '-').
    pub dir_name: String,
    pub spec: ClusterSpec,
}

/// How the rates of a configuration's cells are chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum RateMode {
    /// Fixed rates in ops/s, ascending (seed 000).
    Fixed(Vec<f64>),
    /// An unthrottled run finds the maximum, then latency runs at these fractions of it (seed 001).
    Sweep {
        fractions: Vec<f64>,
        max_duration: Duration,
    },
    /// Bisection for the highest rate whose p99 of reads and writes stays under `p99_ms`.
    Slo {
        p99_ms: f64,
        low: f64,
        high: f64,
        probes: u32,
    },
}

#[derive(Debug, Clone)]
pub struct LoadPlan {
    pub workload: String,
    /// The `cqlbench run` options shared by every cell, as written (`args = "…"`).
    pub args: Vec<String>,
    pub mode: RateMode,
    pub duration: Duration,
    pub warmup: Duration,
    pub repeats: u32,
    /// Rows written once per configuration, before its first cell (the args' `--populate`).
    pub populate: u64,
    /// The plan's `[validity]` thresholds over the defaults, when it has the table.
    pub validity: Option<ValidityThresholds>,
}

impl LoadPlan {
    /// Run options for one cell: the plan's args with this rate (`None` = unthrottled), this
    /// duration and the plan's warm-up, against `hosts`, written to `out_dir`. Populate is done once
    /// per configuration, so cells never populate.
    pub fn cell_options(
        &self,
        rate: Option<f64>,
        duration: Duration,
        hosts: Vec<String>,
        out_dir: &Path,
    ) -> Result<RunOptions, CampaignError> {
        let mut options = self.base_options(hosts, out_dir)?;
        options.rate = rate;
        options.stopping = cqlbench_load::Stopping::Duration(duration);
        options.warmup = self.warmup;
        options.populate = 0;
        Ok(options)
    }

    /// Run options of the populate step: the plan's args, writing `populate` rows and then a
    /// one-operation measured phase (a run must measure something); its results are not a cell.
    pub fn populate_options(
        &self,
        hosts: Vec<String>,
        out_dir: &Path,
    ) -> Result<RunOptions, CampaignError> {
        let mut options = self.base_options(hosts, out_dir)?;
        options.stopping = cqlbench_load::Stopping::Ops(1);
        options.rate = None;
        options.warmup = Duration::ZERO;
        Ok(options)
    }

    fn base_options(
        &self,
        hosts: Vec<String>,
        out_dir: &Path,
    ) -> Result<RunOptions, CampaignError> {
        let args = run_args(&self.workload, &self.args).map_err(CampaignError::Load)?;
        let mut options = args.to_options(hosts).map_err(CampaignError::Load)?;
        options.out_dir = out_dir.to_path_buf();
        if let Some(validity) = self.validity {
            options.validity = validity;
        }
        Ok(options)
    }
}

fn run_args(workload: &str, args: &[String]) -> Result<RunArgs, cqlbench_load::LoadError> {
    let mut argv = vec![workload.to_string()];
    argv.extend(args.iter().cloned());
    RunArgs::parse_from(&argv)
}

// ---- the TOML as written ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    #[serde(default)]
    cluster: Option<RawCluster>,
    #[serde(default)]
    config: Option<Spanned<Vec<Spanned<RawConfig>>>>,
    load: Option<Spanned<RawLoad>>,
    sweep: Option<Spanned<RawSweep>>,
    slo: Option<Spanned<RawSlo>>,
    /// When a cell's result is doubtful (`--validity-thresholds`' names).
    validity: Option<Spanned<toml::Table>>,
    /// Prices: node-hourly, client-hourly, cluster-monthly, currency.
    cost: Option<Spanned<Cost>>,
    /// Read by `cqlbench k8s` (the crate `cqlbench-k8s`); a local campaign refuses it.
    k8s: Option<Spanned<toml::Value>>,
}

/// What every configuration shares; `[[config]]` tables override it. (The JVM keys are repeated in
/// [`RawConfig`] rather than flattened: serde's flatten loses the spans and unknown-key checks.)
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCluster {
    /// Prefix of the clusters' names (`<name>-<n>` for configuration n).
    name: Option<Spanned<String>>,
    nodes: Option<Spanned<usize>>,
    base_ip: Option<Spanned<String>>,
    num_tokens: Option<Spanned<usize>>,
    start_timeout: Option<Spanned<String>>,
    cassandra: Option<Spanned<String>>,
    jdk: Option<Spanned<JdkValue>>,
    force_jdk: Option<Spanned<bool>>,
    gc: Option<Spanned<String>>,
    gc_profile: Option<Spanned<String>>,
    gc_threads: Option<Spanned<u32>>,
    heap: Option<Spanned<String>>,
    jvm_opts: Option<Spanned<Vec<String>>>,
}

/// What may differ between configurations.
#[derive(Debug, Default, Clone)]
struct RawJvm {
    cassandra: Option<Spanned<String>>,
    jdk: Option<Spanned<JdkValue>>,
    force_jdk: Option<Spanned<bool>>,
    gc: Option<Spanned<String>>,
    gc_profile: Option<Spanned<String>>,
    gc_threads: Option<Spanned<u32>>,
    heap: Option<Spanned<String>>,
    jvm_opts: Option<Spanned<Vec<String>>>,
}

macro_rules! jvm_of {
    ($raw:expr) => {
        RawJvm {
            cassandra: $raw.cassandra.clone(),
            jdk: $raw.jdk.clone(),
            force_jdk: $raw.force_jdk.clone(),
            gc: $raw.gc.clone(),
            gc_profile: $raw.gc_profile.clone(),
            gc_threads: $raw.gc_threads.clone(),
            heap: $raw.heap.clone(),
            jvm_opts: $raw.jvm_opts.clone(),
        }
    };
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
enum JdkValue {
    Major(u32),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    name: Spanned<String>,
    cassandra: Option<Spanned<String>>,
    jdk: Option<Spanned<JdkValue>>,
    force_jdk: Option<Spanned<bool>>,
    gc: Option<Spanned<String>>,
    gc_profile: Option<Spanned<String>>,
    gc_threads: Option<Spanned<u32>>,
    heap: Option<Spanned<String>>,
    jvm_opts: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLoad {
    workload: Spanned<String>,
    args: Option<Spanned<String>>,
    rates: Option<Spanned<Vec<f64>>>,
    duration: Spanned<String>,
    warmup: Option<Spanned<String>>,
    repeats: Option<Spanned<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSweep {
    fractions: Spanned<Vec<f64>>,
    /// Length of the unthrottled run [default: the load's duration].
    max_duration: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSlo {
    p99_ms: Spanned<f64>,
    /// A rate known to meet the bound (probes never go below it).
    low: Spanned<f64>,
    /// A rate known to miss it.
    high: Spanned<f64>,
    /// How many bisection probes per configuration [default: 5].
    probes: Option<Spanned<u32>>,
}

/// Where a plan error points.
struct Locator<'a> {
    path: &'a str,
    text: &'a str,
}

impl Locator<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
            + 1
    }

    fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> CampaignError {
        CampaignError::Plan {
            path: self.path.to_string(),
            line: self.line_of(span.start),
            key: key.to_string(),
            message: one_line(&message.into()),
        }
    }

    /// The key written on a line (`rates = [...]` → `rates`, `[[config]]` → `[[config]]`).
    fn key_on_line(&self, line: usize) -> String {
        let text = self.text.lines().nth(line - 1).unwrap_or("").trim();
        if text.starts_with('[') {
            return text.to_string();
        }
        text.split('=').next().unwrap_or("").trim().to_string()
    }

    fn syntax(&self, error: &toml::de::Error) -> CampaignError {
        let offset = error.span().map_or(0, |s| s.start);
        let line = self.line_of(offset);
        let mut key = self.key_on_line(line);
        if let Some(field) = error.message().strip_prefix("unknown field `") {
            key = field.split('`').next().unwrap_or("").to_string();
        }
        CampaignError::Plan {
            path: self.path.to_string(),
            line,
            key,
            message: one_line(error.message()),
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads and checks a plan file. Nothing is started; every error is one line with key and line.
pub fn load_plan(path: &Path) -> Result<Plan, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|source| CampaignError::Io {
        context: format!("reading plan {}", path.display()),
        source,
    })?;
    parse_plan(&path.display().to_string(), &text)
}

/// Parses and checks plan text; `path` only labels the errors. A `[k8s]` table is refused: local
/// campaigns start their own clusters.
pub fn parse_plan(path: &str, text: &str) -> Result<Plan, CampaignError> {
    parse(path, text, false)
}

/// Like [`parse_plan`], but a `[k8s]` table is allowed (and left to its reader, `cqlbench k8s`).
pub fn parse_plan_with_k8s(path: &str, text: &str) -> Result<Plan, CampaignError> {
    parse(path, text, true)
}

fn parse(path: &str, text: &str, k8s_allowed: bool) -> Result<Plan, CampaignError> {
    let at = Locator { path, text };
    let raw: RawPlan = toml::from_str(text).map_err(|e| at.syntax(&e))?;
    if let (Some(k8s), false) = (&raw.k8s, k8s_allowed) {
        return Err(at.error(
            k8s.span(),
            "[k8s]",
            "a [k8s] table is for `cqlbench k8s render`; a local campaign starts its own clusters",
        ));
    }
    let cluster = raw.cluster.unwrap_or_default();
    let Some(configs) = raw.config else {
        return Err(at.error(
            0..0,
            "[[config]]",
            "the plan has no [[config]] table: add at least one, e.g. [[config]] name = \"G1\" gc = \"g1\"",
        ));
    };
    if configs.get_ref().is_empty() {
        return Err(at.error(
            configs.span(),
            "config",
            "the list of configurations is empty: add at least one [[config]] table",
        ));
    }
    let mut checked = Vec::new();
    for (index, config) in configs.get_ref().iter().enumerate() {
        let config = check_config(&at, &cluster, config, index + 1)?;
        if let Some(earlier) = checked
            .iter()
            .find(|c: &&ConfigPlan| c.dir_name == config.dir_name)
        {
            return Err(at.error(
                config_name_span(&configs, index),
                "name",
                format!(
                    "configuration {:?} has the same directory name as {:?}: choose distinct names",
                    config.name, earlier.name
                ),
            ));
        }
        checked.push(config);
    }
    let Some(load) = raw.load else {
        return Err(at.error(
            0..0,
            "[load]",
            "the plan has no [load] table (workload, duration and rates, or [sweep] or [slo])",
        ));
    };
    let mut load = check_load(&at, load, raw.sweep, raw.slo)?;
    load.validity = raw
        .validity
        .as_ref()
        .map(|table| check_validity(&at, table))
        .transpose()?;
    let cost = raw.cost.map(|cost| check_cost(&at, cost)).transpose()?;
    Ok(Plan {
        source: text.to_string(),
        configs: checked,
        load,
        cost,
    })
}

fn config_name_span(configs: &Spanned<Vec<Spanned<RawConfig>>>, index: usize) -> Range<usize> {
    configs.get_ref()[index].get_ref().name.span()
}

/// A configuration's value if it sets one, else the cluster's.
fn pick<'a, T>(
    config: &'a Option<Spanned<T>>,
    cluster: &'a Option<Spanned<T>>,
) -> Option<&'a Spanned<T>> {
    config.as_ref().or(cluster.as_ref())
}

/// A configuration's directory name: its name with every character but letters, digits, '.', '_'
/// and '-' replaced by '-'.
fn dir_name_of(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The `[cluster]` table's layout for configuration `number`: its cluster's name, nodes, addresses,
/// tokens and start timeout.
fn cluster_layout(
    at: &Locator,
    cluster: &RawCluster,
    number: usize,
) -> Result<ClusterSpec, CampaignError> {
    let mut spec = ClusterSpec::default();
    let prefix = cluster
        .name
        .as_ref()
        .map_or_else(|| default_cluster_prefix(at.path), |n| n.get_ref().clone());
    spec.name = format!("{prefix}-{number}");
    if let Some(nodes) = &cluster.nodes {
        spec.nodes = *nodes.get_ref();
    }
    if let Some(ip) = &cluster.base_ip {
        spec.base_ip = ip.get_ref().parse::<Ipv4Addr>().map_err(|_| {
            at.error(
                ip.span(),
                "base-ip",
                format!(
                    "{:?} is not an IPv4 address (e.g. \"127.0.7.1\")",
                    ip.get_ref()
                ),
            )
        })?;
    }
    if let Some(tokens) = &cluster.num_tokens {
        spec.num_tokens = *tokens.get_ref();
    }
    if let Some(timeout) = &cluster.start_timeout {
        let parsed = cqlbench_units::parse_duration(timeout.get_ref())
            .map_err(|e| at.error(timeout.span(), "start-timeout", e.to_string()))?;
        spec.start_timeout_secs = parsed.as_secs().max(1);
    }
    Ok(spec)
}

/// The collector and its profile, each from the configuration or else the cluster.
fn apply_collector(
    at: &Locator,
    spec: &mut ClusterSpec,
    jvm: &RawJvm,
    shared: &RawJvm,
) -> Result<(), CampaignError> {
    if let Some(gc) = pick(&jvm.gc, &shared.gc) {
        spec.gc = Gc::parse(gc.get_ref()).map_err(|_| {
            at.error(
                gc.span(),
                "gc",
                format!(
                    "unknown collector {:?}: expected one of {}",
                    gc.get_ref(),
                    Gc::names()
                ),
            )
        })?;
    }
    if let Some(profile) = pick(&jvm.gc_profile, &shared.gc_profile) {
        spec.gc_profile = GcProfile::parse(profile.get_ref()).map_err(|_| {
            at.error(
                profile.span(),
                "gc-profile",
                format!(
                    "unknown profile {:?}: expected default or shenandoah-tuned",
                    profile.get_ref()
                ),
            )
        })?;
    }
    Ok(())
}

/// The JVM of a configuration (Cassandra version, JDK, collector, threads, heap, options): each
/// value from the configuration, or else from the cluster.
fn apply_jvm(
    at: &Locator,
    spec: &mut ClusterSpec,
    jvm: &RawJvm,
    shared: &RawJvm,
) -> Result<(), CampaignError> {
    if let Some(version) = pick(&jvm.cassandra, &shared.cassandra) {
        spec.cassandra_version = version.get_ref().clone();
    }
    if let Some(jdk) = pick(&jvm.jdk, &shared.jdk) {
        spec.jdk = match jdk.get_ref() {
            JdkValue::Major(major) => JdkChoice::Major(*major),
            JdkValue::Text(text) => {
                JdkChoice::parse(text).map_err(|e| at.error(jdk.span(), "jdk", e.to_string()))?
            }
        };
    }
    if let Some(force) = pick(&jvm.force_jdk, &shared.force_jdk) {
        spec.force_jdk = *force.get_ref();
    }
    apply_collector(at, spec, jvm, shared)?;
    if let Some(threads) = pick(&jvm.gc_threads, &shared.gc_threads) {
        spec.gc_threads = Some(*threads.get_ref());
    }
    if let Some(heap) = pick(&jvm.heap, &shared.heap) {
        spec.heap_bytes = cqlbench_units::parse_size(heap.get_ref())
            .map_err(|e| at.error(heap.span(), "heap", e.to_string()))?;
    }
    // JVM options add up: the cluster's first, then the configuration's.
    for opts in [&shared.jvm_opts, &jvm.jvm_opts].into_iter().flatten() {
        spec.jvm_opts.extend(opts.get_ref().iter().cloned());
    }
    Ok(())
}

fn check_config(
    at: &Locator,
    cluster: &RawCluster,
    config: &Spanned<RawConfig>,
    number: usize,
) -> Result<ConfigPlan, CampaignError> {
    let raw = config.get_ref();
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(at.error(raw.name.span(), "name", "a configuration needs a name"));
    }
    let (jvm, shared) = (&jvm_of!(raw), &jvm_of!(cluster));
    let mut spec = cluster_layout(at, cluster, number)?;
    apply_jvm(at, &mut spec, jvm, shared)?;
    cqlbench_cluster::check_spec(&spec).map_err(|error| {
        let key = key_of_cluster_error(&error);
        let span = span_of_key(key, jvm, shared, cluster).unwrap_or_else(|| config.span());
        at.error(
            span,
            key,
            format!("configuration {name:?}: {}", plan_words(&error.to_string())),
        )
    })?;
    Ok(ConfigPlan {
        dir_name: dir_name_of(&name),
        name,
        spec,
    })
}

/// Clusters are named after the plan file (`seed-004.toml` → `seed-004-1`, `seed-004-2`, …), so that
/// campaigns of different plans never take (or clean up) each other's clusters.
fn default_cluster_prefix(plan_path: &str) -> String {
    let stem = Path::new(plan_path)
        .file_stem()
        .map_or("campaign".to_string(), |s| s.to_string_lossy().to_string());
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if clean.is_empty() {
        "campaign".to_string()
    } else {
        clean
    }
}

/// The plan key a cluster refusal is about.
fn key_of_cluster_error(error: &ClusterError) -> &'static str {
    let text = error.to_string();
    match error {
        ClusterError::UnsupportedPair { .. } | ClusterError::ImpossiblePair(_) => "jdk",
        ClusterError::UnsupportedVersion(_) => "cassandra",
        ClusterError::NoJdkAtPath(_) => "jdk",
        _ => [
            ("--gc-profile", "gc-profile"),
            ("--gc-threads", "gc-threads"),
            ("--heap", "heap"),
            ("--jvm-opt", "jvm-opts"),
            ("--nodes", "nodes"),
            ("--base-ip", "base-ip"),
            ("--name", "name"),
            ("num_tokens", "num-tokens"),
            ("--gc", "gc"),
        ]
        .into_iter()
        .find(|(flag, _)| text.contains(flag))
        .map_or("[[config]]", |(_, key)| key),
    }
}

/// The cluster layer speaks in `cqlbench cluster up` flags; a plan writes the same settings as keys.
fn plan_words(message: &str) -> String {
    message
        .replace("pass --force-jdk", "set force-jdk = true")
        .replace("(e.g. --jdk ", "(e.g. jdk = ")
        .replace("use --jdk ", "use jdk = ")
}

fn span_of_key(
    key: &str,
    jvm: &RawJvm,
    shared: &RawJvm,
    cluster: &RawCluster,
) -> Option<Range<usize>> {
    fn span<T>(config: &Option<Spanned<T>>, cluster: &Option<Spanned<T>>) -> Option<Range<usize>> {
        pick(config, cluster).map(Spanned::span)
    }
    match key {
        "jdk" => span(&jvm.jdk, &shared.jdk).or_else(|| span(&jvm.cassandra, &shared.cassandra)),
        "cassandra" => span(&jvm.cassandra, &shared.cassandra),
        "gc" => span(&jvm.gc, &shared.gc),
        "gc-profile" => span(&jvm.gc_profile, &shared.gc_profile),
        "gc-threads" => span(&jvm.gc_threads, &shared.gc_threads),
        "heap" => span(&jvm.heap, &shared.heap),
        "jvm-opts" => span(&jvm.jvm_opts, &shared.jvm_opts),
        "nodes" => cluster.nodes.as_ref().map(Spanned::span),
        "base-ip" => cluster.base_ip.as_ref().map(Spanned::span),
        "num-tokens" => cluster.num_tokens.as_ref().map(Spanned::span),
        "name" => cluster.name.as_ref().map(Spanned::span),
        _ => None,
    }
}

/// Options a campaign sets per cell itself, which the load's `args` must leave alone.
const CAMPAIGN_OWNED: &[(&str, &str)] = &[
    (
        "--rate",
        "rates, [sweep] or [slo] choose the rate of each cell",
    ),
    ("-d/--duration", "duration sets each cell's length"),
    ("-n/--ops", "duration sets each cell's length"),
    ("--warmup", "warmup sets each cell's warm-up"),
    (
        "-o/--out",
        "the campaign directory holds every cell's results",
    ),
    (
        "--host",
        "each configuration's cluster is started by the campaign",
    ),
    (
        "--clients/--client-id/--start-at",
        "a campaign's cells are run by one client (several clients: cqlbench run and report merge)",
    ),
    (
        "--prometheus",
        "give it to `cqlbench campaign` itself: one exporter serves every cell",
    ),
];

fn check_load(
    at: &Locator,
    load: Spanned<RawLoad>,
    sweep: Option<Spanned<RawSweep>>,
    slo: Option<Spanned<RawSlo>>,
) -> Result<LoadPlan, CampaignError> {
    let load_span = load.span();
    let raw = load.into_inner();
    let workload = workload_of(at, &raw.workload)?;
    let duration = parse_positive_duration(at, &raw.duration, "duration")?;
    let warmup = match &raw.warmup {
        Some(w) => cqlbench_units::parse_duration(w.get_ref())
            .map_err(|e| at.error(w.span(), "warmup", e.to_string()))?,
        None => Duration::ZERO,
    };
    let repeats = raw.repeats.as_ref().map_or(1, |r| *r.get_ref());
    if repeats == 0 {
        let span = raw
            .repeats
            .as_ref()
            .map_or(load_span.clone(), Spanned::span);
        return Err(at.error(span, "repeats", "repeats must be at least 1"));
    }
    let (args, mut populate) = check_args(at, &workload, raw.args.as_ref())?;
    let compiled = cqlbench_workload::is_file_argument(&workload)
        || cqlbench_workload::catalog::find(&workload).is_some();
    if compiled && raw.args.is_none() {
        // A workload file (or a shipped one) is compiled now, so that a plan with a bad one never
        // starts, and its populate is known.
        let options = run_args(&workload, &[])
            .and_then(|a| a.to_options(vec!["127.0.0.1".to_string()]))
            .map_err(|e| at.error(raw.workload.span(), "workload", e.to_string()))?;
        populate = options.populate;
    }
    let mode = match (raw.rates, sweep, slo) {
        (Some(rates), None, None) => RateMode::Fixed(check_rates(at, &rates)?),
        (None, Some(sweep), None) => check_sweep(at, sweep, duration)?,
        (None, None, Some(slo)) => check_slo(at, slo)?,
        (None, None, None) => {
            return Err(at.error(
                load_span,
                "rates",
                "choose the rates: rates = [...] in [load], or a [sweep] or [slo] table",
            ))
        }
        (rates, sweep, slo) => {
            let span = [
                rates.map(|r| r.span()),
                sweep.map(|s| s.span()),
                slo.map(|s| s.span()),
            ]
            .into_iter()
            .flatten()
            .nth(1)
            .unwrap_or(load_span);
            return Err(at.error(
                span,
                "rates",
                "rates, [sweep] and [slo] are alternatives: keep one",
            ));
        }
    };
    Ok(LoadPlan {
        workload,
        args,
        mode,
        duration,
        warmup,
        repeats,
        populate,
        validity: None,
    })
}

/// `[cost]`: every price a number, none negative.
fn check_cost(at: &Locator, cost: Spanned<Cost>) -> Result<Cost, CampaignError> {
    if let Some((key, value)) = cost.get_ref().invalid_price() {
        return Err(at.error(
            cost.span(),
            "[cost]",
            format!("{key} = {value}: a price cannot be negative"),
        ));
    }
    Ok(cost.into_inner())
}

/// `[validity]`: threshold names as `--validity-thresholds` takes them, each a number.
fn check_validity(
    at: &Locator,
    table: &Spanned<toml::Table>,
) -> Result<ValidityThresholds, CampaignError> {
    let mut thresholds = ValidityThresholds::default();
    for (name, value) in table.get_ref() {
        let fail = |message: String| at.error(table.span(), "[validity]", message);
        let number = value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64))
            .ok_or_else(|| fail(format!("{name} = {value}: a number is needed")))?;
        cqlbench_machine::set_threshold(&mut thresholds, name, &number.to_string())
            .map_err(|e| fail(e.to_string()))?;
    }
    Ok(thresholds)
}

fn parse_positive_duration(
    at: &Locator,
    value: &Spanned<String>,
    key: &str,
) -> Result<Duration, CampaignError> {
    let parsed = cqlbench_units::parse_duration(value.get_ref())
        .map_err(|e| at.error(value.span(), key, e.to_string()))?;
    if parsed.is_zero() {
        return Err(at.error(
            value.span(),
            key,
            format!("{key} must be greater than zero"),
        ));
    }
    Ok(parsed)
}

/// The plan's workload: a built-in or shipped one's name (`KeyValue`, `LWT`), or a workload file's
/// path, relative to the plan's directory when it is not absolute.
fn workload_of(at: &Locator, workload: &Spanned<String>) -> Result<String, CampaignError> {
    let name = workload.get_ref();
    if !cqlbench_workload::is_file_argument(name) {
        if cqlbench_workload::catalog::find(name).is_none() {
            cqlbench_load::find_workload(name)
                .map_err(|e| at.error(workload.span(), "workload", e.to_string()))?;
        }
        return Ok(name.clone());
    }
    let path = Path::new(name);
    let resolved = match Path::new(at.path).parent() {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    };
    if !resolved.is_file() {
        return Err(at.error(
            workload.span(),
            "workload",
            format!("workload file {} does not exist", resolved.display()),
        ));
    }
    Ok(resolved.display().to_string())
}

/// Splits `args` like a shell and parses it with `cqlbench run`'s own parser.
fn check_args(
    at: &Locator,
    workload: &str,
    args: Option<&Spanned<String>>,
) -> Result<(Vec<String>, u64), CampaignError> {
    let Some(args) = args else {
        return Ok((Vec::new(), 0));
    };
    let fail = |message: String| at.error(args.span(), "args", message);
    let words = shlex::split(args.get_ref())
        .ok_or_else(|| fail("unbalanced quotes in the cqlbench run options".into()))?;
    let parsed = run_args(workload, &words).map_err(|e| fail(e.to_string()))?;
    let owned = [
        parsed.rate.is_some(),
        parsed.duration.is_some(),
        parsed.ops.is_some(),
        parsed.warmup.is_some(),
        parsed.out.is_some(),
        !parsed.hosts.is_empty(),
        parsed.clients.trim() != "1" || parsed.client_id.trim() != "0" || parsed.start_at.is_some(),
        parsed.prometheus.is_some() || parsed.prometheus_public,
    ];
    if let Some(index) = owned.iter().position(|set| *set) {
        let (flag, why) = CAMPAIGN_OWNED[index];
        return Err(fail(format!("{flag} cannot be in args: {why}")));
    }
    let options = parsed
        .to_options(vec!["127.0.0.1".to_string()])
        .map_err(|e| fail(e.to_string()))?;
    Ok((words, options.populate))
}

fn check_rates(at: &Locator, rates: &Spanned<Vec<f64>>) -> Result<Vec<f64>, CampaignError> {
    let list = rates.get_ref();
    if list.is_empty() {
        return Err(at.error(rates.span(), "rates", "the list of rates is empty"));
    }
    if let Some(bad) = list.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(at.error(
            rates.span(),
            "rates",
            format!("rate {bad} is not a positive number of operations per second"),
        ));
    }
    if list.windows(2).any(|w| w[0] >= w[1]) {
        return Err(at.error(
            rates.span(),
            "rates",
            "rates must be strictly ascending (the cells of a configuration run from the lowest load up)",
        ));
    }
    Ok(list.clone())
}

fn check_sweep(
    at: &Locator,
    sweep: Spanned<RawSweep>,
    duration: Duration,
) -> Result<RateMode, CampaignError> {
    let raw = sweep.into_inner();
    let fractions = raw.fractions.get_ref().clone();
    let valid = !fractions.is_empty()
        && fractions.iter().all(|f| *f > 0.0 && *f <= 1.0)
        && fractions.windows(2).all(|w| w[0] < w[1]);
    if !valid {
        return Err(at.error(
            raw.fractions.span(),
            "fractions",
            "fractions of the maximum must be ascending numbers in (0, 1], e.g. [0.35, 0.7]",
        ));
    }
    let max_duration = match &raw.max_duration {
        Some(d) => parse_positive_duration(at, d, "max-duration")?,
        None => duration,
    };
    Ok(RateMode::Sweep {
        fractions,
        max_duration,
    })
}

fn check_slo(at: &Locator, slo: Spanned<RawSlo>) -> Result<RateMode, CampaignError> {
    let raw = slo.into_inner();
    let (p99_ms, low, high) = (
        *raw.p99_ms.get_ref(),
        *raw.low.get_ref(),
        *raw.high.get_ref(),
    );
    if !(p99_ms > 0.0 && p99_ms.is_finite()) {
        return Err(at.error(
            raw.p99_ms.span(),
            "p99-ms",
            "the bound must be a positive number of milliseconds",
        ));
    }
    if !(low > 0.0 && low.is_finite()) {
        return Err(at.error(raw.low.span(), "low", "low must be a positive rate (ops/s)"));
    }
    if !(high > low && high.is_finite()) {
        return Err(at.error(raw.high.span(), "high", "high must be a rate above low"));
    }
    let probes = raw.probes.as_ref().map_or(5, |p| *p.get_ref());
    if probes == 0 {
        let span = raw.probes.as_ref().map_or(0..0, Spanned::span);
        return Err(at.error(span, "probes", "probes must be at least 1"));
    }
    Ok(RateMode::Slo {
        p99_ms,
        low,
        high,
        probes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[cluster]
heap = "512M"

[[config]]
name = "G1 jdk17"
gc = "g1"

[[config]]
name = "Shenandoah jdk17"
gc = "shenandoah"

[load]
workload = "BasicTimeSeries"
args = "-c 50 --pg sequence -t 8 -r 0.2 --populate 200000"
rates = [25000, 40000]
duration = "30m"
"#;

    fn error_of(text: &str) -> String {
        parse_plan("p.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn a_workload_file_is_found_beside_the_plan_and_compiled_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let workload = "values:\n  k: uniform(1..10)\npopulate:\n  operation: put\n  rows: 300\n\
                        operations:\n  put:\n    cql: INSERT INTO t (k) VALUES (?)\n";
        std::fs::write(dir.path().join("mine.yaml"), workload).unwrap();
        let plan_path = dir.path().join("p.toml");
        let text = GOOD.replace("BasicTimeSeries", "mine.yaml").replace(
            "args = \"-c 50 --pg sequence -t 8 -r 0.2 --populate 200000\"\n",
            "",
        );
        let plan = parse_plan(plan_path.to_str().unwrap(), &text).unwrap();
        assert_eq!(
            plan.load.workload,
            dir.path().join("mine.yaml").display().to_string()
        );
        assert_eq!(plan.load.populate, 300, "the file's populate rows");
        let missing = parse_plan(
            plan_path.to_str().unwrap(),
            &text.replace("mine.yaml", "nope.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(missing.contains("nope.yaml does not exist"), "{missing}");
        std::fs::write(
            dir.path().join("mine.yaml"),
            workload.replace("rows: 300", "rowz: 300"),
        )
        .unwrap();
        let bad = parse_plan(plan_path.to_str().unwrap(), &text)
            .unwrap_err()
            .to_string();
        assert!(bad.contains("mine.yaml:5: unknown key 'rowz'"), "{bad}");
        // A shipped workload by name: compiled too, its populate known.
        let shipped = GOOD.replace("BasicTimeSeries", "Locking").replace(
            "args = \"-c 50 --pg sequence -t 8 -r 0.2 --populate 200000\"\n",
            "",
        );
        let plan = parse_plan(plan_path.to_str().unwrap(), &shipped).unwrap();
        assert_eq!(plan.load.workload, "Locking");
        assert_eq!(plan.load.populate, 1_000_000, "Locking populates every key");
    }

    #[test]
    fn the_seed_line_is_taken_as_cqlbench_run_takes_it() {
        let plan = parse_plan("p.toml", GOOD).unwrap();
        assert_eq!(plan.configs.len(), 2);
        assert_eq!(plan.configs[1].dir_name, "Shenandoah-jdk17");
        assert_eq!(plan.configs[1].spec.gc, Gc::Shenandoah);
        assert_eq!(plan.configs[0].spec.heap_bytes, 512 << 20);
        assert_eq!(
            plan.configs[1].spec.name, "p-2",
            "clusters are named after the plan"
        );
        assert_eq!(plan.load.populate, 200_000);
        assert_eq!(plan.load.mode, RateMode::Fixed(vec![25000.0, 40000.0]));
        let options = plan
            .load
            .cell_options(
                Some(25000.0),
                plan.load.duration,
                vec!["127.0.0.1".into()],
                Path::new("x"),
            )
            .unwrap();
        assert_eq!(
            (options.concurrency, options.threads, options.read_ratio),
            (50, 8, 0.2)
        );
        assert_eq!(
            options.populate, 0,
            "cells never populate; the configuration did once"
        );
    }

    #[test]
    fn jdk8_rows_per_configuration_and_their_refusals() {
        let plan = parse_plan(
            "p.toml",
            &GOOD.replacen(
                "name = \"G1 jdk17\"\ngc = \"g1\"",
                "name = \"CMS jdk8 3.11\"\ncassandra = \"3.11.19\"\njdk = 8\ngc = \"cms\"",
                1,
            ),
        )
        .unwrap();
        assert_eq!(plan.configs[0].spec.cassandra_version, "3.11.19");
        assert_eq!(plan.configs[0].spec.jdk, JdkChoice::Major(8));
        assert_eq!(plan.configs[1].spec.cassandra_version, "5.0.9");
        // 3.11 on JDK 11, Shenandoah on JDK 8: one line naming the line and key, in plan words.
        let error = error_of(&GOOD.replacen(
            "gc = \"g1\"",
            "gc = \"g1\"\ncassandra = \"3.11.19\"\njdk = 11\nforce-jdk = true",
            1,
        ));
        assert!(
            error.contains("line 9, `jdk`")
                && error.contains("runs only on JDK 8")
                && error.contains("use jdk = 8"),
            "{error}"
        );
        let error = error_of(&GOOD.replacen(
            "gc = \"shenandoah\"",
            "gc = \"shenandoah\"\njdk = 8\ncassandra = \"4.0.19\"",
            1,
        ));
        assert!(
            error.contains("line 11, `gc`") && error.contains("upstream JDK 8 has neither"),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }

    /// Each bad plan gives one line naming the key and the line it is on.
    #[test]
    fn bad_plans_name_key_and_line() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "unknown key",
                "heap = \"512M\"",
                "heap = \"512M\"\ncolour = \"red\"",
                "line 4, `colour`",
            ),
            (
                "unknown GC",
                "gc = \"shenandoah\"",
                "gc = \"shenandoa\"",
                "line 11, `gc`",
            ),
            (
                "rates not numbers",
                "rates = [25000, 40000]",
                "rates = [\"25k\", \"40k\"]",
                "line 16, `rates`",
            ),
            (
                "descending rates",
                "rates = [25000, 40000]",
                "rates = [40000, 25000]",
                "line 16, `rates`",
            ),
            (
                "JDK/GC pair",
                "gc = \"shenandoah\"",
                "gc = \"cms\"",
                "line 11, `gc`",
            ),
            (
                "Cassandra/JDK pair",
                "heap = \"512M\"",
                "heap = \"512M\"\njdk = 11",
                "line 4, `jdk`",
            ),
            (
                "run option",
                "--populate 200000",
                "--populate 2OO",
                "line 15, `args`",
            ),
            (
                "campaign-owned option",
                "--populate 200000",
                "--rate 5000",
                "line 15, `args`",
            ),
            (
                "several clients",
                "--populate 200000",
                "--clients 2",
                "--clients/--client-id/--start-at cannot be in args",
            ),
            (
                "unknown validity threshold",
                "duration = \"30m\"",
                "duration = \"30m\"\n[validity]\nother_cpu = 0.3",
                "line 18, `[validity]`: unknown validity threshold 'other_cpu'",
            ),
            (
                "live metrics per cell",
                "--populate 200000",
                "--prometheus 127.0.0.1:9464",
                "--prometheus cannot be in args: give it to `cqlbench campaign`",
            ),
            (
                "unknown workload",
                "BasicTimeSeries",
                "BasicTimeSerie",
                "line 14, `workload`",
            ),
            (
                "bad duration",
                "\"30m\"",
                "\"30 parsecs\"",
                "line 17, `duration`",
            ),
        ];
        for (what, from, to, expected) in cases {
            assert!(GOOD.contains(from), "{what}");
            let error = error_of(&GOOD.replacen(from, to, 1));
            assert!(error.contains(expected), "{what}: {error}");
            assert!(!error.contains('\n'), "{what}: {error}");
        }
    }

    #[test]
    fn a_validity_table_sets_the_cells_thresholds() {
        let text = format!("{GOOD}[validity]\nother-cpu = 0.5\nsteal = 0\n");
        let plan = parse_plan("p.toml", &text).unwrap();
        let options = plan
            .load
            .cell_options(
                Some(1.0),
                Duration::from_secs(1),
                vec!["127.0.0.1".into()],
                Path::new("x"),
            )
            .unwrap();
        assert_eq!(
            (options.validity.other_cpu, options.validity.steal),
            (0.5, 0.0)
        );
        assert_eq!(
            options.validity.busy_share,
            ValidityThresholds::default().busy_share
        );
        let bad = error_of(&format!("{GOOD}[validity]\nsteal = \"high\"\n"));
        assert!(bad.contains("a number is needed"), "{bad}");
    }

    #[test]
    fn a_cost_table_gives_prices_and_bad_ones_are_refused_in_one_line() {
        let text = format!("{GOOD}[cost]\nnode-hourly = 0.504\ncluster-monthly = 73\n");
        let cost = parse_plan("p.toml", &text).unwrap().cost.unwrap();
        assert_eq!((cost.node_hourly, cost.client_hourly), (0.504, None));
        assert_eq!(cost.currency, "USD");
        // 3 nodes, 1 client without a price, and the monthly fee spread over 730 hours.
        assert!((cost.hourly(3, 1) - (1.512 + 0.1)).abs() < 1e-9);
        assert!(parse_plan("p.toml", GOOD).unwrap().cost.is_none());
        let line = GOOD.lines().count() + 1;
        for (table, expected) in [
            (
                "[cost]\nnode-hourly = -1\n".to_string(),
                format!(
                    "p.toml, line {line}, `[cost]`: node-hourly = -1: a price cannot be negative"
                ),
            ),
            (
                "[cost]\nnode-hourly = 1\nclient-hourly = -0.5\n".to_string(),
                "client-hourly = -0.5: a price cannot be negative".to_string(),
            ),
            (
                "[cost]\nnode-hourly = \"cheap\"\n".to_string(),
                "node-hourly".to_string(),
            ),
            (
                "[cost]\nnode-hourly = 1\nprice = 2\n".to_string(),
                "unknown field `price`".to_string(),
            ),
            (
                "[cost]\ncurrency = \"EUR\"\n".to_string(),
                "missing field `node-hourly`".to_string(),
            ),
        ] {
            let error = error_of(&format!("{GOOD}{table}"));
            assert!(error.contains(&expected), "{table}: {error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
    }

    #[test]
    fn an_unknown_collector_lists_every_collector_the_cluster_takes() {
        let error = error_of(&GOOD.replacen("gc = \"shenandoah\"", "gc = \"shenandoa\"", 1));
        for gc in Gc::ALL {
            assert!(error.contains(gc.name()), "{} missing: {error}", gc.name());
        }
        assert!(error.contains("shenandoah-generational"), "{error}");
    }

    #[test]
    fn configurations_and_rates_must_be_there() {
        let no_configs = GOOD.replacen("[[config]]", "[other]", 1);
        assert!(error_of(&no_configs).contains("`other`"));
        let empty =
            "config = []\n[load]\nworkload = \"KeyValue\"\nrates = [1]\nduration = \"1s\"\n";
        assert!(
            error_of(empty).contains("line 1, `config`"),
            "{}",
            error_of(empty)
        );
        let none = GOOD.replace("rates = [25000, 40000]\n", "");
        assert!(error_of(&none).contains("`rates`"));
        let both = format!("{GOOD}\n[sweep]\nfractions = [0.35]\n");
        assert!(error_of(&both).contains("alternatives"));
        let k8s = format!("{GOOD}\n[k8s]\nnamespace = \"bench\"\n");
        assert!(error_of(&k8s).contains("`[k8s]`"), "{}", error_of(&k8s));
        assert!(parse_plan_with_k8s("p.toml", &k8s).is_ok());
    }

    #[test]
    fn sweep_and_slo_plans() {
        let sweep =
            GOOD.replace("rates = [25000, 40000]\n", "") + "[sweep]\nfractions = [0.35, 0.7]\n";
        let plan = parse_plan("p.toml", &sweep).unwrap();
        assert!(
            matches!(plan.load.mode, RateMode::Sweep { ref fractions, .. } if fractions == &[0.35, 0.7])
        );
        let slo = GOOD.replace("rates = [25000, 40000]\n", "")
            + "[slo]\np99-ms = 10\nlow = 1000\nhigh = 9000\n";
        let plan = parse_plan("p.toml", &slo).unwrap();
        assert_eq!(
            plan.load.mode,
            RateMode::Slo {
                p99_ms: 10.0,
                low: 1000.0,
                high: 9000.0,
                probes: 5
            }
        );
        let bad = GOOD.replace("rates = [25000, 40000]\n", "")
            + "[slo]\np99-ms = 10\nlow = 9000\nhigh = 1000\n";
        assert!(error_of(&bad).contains("`high`"), "{}", error_of(&bad));
    }
}

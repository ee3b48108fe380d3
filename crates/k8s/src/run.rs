//! `cqlbench k8s run`: a plan's campaign on a Kubernetes cluster through K8ssandra, one configuration at a
//! time: apply its K8ssandraCluster, wait until the datacenter is ready, check on every Cassandra pod that
//! the JVM runs the planned collector, run the load Jobs in order (a sweep's latency Jobs at their fraction
//! of what the `max` Job measured), collect the clients' results and the nodes' GC logs, and delete the
//! cluster before the next configuration starts.
//!
//! Everything up to the Jobs' outcomes goes through the API server alone: the clients' briefs (`cqlbench
//! run --brief-to /dev/termination-log`) come back in the pods' status. Reading files (results, GC logs)
//! needs `exec` into pods, which the API server hands to the node's kubelet.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cqlbench_results::{Brief, JobBriefs, RunStatus, FORMAT_VERSION};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

use crate::error::K8sError;
use crate::plan::{Backend, K8sPlan};
use crate::render::{
    cells, render, Cell, CellRate, Manifest, RenderOptions, RATE_ANNOTATION, RESULTS_CLAIM,
    RESULTS_MOUNT, START_AT_ANNOTATION,
};

/// Field manager of every object `k8s run` applies.
pub const FIELD_MANAGER: &str = "cqlbench";
/// A long wait says how it stands at least this often, even when nothing changed.
const HEARTBEAT: Duration = Duration::from_secs(60);

/// How results and GC logs get from the pods to this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// `exec` into the pods (tar over the API server's exec stream), and check the collector on every
    /// Cassandra pod the same way before any load.
    Exec,
    /// Nothing is read from inside pods: results stay on the results volume, GC logs on the data volumes,
    /// and the collector is not checked (for clusters where exec is not allowed).
    None,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where the campaign's results go (`raw/` holds what was collected as it was on the pods).
    pub out: PathBuf,
    pub collect: Collect,
    /// How far ahead of a Job's creation its clients' common start lies (time to schedule the pods
    /// and pull the image).
    pub start_delay: Duration,
    /// How long a datacenter may take to become ready.
    pub ready_timeout: Duration,
    /// Time a load Job may take beyond its start delay, warm-up and duration.
    pub job_slack: Duration,
    /// How long the populate Job may take.
    pub populate_timeout: Duration,
    /// Keep each configuration's K8ssandraCluster when its Jobs are done.
    pub keep_clusters: bool,
    /// Between two looks at an object's status.
    pub poll: Duration,
}

impl RunOptions {
    pub fn new(out: PathBuf) -> RunOptions {
        RunOptions {
            out,
            collect: Collect::Exec,
            start_delay: Duration::from_secs(60),
            ready_timeout: Duration::from_secs(30 * 60),
            job_slack: Duration::from_secs(15 * 60),
            populate_timeout: Duration::from_secs(6 * 3600),
            keep_clusters: false,
            poll: Duration::from_secs(2),
        }
    }
}

/// One finished load Job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutcome {
    pub job: String,
    /// The rate the Job was given (`None`: unthrottled).
    pub rate: Option<f64>,
    /// Its clients' briefs, by client id.
    pub briefs: Vec<Brief>,
    /// The clients' successful operations per second, added up.
    pub achieved_rate: f64,
    /// `false` when the Job already existed and was complete (an earlier `k8s run` of the plan).
    pub created: bool,
}

/// What `run` did.
#[derive(Debug, Default)]
pub struct RunOutcome {
    pub jobs: Vec<JobOutcome>,
    /// Whether results and GC logs were collected (and the report written).
    pub collected: bool,
}

fn kube_error(what: &str, source: kube::Error) -> K8sError {
    K8sError::kube(what, &source)
}

fn api_for(client: &Client, object: &Value) -> Api<DynamicObject> {
    crate::api::dynamic_api(
        client,
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["namespace"].as_str(),
    )
}

fn describe(object: &Value) -> String {
    format!(
        "{} {}",
        object["kind"].as_str().unwrap_or("object"),
        object["metadata"]["name"].as_str().unwrap_or("?")
    )
}

/// Server-side apply, as `kubectl apply --server-side` does.
async fn apply(client: &Client, object: &Value) -> Result<(), K8sError> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api_for(client, object)
        .patch(name, &params, &Patch::Apply(object))
        .await
        .map_err(|e| kube_error(&format!("applying {}", describe(object)), e))?;
    Ok(())
}

async fn get(client: &Client, object: &Value) -> Result<Option<Value>, K8sError> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let found = api_for(client, object)
        .get_opt(name)
        .await
        .map_err(|e| kube_error(&format!("reading {}", describe(object)), e))?;
    Ok(found.map(|o| serde_json::to_value(o).unwrap_or(Value::Null)))
}

/// Where a datacenter stands, from the K8ssandraCluster's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatacenterState {
    Ready,
    /// Not ready yet: what the status says.
    Waiting(String),
}

/// The datacenter is ready when cass-operator reports its progress `Ready` and its `Ready` condition
/// is true (the K8ssandraCluster mirrors the CassandraDatacenter's status under `datacenters.<dc>`).
pub fn datacenter_state(cluster: &Value, datacenter: &str) -> DatacenterState {
    let cassandra = &cluster["status"]["datacenters"][datacenter]["cassandra"];
    let progress = cassandra["cassandraOperatorProgress"].as_str();
    let ready_condition = cassandra["conditions"].as_array().and_then(|conditions| {
        conditions
            .iter()
            .find(|c| c["type"] == "Ready")
            .map(|c| c["status"] == "True")
    });
    match (progress, ready_condition) {
        (Some("Ready"), Some(true)) => DatacenterState::Ready,
        (None, _) => DatacenterState::Waiting("no status from the operator yet".into()),
        (Some(progress), condition) => {
            let nodes = cassandra["nodeStatuses"]
                .as_object()
                .map_or(0, serde_json::Map::len);
            let condition = match condition {
                Some(true) => "Ready",
                Some(false) => "not Ready",
                None => "no Ready condition",
            };
            DatacenterState::Waiting(format!(
                "progress {progress}, {condition}, {nodes} node(s) known"
            ))
        }
    }
}

/// Where a Job stands, from its status conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    Complete,
    Failed(String),
    Running {
        active: u64,
        succeeded: u64,
        failed: u64,
    },
}

pub fn job_state(job: &Value) -> JobState {
    let status = &job["status"];
    let condition = |kind: &str| {
        status["conditions"].as_array().and_then(|conditions| {
            conditions
                .iter()
                .find(|c| c["type"] == kind && c["status"] == "True")
        })
    };
    if condition("Complete").is_some() {
        return JobState::Complete;
    }
    if let Some(failed) = condition("Failed") {
        let reason = failed["reason"].as_str().unwrap_or("Failed");
        let message = failed["message"].as_str().unwrap_or_default();
        return JobState::Failed(format!("{reason}: {message}").trim_end_matches(": ").into());
    }
    let count = |key: &str| status[key].as_u64().unwrap_or(0);
    JobState::Running {
        active: count("active"),
        succeeded: count("succeeded"),
        failed: count("failed"),
    }
}

/// A client pod's brief from its termination message, with the pod's completion index.
pub fn pod_brief(pod: &Value) -> Option<(u64, Result<Brief, String>)> {
    let index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        .as_str()
        .and_then(|i| i.parse().ok())?;
    let statuses = pod["status"]["containerStatuses"].as_array()?;
    let terminated = statuses
        .iter()
        .find(|s| s["name"] == "cqlbench")
        .map(|s| &s["state"]["terminated"])?;
    let message = terminated["message"].as_str().unwrap_or_default().trim();
    let exit = terminated["exitCode"].as_i64();
    if message.is_empty() {
        return Some((
            index,
            Err(format!(
                "no brief in its termination message (exit code {})",
                exit.map_or("unknown".into(), |c| c.to_string())
            )),
        ));
    }
    Some((
        index,
        Brief::parse(message).map_err(|e| {
            format!(
                "its termination message is not a cqlbench brief ({}): {message:.200}",
                e.reason()
            )
        }),
    ))
}

/// The briefs of a Job's pods, one per completion index. The newest pod of an index counts.
fn briefs_of(job: &str, pods: &[Value], clients: u64) -> Result<Vec<Brief>, K8sError> {
    let mut briefs: Vec<Option<Result<Brief, String>>> = vec![None; clients as usize];
    let mut sorted: Vec<&Value> = pods.iter().collect();
    sorted.sort_by_key(|p| {
        p["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or("")
            .to_string()
    });
    for pod in sorted {
        if let Some((index, brief)) = pod_brief(pod) {
            if let Some(slot) = briefs.get_mut(index as usize) {
                *slot = Some(brief);
            }
        }
    }
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (index, brief) in briefs.into_iter().enumerate() {
        match brief {
            Some(Ok(brief)) if brief.status == RunStatus::Complete => out.push(brief),
            Some(Ok(brief)) => problems.push(format!(
                "client {index} {}{}",
                brief.status,
                brief.failure.map(|f| format!(": {f}")).unwrap_or_default()
            )),
            Some(Err(problem)) => problems.push(format!("client {index}: {problem}")),
            None => problems.push(format!("client {index}: no finished pod")),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(K8sError::Kube(format!(
            "Job {job}: {}",
            problems.join("; ")
        )))
    }
}

/// RFC 3339 in UTC, whole seconds.
fn rfc3339(unix_s: u64) -> String {
    let text = cqlbench_units::time::format_iso8601(unix_s as i64 * 1_000_000_000);
    // 2026-11-22T00:05:42.000000Z → 2026-11-22T00:05:42Z
    match text.split_once('.') {
        Some((seconds, _)) => format!("{seconds}Z"),
        None => text,
    }
}

/// The rate of a sweep's latency Job: its fraction of the `max` Job's summed throughput, whole ops/s.
pub fn rate_of_max(fraction: f64, max_rate: f64) -> f64 {
    (fraction * max_rate).round().max(1.0)
}

struct Runner<'a> {
    client: &'a Client,
    plan: &'a K8sPlan,
    options: &'a RunOptions,
    progress: &'a mut dyn FnMut(&str),
}

/// Whether an object of a configuration's datacenter is ready (`Err` says why not yet); `None` for a
/// kind that is ready once it exists (a Service).
fn readiness(object: &Value, datacenter: &str) -> Option<Result<(), String>> {
    match object["kind"].as_str() {
        Some("K8ssandraCluster") => Some(match datacenter_state(object, datacenter) {
            DatacenterState::Ready => Ok(()),
            DatacenterState::Waiting(why) => Err(why),
        }),
        Some("StatefulSet") => Some(crate::statefulset::statefulset_ready(object)),
        _ => None,
    }
}

impl Runner<'_> {
    /// Waits until a datacenter's object is ready (see [`readiness`]), saying how it stands when that
    /// changes and at least every [`HEARTBEAT`].
    async fn wait_ready(&mut self, object: &Value) -> Result<(), K8sError> {
        let datacenter = &self.plan.k8s.datacenter;
        if readiness(object, datacenter).is_none() {
            (self.progress)(&format!("applied {}", describe(object)));
            return Ok(());
        }
        let started = Instant::now();
        let deadline = started + self.options.ready_timeout;
        let mut last = String::new();
        let mut last_said = Instant::now();
        loop {
            let current = get(self.client, object).await?.ok_or_else(|| {
                K8sError::Kube(format!("{} disappeared while starting", describe(object)))
            })?;
            match readiness(&current, datacenter).unwrap_or(Ok(())) {
                Ok(()) => {
                    (self.progress)(&format!(
                        "{}: datacenter {datacenter} ready",
                        describe(object)
                    ));
                    return Ok(());
                }
                Err(why) => {
                    if why != last || last_said.elapsed() >= HEARTBEAT {
                        (self.progress)(&format!(
                            "{}: waiting for datacenter {datacenter}: {why} ({} s)",
                            describe(object),
                            started.elapsed().as_secs()
                        ));
                        last = why;
                        last_said = Instant::now();
                    }
                }
            }
            if Instant::now() >= deadline {
                return Err(K8sError::Kube(format!(
                    "{}: datacenter {datacenter} not ready after {} s ({last})",
                    describe(object),
                    self.options.ready_timeout.as_secs()
                )));
            }
            tokio::time::sleep(self.options.poll).await;
        }
    }

    async fn job_pods(&self, job: &str) -> Result<Vec<Value>, K8sError> {
        let pods =
            crate::api::dynamic_api(self.client, "v1", "Pod", Some(&self.plan.k8s.namespace));
        let listed = pods
            .list(&ListParams::default().labels(&format!("job-name={job}")))
            .await
            .map_err(|e| kube_error(&format!("listing the pods of Job {job}"), e))?;
        Ok(listed
            .items
            .into_iter()
            .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
            .collect())
    }

    /// Creates the Job with its start time and rate filled in, unless it exists from an earlier run
    /// (kept when complete, waited for when running, refused when failed); `true` when created.
    async fn start_job(
        &mut self,
        manifest: &Value,
        name: &str,
        clients: u64,
        rate: Option<f64>,
    ) -> Result<bool, K8sError> {
        if let Some(job) = get(self.client, manifest).await? {
            match job_state(&job) {
                JobState::Failed(why) => {
                    return Err(K8sError::Kube(format!(
                        "Job {name} exists from an earlier run and failed ({why}): delete it \
                         (`cqlbench k8s delete PLAN` or kubectl) to run the cell again"
                    )))
                }
                JobState::Complete => {
                    (self.progress)(&format!("Job {name}: complete from an earlier run, kept"))
                }
                JobState::Running { .. } => {
                    (self.progress)(&format!("Job {name}: already running, waiting for it"))
                }
            }
            return Ok(false);
        }
        let mut job = manifest.clone();
        let start = (cqlbench_units::time::unix_now() + self.options.start_delay.as_secs_f64())
            .ceil() as u64;
        let annotations = &mut job["spec"]["template"]["metadata"]["annotations"];
        if annotations.get(START_AT_ANNOTATION).is_some() {
            annotations[START_AT_ANNOTATION] = json!(rfc3339(start));
        }
        if let (Some(rate), Some(_)) = (rate, annotations.get(RATE_ANNOTATION)) {
            annotations[RATE_ANNOTATION] = json!(crate::render::number_arg(rate));
        }
        let api = api_for(self.client, &job);
        let object: DynamicObject = serde_json::from_value(job.clone())
            .map_err(|e| K8sError::Invalid(format!("Job {name}: {e}")))?;
        api.create(&PostParams::default(), &object)
            .await
            .map_err(|e| kube_error(&format!("creating Job {name}"), e))?;
        let rate_text = rate.map_or("unthrottled".to_string(), |r| format!("{r} ops/s"));
        (self.progress)(&format!(
            "Job {name}: created, {clients} client pod(s), {rate_text}, load starts at {}",
            rfc3339(start)
        ));
        Ok(true)
    }

    /// Waits until the Job is complete; a failed Job, or one not done within `planned`, is an error.
    async fn wait_for_job(
        &mut self,
        manifest: &Value,
        name: &str,
        clients: u64,
        planned: Duration,
    ) -> Result<(), K8sError> {
        let waited = Instant::now();
        let deadline = waited + planned;
        let mut last = None;
        let mut last_said = Instant::now();
        loop {
            let job = get(self.client, manifest)
                .await?
                .ok_or_else(|| K8sError::Kube(format!("Job {name} disappeared while it ran")))?;
            let state = job_state(&job);
            match &state {
                JobState::Complete => return Ok(()),
                JobState::Failed(why) => {
                    let pods = self.job_pods(name).await?;
                    let detail = match briefs_of(name, &pods, clients) {
                        Err(problem) => format!("; {problem}"),
                        Ok(_) => String::new(),
                    };
                    return Err(K8sError::Kube(format!("Job {name} failed: {why}{detail}")));
                }
                JobState::Running {
                    active,
                    succeeded,
                    failed,
                } => {
                    if last.as_ref() != Some(&state) || last_said.elapsed() >= HEARTBEAT {
                        (self.progress)(&format!(
                            "Job {name}: {active} running, {succeeded} of {clients} done, {failed} failed \
                             ({} s since it was seen first, up to {} s allowed)",
                            waited.elapsed().as_secs(),
                            planned.as_secs()
                        ));
                        last = Some(state.clone());
                        last_said = Instant::now();
                    }
                }
            }
            if Instant::now() >= deadline {
                return Err(K8sError::Kube(format!(
                    "Job {name} not finished after {} s; it is left running (`cqlbench k8s delete` removes it)",
                    planned.as_secs()
                )));
            }
            tokio::time::sleep(self.options.poll).await;
        }
    }

    /// Creates the Job (unless it exists), waits for it, and reads its clients' briefs.
    async fn run_job(
        &mut self,
        manifest: &Value,
        cell: &Cell,
        rate: Option<f64>,
    ) -> Result<JobOutcome, K8sError> {
        let name = manifest["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let clients = manifest["spec"]["completions"].as_u64().unwrap_or(1);
        let created = self.start_job(manifest, &name, clients, rate).await?;
        let planned = match cell.duration {
            Some(duration) => {
                self.options.start_delay + cell.warmup + duration + self.options.job_slack
            }
            None => self.options.populate_timeout,
        };
        self.wait_for_job(manifest, &name, clients, planned).await?;
        let pods = self.job_pods(&name).await?;
        let briefs = briefs_of(&name, &pods, clients)?;
        let achieved_rate: f64 = briefs.iter().map(|b| b.achieved_rate).sum();
        (self.progress)(&format!(
            "Job {name}: complete, {} successful ops/s over {} client(s)",
            crate::render::number_arg((achieved_rate * 10.0_f64).round() / 10.0),
            briefs.len()
        ));
        Ok(JobOutcome {
            job: name,
            rate,
            briefs,
            achieved_rate,
            created,
        })
    }
}

/// The Job manifests of one configuration, in the order of [`cells`].
fn config_jobs<'m>(manifests: &'m [Manifest], cluster: &str) -> Vec<&'m Value> {
    manifests
        .iter()
        .map(|m| &m.object)
        .filter(|o| o["kind"] == "Job" && o["metadata"]["labels"]["cqlbench.io/cluster"] == cluster)
        .collect()
}

/// The objects that make up one configuration's datacenter, in the order they are applied.
fn datacenter_objects<'m>(manifests: &'m [Manifest], cluster: &str) -> Vec<&'m Value> {
    manifests
        .iter()
        .map(|m| &m.object)
        .filter(|o| {
            crate::render::DATACENTER_KINDS
                .iter()
                .any(|k| o["kind"] == *k)
                && o["metadata"]["labels"]["cqlbench.io/cluster"] == cluster
        })
        .collect()
}

impl Runner<'_> {
    /// The rate of a cell's Job: fixed, unthrottled, or a fraction of what the `max` Job achieved.
    fn cell_rate(
        cell: &Cell,
        cluster: &str,
        max_rate: Option<f64>,
    ) -> Result<Option<f64>, K8sError> {
        Ok(match cell.rate {
            CellRate::Unthrottled => None,
            CellRate::Fixed(rate) => Some(rate),
            CellRate::OfMax(fraction) => {
                let max = max_rate.filter(|m| *m > 0.0).ok_or_else(|| {
                    K8sError::Kube(format!(
                        "{cluster}: the max Job found no throughput to take {fraction} of"
                    ))
                })?;
                Some(rate_of_max(fraction, max))
            }
        })
    }

    /// One configuration's load Jobs in order, each one's briefs kept in `raw/<cluster>/<cell>/`.
    async fn run_jobs(
        &mut self,
        cluster: &str,
        jobs: Vec<&Value>,
        cells: &[Cell],
    ) -> Result<Vec<JobOutcome>, K8sError> {
        let mut done_jobs = Vec::new();
        let mut max_rate: Option<f64> = None;
        for (cell, manifest) in cells.iter().zip(jobs) {
            let rate = Runner::cell_rate(cell, cluster, max_rate)?;
            let done = self.run_job(manifest, cell, rate).await?;
            if cell.name.starts_with("max") && cell.repeat.is_none_or(|r| r == 1) {
                max_rate = Some(done.achieved_rate);
            }
            JobBriefs {
                version: FORMAT_VERSION,
                job: done.job.clone(),
                rate: done.rate,
                achieved_rate: done.achieved_rate,
                briefs: done.briefs.clone(),
            }
            .write(&self.options.out.join("raw").join(cluster).join(&cell.name))?;
            done_jobs.push(done);
        }
        Ok(done_jobs)
    }

    /// One configuration: its cluster applied and ready, its collector checked, its Jobs run, its
    /// results collected, the cluster deleted.
    async fn run_config(
        &mut self,
        index: usize,
        manifests: &[Manifest],
        cells: &[Cell],
    ) -> Result<Vec<JobOutcome>, K8sError> {
        let (client, plan, options) = (self.client, self.plan, self.options);
        let config = &plan.plan.configs[index];
        let cluster_name = &plan.cluster_names[index];
        let datacenter = datacenter_objects(manifests, cluster_name);
        if datacenter.is_empty() {
            return Err(K8sError::Invalid(format!(
                "no datacenter rendered for {cluster_name}"
            )));
        }
        if let Some(jobs) = self.collected_earlier(cluster_name, cells) {
            (self.progress)(&format!(
                "configuration {} of {}: {}: done and collected by an earlier run, skipped",
                index + 1,
                plan.plan.configs.len(),
                config.name
            ));
            // That run may have ended before it deleted the datacenter.
            self.delete_datacenter(&datacenter, cluster_name).await?;
            return Ok(jobs);
        }
        (self.progress)(&format!(
            "configuration {} of {}: {} ({})",
            index + 1,
            plan.plan.configs.len(),
            config.name,
            datacenter
                .iter()
                .map(|o| describe(o))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        // One after another: a rack's nodes join once the racks before it serve.
        for object in &datacenter {
            apply(client, object).await?;
            self.wait_ready(object).await?;
        }
        let mut collectors = Vec::new();
        if options.collect == Collect::Exec {
            let (gc, heap) = (config.spec.gc, config.spec.heap_bytes);
            collectors = crate::collect::check_collectors(
                client,
                plan,
                cluster_name,
                gc,
                heap,
                self.progress,
            )
            .await?;
        }
        let jobs = self
            .run_jobs(cluster_name, config_jobs(manifests, cluster_name), cells)
            .await?;
        if options.collect == Collect::Exec {
            crate::collect::collect_config(
                client,
                plan,
                index,
                &collectors,
                &options.out,
                options.ready_timeout,
                self.progress,
            )
            .await?;
        }
        self.delete_datacenter(&datacenter, cluster_name).await?;
        Ok(jobs)
    }

    /// A configuration's Jobs as an earlier run into the same directory left them, when it carried the
    /// configuration to the end (results and GC logs collected, every Job's briefs written).
    fn collected_earlier(&self, cluster: &str, cells: &[Cell]) -> Option<Vec<JobOutcome>> {
        let raw = self.options.out.join("raw").join(cluster);
        if self.options.collect != Collect::Exec
            || !crate::collect::is_collected(&self.options.out, cluster)
        {
            return None;
        }
        cells
            .iter()
            .map(|cell| {
                let briefs = JobBriefs::read(&raw.join(&cell.name)).ok()?;
                Some(JobOutcome {
                    job: briefs.job,
                    rate: briefs.rate,
                    briefs: briefs.briefs,
                    achieved_rate: briefs.achieved_rate,
                    created: false,
                })
            })
            .collect()
    }

    /// Deletes a configuration's datacenter, last object first (unless `--keep-clusters`); with
    /// StatefulSets, waits until its pods and volumes are gone too.
    async fn delete_datacenter(
        &mut self,
        datacenter: &[&Value],
        cluster: &str,
    ) -> Result<(), K8sError> {
        let (client, plan, options) = (self.client, self.plan, self.options);
        if options.keep_clusters {
            return Ok(());
        }
        for object in datacenter.iter().rev() {
            delete_cluster(client, object, options, self.progress).await?;
        }
        if plan.k8s.backend == Backend::StatefulSet {
            wait_pods_and_volumes_gone(client, plan, cluster, options, self.progress).await?;
        }
        Ok(())
    }
}

/// Runs the plan's campaign on the cluster `client` talks to.
pub async fn run(
    client: &Client,
    plan: &K8sPlan,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<RunOutcome, K8sError> {
    let manifests = render(plan, &RenderOptions::default())?;
    std::fs::create_dir_all(&options.out).map_err(|source| K8sError::Io {
        context: format!("creating {}", options.out.display()),
        source,
    })?;
    // The PodMonitor (with `pod-monitor = true`) needs the Prometheus Operator's CRD, as the plan says.
    let shared_kinds = [
        "Namespace",
        "PersistentVolumeClaim",
        "ConfigMap",
        "PodMonitor",
    ];
    for shared in manifests
        .iter()
        .filter(|m| shared_kinds.iter().any(|kind| m.object["kind"] == *kind))
    {
        apply(client, &shared.object).await?;
        progress(&format!("applied {}", describe(&shared.object)));
    }
    let cells = cells(plan);
    let mut outcome = RunOutcome::default();
    let mut runner = Runner {
        client,
        plan,
        options,
        progress,
    };
    for index in 0..plan.plan.configs.len() {
        let jobs = runner.run_config(index, &manifests, &cells).await?;
        outcome.jobs.extend(jobs);
    }
    if options.collect == Collect::Exec {
        crate::collect::remove_fetch_pod(client, plan).await;
        crate::collect::assemble(plan, &options.out, runner.progress)?;
        outcome.collected = true;
    } else {
        (runner.progress)(&format!(
            "results stay on the volume {RESULTS_CLAIM} (mounted at {RESULTS_MOUNT} in the Jobs' pods) \
             and GC logs on the Cassandra data volumes: --collect none"
        ));
    }
    Ok(outcome)
}

/// After its StatefulSets are gone, a configuration's pods and data volumes go too (the garbage collector
/// and the volumes' retention policy remove them): waited for, so that the next configuration has the
/// nodes and the disks to itself.
async fn wait_pods_and_volumes_gone(
    client: &Client,
    plan: &K8sPlan,
    cluster: &str,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(), K8sError> {
    let selector = crate::statefulset::pod_selector(cluster);
    let namespace = Some(plan.k8s.namespace.as_str());
    let deadline = Instant::now() + options.ready_timeout;
    let mut said = false;
    loop {
        let mut left = Vec::new();
        for kind in ["Pod", "PersistentVolumeClaim"] {
            let listed = crate::api::dynamic_api(client, "v1", kind, namespace)
                .list(&ListParams::default().labels(&selector))
                .await
                .map_err(|e| kube_error(&format!("listing {kind}s ({selector})"), e))?;
            left.extend(
                listed
                    .items
                    .into_iter()
                    .map(|o| format!("{kind} {}", o.metadata.name.unwrap_or_default())),
            );
        }
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(K8sError::Kube(format!(
                "{cluster}: still there {} s after its StatefulSets were deleted: {}",
                options.ready_timeout.as_secs(),
                left.join(", ")
            )));
        }
        if !said {
            progress(&format!("{cluster}: waiting for {} to go", left.join(", ")));
            said = true;
        }
        tokio::time::sleep(options.poll).await;
    }
}

/// Deletes an object of a configuration's datacenter and waits until it is gone (K8ssandra's operator
/// tears the datacenter down first), so that the next configuration has the nodes to itself.
async fn delete_cluster(
    client: &Client,
    cluster: &Value,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(), K8sError> {
    let name = cluster["metadata"]["name"].as_str().unwrap_or_default();
    match api_for(client, cluster)
        .delete(name, &DeleteParams::background())
        .await
    {
        Ok(_) => progress(&format!("deleting {}", describe(cluster))),
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
        Err(e) => return Err(kube_error(&format!("deleting {}", describe(cluster)), e)),
    }
    let deadline = Instant::now() + options.ready_timeout;
    while get(client, cluster).await?.is_some() {
        if Instant::now() >= deadline {
            return Err(K8sError::Kube(format!(
                "{} still there {} s after its deletion",
                describe(cluster),
                options.ready_timeout.as_secs()
            )));
        }
        tokio::time::sleep(options.poll).await;
    }
    progress(&format!("deleted {}", describe(cluster)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datacenter_ready_needs_progress_and_condition() {
        let cluster =
            |status: Value| json!({"status": {"datacenters": {"dc1": {"cassandra": status}}}});
        assert_eq!(
            datacenter_state(&json!({}), "dc1"),
            DatacenterState::Waiting("no status from the operator yet".into())
        );
        let updating = cluster(json!({"cassandraOperatorProgress": "Updating",
            "nodeStatuses": {"a": {}, "b": {}},
            "conditions": [{"type": "Ready", "status": "False"}]}));
        assert_eq!(
            datacenter_state(&updating, "dc1"),
            DatacenterState::Waiting("progress Updating, not Ready, 2 node(s) known".into())
        );
        let ready = cluster(json!({"cassandraOperatorProgress": "Ready",
            "conditions": [{"type": "Valid", "status": "True"}, {"type": "Ready", "status": "True"}]}));
        assert_eq!(datacenter_state(&ready, "dc1"), DatacenterState::Ready);
        assert_ne!(datacenter_state(&ready, "dc2"), DatacenterState::Ready);
        let no_condition = cluster(json!({"cassandraOperatorProgress": "Ready"}));
        assert_ne!(
            datacenter_state(&no_condition, "dc1"),
            DatacenterState::Ready
        );
    }

    #[test]
    fn job_states_follow_the_conditions() {
        assert_eq!(
            job_state(&json!({"status": {"active": 2, "succeeded": 1}})),
            JobState::Running {
                active: 2,
                succeeded: 1,
                failed: 0
            }
        );
        assert_eq!(
            job_state(&json!({"status": {"conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"}]}})),
            JobState::Complete
        );
        assert_eq!(
            job_state(&json!({"status": {"conditions": [
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                 "message": "Job has reached the specified backoff limit"}]}})),
            JobState::Failed(
                "BackoffLimitExceeded: Job has reached the specified backoff limit".into()
            )
        );
        // A condition that is not (yet) true decides nothing.
        assert!(matches!(
            job_state(
                &json!({"status": {"conditions": [{"type": "Complete", "status": "False"}]}})
            ),
            JobState::Running { .. }
        ));
    }

    fn pod(index: &str, created: &str, message: &str) -> Value {
        json!({
            "metadata": {"creationTimestamp": created,
                          "annotations": {"batch.kubernetes.io/job-completion-index": index}},
            "status": {"containerStatuses": [{"name": "cqlbench",
                "state": {"terminated": {"exitCode": 0, "message": message}}}]},
        })
    }

    fn brief(client: u64, rate: f64, status: &str) -> String {
        serde_json::to_string(&Brief {
            version: FORMAT_VERSION,
            status: status.parse().unwrap(),
            failure: (status != "complete").then(|| "client thread 0 failed".to_string()),
            client_id: Some(client),
            clients: 2,
            target_rate: None,
            achieved_rate: rate,
            rate_kept: false,
            successful_ops: 10,
            failed_ops: 0,
            measured_start_unix_s: 1.0,
            duration_s: 10.0,
        })
        .unwrap()
    }

    #[test]
    fn briefs_take_each_index_newest_pod_and_name_what_is_missing() {
        let pods = [
            pod("1", "2026-11-22T10:00:05Z", &brief(1, 900.0, "complete")),
            pod("0", "2026-11-22T10:00:00Z", &brief(0, 1.0, "failed")),
            pod("0", "2026-11-22T10:00:09Z", &brief(0, 1000.0, "complete")),
        ];
        let briefs = briefs_of("j", &pods, 2).unwrap();
        assert_eq!(
            briefs.iter().map(|b| b.achieved_rate).collect::<Vec<_>>(),
            [1000.0, 900.0]
        );
        let error = briefs_of("j", &pods[..2], 2).unwrap_err().to_string();
        assert_eq!(error, "Job j: client 0 failed: client thread 0 failed");
        let error = briefs_of("j", &[pod("0", "t", "")], 2)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "Job j: client 0: no brief in its termination message (exit code 0); client 1: no finished pod"
        );
        let garbage = briefs_of("j", &[pod("0", "t", "Error: x")], 1)
            .unwrap_err()
            .to_string();
        assert!(
            garbage.starts_with("Job j: client 0: its termination message is not a cqlbench brief"),
            "{garbage}"
        );
    }

    #[test]
    fn latency_rate_is_the_fraction_of_the_summed_max() {
        assert_eq!(rate_of_max(0.35, 1000.0 + 1100.0), 735.0);
        assert_eq!(rate_of_max(0.35, 2.0), 1.0);
        assert_eq!(rfc3339(1_795_306_102), "2026-11-22T00:08:22Z");
    }
}

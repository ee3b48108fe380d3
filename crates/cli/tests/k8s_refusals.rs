//! Bad input to `cqlbench k8s run` and `k8s report`: one line, exit code 1, before any Kubernetes
//! request is sent (no API server is needed, and none is reached).

mod run_support;

use std::path::{Path, PathBuf};

use run_support::{cqlbench_command, one_line_error};

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/k8s-gc.toml")
        .display()
        .to_string()
}

/// A kubeconfig pointing at a port nothing listens on, written into `dir`.
fn unreachable_kubeconfig(dir: &Path) -> PathBuf {
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n\
         users:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    kubeconfig
}

fn refused(args: &[&str], expected: &str) -> String {
    // A kubeconfig pointing at a port nothing listens on: a request sent would fail differently.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let mut command = cqlbench_command(args);
    command.env("KUBECONFIG", &kubeconfig);
    let line = one_line_error(&mut command, expected);
    assert!(!line.contains("127.0.0.1:1"), "a request was sent: {line}");
    line
}

#[test]
fn bad_options_are_refused_before_any_request() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let example = example();
    refused(
        &["k8s", "run", &example, "-o", out, "--collect", "kubectl"],
        "--collect \"kubectl\": expected exec or none",
    );
    refused(
        &["k8s", "run", &example, "-o", out, "--start-delay", "soon"],
        "--start-delay",
    );
    refused(
        &["k8s", "run", &example, "-o", out, "--poll", "0s"],
        "--poll must be longer than 0",
    );
    refused(
        &["k8s", "run", "/nonexistent/plan.toml", "-o", out],
        "/nonexistent/plan.toml",
    );
}

#[test]
fn a_plan_without_a_k8s_table_or_with_a_bad_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example()).unwrap();
    let local: PathBuf = dir.path().join("local.toml");
    std::fs::write(&local, &text[..text.find("[k8s]").unwrap()]).unwrap();
    let out = dir.path().join("out").display().to_string();
    refused(
        &["k8s", "run", local.to_str().unwrap(), "-o", &out],
        "[k8s]",
    );
    let heap_too_big = dir.path().join("big.toml");
    std::fs::write(
        &heap_too_big,
        text.replace("memory = \"32Gi\"", "memory = \"16Gi\""),
    )
    .unwrap();
    refused(
        &["k8s", "run", heap_too_big.to_str().unwrap(), "-o", &out],
        "memory",
    );
}

#[test]
fn report_needs_the_collected_results() {
    let dir = tempfile::tempdir().unwrap();
    let line = refused(
        &["k8s", "report", &example(), dir.path().to_str().unwrap()],
        "raw does not exist",
    );
    assert!(line.contains("k8s report --help"), "{line}");
    std::fs::create_dir_all(dir.path().join("raw/k8s-gc-1/max")).unwrap();
    refused(
        &["k8s", "report", &example(), dir.path().to_str().unwrap()],
        "no results",
    );
}

/// A cluster that does not answer: `k8s run` and `k8s delete` say which API server, and why, in one
/// line, before anything is written (`-o` is not created) or applied.
#[test]
fn a_cluster_that_does_not_answer_is_named_in_one_line_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let kubeconfig = kubeconfig.display().to_string();
    let out = dir.path().join("out");
    let example = example();
    for args in [
        vec![
            "k8s",
            "run",
            &example,
            "-o",
            out.to_str().unwrap(),
            "--kubeconfig",
            &kubeconfig,
        ],
        vec!["k8s", "delete", &example, "--kubeconfig", &kubeconfig],
    ] {
        let line = one_line_error(
            &mut cqlbench_command(&args),
            "the Kubernetes API server at https://127.0.0.1:1/ does not answer: ",
        );
        assert!(line.contains("Connection refused"), "{line}");
    }
    assert!(
        !out.exists(),
        "k8s run wrote {} before reaching the cluster",
        out.display()
    );
}

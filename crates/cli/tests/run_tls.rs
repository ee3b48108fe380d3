//! `--tls CA_FILE` and credentials against a real node with client encryption and PasswordAuthenticator:
//! the load connections are TLS and logged in as the user from `CQLBENCH_USERNAME` (the node's own
//! `system_views.clients` says so while the run goes); a CA that did not sign the node's certificate and
//! missing credentials are one-line errors.
//!
//! The node accepts plain connections too (`optional: true`), because `cqlbench cluster up` checks
//! readiness over plain CQL; that is why the proof comes from the node's view of the connections.

mod run_support;

use std::path::Path;
use std::process::Command;

use cqlbench_cluster::{ClusterSpec, Home};
use cqlbench_testkit::{Driver, NONE};
use run_support::{
    assert_rate_facts, cqlbench_command, long_server_timeouts, one_line_error, read_summary,
    spawn_cqlbench, Progress,
};

const ADDRESS: &str = "127.0.6.1";
const NAME: &str = "load-tls";

/// A self-signed certificate for the node's address in a PKCS12 keystore, and the certificate as PEM.
fn certificate(dir: &Path, name: &str, address: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let keystore = dir.join(format!("{name}.p12"));
    let pem = dir.join(format!("{name}.pem"));
    let keytool = |args: &[&str]| {
        let out = Command::new("keytool")
            .args(args)
            .output()
            .expect("keytool (from the JDK)");
        assert!(
            out.status.success(),
            "keytool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    keytool(&[
        "-genkeypair",
        "-alias",
        "node",
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-validity",
        "30",
        "-dname",
        &format!("CN={address}"),
        "-ext",
        &format!("SAN=ip:{address}"),
        "-storetype",
        "PKCS12",
        "-keystore",
        keystore.to_str().unwrap(),
        "-storepass",
        "cassandra",
        "-keypass",
        "cassandra",
    ]);
    keytool(&[
        "-exportcert",
        "-rfc",
        "-alias",
        "node",
        "-storetype",
        "PKCS12",
        "-keystore",
        keystore.to_str().unwrap(),
        "-storepass",
        "cassandra",
        "-file",
        pem.to_str().unwrap(),
    ]);
    (keystore, pem)
}

/// Stops and forgets the node (its keystore lives in a temporary directory) even if the test panics.
struct TlsNode {
    home: Home,
}

impl TlsNode {
    fn start(keystore: &Path) -> TlsNode {
        let home = Home::from_env();
        // cqlbench (the cluster commands included) logs in with these, as a user would set them.
        std::env::set_var("CQLBENCH_USERNAME", "cassandra");
        std::env::set_var("CQLBENCH_PASSWORD", "cassandra");
        let _ = cqlbench_cluster::destroy(&home, NAME, &mut |_: &str| {});
        let p = "-Dcassandra.settings.client_encryption_options";
        let spec = ClusterSpec {
            name: NAME.into(),
            base_ip: ADDRESS.parse().unwrap(),
            jvm_opts: vec![
                "-Dcassandra.config.allow_system_properties=true".into(),
                "-Dcassandra.settings.authenticator.class_name=org.apache.cassandra.auth.PasswordAuthenticator"
                    .into(),
                format!("{p}.enabled=true"),
                format!("{p}.optional=true"),
                format!("{p}.keystore={}", keystore.display()),
                format!("{p}.keystore_password=cassandra"),
                format!("{p}.store_type=PKCS12"),
            ]
            .into_iter()
            .chain(long_server_timeouts())
            .collect(),
            ..ClusterSpec::default()
        };
        cqlbench_cluster::up(&home, &spec, &mut |line: &str| eprintln!("{line}"))
            .unwrap_or_else(|e| panic!("cannot start the TLS node: {e}"));
        TlsNode { home }
    }
}

impl Drop for TlsNode {
    fn drop(&mut self) {
        let _ = cqlbench_cluster::down(&self.home, NAME, &mut |_: &str| {});
        let _ = cqlbench_cluster::destroy(&self.home, NAME, &mut |_: &str| {});
    }
}

/// (driver name, TLS?, user) of every client connection the node has.
type Client = (Option<String>, Option<bool>, Option<String>);

fn node_clients() -> Vec<Client> {
    Driver::connect_as(&format!("{ADDRESS}:9042"), "cassandra", "cassandra")
        .unwrap()
        .query(
            "SELECT driver_name, ssl_enabled, username FROM system_views.clients",
            NONE,
        )
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<Client>()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn load_connections_use_tls_and_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let (keystore, ca) = certificate(dir.path(), "node", ADDRESS);
    let (_, other_ca) = certificate(dir.path(), "other", ADDRESS);
    let _node = TlsNode::start(&keystore);

    let out = dir.path().join("run");
    let mut child = spawn_cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        ADDRESS,
        "--keyspace",
        "load_tls",
        "--tls",
        ca.to_str().unwrap(),
        "-d",
        "8s",
        "--rate",
        "200",
        "-t",
        "2",
        "--connections-per-host",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    // Mid-run, the node lists the load connections (STARTUP names the driver "cqlbench"): once
    // the run has reported its second second, its connections are open, and 6 s remain.
    let mut progress = Progress::of(&mut child);
    progress.wait_for_second(2);
    let clients = node_clients();
    let status = child.wait().unwrap();
    let stderr = progress.rest();
    assert!(status.success(), "{stderr}");
    let load: Vec<_> = clients
        .iter()
        .filter(|(driver, _, _)| driver.as_deref() == Some("cqlbench"))
        .collect();
    assert_eq!(
        load.len(),
        2,
        "one connection per thread expected: {clients:?}\n{stderr}"
    );
    assert!(
        load.iter().all(|(_, tls, _)| *tls == Some(true)),
        "plain load connections: {clients:?}"
    );
    assert!(
        load.iter()
            .all(|(_, _, user)| user.as_deref() == Some("cassandra")),
        "load connections not logged in: {clients:?}"
    );
    // Every operation of the 8 s schedule at 200 ops/s went through TLS and succeeded.
    let summary = read_summary(&out);
    assert_rate_facts(&summary, &out, 1600.0, 8.0);

    // A CA that did not sign the node's certificate: refused, in one line, before any load.
    let refused = dir.path().join("refused");
    one_line_error(
        &mut cqlbench_command(&[
            "run",
            "KeyValue",
            "--host",
            ADDRESS,
            "--keyspace",
            "load_tls",
            "-d",
            "2s",
            "--tls",
            other_ca.to_str().unwrap(),
            "-o",
            refused.to_str().unwrap(),
        ]),
        "certificate verify failed",
    );
    // No credentials for a node that requires them: the error says what to set.
    let anonymous = dir.path().join("anonymous");
    one_line_error(
        cqlbench_command(&[
            "run",
            "KeyValue",
            "--host",
            ADDRESS,
            "--keyspace",
            "load_tls",
            "-d",
            "2s",
            "--tls",
            ca.to_str().unwrap(),
            "-o",
            anonymous.to_str().unwrap(),
        ])
        .env_remove("CQLBENCH_USERNAME")
        .env_remove("CQLBENCH_PASSWORD"),
        "CQLBENCH_USERNAME",
    );
}

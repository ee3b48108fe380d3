//! Writes and reads back one row over CQL: `cargo run --release -p cqlbench-cluster --example cql_roundtrip -- 127.0.1.1:9042`.
//! Used to verify by hand that a Cassandra/JDK/GC combination really serves requests.

use scylla::client::session_builder::SessionBuilder;

fn main() {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9042".to_string());
    let outcome = cqlbench_cluster::cql::block_on(async move {
        let session = SessionBuilder::new().known_node(&address).build().await?;
        session
            .query_unpaged(
                "CREATE KEYSPACE IF NOT EXISTS roundtrip WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                &[],
            )
            .await?;
        session
            .query_unpaged(
                "CREATE TABLE IF NOT EXISTS roundtrip.t (k int PRIMARY KEY, v text)",
                &[],
            )
            .await?;
        session
            .query_unpaged("INSERT INTO roundtrip.t (k, v) VALUES (?, ?)", (1, "hello"))
            .await?;
        let rows = session
            .query_unpaged("SELECT v FROM roundtrip.t WHERE k = 1", &[])
            .await?
            .into_rows_result()?;
        let (value,) = rows.single_row::<(String,)>()?;
        let version = session
            .query_unpaged("SELECT release_version FROM system.local", &[])
            .await?
            .into_rows_result()?
            .single_row::<(String,)>()?
            .0;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((value, version))
    });
    match outcome {
        Ok((value, version)) => println!("wrote and read back {value:?} on Cassandra {version}"),
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    }
}

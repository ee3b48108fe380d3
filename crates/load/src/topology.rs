//! Where each operation goes: the cluster's nodes and, per token range, the replicas of the
//! benchmark's table, read once from the driver's metadata before the load starts. Routing an
//! operation is then a Murmur3 hash of its partition key and a binary search.

use std::net::SocketAddr;

use scylla::client::session::Session;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};

/// Nodes the load goes to, and the replicas of every token range.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// Node addresses (only the `--dc` datacenter's when one is given).
    pub nodes: Vec<SocketAddr>,
    /// Sorted by token: the replicas (indexes into `nodes`) of the range that ends at that token.
    ring: Vec<(i64, Vec<usize>)>,
}

impl Topology {
    /// Reads nodes and replicas of `keyspace.table` from the session's metadata.
    pub async fn from_session(
        session: &Session,
        keyspace: &str,
        table: &str,
        dc: Option<&str>,
    ) -> Topology {
        // The keyspace may have been created moments ago: make sure its replication is known.
        let _ = session.refresh_metadata().await;
        let state = session.get_cluster_state();
        let in_dc = |node: &scylla::cluster::Node| match dc {
            Some(dc) => node.datacenter.as_deref() == Some(dc),
            None => true,
        };
        let nodes_info: Vec<_> = state
            .get_nodes_info()
            .iter()
            .filter(|n| in_dc(n))
            .cloned()
            .collect();
        let nodes: Vec<SocketAddr> = nodes_info
            .iter()
            .map(|n| SocketAddr::new(n.address.ip(), n.address.port()))
            .collect();
        let mut ring = Vec::new();
        for (token, _) in state.replica_locator().ring().iter() {
            let replicas: Vec<usize> = state
                .get_token_endpoints(keyspace, table, *token)
                .iter()
                .filter_map(|(node, _)| nodes_info.iter().position(|n| n.host_id == node.host_id))
                .collect();
            ring.push((token.value(), replicas));
        }
        ring.sort_by_key(|(t, _)| *t);
        Topology { nodes, ring }
    }

    /// The replicas for a token, primary first; empty when the ring is unknown.
    pub fn replicas(&self, token: i64) -> &[usize] {
        if self.ring.is_empty() {
            return &[];
        }
        let i = self.ring.partition_point(|(t, _)| *t < token);
        let i = if i == self.ring.len() { 0 } else { i };
        &self.ring[i].1
    }
}

/// Cassandra's Murmur3Partitioner token of a single-column partition key's serialized value.
pub fn token_of(key: &[u8]) -> i64 {
    Murmur3Partitioner.hash_one(key).value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_belong_to_the_first_ring_token_at_or_after_the_key_token() {
        let t = Topology {
            nodes: vec![],
            ring: vec![(-100, vec![0]), (0, vec![1]), (100, vec![2])],
        };
        assert_eq!(t.replicas(-500), &[0]);
        assert_eq!(t.replicas(-100), &[0]);
        assert_eq!(t.replicas(-99), &[1]);
        assert_eq!(t.replicas(100), &[2]);
        assert_eq!(t.replicas(101), &[0]); // wraps around
        assert!(Topology::default().replicas(5).is_empty());
    }

    #[test]
    fn murmur3_tokens_match_cassandra() {
        // `SELECT key, token(key) FROM bench.keyvalue` on a Cassandra 5.0.9 node, for keys cqlbench wrote.
        let from_cassandra = [
            ("142401964", -9223371912639379390),
            ("144092886", -9223368394636348770),
            ("465058326", -9223308355938360993),
            ("951043405", -9223281249628917138),
            ("97553375", -9223278036857063911),
            ("505753221", -9223242447285991306),
        ];
        for (key, token) in from_cassandra {
            assert_eq!(token_of(key.as_bytes()), token, "key {key}");
        }
    }
}

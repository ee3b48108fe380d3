//! Balanced, precomputed Murmur3 tokens, so that nodes can join in parallel without the token
//! allocator colliding and every node owns the same share of the ring.

/// Murmur3Partitioner's ring: tokens are i64, the whole ring spans 2^64.
const RING_MIN: i128 = i64::MIN as i128;
const RING_SIZE: i128 = 1i128 << 64;

/// Tokens of node `index` (0-based) among `nodes`, `per_node` vnodes each: the ring cut into
/// `nodes × per_node` equal slices, handed out round-robin so each node's vnodes interleave.
pub fn node_tokens(index: usize, nodes: usize, per_node: usize) -> Vec<i64> {
    assert!(index < nodes && per_node > 0, "token layout out of range");
    let total = (nodes * per_node) as i128;
    (0..per_node)
        .map(|slot| {
            let position = (slot * nodes + index) as i128;
            (RING_MIN + position * RING_SIZE / total) as i64
        })
        .collect()
}

/// Tokens of node `index` (0-based inside its datacenter) of datacenter `dc` (0-based) among `dcs`,
/// `per_dc` nodes each: every datacenter gets its own balanced ring (NetworkTopologyStrategy places
/// each datacenter's replicas by walking that datacenter's tokens only), shifted by `dc / dcs` of
/// a slice so that the datacenters' tokens interleave and never collide. Datacenter 0's ring is
/// exactly [`node_tokens`]'s.
pub fn dc_node_tokens(
    dc: usize,
    dcs: usize,
    index: usize,
    per_dc: usize,
    per_node: usize,
) -> Vec<i64> {
    assert!(dc < dcs, "datacenter out of range");
    let slice = RING_SIZE / (per_dc * per_node) as i128;
    let offset = slice * dc as i128 / dcs as i128;
    node_tokens(index, per_dc, per_node)
        .into_iter()
        .map(|t| (t as i128 + offset) as i64)
        .collect()
}

/// Share (0.0–1.0) of its own group's ring each owner holds, where `group_of[owner]` names the
/// owner's group (its datacenter): the ownership `nodetool status` shows per datacenter.
pub fn ownership_by_group(ring: &[(i64, usize)], group_of: &[usize]) -> Vec<f64> {
    let owners = group_of.len();
    let mut shares = vec![0.0; owners];
    let mut groups: Vec<usize> = group_of.to_vec();
    groups.sort_unstable();
    groups.dedup();
    for group in groups {
        let sub: Vec<(i64, usize)> = ring
            .iter()
            .filter(|(_, owner)| group_of.get(*owner) == Some(&group))
            .copied()
            .collect();
        for (owner, share) in ownership(&sub, owners).into_iter().enumerate() {
            if group_of[owner] == group {
                shares[owner] = share;
            }
        }
    }
    shares
}

/// Share of the ring (0.0–1.0) each owner holds, for the `(token, owner)` pairs of a live ring.
/// A token owns the range from the previous token (exclusive) up to itself.
pub fn ownership(ring: &[(i64, usize)], owners: usize) -> Vec<f64> {
    let mut shares = vec![0.0; owners];
    if ring.is_empty() {
        return shares;
    }
    let mut sorted = ring.to_vec();
    sorted.sort_by_key(|(token, _)| *token);
    for (i, (token, owner)) in sorted.iter().enumerate() {
        let previous = if i == 0 {
            sorted[sorted.len() - 1].0 as i128 - RING_SIZE
        } else {
            sorted[i - 1].0 as i128
        };
        let width = if sorted.len() == 1 {
            RING_SIZE
        } else {
            *token as i128 - previous
        };
        if *owner < owners {
            shares[*owner] += width as f64 / RING_SIZE as f64;
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(nodes: usize, per_node: usize) -> Vec<(i64, usize)> {
        (0..nodes)
            .flat_map(|n| {
                node_tokens(n, nodes, per_node)
                    .into_iter()
                    .map(move |t| (t, n))
            })
            .collect()
    }

    #[test]
    fn single_node_single_token_starts_the_ring() {
        assert_eq!(node_tokens(0, 1, 1), vec![i64::MIN]);
    }

    #[test]
    fn three_nodes_one_token_are_thirds() {
        let tokens: Vec<i64> = (0..3).map(|n| node_tokens(n, 3, 1)[0]).collect();
        assert_eq!(
            tokens,
            vec![i64::MIN, -3074457345618258603, 3074457345618258602]
        );
    }

    #[test]
    fn tokens_are_unique_and_ownership_balanced() {
        for (nodes, per_node) in [(1, 16), (2, 16), (3, 16), (5, 8), (3, 1)] {
            let ring = ring(nodes, per_node);
            let mut tokens: Vec<i64> = ring.iter().map(|(t, _)| *t).collect();
            tokens.sort();
            tokens.dedup();
            assert_eq!(tokens.len(), nodes * per_node);
            let shares = ownership(&ring, nodes);
            let total: f64 = shares.iter().sum();
            assert!((total - 1.0).abs() < 1e-9, "{shares:?}");
            for share in shares {
                assert!(
                    (share - 1.0 / nodes as f64).abs() < 1e-6,
                    "{nodes}×{per_node}: {share}"
                );
            }
        }
    }

    #[test]
    fn each_datacenter_has_its_own_balanced_ring_and_no_token_collides() {
        for (dcs, per_dc, per_node) in [(2, 2, 16), (2, 1, 16), (3, 3, 8), (4, 4, 16), (2, 3, 1)] {
            let mut ring = Vec::new();
            let mut group_of = Vec::new();
            for dc in 0..dcs {
                for n in 0..per_dc {
                    let owner = group_of.len();
                    group_of.push(dc);
                    let tokens = dc_node_tokens(dc, dcs, n, per_dc, per_node);
                    assert_eq!(tokens.len(), per_node);
                    ring.extend(tokens.into_iter().map(|t| (t, owner)));
                }
            }
            let mut tokens: Vec<i64> = ring.iter().map(|(t, _)| *t).collect();
            tokens.sort();
            tokens.dedup();
            assert_eq!(tokens.len(), dcs * per_dc * per_node, "a token collides");
            for (owner, share) in ownership_by_group(&ring, &group_of).iter().enumerate() {
                assert!(
                    (share - 1.0 / per_dc as f64).abs() < 1e-6,
                    "{dcs}×{per_dc}×{per_node}: node {owner} owns {share} of its datacenter"
                );
            }
            // Over the whole ring, every node holds the same share too (the rings interleave).
            for share in ownership(&ring, group_of.len()) {
                assert!((share - 1.0 / (dcs * per_dc) as f64).abs() < 1e-6);
            }
        }
        // The first datacenter's ring is the single-datacenter ring, token for token.
        assert_eq!(dc_node_tokens(0, 2, 1, 3, 16), node_tokens(1, 3, 16));
        assert_ne!(dc_node_tokens(1, 2, 1, 3, 16), node_tokens(1, 3, 16));
    }

    #[test]
    fn ownership_of_a_skewed_ring() {
        // Owner 0 holds a quarter of the ring, owner 1 the rest.
        let ring = [(0i64, 0usize), (i64::MIN / 2, 1usize)];
        let shares = ownership(&ring, 2);
        assert!((shares[0] - 0.25).abs() < 1e-9, "{shares:?}");
        assert!((shares[1] - 0.75).abs() < 1e-9, "{shares:?}");
    }
}

//! MurmurHash3 x64 128-bit (seed 0), the hash nosqlbench's binding functions are built on.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// The two 64-bit halves (h1, h2) of the hash of `data`.
pub fn hash128(data: &[u8]) -> (u64, u64) {
    let (mut h1, mut h2) = (0u64, 0u64);
    let blocks = data.len() / 16;
    for i in 0..blocks {
        let at = i * 16;
        let k1 = u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or([0; 8]));
        let k2 = u64::from_le_bytes(data[at + 8..at + 16].try_into().unwrap_or([0; 8]));
        h1 ^= mix_k1(k1);
        h1 = h1.rotate_left(27).wrapping_add(h2);
        h1 = h1.wrapping_mul(5).wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2.rotate_left(31).wrapping_add(h1);
        h2 = h2.wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = &data[blocks * 16..];
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= u64::from(b) << (8 * i);
        } else {
            k2 |= u64::from(b) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= mix_k2(k2);
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(k1);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::hash128;

    #[test]
    fn known_answers_of_the_reference_implementation() {
        // Reference values of MurmurHash3_x64_128 with seed 0 (as Guava's murmur3_128 gives them).
        assert_eq!(hash128(b""), (0, 0));
        let (h1, h2) = hash128(b"hello");
        let mut bytes = h1.to_le_bytes().to_vec();
        bytes.extend_from_slice(&h2.to_le_bytes());
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "029bbd41b3a7d8cb191dae486a901e5b");
    }
}

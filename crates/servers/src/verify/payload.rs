//! Random payloads for the echo and bcrypt checks: 16-32 ASCII letters and
//! digits, different on every call and every run, so a server cannot pass by
//! replaying a canned answer. A xorshift seeded from the clock, the pid and a
//! counter is plenty; this is not cryptography, so no rand dependency.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A fresh payload of 16 to 32 alphanumerics.
pub fn random_payload() -> String {
    let mut rng = XorShift::new(seed());
    let len = 16 + (rng.next() % 17) as usize;
    (0..len)
        .map(|_| ALPHABET[(rng.next() % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// A fresh number in 0..n, for the test fakes' random ids.
#[cfg(test)]
pub(super) fn random_below(n: u64) -> u64 {
    XorShift::new(seed()).next() % n
}

fn seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    nanos ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // xorshift must not start at zero; mix the seed so near-equal seeds
        // (consecutive calls) diverge at once (splitmix64 finaliser).
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        XorShift((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_alphanumeric_sized_and_distinct() {
        let all: Vec<String> = (0..200).map(|_| random_payload()).collect();
        for p in &all {
            assert!((16..=32).contains(&p.len()), "{p}");
            assert!(p.bytes().all(|b| b.is_ascii_alphanumeric()), "{p}");
        }
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }
}

//! The seed of a run's random draws (request kinds, path ranges, Poisson
//! gaps) and the streams derived from it. Each worker thread of each shard
//! draws from its own stream, derived from the seed, the shard and the
//! thread, so the same seed gives every worker the same sequence again, and
//! no two workers or shards share one (their Poisson processes are then
//! independent, and merged they are one Poisson process of the total rate).

use crate::shard::Shard;

/// What a stream is for: kinds and paths (the worker), or arrival gaps (the pacer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Requests = 1,
    Arrivals = 2,
}

/// A fresh seed for a run that was given none; below 2^53 so that it reads
/// back exactly from any JSON reader.
pub fn random_seed() -> u64 {
    fastrand::u64(..1 << 53)
}

/// The generator of `stream` for worker `thread` of `shard`.
pub(crate) fn rng(seed: u64, shard: Shard, thread: usize, stream: Stream) -> fastrand::Rng {
    let mut x = mix64(seed);
    for part in [u64::from(shard.index()), thread as u64, stream as u64] {
        x = mix64(x ^ part);
    }
    fastrand::Rng::with_seed(x)
}

/// SplitMix64's finaliser: every input bit affects every output bit.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_repeat_and_differ() {
        let whole = Shard::WHOLE;
        let draw = |mut r: fastrand::Rng| (0..4).map(|_| r.u64(..)).collect::<Vec<_>>();
        let a = draw(rng(42, whole, 0, Stream::Requests));
        assert_eq!(a, draw(rng(42, whole, 0, Stream::Requests)), "same seed");
        assert_ne!(a, draw(rng(43, whole, 0, Stream::Requests)));
        assert_ne!(a, draw(rng(42, whole, 1, Stream::Requests)));
        assert_ne!(a, draw(rng(42, whole, 0, Stream::Arrivals)));
        let s2 = Shard::new(2, 2).unwrap_or(whole);
        assert_ne!(a, draw(rng(42, s2, 0, Stream::Requests)), "shards differ");
        assert!(random_seed() < 1 << 53);
    }
}

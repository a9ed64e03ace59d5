//! When an open loop's requests arrive: evenly spaced (`uniform`, wrk2's
//! model and the default) or as a Poisson process (`poisson`: exponential
//! gaps, the bursts and lulls of independent users at the same mean rate).
//!
//! The pacer places ticket `k` of a thread at a *position* on the curve's
//! cumulative count and intends it when the count reaches it. Uniform
//! positions are a formula of `k`. Poisson positions add exponential gaps
//! of mean `stride` (the threads, each a Poisson process of its share of the
//! rate, superpose into one of the whole rate; so do shards, which draw
//! from distinct seeds), and because a position is a count, a ramp's
//! varying rate gives a Poisson process of that varying rate. They are drawn
//! in order from a seeded generator by cursors that only move forward, so
//! memory stays constant however many tickets are due.
//!
//! Tickets come in blocks of [`BLOCK`], so that counting them costs as
//! little as the uniform formula however high the rate: a block's last
//! ticket is placed by one draw of its gaps' sum (a gamma variate), and only
//! a cursor that stops inside a block places the tickets before its last,
//! as the ordered uniform points between the block's ends that a Poisson
//! process's arrivals are, given where its `BLOCK`th lands. One gap at a
//! time, 10^9 tickets a second took longer to count than to fall due, and
//! the worker never came back to its deadline or its stop (issue #39).

use std::f64::consts::TAU;

use std::fmt;

/// Tickets per block: at most this many are placed one at a time by a
/// count or a seek, however many it passes.
const BLOCK: u64 = 4096;

/// The arrival process of an open loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    #[default]
    Uniform,
    Poisson,
}

impl Arrival {
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }

    /// Parses `uniform` or `poisson`.
    pub fn parse(s: &str) -> Result<Arrival, ArrivalError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "uniform" => Ok(Arrival::Uniform),
            "poisson" => Ok(Arrival::Poisson),
            _ => Err(ArrivalError(s.to_string())),
        }
    }
}

/// Text that names no arrival process (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an arrival process: use uniform or poisson")]
pub struct ArrivalError(pub String);

impl fmt::Display for Arrival {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A walk along one thread's Poisson positions: ticket `k` is at `pos`.
#[derive(Debug, Clone)]
pub(crate) struct Cursor {
    k: u64,
    pos: f64,
    stride: f64,
    /// Each block's sum of gaps and the seed of its `inner`, in order.
    blocks: fastrand::Rng,
    /// The draws placing the tickets inside the current block.
    inner: fastrand::Rng,
    /// The position of the current block's last ticket.
    end: f64,
    /// The tickets after `k` still to place between `pos` and `end`.
    left: u64,
}

impl Cursor {
    /// The first ticket, from the thread's arrival stream.
    pub fn start(rng: fastrand::Rng, stride: u64) -> Cursor {
        let mut c = Cursor {
            k: 0,
            pos: 0.0,
            stride: stride as f64,
            blocks: rng,
            inner: fastrand::Rng::with_seed(0),
            end: 0.0,
            left: 0,
        };
        c.open_block();
        c.place();
        c
    }

    /// The next block, from the last ticket of this one (or from 0): its
    /// last ticket lies `BLOCK` exponential gaps of mean `stride` further.
    fn open_block(&mut self) {
        self.end = self.pos + gamma(&mut self.blocks, BLOCK as f64) * self.stride;
        self.inner = fastrand::Rng::with_seed(self.blocks.u64(..));
        self.left = BLOCK - 1;
    }

    /// Places ticket `k`: the first of the `left` uniform points between
    /// `pos` and `end` (the least of n is 1 - U^(1/n) of the way), or the
    /// block's last ticket at `end`.
    fn place(&mut self) {
        if self.left == 0 {
            self.pos = self.end;
            return;
        }
        let u = 1.0 - self.inner.f64();
        let share = -(u.ln() / self.left as f64).exp_m1();
        self.pos = (self.pos + (self.end - self.pos) * share).min(self.end);
        self.left -= 1;
    }

    pub fn ticket(&self) -> u64 {
        self.k
    }

    pub fn position(&self) -> f64 {
        self.pos
    }

    /// The position of the current block's last ticket (at or after `pos`).
    pub fn block_end(&self) -> f64 {
        self.end
    }

    /// Moves to the current block's last ticket without placing those before it.
    pub fn finish_block(&mut self) {
        self.k = self.k / BLOCK * BLOCK + (BLOCK - 1);
        self.pos = self.end;
        self.left = 0;
    }

    pub fn advance(&mut self) {
        self.k += 1;
        if self.k % BLOCK == 0 {
            self.open_block();
        }
        self.place();
    }

    /// Moves forward to ticket `k` (no further than it is), block by block.
    pub fn seek(&mut self, k: u64) {
        while self.k < k {
            if k / BLOCK > self.k / BLOCK {
                self.finish_block();
            }
            self.advance();
        }
    }
}

/// A gamma variate of shape `shape` (at least 1) and scale 1: the sum of
/// `shape` exponential gaps of mean 1 (Marsaglia and Tsang's method).
fn gamma(rng: &mut fastrand::Rng, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - rng.f64();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A standard normal variate (Box and Muller's, one of the pair).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = 1.0 - rng.f64();
    (-2.0 * u.ln()).sqrt() * (TAU * rng.f64()).cos()
}

/// One thread's Poisson tickets: `due` counts them as the count passes,
/// `taken` gives the intended position of the tickets the worker takes (in
/// order), both replaying the same draws from `start`.
#[derive(Debug, Clone)]
pub(crate) struct Poisson {
    start: Cursor,
    due: Cursor,
    taken: Cursor,
}

impl Poisson {
    pub fn new(rng: fastrand::Rng, stride: u64) -> Poisson {
        let start = Cursor::start(rng, stride);
        Poisson {
            due: start.clone(),
            taken: start.clone(),
            start,
        }
    }

    /// A fresh walk from ticket 0 (for questions that must not move the others).
    pub fn walk(&self) -> Cursor {
        self.start.clone()
    }

    /// How many tickets lie at or below `count`; the count only grows.
    /// Whole blocks below it are passed by their last ticket.
    pub fn due_by(&mut self, count: f64) -> u64 {
        while self.due.pos <= count {
            if self.due.end <= count {
                self.due.finish_block();
            }
            self.due.advance();
        }
        self.due.k
    }

    /// The position of ticket `k`: the worker asks in order (and the pacer
    /// for the first ticket not yet due), so this is a step or two of a walk.
    pub fn position(&mut self, k: u64) -> f64 {
        if k >= self.due.k {
            // The first ticket not yet due, or (rounding) one just past it:
            // a look ahead that moves neither cursor.
            let mut ahead = self.due.clone();
            ahead.seek(k);
            return ahead.pos;
        }
        if k < self.taken.k {
            self.taken = self.start.clone();
        }
        self.taken.seek(k);
        self.taken.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_and_nothing_else() {
        assert_eq!(Arrival::parse("Poisson"), Ok(Arrival::Poisson));
        assert_eq!(Arrival::parse("uniform"), Ok(Arrival::Uniform));
        assert!(Arrival::parse("bursty").is_err());
    }

    #[test]
    fn positions_agree_however_they_are_asked() {
        let mut p = Poisson::new(fastrand::Rng::with_seed(3), 2);
        let mut walk = p.walk();
        let mut expected = Vec::new();
        for _ in 0..100 {
            expected.push(walk.position());
            walk.advance();
        }
        assert_eq!(p.due_by(expected[49]), 50);
        assert_eq!(p.position(50), expected[50]);
        assert_eq!(p.position(52), expected[52], "a look ahead");
        assert_eq!(p.position(11), expected[11], "the taken walk was not moved");
        assert_eq!(p.position(10), expected[10]);
        assert_eq!(p.position(99), expected[99]);
        assert_eq!(p.position(3), expected[3], "a step back starts over");
        assert!(expected.windows(2).all(|w| w[1] >= w[0]));
    }

    #[test]
    fn blocks_passed_whole_agree_with_blocks_walked() {
        let mut p = Poisson::new(fastrand::Rng::with_seed(8), 3);
        let mut walk = p.walk();
        let mut expected = Vec::new();
        for _ in 0..3 * BLOCK + 10 {
            expected.push(walk.position());
            walk.advance();
        }
        assert!(expected.windows(2).all(|w| w[1] > w[0]), "in order");
        let at = |k: u64| expected[k as usize];
        let mut c = p.walk();
        c.finish_block();
        assert_eq!((c.ticket(), c.position()), (BLOCK - 1, at(BLOCK - 1)));
        c.seek(2 * BLOCK + 7);
        assert_eq!(c.position(), at(2 * BLOCK + 7), "a seek over a block");
        for k in [BLOCK - 2, BLOCK - 1, BLOCK, 2 * BLOCK + 3, 3 * BLOCK + 1] {
            assert_eq!(p.due_by(at(k)), k + 1, "ticket {k}");
        }
        assert_eq!(p.position(3 * BLOCK + 5), at(3 * BLOCK + 5), "a look ahead");
        assert_eq!(p.position(BLOCK + 1), at(BLOCK + 1));
        assert_eq!(p.position(2 * BLOCK), at(2 * BLOCK));
        assert_eq!(p.position(5), at(5), "a step back starts over");
    }

    #[test]
    fn counts_passed_by_blocks_are_poisson_counts() {
        // The tickets at or below 10^7 of mean gap 1 (2,441 blocks, each
        // passed by one draw), over 200 streams: standardised, their
        // mean is 0 (sd 0.071) and their variance 1 (sd 0.1), as a Poisson
        // count's; a sum of block sums of the wrong spread would show.
        let (runs, mean) = (200, 1e7);
        let z: Vec<f64> = (0..runs)
            .map(|seed| {
                let mut p = Poisson::new(fastrand::Rng::with_seed(seed), 1);
                (p.due_by(mean) as f64 - mean) / mean.sqrt()
            })
            .collect();
        let n = runs as f64;
        let m = z.iter().sum::<f64>() / n;
        let var = z.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(m.abs() < 0.35, "mean {m}");
        assert!((0.6..1.4).contains(&var), "variance {var}");
    }
}

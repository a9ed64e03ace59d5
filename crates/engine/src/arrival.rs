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

use std::fmt;

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
    rng: fastrand::Rng,
    stride: f64,
}

impl Cursor {
    /// The first ticket, from the thread's arrival stream.
    pub fn start(rng: fastrand::Rng, stride: u64) -> Cursor {
        let mut c = Cursor {
            k: 0,
            pos: 0.0,
            rng,
            stride: stride as f64,
        };
        c.pos = c.gap();
        c
    }

    /// An exponential gap of mean `stride`: -ln(U) for U uniform in (0, 1].
    fn gap(&mut self) -> f64 {
        -(1.0 - self.rng.f64()).ln() * self.stride
    }

    pub fn ticket(&self) -> u64 {
        self.k
    }

    pub fn position(&self) -> f64 {
        self.pos
    }

    pub fn advance(&mut self) {
        self.k += 1;
        self.pos += self.gap();
    }
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
    pub fn due_by(&mut self, count: f64) -> u64 {
        while self.due.pos <= count {
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
            while ahead.k < k {
                ahead.advance();
            }
            return ahead.pos;
        }
        if k < self.taken.k {
            self.taken = self.start.clone();
        }
        while self.taken.k < k {
            self.taken.advance();
        }
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
}

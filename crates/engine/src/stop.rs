//! The stop condition, kept apart from pacing: a per-thread share of the
//! request budget (`-n`) and the measured phase's deadline (`-z`).

use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub(crate) struct StopRule {
    /// Measured requests this thread may still start; `None` is unbounded.
    budget: Option<u64>,
    deadline: Option<Instant>,
}

impl StopRule {
    pub fn new(budget: Option<u64>, deadline: Option<Instant>) -> StopRule {
        StopRule { budget, deadline }
    }

    /// Thread `i`'s share of `total` over `threads`, so the shares add up exactly.
    pub fn share(total: u64, i: usize, threads: usize) -> u64 {
        let (t, i) = (threads as u64, i as u64);
        total / t + u64::from(i < total % t)
    }

    /// Takes one request from the budget; false when none is left.
    pub fn take(&mut self) -> bool {
        match &mut self.budget {
            Some(0) => false,
            Some(n) => {
                *n -= 1;
                true
            }
            None => true,
        }
    }

    /// Measured requests this thread may still start; `None` is unbounded.
    pub fn remaining(&self) -> Option<u64> {
        self.budget
    }

    pub fn exhausted(&self) -> bool {
        self.budget == Some(0)
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub fn deadline_passed(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_exactly() {
        for total in [1u64, 7, 1000, 10_001] {
            for threads in 1..9 {
                let sum: u64 = (0..threads)
                    .map(|i| StopRule::share(total, i, threads))
                    .sum();
                assert_eq!(sum, total);
            }
        }
    }

    #[test]
    fn budget_runs_out() {
        let mut s = StopRule::new(Some(2), None);
        assert!(s.take() && s.take());
        assert!(!s.take());
        assert!(s.exhausted());
    }
}

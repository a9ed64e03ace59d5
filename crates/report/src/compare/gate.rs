//! The verdict of one compared pair, and what `--fail-if-slower` concludes
//! from all of them: pure (no I/O), so every rule is tested on hand
//! values. A pair without samples to test (one value each side, or a test
//! that could not be made) is "not tested", never a tie. The gate refuses
//! to judge two runs of different studies or a run that is not complete
//! unless forced, fails when any pair it judged is worse, and cannot pass
//! on pairs it could not test unless allowed to.

use crate::stats::{Label, TestKind, Verdict};

/// The call on one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Better in B (higher throughput or goodput, lower latency or cost).
    Faster,
    /// Worse in B.
    Slower,
    /// Tested, and not told apart.
    Tie,
    /// No samples to test: neither a tie nor a difference.
    NotTested,
}

impl Call {
    /// The call of a verdict: "not tested" when no test was made.
    pub fn of(v: &Verdict) -> Call {
        if v.test == TestKind::None || v.p_value.is_none() {
            return Call::NotTested;
        }
        match v.label {
            Label::Faster => Call::Faster,
            Label::Slower => Call::Slower,
            Label::Tie => Call::Tie,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Call::Faster => "faster",
            Call::Slower => "slower",
            Call::Tie => "tie (not significant)",
            Call::NotTested => "not tested",
        }
    }
}

/// What the gate holds a pair to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// The verdict's own rule (significant, beyond the margin on starts).
    Verdict,
    /// Worse by the verdict and by more than this many percent.
    Pct(f64),
}

/// One pair as the gate sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// What the pair is, e.g. `rust-axum on json (c=16)` or `rust-axum µs
    /// per request on cost at 1000 req/s`.
    pub what: String,
    pub call: Call,
    /// How much worse B is, in percent (negative: better); NaN unknown.
    pub worse_pct: f64,
}

/// Why the gate would not judge the runs at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The runs measured different studies.
    DifferentStudies { a: String, b: String },
    /// A run is interrupted, still running or failed.
    Incomplete { run: i64, status: &'static str },
    /// No cell of A is in B.
    NothingInCommon,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::DifferentStudies { a, b } => write!(
                f,
                "the runs measured different studies ({a} and {b}); give --force to gate on the cells they share"
            ),
            Refusal::Incomplete { run, status } => write!(
                f,
                "run {run} is {status}, not complete: its cells may be missing or partial; give --force to gate on it anyway"
            ),
            Refusal::NothingInCommon => write!(
                f,
                "no cell (target, scenario, load and resources) is in both runs, so there is nothing to gate on"
            ),
        }
    }
}

/// The gate's conclusion.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every pair judged, none worse.
    Pass,
    /// These pairs are worse (exit 1).
    Slower(Vec<Judged>),
    /// The gate could not judge (exit 2): the refusals, then the pairs it
    /// could not test.
    Undecided {
        refusals: Vec<Refusal>,
        untested: Vec<Judged>,
    },
}

/// What the gate is given beyond the pairs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Setting {
    /// Refusals `--force` may lift (different studies, incomplete runs).
    pub refusals: Vec<Refusal>,
    /// `--force`.
    pub force: bool,
    /// `--allow-untested`: pairs that could not be tested do not block.
    pub allow_untested: bool,
}

/// Judges `pairs` under `rule`. Refusals come first (no common cell is
/// never lifted); then any worse pair fails; then untested pairs block
/// unless allowed.
pub fn gate(pairs: &[Judged], rule: Rule, setting: &Setting) -> Outcome {
    let mut refusals: Vec<Refusal> = if setting.force {
        Vec::new()
    } else {
        setting.refusals.clone()
    };
    if pairs.is_empty() {
        refusals.push(Refusal::NothingInCommon);
    }
    if !refusals.is_empty() {
        return Outcome::Undecided {
            refusals,
            untested: Vec::new(),
        };
    }
    let worse = |p: &&Judged| {
        p.call == Call::Slower
            && match rule {
                Rule::Verdict => true,
                Rule::Pct(pct) => p.worse_pct > pct,
            }
    };
    let slower: Vec<Judged> = pairs.iter().filter(worse).cloned().collect();
    if !slower.is_empty() {
        return Outcome::Slower(slower);
    }
    let untested: Vec<Judged> = pairs
        .iter()
        .filter(|p| p.call == Call::NotTested)
        .cloned()
        .collect();
    if untested.is_empty() || setting.allow_untested {
        Outcome::Pass
    } else {
        Outcome::Undecided {
            refusals: Vec::new(),
            untested,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(call: Call, worse_pct: f64) -> Judged {
        Judged {
            what: format!("{call:?}"),
            call,
            worse_pct,
        }
    }

    fn verdict(test: TestKind, p: Option<f64>, label: Label) -> Verdict {
        Verdict {
            change_pct: -52.3,
            p_value: p,
            test,
            label,
            margin_pct: None,
            within_margin: false,
            interval_pct: None,
        }
    }

    #[test]
    fn no_test_is_not_a_tie() {
        let none = verdict(TestKind::None, None, Label::Tie);
        assert_eq!(Call::of(&none), Call::NotTested);
        assert_eq!(Call::of(&none).as_str(), "not tested");
        let tie = verdict(TestKind::Welch, Some(0.4), Label::Tie);
        assert_eq!(Call::of(&tie), Call::Tie);
        let slower = verdict(TestKind::Starts, Some(0.001), Label::Slower);
        assert_eq!(Call::of(&slower), Call::Slower);
    }

    #[test]
    fn worse_pairs_fail_by_the_verdict_or_beyond_the_percentage() {
        let pairs = [pair(Call::Tie, 1.0), pair(Call::Slower, 8.0)];
        let none = Setting::default();
        assert_eq!(
            gate(&pairs, Rule::Verdict, &none),
            Outcome::Slower(vec![pair(Call::Slower, 8.0)])
        );
        assert_eq!(
            gate(&pairs, Rule::Pct(5.0), &none),
            Outcome::Slower(vec![pair(Call::Slower, 8.0)])
        );
        assert_eq!(gate(&pairs, Rule::Pct(10.0), &none), Outcome::Pass);
        // A big change that was not tested is never slower, nor a pass.
        let untested = [pair(Call::Tie, 0.0), pair(Call::NotTested, 52.3)];
        assert_eq!(
            gate(&untested, Rule::Pct(5.0), &none),
            Outcome::Undecided {
                refusals: vec![],
                untested: vec![pair(Call::NotTested, 52.3)]
            }
        );
        let allowed = Setting {
            allow_untested: true,
            ..Setting::default()
        };
        assert_eq!(gate(&untested, Rule::Pct(5.0), &allowed), Outcome::Pass);
        // Slower wins over untested: the failure is certain.
        let both = [pair(Call::NotTested, 0.0), pair(Call::Slower, 20.0)];
        assert!(matches!(
            gate(&both, Rule::Verdict, &none),
            Outcome::Slower(_)
        ));
    }

    #[test]
    fn refusals_hold_unless_forced_and_nothing_in_common_always_does() {
        let studies = Refusal::DifferentStudies {
            a: "r2".into(),
            b: "ov".into(),
        };
        let setting = Setting {
            refusals: vec![studies.clone()],
            ..Setting::default()
        };
        let pairs = [pair(Call::Slower, 40.0)];
        assert_eq!(
            gate(&pairs, Rule::Verdict, &setting),
            Outcome::Undecided {
                refusals: vec![studies],
                untested: vec![]
            }
        );
        let forced = Setting {
            force: true,
            ..setting
        };
        assert!(matches!(
            gate(&pairs, Rule::Verdict, &forced),
            Outcome::Slower(_)
        ));
        let all = Setting {
            force: true,
            allow_untested: true,
            ..Setting::default()
        };
        assert_eq!(
            gate(&[], Rule::Verdict, &all),
            Outcome::Undecided {
                refusals: vec![Refusal::NothingInCommon],
                untested: vec![]
            }
        );
    }
}

//! The Markdown of a [`Comparison`]: what the two runs were (their
//! studies, whether each is complete), the cells of both with their
//! verdicts, the cells of one run only, the cost points, and the notes
//! (pairs not tested, the margin, the A/A noise).

use super::gate::Call;
use super::{p_text, Basis, Comparison};
use crate::escape::md;
use crate::metric::num;
use crate::stats::{TestKind, Verdict};
use shootout_store::RunStatus;
use std::fmt::Write;

impl Comparison {
    /// The Markdown of the comparison: what the runs were, the cells of
    /// both, the cells of one only, the cost points, the notes.
    pub fn render(&self) -> String {
        let (sa, sb) = &self.sides;
        let mut out = format!(
            "# Compare run {} (baseline) → run {}\n\n\
             Run {} measured {} ({}); run {} measured {} ({}).\n",
            self.a, self.b, sa.id, sa.study, sa.status, sb.id, sb.study, sb.status
        );
        if self.different_studies() {
            out.push_str(
                "\n**Different studies.** Only cells with the same target, scenario, load and \
                 resources are compared; every other cell is listed as in one run only.\n",
            );
        } else if !self.same_study_text {
            out.push_str(
                "\nThe study file changed between the runs; cells are matched by what they \
                 measured (target, scenario, load and resources).\n",
            );
        }
        if self.pairing == super::Pairing::AcrossResources {
            out.push_str(
                "\nCells are paired across resources (--across-resources): a pair may differ in \
                 CPU quota, memory limit or pinned CPUs, and its difference is then what that \
                 change did.\n",
            );
        }
        self.render_status(&mut out);
        self.render_rows(&mut out);
        self.render_lone(&mut out);
        self.render_costs(&mut out);
        self.render_notes(&mut out);
        out
    }

    fn render_status(&self, out: &mut String) {
        for s in [&self.sides.0, &self.sides.1] {
            if s.status != RunStatus::Complete {
                let _ = writeln!(
                    out,
                    "\n**Run {} is {}, not complete**: its cells may be missing or cut short.",
                    s.id, s.status
                );
            }
        }
    }

    fn render_rows(&self, out: &mut String) {
        out.push_str(
            "\n| Target | Scenario | RPS A | RPS B | ΔRPS | RPS test | RPS | p99 A (ms) | p99 B (ms) | Δp99 | p99 test | p99 |\n\
             |---|---|---:|---:|---:|---|---|---:|---:|---:|---|---|\n",
        );
        for r in &self.rows {
            let scenario = if r.level_label.is_empty() {
                r.scenario.clone()
            } else {
                format!("{} ({})", r.scenario, r.level_label)
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md(&r.target),
                md(&scenario),
                num(r.rps.0),
                num(r.rps.1),
                pct(r.rps_verdict.change_pct),
                test_text(&r.rps_verdict, r.basis),
                r.rps_call().as_str(),
                num(r.p99.0),
                num(r.p99.1),
                pct(r.p99_verdict.change_pct),
                test_text(&r.p99_verdict, r.basis),
                r.p99_call().as_str(),
            );
        }
        if self.rows.is_empty() {
            out.push_str("\nNo cell (target, scenario, load and resources) is in both runs.\n");
        }
    }

    fn render_lone(&self, out: &mut String) {
        for (name, lone) in [("A", &self.only_a), ("B", &self.only_b)] {
            if lone.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\nOnly in {name} (run {}):\n",
                if name == "A" { self.a } else { self.b }
            );
            for l in lone {
                let _ = writeln!(
                    out,
                    "- {} on {}{}: {}",
                    md(&l.key.target),
                    md(&l.key.scenario),
                    if l.level_label.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", md(&l.level_label))
                    },
                    md(&l.key.describe())
                );
            }
        }
    }

    fn render_notes(&self, out: &mut String) {
        let untested = self
            .rows
            .iter()
            .filter(|r| r.rps_call() == Call::NotTested)
            .count()
            + self
                .costs
                .iter()
                .filter(|c| c.call == Call::NotTested)
                .count();
        if untested > 0 {
            let _ = writeln!(
                out,
                "\n{untested} pair(s) not tested: a run had one value there (one start of one \
                 second, a point not carried), so no difference can be told from noise. Give the \
                 study two or more `repetitions`; a gate (`--fail-if-slower`) does not pass on \
                 them unless `--allow-untested`."
            );
        }
        let _ = writeln!(
            out,
            "\nΔ is the change of the mean from A to B (of ln(value) where the test is on starts). \
             A difference is called only at p < 0.05 and, on starts, beyond the {} margin; \
             \"faster\" means higher RPS or lower p99 in B.",
            crate::precision::pct(self.margin.pct() / 100.0)
        );
        if let Some(f) = self.floor {
            let _ = writeln!(
                out,
                "\nNoise (A/A): two starts of the same server differed in throughput by up to \
                 {:.1}% (95th percentile of {} pairs of starts in the two runs). Each pair is held \
                 to its own variation, not to this figure (docs/statistics.md).",
                f.pct(),
                f.pairs
            );
        }
    }

    fn render_costs(&self, out: &mut String) {
        if self.costs.is_empty() && self.costs_only_a.is_empty() && self.costs_only_b.is_empty() {
            return;
        }
        out.push_str("\n## Cost points\n");
        if !self.costs.is_empty() {
            out.push_str(
                "\n\"faster\" means cheaper per request, more goodput or a quicker recovery in B.\n\n\
                 | Target | Scenario | Figure | Point | A | B | Δ | test | verdict |\n\
                 |---|---|---|---|---:|---:|---:|---|---|\n",
            );
        }
        for c in &self.costs {
            let test = match &c.verdict {
                Some(v) => test_text(v, Basis::Starts),
                None => "no test (no value)".into(),
            };
            let verdict = match &c.note {
                Some(n) => format!("{} ({})", c.call.as_str(), n),
                None => c.call.as_str().to_string(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md(&c.key.target),
                md(&c.key.scenario),
                c.key.figure.as_str(),
                md(&c.key.point),
                num(c.values.0),
                num(c.values.1),
                pct(c.verdict.map_or(f64::NAN, |v| v.change_pct)),
                test,
                md(&verdict)
            );
        }
        for (name, lone) in [("A", &self.costs_only_a), ("B", &self.costs_only_b)] {
            if !lone.is_empty() {
                let _ = writeln!(
                    out,
                    "\nCost points only in {name}: {}.",
                    lone.iter()
                        .map(|k| md(&k.describe()))
                        .collect::<Vec<_>>()
                        .join("; ")
                );
            }
        }
    }
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "n/a".into()
    }
}

fn test_text(v: &Verdict, basis: Basis) -> String {
    // "t on starts" already says what its samples were.
    let per = match basis {
        _ if v.test == TestKind::Calibrated => String::new(),
        Basis::Starts => String::new(),
        Basis::Repetitions => ", reps".into(),
        Basis::Seconds => ", per-second".into(),
    };
    let floor = match (v.within_margin, v.margin_pct) {
        (true, Some(m)) => format!(", within the {} margin", crate::precision::pct(m / 100.0)),
        _ => String::new(),
    };
    match v.p_value {
        Some(p) => format!("{}{per}, p={}{floor}", v.test.as_str(), p_text(p)),
        None => format!("{} ({})", v.test.as_str(), per.trim_start_matches(", ")),
    }
}

//! Parsers for the values flags take, as clap value parsers: counts, rates
//! and durations (delegated to the engine's one [`units`] parser, shared with
//! study files), ramp stages and CPU lists. Each returns a message that names
//! the bad value.

use shootout_engine::{units, Stage};
use std::time::Duration;

/// `10000`, `10k`, `1.5k`, `2m` (million): see [`units::parse_count`].
pub fn parse_count(s: &str) -> Result<u64, String> {
    units::parse_count(s).map_err(|e| e.to_string())
}

/// A rate in requests per second: see [`units::parse_rate`].
pub fn parse_rate(s: &str) -> Result<f64, String> {
    units::parse_rate(s).map_err(|e| e.to_string())
}

/// A size in bytes (`64`, `4k`, `1MiB`): see [`units::parse_size`].
pub fn parse_size(s: &str) -> Result<u64, String> {
    units::parse_size(s).map_err(|e| e.to_string())
}

/// A duration: see [`units::parse_duration`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    units::parse_duration(s).map_err(|e| e.to_string())
}

/// A parsed `--stages` value (a newtype, so clap treats it as one value).
#[derive(Debug, Clone, PartialEq)]
pub struct StageList(pub Vec<Stage>);

/// A parsed `--cpus` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// `60s:100,60s:100`: ramp to 100 over 60 s, then hold 100 for 60 s.
pub fn parse_stage_list(s: &str) -> Result<StageList, String> {
    parse_stages(s).map(StageList)
}

/// `0,2-3` as a [`CpuList`].
pub fn parse_cpu_list(s: &str) -> Result<CpuList, String> {
    parse_cpus(s).map(CpuList)
}

/// `60s:100,60s:100`: ramp to 100 over 60 s, then hold 100 for 60 s.
pub fn parse_stages(s: &str) -> Result<Vec<Stage>, String> {
    s.split(',')
        .map(|part| {
            let (d, t) = part.split_once(':').ok_or_else(|| {
                format!("stage '{part}' should look like DURATION:LEVEL, e.g. 60s:100")
            })?;
            let duration = parse_duration(d)?;
            // Zero durations and negative levels are the engine's rules
            // (Workload::new); they are reported as `--stages` from there.
            let to = units::parse_scaled(t)
                .ok_or_else(|| format!("stage '{part}': '{t}' is not a number"))?;
            Ok(Stage { duration, to })
        })
        .collect()
}

/// `0`, `0,2`, `1-3`, `0,4-5`.
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("'{s}' is not a CPU list (e.g. 0 or 0,2 or 1-3)");
    let mut cpus = Vec::new();
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b || b >= 1024 {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().map_err(|_| bad())?),
        }
    }
    if cpus.iter().any(|&c| c >= 1024) {
        return Err(bad());
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_parsers_name_the_value() {
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert!(parse_count("ten").unwrap_err().contains("'ten'"));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_rate("0").unwrap_err().contains("'0'"));
    }

    #[test]
    fn stages_and_cpus() {
        let s = parse_stages("60s:100,1m:100").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].duration, Duration::from_secs(60));
        assert!(parse_stages("60s").is_err());
        assert!(parse_stages("5s").is_err());
        assert!(parse_stages("5s:lots").is_err());
        assert_eq!(parse_cpus("0,2-3"), Ok(vec![0, 2, 3]));
        assert!(parse_cpus("3-1").is_err());
    }
}

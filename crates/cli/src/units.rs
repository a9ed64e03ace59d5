//! Parsers for the human-friendly values flags take: counts with `k`/`m`
//! suffixes, durations with `us`/`ms`/`s`/`m`/`h`, ramp stages and CPU lists.
//! Each returns a message that names the bad value.

use shootout_engine::Stage;
use std::time::Duration;

/// `10000`, `10k`, `1.5k`, `2m` (million).
pub fn parse_count(s: &str) -> Result<u64, String> {
    let v = parse_scaled(s).ok_or_else(|| format!("'{s}' is not a count (e.g. 1000, 10k, 1m)"))?;
    if v.fract() != 0.0 || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("'{s}' is not a whole, non-negative count"));
    }
    Ok(v as u64)
}

/// A rate in requests per second: `500`, `2.5k`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    match parse_scaled(s) {
        Some(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a positive rate (e.g. 100, 2.5k)")),
    }
}

fn parse_scaled(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, scale) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1e3),
        (i, 'm' | 'M') => (&s[..i], 1e6),
        _ => (s, 1.0),
    };
    let v: f64 = num.replace('_', "").parse().ok()?;
    v.is_finite().then_some(v * scale)
}

/// `500ms`, `2s`, `1.5m`, `1h`, `250us`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("'{s}' is not a duration (e.g. 500ms, 10s, 2m)");
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "us" | "µs" => v / 1e6,
        "ms" => v / 1e3,
        "" | "s" => v,
        "m" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(bad()),
    };
    if !(secs.is_finite() && (0.0..1e9).contains(&secs)) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
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
                format!("stage '{part}' should look like DURATION:TARGET, e.g. 60s:100")
            })?;
            let duration = parse_duration(d)?;
            if duration.is_zero() {
                return Err(format!("stage '{part}' has a zero duration"));
            }
            let target = parse_scaled(t)
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("stage '{part}': '{t}' is not a non-negative target"))?;
            Ok(Stage { duration, target })
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
    fn counts_and_rates() {
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1m"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("ten").unwrap_err().contains("'ten'"));
        assert_eq!(parse_rate("2.5k"), Ok(2500.0));
        assert!(parse_rate("0").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn stages_and_cpus() {
        let s = parse_stages("60s:100,1m:100").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].duration, Duration::from_secs(60));
        assert!(parse_stages("60s").is_err());
        assert!(parse_stages("0s:5").is_err());
        assert_eq!(parse_cpus("0,2-3"), Ok(vec![0, 2, 3]));
        assert!(parse_cpus("3-1").is_err());
    }
}

//! The server settings shootout chooses for a cluster, in one list: written
//! into `postgresql.auto.conf` before the first start, and read back from
//! `pg_settings` afterwards so a run records what the server really used.

use super::options::ClusterOptions;
use std::path::Path;

/// One configuration parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub name: String,
    pub value: String,
}

fn set(name: &str, value: impl ToString) -> Setting {
    Setting {
        name: name.to_string(),
        value: value.to_string(),
    }
}

/// Every setting shootout writes for a cluster on `port` with sockets in `dir`.
pub fn chosen(opts: &ClusterOptions, port: u16, dir: &Path) -> Vec<Setting> {
    let mem_mb = total_memory_mb().unwrap_or(4096);
    vec![
        set("listen_addresses", "127.0.0.1"),
        set("port", port),
        set("unix_socket_directories", dir.display()),
        set("max_connections", opts.max_connections),
        set("shared_preload_libraries", "pg_stat_statements"),
        set("pg_stat_statements.track", "all"),
        // TechEmpower's setting: an update returns before its WAL is on disk.
        set("synchronous_commit", "off"),
        // A sixteenth of the memory, as a shared machine can spare.
        set(
            "shared_buffers",
            format!("{}MB", (mem_mb / 16).clamp(128, 1024)),
        ),
        set(
            "effective_cache_size",
            format!("{}MB", (mem_mb / 4).clamp(512, 8192)),
        ),
        set("work_mem", "4MB"),
        set("maintenance_work_mem", "64MB"),
        // Per-statement logging would be measured as database work.
        set("log_min_duration_statement", -1),
        set("log_checkpoints", "off"),
    ]
}

/// The settings as `postgresql.auto.conf` lines.
pub fn render(settings: &[Setting]) -> String {
    let mut out = String::from("# Written by shootout for a throwaway cluster.\n");
    for s in settings {
        out.push_str(&format!("{} = '{}'\n", s.name, s.value.replace('\'', "''")));
    }
    out
}

/// The chosen settings as the running server reports them, with units.
pub fn reported(db: &mut postgres::Client) -> Result<Vec<Setting>, postgres::Error> {
    let names: Vec<String> = chosen(&ClusterOptions::for_pool(1, vec![]), 0, Path::new(""))
        .into_iter()
        .map(|s| s.name)
        // Where it listened changes every run and says nothing about it.
        .filter(|n| !["unix_socket_directories", "port", "listen_addresses"].contains(&n.as_str()))
        .collect();
    let rows = db.query(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1) ORDER BY name",
        &[&names],
    )?;
    Ok(rows
        .iter()
        .map(|r| Setting {
            name: r.get(0),
            value: r.get(1),
        })
        .collect())
}

fn total_memory_mb() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_render_as_quoted_conf_lines() {
        let opts = ClusterOptions::for_pool(4, vec![]);
        let text = render(&chosen(&opts, 5433, Path::new("/tmp/x")));
        assert!(text.contains("port = '5433'\n"), "{text}");
        assert!(text.contains("max_connections = '36'\n"), "{text}");
        assert!(text.contains("shared_preload_libraries = 'pg_stat_statements'\n"));
        assert!(text.contains("synchronous_commit = 'off'\n"));
        assert_eq!(
            render(&[set("a", "it's")]).lines().nth(1),
            Some("a = 'it''s'")
        );
    }
}

//! How a run's PostgreSQL is described in the report headers: its version,
//! the pool size given to servers, the key settings, the CPUs it was pinned
//! to, and a plain warning when those CPUs are also the server's (database
//! time then competes with the framework's). Markdown and HTML both read
//! these functions so they say the same thing; runs without a database get
//! nothing from here, so their reports are unchanged.

use crate::cpus::cpu_list;
use shootout_store::{DatabaseRecord, Run};

/// Settings readers look for first, in this order; the others follow
/// alphabetically, since any setting shootout chose can change the numbers.
const KEY_SETTINGS: [&str; 3] = ["max_connections", "shared_buffers", "synchronous_commit"];

/// (label, value) pairs for the environment table; empty without a database.
pub fn facts(run: &Run) -> Vec<(&'static str, String)> {
    let Some(db) = &run.database else {
        return Vec::new();
    };
    vec![
        ("PostgreSQL", db.version.clone()),
        ("DB pool size", pool(db)),
        ("DB settings", settings(db)),
        ("Database CPUs", cpu_list(&db.cpus)),
    ]
}

/// One line for the Markdown header; None without a database.
pub fn line(run: &Run) -> Option<String> {
    let db = run.database.as_ref()?;
    Some(format!(
        "PostgreSQL {} · pool {} · settings {} · database CPUs {}",
        db.version,
        pool(db),
        settings(db),
        cpu_list(&db.cpus)
    ))
}

fn pool(db: &DatabaseRecord) -> String {
    format!("{} connections per server (DB_POOL_SIZE)", db.pool_size)
}

/// `name=value` pairs, the key settings first.
pub fn settings(db: &DatabaseRecord) -> String {
    let key = KEY_SETTINGS
        .iter()
        .filter_map(|k| db.settings.get(*k).map(|v| (*k, v)));
    let rest = db
        .settings
        .iter()
        .filter(|(k, _)| !KEY_SETTINGS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v));
    let pairs: Vec<String> = key.chain(rest).map(|(k, v)| format!("{k}={v}")).collect();
    if pairs.is_empty() {
        "none recorded".to_string()
    } else {
        pairs.join(", ")
    }
}

/// The warning when the database may run on the server's CPUs; None when
/// they are apart or there is no database. Unpinned counts as every CPU.
pub fn sharing_note(run: &Run) -> Option<String> {
    let db = run.database.as_ref()?;
    let server = &run.pinning.server_cpus;
    if db.cpus.is_empty() {
        return Some(
            "The database is not pinned to CPUs: database time may compete with the framework's."
                .to_string(),
        );
    }
    let shared: Vec<usize> = db
        .cpus
        .iter()
        .copied()
        .filter(|c| server.is_empty() || server.contains(c))
        .collect();
    if shared.is_empty() {
        return None;
    }
    let noun = if shared.len() == 1 { "CPU" } else { "CPUs" };
    Some(format!(
        "The database shares {noun} {} with the server: database time competes with the framework's.",
        cpu_list(&shared)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn run(server: Vec<usize>, db: Vec<usize>) -> Run {
        let mut r: Run = serde_json::from_value(serde_json::json!({
            "id": 1, "study": "s", "started_at": "t", "finished_at": null,
            "status": "complete", "tool_version": "0", "git_commit": null,
            "host": {"cpu_model": "c", "cores": 4, "mem_total_mib": 1, "kernel": "k", "hostname": "h"},
            "pinning": {"server_cpus": server, "generator_cpus": [3]},
            "scale": 1.0, "study_text": ""
        }))
        .expect("run");
        r.database = Some(DatabaseRecord {
            version: "16.4".into(),
            settings: BTreeMap::from([
                ("fsync".to_string(), "off".to_string()),
                ("synchronous_commit".to_string(), "off".to_string()),
                ("max_connections".to_string(), "100".to_string()),
            ]),
            cpus: db,
            pool_size: 8,
        });
        r
    }

    #[test]
    fn key_settings_come_first() {
        let r = run(vec![0], vec![2]);
        let db = r.database.as_ref().expect("db");
        assert_eq!(
            settings(db),
            "max_connections=100, synchronous_commit=off, fsync=off"
        );
    }

    #[test]
    fn says_when_the_database_shares_the_server_cpus() {
        assert_eq!(sharing_note(&run(vec![0], vec![2])), None);
        let one = sharing_note(&run(vec![0, 1], vec![1, 2])).expect("shared");
        assert!(
            one.starts_with("The database shares CPU 1 with the server"),
            "{one}"
        );
        let two = sharing_note(&run(vec![], vec![0, 1])).expect("shared");
        assert!(
            two.starts_with("The database shares CPUs 0,1 with"),
            "{two}"
        );
        assert!(sharing_note(&run(vec![0], vec![])).is_some());
        let mut none = run(vec![0], vec![0]);
        none.database = None;
        assert_eq!(sharing_note(&none), None);
        assert!(facts(&none).is_empty() && line(&none).is_none());
    }
}

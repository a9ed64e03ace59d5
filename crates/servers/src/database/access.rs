//! How a server and the verifier reach a seeded database, and the names
//! (role, password, database, row count) SPEC.md's database routes fix.

/// How a server and the verifier reach a seeded database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseAccess {
    /// `DATABASE_URL` for servers: the `benchmarkdbuser` role over TCP on
    /// 127.0.0.1, database `hello_world`.
    pub app_url: String,
    /// A superuser connection string for the `postgres` crate
    /// (`host=<socket dir> port=N user=U dbname=hello_world`), used to read
    /// the tables, `pg_stat_statements` and `pg_stat_activity`.
    pub admin_url: String,
    /// `DB_POOL_SIZE`: the total connections a server may open.
    pub pool_size: u32,
}

impl DatabaseAccess {
    /// The environment a server gets: `DATABASE_URL` and `DB_POOL_SIZE`.
    pub fn server_env(&self) -> Vec<(String, String)> {
        vec![
            ("DATABASE_URL".to_string(), self.app_url.clone()),
            ("DB_POOL_SIZE".to_string(), self.pool_size.to_string()),
        ]
    }
}

/// The role servers log in as, and its password (TechEmpower's names).
pub const APP_USER: &str = "benchmarkdbuser";
pub const APP_PASSWORD: &str = "benchmarkdbpass";
/// The database that holds `world` and `fortune`.
pub const DB_NAME: &str = "hello_world";
/// Rows in `world`; ids are 1..=WORLD_ROWS.
pub const WORLD_ROWS: i32 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_carries_url_and_pool_size() {
        let access = DatabaseAccess {
            app_url: "postgres://x".into(),
            admin_url: "host=/tmp".into(),
            pool_size: 8,
        };
        let env = access.server_env();
        assert_eq!(env[0], ("DATABASE_URL".into(), "postgres://x".into()));
        assert_eq!(env[1], ("DB_POOL_SIZE".into(), "8".into()));
    }
}

//! A database this process did not start: PostgreSQL reached at a host and
//! port with a superuser password (the runner's PostgreSQL pod on
//! Kubernetes). What a server and the verifier are handed
//! ([`DatabaseAccess::remote`]), the settings such a server is started
//! with (the same [`settings::chosen`] list as a local cluster, rendered
//! for the image's entry point to write), and what a run records about it,
//! read from the server itself as for a local cluster.

use super::access::{DatabaseAccess, APP_PASSWORD, APP_USER, DB_NAME};
use super::cluster::{read_info, DatabaseError, DatabaseInfo, SUPERUSER};
use super::options::ClusterOptions;
use super::settings;
use std::net::IpAddr;
use std::path::Path;

impl DatabaseAccess {
    /// How servers and the verifier reach a seeded database at
    /// `host:port`, the superuser logging in with `password`.
    pub fn remote(host: IpAddr, port: u16, password: &str, pool_size: u32) -> DatabaseAccess {
        DatabaseAccess {
            app_url: format!("postgres://{APP_USER}:{APP_PASSWORD}@{host}:{port}/{DB_NAME}"),
            admin_url: format!(
                "host={host} port={port} user={SUPERUSER} password={password} dbname={DB_NAME}"
            ),
            pool_size,
        }
    }
}

/// The settings a database started elsewhere gets, as
/// `postgresql.auto.conf` lines: a local cluster's list (its own address,
/// port and socket folder are the entry point's to set after these).
pub fn remote_settings(opts: &ClusterOptions, port: u16) -> String {
    settings::render(&settings::chosen(opts, port, Path::new("/tmp")))
}

/// What a run records about the database at `access`: its version and the
/// chosen settings as it reports them (`cpus`: what it is pinned to).
pub fn describe_remote(
    access: &DatabaseAccess,
    cpus: Vec<usize>,
) -> Result<DatabaseInfo, DatabaseError> {
    let mut db =
        postgres::Client::connect(&access.admin_url, postgres::NoTls).map_err(|source| {
            DatabaseError::Sql {
                what: "connecting as the superuser",
                source,
            }
        })?;
    read_info(&mut db, cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_database_is_reached_by_address_with_a_password() {
        let a = DatabaseAccess::remote("127.0.0.2".parse().unwrap(), 15432, "s3cret", 8);
        assert_eq!(
            a.app_url,
            "postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.2:15432/hello_world"
        );
        assert_eq!(
            a.admin_url,
            "host=127.0.0.2 port=15432 user=postgres password=s3cret dbname=hello_world"
        );
        let conf = remote_settings(&ClusterOptions::for_pool(8, vec![]), 15432);
        assert!(conf.contains("port = '15432'"), "{conf}");
        assert!(
            conf.contains("shared_preload_libraries = 'pg_stat_statements'"),
            "{conf}"
        );
    }
}

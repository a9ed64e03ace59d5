//! PostgreSQL for the database routes of `targets/SPEC.md`: a throwaway
//! cluster that shootout creates, seeds, starts, measures and removes itself
//! (`cluster`), and the addresses a server and the verifier use to reach it
//! (`DatabaseAccess`). The cluster runs as an unprivileged user when shootout
//! runs as root, because `initdb` refuses root.

mod access;
mod cluster;
mod options;
mod postmaster;
mod remote;
mod settings;
mod stale;

pub use access::{DatabaseAccess, APP_PASSWORD, APP_USER, DB_NAME, WORLD_ROWS};
pub use cluster::{
    find_bin_dir, postgres_dir, stop_all_clusters, Cluster, DatabaseError, DatabaseInfo, PACKAGE,
    POSTGRES_DIR, POSTGRES_DIR_ENV, SUPERUSER,
};
pub use options::ClusterOptions;
pub use remote::{describe_remote, remote_settings};
pub use settings::Setting;

//! What a cluster is started with: the pool its servers get, the
//! connections it allows and the CPUs it is pinned to. Read by the cluster
//! and by the settings it chooses.

/// What a cluster is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterOptions {
    /// `DB_POOL_SIZE` handed to servers.
    pub pool_size: u32,
    /// `max_connections`: room for the pool, the verifier's probes and
    /// a server that ignores its limit (so the verifier sees it, rather than
    /// connection errors).
    pub max_connections: u32,
    /// CPUs the postmaster and its backends are pinned to (empty: any).
    pub cpus: Vec<usize>,
}

impl ClusterOptions {
    /// Options for servers that may open `pool_size` connections.
    pub fn for_pool(pool_size: u32, cpus: Vec<usize>) -> ClusterOptions {
        ClusterOptions {
            pool_size,
            max_connections: pool_size.saturating_mul(4).max(16) + 20,
            cpus,
        }
    }
}

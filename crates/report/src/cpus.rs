//! How a set of CPUs is written in every report (the pinning of servers,
//! load generator and database): `0,1`, or `unpinned` for none.

/// `0,1` style CPU list, or "unpinned".
pub fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "unpinned".to_string();
    }
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

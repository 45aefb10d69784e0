//! The threads of a process and the CPU time each has used, from
//! `/proc/PID/task/*/schedstat` (nanoseconds on a CPU), for the live
//! view's cost (`tests/view.rs`, `tests/view_cost.rs`, `benches/view_cost.rs`).

/// Each thread of process `pid` (`self` for this one): id, name and CPU
/// time (ns).
pub fn of(pid: &str) -> Vec<(u64, String, u64)> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let ns = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        out.push((tid, name.trim().to_owned(), ns));
    }
    out
}

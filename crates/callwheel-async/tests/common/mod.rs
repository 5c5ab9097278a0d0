//! What the tests of the executors' own drivers share.

/// The names of this process's threads that are callwheel's own drivers (from
/// `/proc/self/task`): none may run when the executors fire the timers.
pub fn driver_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .filter(|name| name.starts_with("callwheel"))
        .collect()
}

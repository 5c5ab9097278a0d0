//! The tool's list of structures: unique names and labels, found by either, and the roles and
//! capabilities the tables and the plan rely on.

use callwheel_bench::structure::{Role, SchemeInfo};
use callwheel_cli::registry::{self, SCHEMES};

fn find(name: &str) -> &'static SchemeInfo {
    registry::find(name).unwrap_or_else(|| panic!("{name} is in the registry"))
}

#[test]
fn registry_names_and_labels_are_unique() {
    for (i, a) in SCHEMES.iter().enumerate() {
        for b in &SCHEMES[i + 1..] {
            assert_ne!(a.name, b.name);
            assert_ne!(a.label, b.label);
        }
        assert_eq!(registry::find(a.name).map(|s| s.name), Some(a.name));
        assert_eq!(registry::find(a.label).map(|s| s.name), Some(a.name));
    }
    assert!(registry::find("no-such-scheme").is_none());
}

#[test]
fn registry_roles_and_flags() {
    let facilities: Vec<&str> = SCHEMES
        .iter()
        .filter(|s| s.role == Role::Facility)
        .map(|s| s.name)
        .collect();
    // The production wheel, the same wheel through its C API, and the async delay queue.
    assert_eq!(facilities, ["wheel", "c-wheel", "async-queue"]);
    assert_eq!(find("facility").name, "wheel");
    let peers: Vec<&str> = SCHEMES
        .iter()
        .filter(|s| s.role == Role::Peer)
        .map(|s| s.name)
        .collect();
    assert_eq!(peers, ["heap-lazy", "btreemap", "delayqueue"]);
    assert_eq!(find("heap-lazy").row_name(), "heap-lazy (tombstones)");
    let lossy: Vec<&str> = SCHEMES
        .iter()
        .filter(|s| s.caps.lossy)
        .map(|s| s.name)
        .collect();
    assert_eq!(
        lossy,
        ["hierarchical-one", "hierarchical-none", "linux-wheel"]
    );
    assert!(!find("btreemap").caps.memory && !find("delayqueue").caps.memory);
    assert!(find("heap-lazy").caps.memory && find("wheel").caps.memory);
}

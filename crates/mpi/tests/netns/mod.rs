//! Two network namespaces of a test process's own, made by `.ci/netns.sh` (with its
//! loss, duplication and reordering) and deleted when dropped: what the Rust API's
//! tests across namespaces share (`rust_api`, `rust_coll`). Needs root.

use std::process::Command;

/// The namespaces' names, deleted on drop.
pub struct Namespaces(pub Vec<String>);

impl Namespaces {
    /// Namespaces `{a}PID` and `{b}PID`, joined by the veth pair `{va}PID`/`{vb}PID` on
    /// the /24 network `net` (three octets), PID being this test process's.
    pub fn up(a: &str, b: &str, va: &str, vb: &str, net: &str) -> Namespaces {
        let pid = std::process::id();
        let ns = Namespaces(vec![format!("{a}{pid}"), format!("{b}{pid}")]);
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &ns.0[0])
            .env("MYRIX_NETNS_B", &ns.0[1])
            .env("MYRIX_NETNS_VA", format!("{va}{pid}"))
            .env("MYRIX_NETNS_VB", format!("{vb}{pid}"))
            .env("MYRIX_NETNS_NET", net)
            .output()
            .expect("bash");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        ns
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

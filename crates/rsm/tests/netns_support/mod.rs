//! What the RSM tests between two network namespaces share (`net_netns_random.rs`
//! here, `crates/rsmapi/tests/c_netns.rs` through a `#[path]`): this process's
//! namespace names, `.ci/netns.sh`'s namespaces made under them and deleted by a
//! guard (also on panic), children killed when dropped, and reading a child's lines
//! with a time limit. Test support only; never touches a namespace it did not name.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;

/// This process's namespaces and veth ends under `prefix`: (A, B, veth in A, veth
/// in B), e.g. `mza<pid>`.
pub fn names(prefix: &str) -> [String; 4] {
    let pid = std::process::id();
    [
        format!("{prefix}a{pid}"),
        format!("{prefix}b{pid}"),
        format!("{prefix}va{pid}"),
        format!("{prefix}vb{pid}"),
    ]
}

/// `.ci/netns.sh`'s namespaces under [`names`]`(prefix)`; deleted when dropped.
pub struct Namespaces {
    prefix: String,
}

impl Namespaces {
    /// Makes them on subnet `net` (`10.84.0`: the script's `MYRIX_NETNS_NET`), with
    /// the script's loss, duplication and reordering.
    pub fn up(prefix: &str, net: &str) -> Namespaces {
        let [a, b, va, vb] = names(prefix);
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh");
        // The guard exists before the script runs: a half-made pair is deleted too.
        let guard = Namespaces {
            prefix: prefix.to_string(),
        };
        let o = Command::new("bash")
            .args([script, "up"])
            .env("MYRIX_NETNS_A", &a)
            .env("MYRIX_NETNS_B", &b)
            .env("MYRIX_NETNS_VA", &va)
            .env("MYRIX_NETNS_VB", &vb)
            .env("MYRIX_NETNS_NET", net)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "netns.sh up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        eprint!("{}", String::from_utf8_lossy(&o.stdout));
        guard
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        let [a, b, ..] = names(&self.prefix);
        for ns in [a, b] {
            let _ = Command::new("ip")
                .args(["netns", "del", &ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A child process, killed and reaped when dropped (also when the test panics).
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Ethernet address of `dev` in namespace `ns`.
pub fn mac(ns: &str, dev: &str) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "cat"])
        .arg(format!("/sys/class/net/{dev}/address"))
        .output()
        .unwrap();
    assert!(o.status.success(), "no address for {dev}");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Every line of `child`'s stdout, through a channel (so reading can time out).
pub fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let out = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

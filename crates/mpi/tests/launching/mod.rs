//! What the Rust API's tests between processes share (`rust_api`, `rust_coll`): an
//! example program run at `n` ranks through the launcher behind `myrix mpiexec`, and
//! two network namespaces of a test process's own, made by `.ci/netns.sh` (with its
//! loss, duplication and reordering; root) and deleted when dropped.

use myrix_mpi::launch::{self, App, LaunchSpec};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The built example `name` (Cargo builds the examples for `cargo test -p myrix-mpi`).
pub fn example(name: &str) -> PathBuf {
    let p = myrix_ctest::profile_dir().join("examples").join(name);
    assert!(
        p.exists(),
        "{} is not built: run `cargo test -p myrix-mpi` (which builds the examples), or \
         `cargo build -p myrix-mpi --examples` first",
        p.display()
    );
    p
}

/// Runs example `name` at `n` ranks through the launcher with `env`, in the network
/// namespaces `netns` if any (ranks spread over them); every rank's output, in rank
/// order. Each rank writes to a file of its own (the launcher's output is this
/// process's), named by this process and the call's shape (tests run at once here).
pub fn launch_in(
    name: &str,
    n: u32,
    args: &[&str],
    env: &[(&str, &str)],
    netns: &[String],
) -> String {
    let out = std::env::temp_dir().join(format!(
        "myrix-{name}-{}-{n}-{}-{}",
        std::process::id(),
        env.len(),
        netns.len()
    ));
    let mut vars = vec![("OUT".into(), out.clone().into())];
    vars.extend(env.iter().map(|(k, v)| ((*k).into(), (*v).into())));
    let spec = LaunchSpec {
        apps: vec![App::new(
            n,
            "/bin/sh",
            vec![
                "-c".into(),
                format!(
                    "exec {} {} > \"$OUT.$PMI_RANK\"",
                    example(name).display(),
                    args.join(" ")
                )
                .into(),
            ],
        )],
        env: vars,
        netns: netns.to_vec(),
        timeout: Some(Duration::from_secs(240)),
    };
    let outcome = launch::run(&spec).expect("launch");
    let mut text = String::new();
    for r in 0..n {
        let p = PathBuf::from(format!("{}.{r}", out.display()));
        text.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(
        outcome.code, 0,
        "{name} at {n}: {:?}\n{text}",
        outcome.reason
    );
    text
}

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

//! One MX endpoint reaching both kinds of peer (`tests/c/mixed.c`): a server in
//! namespace a serves, through the one endpoint, a client in namespace a (its NIC id
//! is a board of that host: shared memory) and a client in namespace b (another
//! host's NIC id: Open-MX's frames on raw Ethernet), at once, every byte verified both
//! ways. The namespaces are the test's own (`mxa<pid>`, `mxb<pid>`, veths `mxva<pid>`,
//! `mxvb<pid>`), made by `.ci/netns.sh` with loss, duplication and reordering, and
//! deleted, with every process killed, when the test ends, passing or not. The same
//! again with `MYRIX_OMX_WIRE=mx` (Open-MX's MX-compatible wire mode), and with
//! `MX_DISABLE_SHMEM=1`: the local client then goes through the NIC.
//!
//! Needs root and `MYRIX_NETNS=1`; #[ignore]d:
//! `MYRIX_NETNS=1 cargo test -p myrix-mxapi --test netns_mixed -- --ignored`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

/// The namespaces, veths, files and processes of one run: all gone on drop.
struct Guard {
    ns: [String; 2],
    veth: [String; 2],
    peers: PathBuf,
    children: Vec<Child>,
    /// The threads reading the children's output, until their pipes close.
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/netns.sh")
}

impl Guard {
    fn new() -> Guard {
        let pid = std::process::id();
        Guard {
            ns: [format!("mxa{pid}"), format!("mxb{pid}")],
            veth: [format!("mxva{pid}"), format!("mxvb{pid}")],
            peers: std::env::temp_dir().join(format!("myrix-mixed-peers-{pid}")),
            children: Vec::new(),
            readers: Vec::new(),
        }
    }

    fn netns(&self, what: &str) -> std::process::Output {
        Command::new("bash")
            .arg(script())
            .arg(what)
            .env("MYRIX_NETNS_A", &self.ns[0])
            .env("MYRIX_NETNS_B", &self.ns[1])
            .env("MYRIX_NETNS_VA", &self.veth[0])
            .env("MYRIX_NETNS_VB", &self.veth[1])
            .env("MYRIX_NETNS_NET", "10.79.0")
            .env("MYRIX_NETNS_LOSS", "2")
            .env("MYRIX_NETNS_DUP", "1")
            .env("MYRIX_NETNS_REORDER", "10")
            .output()
            .expect("bash .ci/netns.sh")
    }

    fn read(&self, side: usize, what: &str) -> String {
        let o = Command::new("ip")
            .args(["netns", "exec", &self.ns[side], "cat"])
            .arg(format!("/sys/class/net/{}/{what}", self.veth[side]))
            .output()
            .expect("ip netns exec");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// `mixed ARGS` in namespace `side`, its board that side's veth, its output
    /// collected by a thread.
    fn spawn(
        &mut self,
        exe: &PathBuf,
        side: usize,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Arc<Mutex<String>> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[side]])
            .arg(exe)
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("MX_ERRORS_ARE_FATAL")
            .env_remove("OMX_FATAL_ERRORS")
            .env_remove("MX_DISABLE_SHMEM")
            .env_remove("OMX_DISABLE_SHARED")
            // The default: Open-MX's frames for the other host, shared memory here.
            .env_remove("MYRIX_MX_TRANSPORT")
            .env("MYRIX_MX_IFACES", &self.veth[side])
            .env("MYRIX_MX_PEERS", &self.peers)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("ip netns exec mixed");
        let out = Arc::new(Mutex::new(String::new()));
        for stream in [
            Box::new(child.stdout.take().expect("piped")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("piped")),
        ] {
            let out = out.clone();
            self.readers.push(std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stream)
                    .lines()
                    .map_while(Result::ok)
                {
                    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                    o.push_str(&line);
                    o.push('\n');
                }
            }));
        }
        self.children.push(child);
        out
    }

    /// Kills what still runs, then waits until every output was read to its end.
    fn finish(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }

    /// Waits until every process ended (true), one failed or `limit` passed (false).
    fn wait_all(&mut self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            let ended: Vec<_> = self
                .children
                .iter_mut()
                .map(|c| c.try_wait().ok().flatten())
                .collect();
            if ended.iter().any(|e| e.is_some_and(|st| !st.success())) {
                return false;
            }
            if ended.iter().all(Option::is_some) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let o = self.netns("down");
        if !o.status.success() {
            eprintln!("netns down: {}", String::from_utf8_lossy(&o.stderr));
        }
        let _ = std::fs::remove_file(&self.peers);
    }
}

fn snapshot(s: &Arc<Mutex<String>>) -> String {
    s.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Frames namespace a's veth received and sent so far.
fn counts(g: &Guard) -> (u64, u64) {
    let n = |what: &str| g.read(0, what).parse::<u64>().expect("a packet count");
    (n("statistics/rx_packets"), n("statistics/tx_packets"))
}

/// The server and its two clients, with `env` set for all three; returns the frames
/// namespace a's veth received and sent meanwhile.
fn serve_two(g: &mut Guard, exe: &PathBuf, env: &[(&str, &str)]) -> (u64, u64) {
    let server = g.spawn(exe, 0, &["serve", "2"], env);
    let end = Instant::now() + Duration::from_secs(30);
    let eid = loop {
        let s = snapshot(&server);
        if let Some(e) = s.lines().find_map(|l| l.strip_prefix("eid ")) {
            break e.trim().to_string();
        }
        assert!(Instant::now() < end, "the server did not start: {s}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let before = counts(g);
    // Both clients name the server by its peer-table name: in namespace a that NIC id
    // is a board of the host, in namespace b another host's.
    let local = g.spawn(exe, 0, &["client", "ns-a:0", &eid, "1"], env);
    let remote = g.spawn(exe, 1, &["client", "ns-a:0", &eid, "2"], env);
    let start = Instant::now();
    let done = g.wait_all(Duration::from_secs(120));
    let took = start.elapsed();
    let after = counts(g);
    g.finish();
    let (s, l, r) = (snapshot(&server), snapshot(&local), snapshot(&remote));
    let n = g.children.len();
    let codes: Vec<Option<i32>> = g.children[n - 3..]
        .iter_mut()
        .map(|c| c.try_wait().ok().flatten().and_then(|st| st.code()))
        .collect();
    let all = format!("{env:?}\nserver:\n{s}\nlocal:\n{l}\nremote:\n{r}");
    assert!(done, "failed or still running after 120 s: {all}");
    assert_eq!(codes, [Some(0); 3], "exit codes: {all}");
    // 14 lengths × 3 rounds, up to 1 MiB: 3710094 bytes each way per client.
    assert!(l.contains("client 1 ok: 3710094 bytes each way"), "{all}");
    assert!(r.contains("client 2 ok: 3710094 bytes each way"), "{all}");
    assert!(s.contains("server ok"), "{all}");
    // The server saw each client with the NIC id of its board: a's own, and b's.
    let hex = |side| g.read(side, "address").replace(':', "");
    let seen = |n| format!("client {n}: 42 messages, 3710094 bytes, from ");
    // (Client 1's NIC id is a board of namespace a: its name there is the board's.)
    let nic_a = format!("(nic {}) endpoint", hex(0));
    assert!(
        s.lines()
            .any(|x| x.starts_with(&seen(1)) && x.contains(&nic_a)),
        "{all}"
    );
    let nic_b = format!("{}ns-b:0 (nic {}) endpoint", seen(2), hex(1));
    assert!(s.contains(&nic_b), "{all}");
    let frames = (after.0 - before.0, after.1 - before.1);
    eprintln!(
        "{env:?}: {took:?}; namespace a's veth received {} and sent {} frames\n{s}{l}{r}",
        frames.0, frames.1
    );
    frames
}

#[test]
#[ignore = "needs root and MYRIX_NETNS=1: creates two network namespaces"]
fn one_endpoint_serves_a_local_and_a_remote_peer_across_namespaces() {
    if std::env::var_os("MYRIX_NETNS").is_none() {
        eprintln!("skipped: set MYRIX_NETNS=1 (and run as root) to create the namespaces");
        return;
    }
    let exe = common::build("mixed");
    let mut g = Guard::new();
    let up = g.netns("up");
    assert!(
        up.status.success(),
        "netns up: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&up.stdout));
    let (mac_a, mac_b) = (g.read(0, "address"), g.read(1, "address"));
    std::fs::write(&g.peers, format!("{mac_a} ns-a:0\n{mac_b} ns-b:0\n")).unwrap();

    // The default: shared memory to the local client, the veth to the remote one.
    let (rx, tx) = serve_two(&mut g, &exe, &[]);
    // The remote client's 3.7 MB came in over the veth (2500+ full frames) and its
    // echoes went out; the local client's traffic did not add to either.
    assert!((2000..40_000).contains(&rx), "{rx} frames received");
    assert!((2000..40_000).contains(&tx), "{tx} frames sent");

    // MYRIX_OMX_WIRE=mx: the remote client in Open-MX's MX-compatible wire mode, each
    // process capturing its frames (MYRIX_PCAP). (With `default` instead, the check of
    // the PULLs fails.)
    let tmp = std::env::temp_dir();
    let prefix = format!("myrix-mixed-mx-{}-", std::process::id());
    let pcap = tmp.join(format!("{prefix}{{pid}}.pcap"));
    let (rx3, tx3) = serve_two(
        &mut g,
        &exe,
        &[
            ("MYRIX_OMX_WIRE", "mx"),
            ("MYRIX_PCAP", pcap.to_str().unwrap()),
        ],
    );
    assert!((2000..40_000).contains(&rx3), "{rx3} frames received");
    assert!((2000..40_000).contains(&tx3), "{tx3} frames sent");
    assert!(
        pulls_in_mx_compat_layout(&tmp, &prefix) > 0,
        "no PULL captured"
    );

    // MX_DISABLE_SHMEM: the local client goes through the NIC as well: its messages
    // and the server's echoes leave through the veth (to the interface's own MAC).
    let (rx2, tx2) = serve_two(&mut g, &exe, &[("MX_DISABLE_SHMEM", "1")]);
    assert!((2000..40_000).contains(&rx2), "{rx2} frames received");
    assert!(
        tx2 > tx + 4000,
        "{tx2} frames sent without shared memory, {tx} with"
    );
}

/// Reads the captures named `prefix…` in `dir` (deleting them): every PULL in them is
/// in the MX-compatible mode's 32-byte layout, where the default mode's 44-byte one
/// has its `block_length` (never 0) at body bytes 36..40: there the MX-compatible
/// frame has its padding. Returns the PULLs seen.
fn pulls_in_mx_compat_layout(dir: &std::path::Path, prefix: &str) -> usize {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    let mut pulls = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // pcap: a 24-byte file header, then per record 16 bytes (its captured length
        // at 8..12) and the frame; little-endian as written here.
        assert_eq!(b[..4], 0xa1b2_c3d4u32.to_le_bytes(), "{name}");
        let mut at = 24;
        while at + 16 <= b.len() {
            let len = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
            let f = &b[at + 16..at + 16 + len];
            at += 16 + len;
            // Open-MX's head: MACs, EtherType 0x86DF, peer index; then the packet type.
            if f.len() >= 60 && f[12..14] == [0x86, 0xdf] && f[16] == 41 {
                pulls += 1;
                assert_eq!(f[16 + 36..16 + 40], [0; 4], "{name}: a default-mode PULL");
            }
        }
    }
    pulls
}

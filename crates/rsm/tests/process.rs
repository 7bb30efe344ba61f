//! Two processes: one-sided access to a sleeping exporter, and an exporter or an
//! importer killed with SIGKILL (each holding a pollable descriptor: nothing of it is
//! left named). The child is this test binary run again with `MYRIX_RSM_ROLE` set.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use myrix_rsm::{BarrierMode, BarrierType, Controller, ExportFlags, Perm, RsmError, SegmentId};

const LEN: usize = 4 * 4096;

fn pattern(i: usize) -> u8 {
    (i * 7 + 3) as u8
}

#[allow(clippy::zombie_processes)] // every caller waits for the child
fn spawn(role: &str) -> (Child, SegmentId) {
    spawn_for(role, None)
}

/// A child in `role`; an importer is told which segment (`MYRIX_RSM_SEGMENT`).
#[allow(clippy::zombie_processes)] // every caller waits for the child
fn spawn_for(role: &str, segment: Option<SegmentId>) -> (Child, SegmentId) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_roles", "--exact", "--nocapture", "--test-threads=1"])
        .env("MYRIX_RSM_ROLE", role)
        .env(
            "MYRIX_RSM_SEGMENT",
            segment.map_or(String::new(), |s| format!("{:08x}", s.0)),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child said nothing");
        // libtest writes "test child_roles ... " before the child's own output.
        if let Some((_, hex)) = line.trim().split_once("ID ") {
            let id = SegmentId(u32::from_str_radix(hex, 16).unwrap());
            child.stdout = Some(out.into_inner());
            return (child, id);
        }
    }
}

/// What names segment `id` on this host: files of the registry directory whose name
/// starts with the id, and the abstract socket name a live exporter binds
/// (`@myrix-rsm/DEV:INO/ID` in `/proc/net/unix`).
fn registry_entry(id: SegmentId) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::var_os("MYRIX_RSM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm/myrix-rsm"));
    let prefix = format!("{:08x}.", id.0);
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    let m = std::fs::metadata(&dir).unwrap();
    let name = format!("@myrix-rsm/{:x}:{:x}/{:08x}", m.dev(), m.ino(), id.0);
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap();
    found.extend(
        unix.lines()
            .filter_map(|l| l.split_whitespace().nth(7))
            .filter(|n| *n == name)
            .map(str::to_string),
    );
    found
}

/// The child's side. Exporter roles publish a segment (the victim with a pollable
/// descriptor), say its id, and then only sleep (blocked reading stdin): they make no
/// library call while the parent works. The importer connects to the parent's
/// segment, asks for a pollable descriptor, says the id and sleeps.
#[test]
fn child_roles() {
    let Ok(role) = std::env::var("MYRIX_RSM_ROLE") else {
        return;
    };
    let c = Controller::get("shm").unwrap();
    if role == "importer" {
        let hex = std::env::var("MYRIX_RSM_SEGMENT").unwrap();
        let id = SegmentId(u32::from_str_radix(&hex, 16).unwrap());
        let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
        imp.pollfd().unwrap();
        println!("ID {:08x}", id.0);
        std::io::stdout().flush().unwrap();
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let e = c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    if role == "victim" {
        e.pollfd().unwrap();
    }
    println!("ID {:08x}", id.0);
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    match role.as_str() {
        "sleeper" => {
            std::io::stdin().read_line(&mut line).unwrap();
            // Look at what the importer wrote, with no call having been made.
            let mem = unsafe { std::slice::from_raw_parts(e.as_ptr(), LEN) };
            let ok = mem.iter().enumerate().all(|(i, &b)| b == pattern(i));
            println!("{}", if ok { "OK" } else { "BAD" });
        }
        _ => std::thread::sleep(Duration::from_secs(60)),
    }
}

#[test]
fn importer_writes_and_reads_while_the_exporter_sleeps() {
    let (mut child, id) = spawn("sleeper");
    let c = Controller::get("shm").unwrap();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    imp.set_mode(BarrierMode::Explicit).unwrap();
    let mut bar = imp.init_barrier(BarrierType::Segment).unwrap();
    bar.open().unwrap();
    let data: Vec<u8> = (0..LEN).map(pattern).collect();
    for chunk in (0..LEN).step_by(1000) {
        let end = (chunk + 1000).min(LEN);
        imp.put(chunk, &data[chunk..end]).unwrap();
    }
    bar.close().unwrap();
    let mut back = vec![0u8; LEN];
    imp.get(0, &mut back).unwrap();
    assert_eq!(back, data);
    child.stdin.as_mut().unwrap().write_all(b"look\n").unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(
        out.contains("OK\n"),
        "the exporter saw the importer's writes: {out}"
    );
    drop(imp);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_killed_exporter_aborts_its_importers_and_is_cleaned_up() {
    let (mut child, id) = spawn("victim");
    let c = Controller::get("shm").unwrap();
    let imp = c.import_connect(c.local_node(), id, Perm::RDWR).unwrap();
    imp.pollfd().unwrap();
    imp.put(0, &[1, 2, 3]).unwrap();
    assert!(!registry_entry(id).is_empty());
    child.kill().unwrap();
    let killed = Instant::now();
    child.wait().unwrap();
    let err = loop {
        match imp.put(0, &[4]) {
            Ok(()) => assert!(killed.elapsed() < Duration::from_secs(1), "never aborted"),
            Err(e) => break e,
        }
    };
    let took = killed.elapsed();
    assert_eq!(err, RsmError::ConnAborted);
    assert!(took < Duration::from_millis(100), "took {took:?}");
    let mut b = [0u8; 1];
    assert_eq!(imp.get(0, &mut b), Err(RsmError::ConnAborted));
    assert_eq!(imp.signal_wait(None), Err(RsmError::ConnAborted));
    // Nothing names the dead exporter's segment any more.
    assert_eq!(registry_entry(id), Vec::<String>::new());
    assert_eq!(
        c.import_connect(c.local_node(), id, Perm::RDWR)
            .unwrap_err(),
        RsmError::SegNotPublished
    );
    drop(imp);

    // An exporter that dies with nobody connected: nothing names its segment once it
    // is gone (the kernel released the name and the files), nobody having looked.
    let (mut child, id) = spawn("victim");
    assert!(!registry_entry(id).is_empty());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(registry_entry(id), Vec::<String>::new());
    let _c = Controller::get("shm").unwrap();
    assert_eq!(registry_entry(id), Vec::<String>::new());
}

#[test]
fn a_killed_importer_with_a_pollable_descriptor_leaves_nothing_named() {
    let c = Controller::get("shm").unwrap();
    let e = c.export_create(LEN, ExportFlags::default()).unwrap();
    let id = e.publish(None, &[]).unwrap();
    e.pollfd().unwrap();
    let (mut child, got) = spawn_for("importer", Some(id));
    assert_eq!(got, id);
    // While both live: only the segment's socket name (listed once more for a
    // connection the serving thread has not closed yet), no file.
    let names = || {
        let mut v = registry_entry(id);
        v.dedup();
        v
    };
    let alive = names();
    assert!(alive.len() == 1 && alive[0].starts_with('@'), "{alive:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(names(), alive);
    // The exporter still signals its slots (the dead one's eventfd is only its copy).
    e.signal_post(myrix_rsm::SignalFlags::default()).unwrap();
    e.unpublish().unwrap();
    assert_eq!(registry_entry(id), Vec::<String>::new());
}

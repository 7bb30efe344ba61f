//! The launcher's own tests, on this host (jobs of shell scripts speaking PMI by hand).

use super::*;

/// bash, not sh: dash cannot redirect to descriptors above 9, which PMI_FD is
/// when tests run in parallel.
fn sh(n: u32, script: &str) -> LaunchSpec {
    LaunchSpec {
        apps: vec![App::new(n, "/bin/bash", vec!["-c".into(), script.into()])],
        env: vec![],
        netns: vec![],
        timeout: None,
    }
}

#[test]
fn exit_statuses_never_hide_a_failure() {
    assert_eq!(exit_status(0), 0);
    assert_eq!(exit_status(7), 7);
    assert_eq!(exit_status(256), 1);
    assert_eq!(exit_status(-1), 255);
}

#[test]
fn rank_counts_are_bounded() {
    assert!(check_ranks(0).is_err());
    assert!(check_ranks(4097).is_err());
    assert_eq!(check_ranks(4096).unwrap(), 4096);
}

#[test]
fn a_job_past_its_time_limit_is_ended() {
    let mut spec = sh(2, "sleep 30");
    spec.timeout = Some(Duration::from_millis(300));
    let t = std::time::Instant::now();
    let o = run(&spec).unwrap();
    assert_eq!(o.code, TIMED_OUT);
    assert!(o.reason.unwrap().contains("time limit"));
    assert!(t.elapsed() < Duration::from_secs(10));
    // A job that ends in time is not touched.
    spec = sh(2, "exit 0");
    spec.timeout = Some(Duration::from_secs(30));
    assert_eq!(run(&spec).unwrap().code, 0);
}

#[test]
fn statuses() {
    assert_eq!(run(&sh(3, "exit 0")).unwrap().code, 0);
    let o = run(&sh(3, "[ $PMI_RANK = 1 ] && exit 5; sleep 20")).unwrap();
    assert_eq!(o.code, 5);
    let o = run(&sh(2, "[ $PMI_RANK = 0 ] && kill -9 $$; sleep 20")).unwrap();
    assert_eq!(o.code, 137);
    assert!(o.reason.unwrap().contains("signal 9"));
}

#[test]
fn pmi_over_the_inherited_fd() {
    // A rank speaking PMI-1 by hand through its descriptor: abort with code 9.
    let o = run(&sh(
        2,
        r#"[ $PMI_RANK = 1 ] && printf 'cmd=abort exitcode=9\n' >&$PMI_FD; sleep 20"#,
    ))
    .unwrap();
    assert_eq!(o.code, 9);
}

#[test]
fn exiting_without_finalize_ends_the_job() {
    let o = run(&sh(
        2,
        r#"printf 'cmd=init pmi_version=1 pmi_subversion=1\n' >&$PMI_FD; [ $PMI_RANK = 0 ] && exit 0; sleep 20"#,
    ))
    .unwrap();
    assert_eq!(o.code, 1);
    assert!(o.reason.unwrap().contains("without MPI_Finalize"));
}

#[test]
fn mpmd_apps_share_one_job_with_their_numbers() {
    // Each rank asks its application number over PMI and checks it, the job's
    // size, its place in rank order and (the second app) its directory.
    let check = |want: u32, ranks: &str, dir: &str| {
        format!(
            r#"printf 'cmd=get_appnum\n' >&$PMI_FD; read -r reply <&$PMI_FD
            [ "${{reply##*appnum=}}" = {want} ] || exit 3
            [ "$PMI_SIZE" = 5 ] || exit 4
            case " {ranks} " in *" $PMI_RANK "*) ;; *) exit 5;; esac
            [ "$(pwd)" = {dir} ] || exit 6"#
        )
    };
    let here = std::env::current_dir().unwrap();
    let mut b = App::new(
        3,
        "/bin/bash",
        vec!["-c".into(), check(1, "2 3 4", "/").into()],
    );
    b.wdir = Some("/".into());
    let spec = LaunchSpec {
        apps: vec![
            App::new(
                2,
                "/bin/bash",
                vec![
                    "-c".into(),
                    check(0, "0 1", &here.display().to_string()).into(),
                ],
            ),
            b,
        ],
        env: vec![],
        netns: vec![],
        timeout: Some(Duration::from_secs(60)),
    };
    let o = run(&spec).unwrap();
    assert_eq!(o.code, 0, "{:?}", o.reason);
    let mut empty = spec.clone();
    empty.apps[1].ranks = 0;
    assert!(matches!(run(&empty), Err(LaunchError::Ranks(0))));
    empty.apps.clear();
    assert!(matches!(run(&empty), Err(LaunchError::NoApp)));
}

#[test]
fn a_missing_program_is_an_error() {
    let spec = LaunchSpec {
        apps: vec![App::new(2, "/nonexistent/prog", vec![])],
        env: vec![],
        netns: vec![],
        timeout: None,
    };
    assert!(matches!(run(&spec), Err(LaunchError::Spawn { .. })));
}

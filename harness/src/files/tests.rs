use super::*;

/// A fresh folder for one test, removed with what it holds when the
/// guard drops (when the test ends, also by a panic).
fn folder(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("harness-files-{name}-"))
        .tempdir()
        .unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn limit_message(size: Option<u64>) -> String {
    format!("too large ({size:?})")
}

#[test]
fn a_whole_read_is_bounded_by_size_or_by_one_byte_past_the_limit() {
    let folder = folder("limit");
    let dir = folder.path();
    let file = dir.join("f");
    std::fs::write(&file, [7u8; 100]).unwrap();
    let wait = Duration::from_millis(50);
    assert_eq!(
        read_input(&file, "t", wait, 100, &limit_message, None).unwrap(),
        [7u8; 100]
    );
    let error = read_input(&file, "t", wait, 99, &limit_message, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read the t {}: too large (Some(100))",
            file.display()
        )
    );
    if Path::new("/dev/zero").exists() {
        let error = read_input(
            Path::new("/dev/zero"),
            "t",
            wait,
            1000,
            &limit_message,
            None,
        );
        assert!(
            error.unwrap_err().to_string().ends_with("too large (None)"),
            "an endless device stops one byte past the limit"
        );
    }
    let error = read_input(dir, "t", wait, 10, &limit_message, None).unwrap_err();
    assert!(error.to_string().ends_with(": it is a folder"), "{error}");
}

fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_pipe_nobody_opens_is_refused_after_the_wait() {
    let folder = folder("fifo");
    let dir = folder.path();
    let fifo = dir.join("p");
    if !mkfifo(&fifo) {
        return;
    }
    let started = Instant::now();
    let error = read_input(
        &fifo,
        "t",
        Duration::from_millis(200),
        10,
        &limit_message,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.ends_with("no program opened the pipe for writing within 0.2 s"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // With a writer that comes a little later, the bytes arrive.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            std::fs::write(&fifo, b"hello").unwrap();
        })
    };
    let bytes = read_input(&fifo, "t", Duration::from_secs(5), 10, &limit_message, None).unwrap();
    writer.join().unwrap();
    assert_eq!(bytes, b"hello");
}

#[test]
fn an_output_replaces_the_file_whole_or_not_at_all() {
    let folder = folder("output");
    let dir = folder.path();
    let file = dir.join("out.txt");
    std::fs::write(&file, "old").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    // Dropped half written: the old file, and nothing else.
    let mut output = Output::create(&file, "t").unwrap();
    output.write_all(b"half").unwrap();
    assert_eq!(names(dir).len(), 2, "the temporary file sits beside it");
    drop(output);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");
    assert_eq!(names(dir), ["out.txt"]);
    // Committed: the new contents, the old permissions.
    write_output(&file, "t", b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(names(dir), ["out.txt"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    // Interrupted (the signal handler's cleanup): nothing left.
    let mut output = Output::create(&dir.join("new.txt"), "t").unwrap();
    output.write_all(b"partial").unwrap();
    assert!(remove_unfinished_outputs() >= 1);
    assert_eq!(names(dir), ["out.txt"]);
    drop(output);
}

#[cfg(unix)]
#[test]
fn links_are_written_through_devices_in_place_and_pipes_refused() {
    let folder = folder("kinds");
    let dir = folder.path();
    let real = dir.join("real.txt");
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write_output(&link, "t", b"new").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    write_output(Path::new("/dev/null"), "t", b"gone").unwrap();
    let fifo = dir.join("p");
    if mkfifo(&fifo) {
        let error = check_output(&fifo, "trace").unwrap_err().to_string();
        assert!(error.contains("it is a pipe or a socket"), "{error}");
    }
    let error = check_output(dir, "trace").unwrap_err().to_string();
    assert!(error.ends_with("it is a folder"), "{error}");
    let error = check_output(&dir.join("missing/out"), "trace").unwrap_err();
    assert!(matches!(
        error,
        HarnessError::WriteFile { what: "trace", .. }
    ));
}

#[test]
fn an_output_may_be_neither_an_input_nor_another_output() {
    let folder = folder("distinct");
    let dir = folder.path();
    let script = dir.join("script.txt");
    std::fs::write(&script, "0 0 fire on\n").unwrap();
    let here = std::env::current_dir().unwrap();
    let error = check_distinct(&[("--inputs", &script)], &[("--save-at", &script)]).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "--save-at {} is the file of --inputs: the output would overwrite an input; write it elsewhere",
            script.display()
        )
    );
    // Another spelling of the same file, and a file not there yet.
    let other = dir.join(".").join("script.txt");
    assert!(check_distinct(&[("--inputs", &script)], &[("--dot", &other)]).is_err());
    let fresh = dir.join("x.json");
    let error = check_distinct(&[], &[("--save-at", &fresh), ("--trace", &fresh)]).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("is also the file of --save-at: one output would overwrite the other"),
        "{error}"
    );
    #[cfg(unix)]
    {
        let hard = dir.join("hard.txt");
        std::fs::hard_link(&script, &hard).unwrap();
        assert!(check_distinct(&[("--scenario", &script)], &[("--dot", &hard)]).is_err());
        let null = Path::new("/dev/null");
        check_distinct(&[("--inputs", null)], &[("--dot", null), ("--trace", null)]).unwrap();
    }
    check_distinct(
        &[("--inputs", &script)],
        &[("--dot", &dir.join("a")), ("--trace", &dir.join("b"))],
    )
    .unwrap();
    assert_eq!(std::env::current_dir().unwrap(), here);
}

use super::*;

fn site(files: &[(&str, &str)]) -> Site {
    let mut s = Site::default();
    for (p, b) in files {
        s.insert(p, b.as_bytes().to_vec());
    }
    s
}

fn opts(out: &Path, archive: &Path) -> WriteOptions {
    WriteOptions {
        out: out.to_path_buf(),
        archive: archive.to_path_buf(),
        ..Default::default()
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn writes_then_replaces_a_previous_site() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let archive = tmp.path().join("archive");
    write_site(
        &site(&[("index.html", "one"), ("a/b.html", "x")]),
        &opts(&out, &archive),
    )
    .unwrap();
    write_site(&site(&[("index.html", "two")]), &opts(&out, &archive)).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "two"
    );
    assert!(!out.join("a/b.html").exists(), "old pages are gone");
    assert!(out.join(MARKER_FILE).is_file());
    assert_eq!(names(tmp.path()), ["site"], "no temp folders left");
}

#[test]
fn refuses_foreign_folders_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("docs");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "precious").unwrap();
    let err = write_site(
        &site(&[("index.html", "x")]),
        &opts(&out, &tmp.path().join("a")),
    )
    .unwrap_err();
    assert!(err.to_string().contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("thesis.tex")).unwrap(),
        "precious"
    );
    let mut forced = opts(&out, &tmp.path().join("a"));
    forced.force = true;
    write_site(&site(&[("index.html", "x")]), &forced).unwrap();
    assert!(out.join("index.html").exists());
}

#[test]
fn refuses_the_archive_and_its_parents() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    std::fs::create_dir(&archive).unwrap();
    for out in [
        archive.clone(),
        archive.join("site"),
        tmp.path().to_path_buf(),
        archive.join("x/../../archive"),
    ] {
        let err = write_site(&site(&[("index.html", "x")]), &opts(&out, &archive)).unwrap_err();
        assert!(
            err.to_string().contains("overlaps the archive"),
            "{out:?}: {err}"
        );
    }
}

#[test]
fn refuses_root_and_escaping_paths() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        write_site(
            &site(&[("i", "x")]),
            &opts(Path::new("/"), &tmp.path().join("a"))
        )
        .is_err()
    );
    for bad in ["../evil", MARKER_FILE, "/abs", "a/../../b"] {
        let err = write_site(
            &site(&[("index.html", "x"), (bad, "x")]),
            &opts(&tmp.path().join("s"), &tmp.path().join("a")),
        )
        .unwrap_err();
        assert!(err.to_string().contains("outside the site"), "{bad}: {err}");
    }
    assert!(!tmp.path().join("evil").exists());
    assert_eq!(
        names(tmp.path()),
        Vec::<String>::new(),
        "a failed write leaves nothing"
    );
}

#[test]
fn a_link_perfdash_did_not_make_is_refused_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("www");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = tmp.path().join("site");
    std::os::unix::fs::symlink(&elsewhere, &out).unwrap();
    let err = write_site(
        &site(&[("index.html", "x")]),
        &opts(&out, &tmp.path().join("a")),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert!(err.contains("www"), "names the target: {err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(
        std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_previous_folders_mode_and_group_carry_over() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let archive = tmp.path().join("archive");
    write_site(&site(&[("index.html", "one")]), &opts(&out, &archive)).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o2750)).unwrap();
    // A group other than the user's own, where the user may choose one
    // (as root any group will do).
    let group = std::fs::metadata(&out).unwrap().gid();
    let other_group = if rustix::process::geteuid().is_root() {
        group + 1
    } else {
        group
    };
    let _ = std::os::unix::fs::chown(&out, None, Some(other_group));
    let group = std::fs::metadata(&out).unwrap().gid();
    write_site(&site(&[("index.html", "two")]), &opts(&out, &archive)).unwrap();
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o2750);
    assert_eq!(meta.gid(), group);
    assert_eq!(
        std::fs::metadata(out.join("index.html")).unwrap().gid(),
        group,
        "files inherit the group through the setgid bit"
    );
}

#[test]
fn a_reader_never_misses_a_file_while_sites_are_swapped() {
    for publish in [Publish::Auto, Publish::LinkFlip] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        let archive = tmp.path().join("archive");
        let mut o = opts(&out, &archive);
        o.publish = publish;
        let pages: Vec<(String, String)> = (0..20)
            .map(|i| (format!("p/{i}.html"), "x".repeat(1000 + i)))
            .collect();
        let make = |n: usize| {
            let mut s = Site::default();
            s.insert("index.html", format!("build {n}").into_bytes());
            for (p, b) in &pages {
                s.insert(p, b.clone().into_bytes());
            }
            s
        };
        write_site(&make(0), &o).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = std::thread::spawn({
            let (out, stop, pages) = (out.clone(), stop.clone(), pages.clone());
            move || {
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for (p, b) in &pages {
                        let got = std::fs::read_to_string(out.join(p))
                            .unwrap_or_else(|e| panic!("{p}: {e}"));
                        assert_eq!(&got, b, "{p} is whole");
                        reads += 1;
                    }
                }
                reads
            }
        });
        for n in 1..30 {
            write_site(&make(n), &o).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        assert_eq!(
            std::fs::read_to_string(out.join("index.html")).unwrap(),
            "build 29"
        );
        let left = names(tmp.path());
        match publish {
            Publish::Auto => assert_eq!(left, ["site"]),
            Publish::LinkFlip => {
                assert_eq!(left.len(), 2, "{left:?}");
                assert!(left[0].starts_with(".site.perfdash-site-"), "{left:?}");
                assert!(
                    std::fs::symlink_metadata(&out)
                        .unwrap()
                        .file_type()
                        .is_symlink()
                );
            }
        }
    }
}

#[test]
fn a_link_published_site_keeps_flipping_and_can_go_back_to_a_folder_only_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let archive = tmp.path().join("archive");
    // First a plain folder, then the fallback takes over (the one gap).
    write_site(&site(&[("index.html", "one")]), &opts(&out, &archive)).unwrap();
    let mut flip = opts(&out, &archive);
    flip.publish = Publish::LinkFlip;
    write_site(&site(&[("index.html", "two")]), &flip).unwrap();
    assert!(
        std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // An ordinary build now follows its own link.
    write_site(&site(&[("index.html", "three")]), &opts(&out, &archive)).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "three"
    );
    assert_eq!(names(tmp.path()).len(), 2, "{:?}", names(tmp.path()));
}

#[test]
fn leftovers_with_the_marker_are_removed_and_others_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let archive = tmp.path().join("archive");
    write_site(&site(&[("index.html", "one")]), &opts(&out, &archive)).unwrap();
    let staged = tmp.path().join(".site.perfdash-new-0123456789abcdef");
    std::fs::create_dir(&staged).unwrap();
    std::fs::write(staged.join(MARKER_FILE), MARKER_TEXT).unwrap();
    std::fs::write(staged.join("index.html"), "half").unwrap();
    // perfdash 0.1 moved the old site into `<tmp>/site`.
    let old = tmp.path().join(".site.perfdash-old-Ab12Cd");
    std::fs::create_dir_all(old.join("site")).unwrap();
    std::fs::write(old.join("site").join(MARKER_FILE), MARKER_TEXT).unwrap();
    let empty = tmp.path().join(".site.perfdash-new-empty");
    std::fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join(".site.perfdash-new-notes");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let other_site = tmp.path().join(".blog.perfdash-new-0123456789abcdef");
    std::fs::create_dir(&other_site).unwrap();
    std::fs::write(other_site.join(MARKER_FILE), MARKER_TEXT).unwrap();

    let (removed, kept) = remove_leftovers(&out).unwrap();
    assert_eq!(removed.len(), 3, "{removed:?}");
    assert_eq!(kept, vec![absolute(&foreign).unwrap()]);
    assert!(
        other_site.exists(),
        "another output's folders are not touched"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "one"
    );
}

#[test]
fn space_needed_counts_whole_blocks_and_folders() {
    let needed = SpaceNeeded::of([("index.html", 10u64), ("a/b.html", 5000)].into_iter());
    assert_eq!(needed.files, 2);
    assert_eq!(needed.bytes, 5010);
    // marker + 1 + 2 blocks of content + folder `a` + the site folder
    assert_eq!(needed.on_disk(), 6 * 4096);
    assert_eq!(human_bytes(1536), "1.5 KiB");
    assert_eq!(human_bytes(100), "100 B");
}

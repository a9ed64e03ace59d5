//! The lockfile readers against the REAL lockfiles in targets/: each
//! reader's answer is checked against the file read another way (a line
//! search, go.sum's hash line), and against a copy with the version
//! changed, so a reader that returned a constant, the manifest's range or
//! another package's version would fail.

use super::*;
use crate::manifest;

fn targets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(targets_dir().join(rel)).unwrap()
}

fn target(name: &str) -> Target {
    manifest::load(&targets_dir().join(name)).unwrap()
}

/// The value of `key = "..."` (or `"key": "..."`) on the first line at or
/// after the line holding `anchor`: the lockfile read by lines, not by the
/// reader under test.
fn after(text: &str, anchor: &str, key: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.trim() == anchor).unwrap();
    let line = lines[at..].iter().find(|l| l.contains(key)).unwrap();
    line.split('"').nth_back(1).unwrap().to_string()
}

#[test]
fn cargo_lock_gives_actix_webs_resolved_version_not_the_manifests_range() {
    let text = read("Cargo.lock");
    let found = cargo_lock(&text, "targets/Cargo.lock", "rust-actix", "actix-web").unwrap();
    assert_eq!(found, after(&text, "name = \"actix-web\"", "version = "));
    // The manifest says a range ("4"); the lockfile a full version.
    assert_eq!(found.split('.').count(), 3, "{found}");
    assert!(found.starts_with("4."), "{found}");
    // Another version in the file is what is read.
    let changed = text.replace(
        &format!("name = \"actix-web\"\nversion = \"{found}\""),
        "name = \"actix-web\"\nversion = \"9.9.9\"",
    );
    assert_ne!(changed, text);
    assert_eq!(
        cargo_lock(&changed, "x", "rust-actix", "actix-web").unwrap(),
        "9.9.9"
    );
    let tokio = cargo_lock(&text, "targets/Cargo.lock", "rust-axum", "tokio").unwrap();
    assert_eq!(tokio, after(&text, "name = \"tokio\"", "version = "));
}

#[test]
fn cargo_lock_says_what_it_lacks_and_does_not_pick_among_versions() {
    let e = cargo_lock(
        &read("Cargo.lock"),
        "targets/Cargo.lock",
        "rust-actix",
        "actix-webx",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "not recorded: targets/Cargo.lock has no package \"actix-webx\""
    );
    let two = r#"
[[package]]
name = "app"
version = "0.1.0"
dependencies = ["dep 2.0.0", "other"]

[[package]]
name = "dep"
version = "1.0.0"

[[package]]
name = "dep"
version = "2.0.0"

[[package]]
name = "other"
version = "0.3.0"
"#;
    assert_eq!(cargo_lock(two, "f", "app", "dep").unwrap(), "2.0.0");
    let e = cargo_lock(two, "f", "lib", "dep").unwrap_err();
    assert!(matches!(e, NotRecorded::Ambiguous { .. }), "{e}");
    assert!(e.to_string().contains("1.0.0, 2.0.0"), "{e}");
}

#[test]
fn go_mod_gives_gins_required_version_as_go_sum_has_it() {
    let text = read("go-gin/go.mod");
    let v = go_mod(&text, "targets/go-gin/go.mod", "gin").unwrap();
    assert_eq!(
        go_mod(&text, "f", "github.com/gin-gonic/gin").unwrap(),
        v,
        "the last path element names the module"
    );
    let sum = read("go-gin/go.sum");
    assert!(
        sum.contains(&format!("github.com/gin-gonic/gin {v} h1:")),
        "go.sum has {v}"
    );
    // A /vN suffix is not the name: pgx is github.com/jackc/pgx/v5.
    let pgx = go_mod(&text, "f", "pgx").unwrap();
    assert!(
        sum.contains(&format!("github.com/jackc/pgx/v5 {pgx} h1:")),
        "{pgx}"
    );
    let changed = text.replace(&format!("gin-gonic/gin {v}"), "gin-gonic/gin v0.0.1");
    assert_eq!(go_mod(&changed, "f", "gin").unwrap(), "v0.0.1");
    // A single-line require counts too; comments do not.
    let single =
        "module m\n\nrequire example.com/x v1.2.3 // indirect\n// require example.com/y v9\n";
    assert_eq!(go_mod(single, "f", "x").unwrap(), "v1.2.3");
    let e = go_mod(single, "targets/m/go.mod", "y").unwrap_err();
    assert_eq!(
        e.to_string(),
        "not recorded: targets/m/go.mod has no require of y"
    );
}

#[test]
fn package_lock_gives_express_and_fastify_as_npm_resolved_them() {
    for (target, name) in [("node-express", "express"), ("node-fastify", "fastify")] {
        let text = read(&format!("{target}/package-lock.json"));
        let v = package_lock(&text, "f", name).unwrap();
        let anchor = format!("\"node_modules/{name}\": {{");
        assert_eq!(v, after(&text, &anchor, "\"version\""), "{target}");
        let changed = text.replacen(
            &format!("{anchor}\n      \"version\": \"{v}\""),
            &format!("{anchor}\n      \"version\": \"0.0.7\""),
            1,
        );
        assert_eq!(package_lock(&changed, "f", name).unwrap(), "0.0.7");
    }
    let e = package_lock(
        &read("node-express/package-lock.json"),
        "targets/node-express/package-lock.json",
        "fastify",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "not recorded: targets/node-express/package-lock.json has no node_modules/fastify"
    );
}

#[test]
fn requirements_give_the_pinned_python_frameworks() {
    let text = read("python/requirements.txt");
    for name in [
        "django",
        "falcon",
        "fastapi",
        "robyn",
        "Jinja2",
        "psycopg-binary",
    ] {
        let v = requirements(&text, "f", name).unwrap();
        let line = text
            .lines()
            .find(|l| {
                l.to_lowercase()
                    .starts_with(&format!("{}==", name.to_lowercase()))
            })
            .unwrap();
        assert_eq!(line.split_once("==").unwrap().1, v, "{name}");
    }
    // psycopg is not psycopg-binary nor psycopg-pool.
    let psycopg = requirements(&text, "f", "psycopg").unwrap();
    assert!(text.contains(&format!("\npsycopg=={psycopg}\n")));
    let loose = "Django>=5\nuvloop==0.22.1 ; sys_platform != 'win32'\n";
    assert!(matches!(
        requirements(loose, "f", "django").unwrap_err(),
        NotRecorded::NotPinned { .. }
    ));
    assert_eq!(requirements(loose, "f", "uvloop").unwrap(), "0.22.1");
    let e = requirements(&text, "targets/python/requirements.txt", "flask").unwrap_err();
    assert_eq!(
        e.to_string(),
        "not recorded: targets/python/requirements.txt has no flask==VERSION line"
    );
}

#[test]
fn the_pom_parent_and_a_boot_jars_libraries_are_read() {
    let pom = read("java-spring/pom.xml");
    let (artifact, version) = pom_parent(&pom).unwrap();
    assert_eq!(artifact, "spring-boot-starter-parent");
    assert!(
        pom.contains(&format!("<version>{version}</version>")),
        "{version}"
    );
    assert_eq!(
        split_artifact("log4j-to-slf4j-2.24.3"),
        Some(("log4j-to-slf4j".into(), "2.24.3".into()))
    );
    assert_eq!(split_artifact("noversion"), None);
    // A zip written by another implementation (Python's zipfile).
    if !shootout_testkit::on_path("python3") {
        shootout_testkit::missing("python3 is not on PATH: no zip to read");
        return;
    }
    let dir = crate::tempdir::Dir::new();
    let jar = dir.path().join("app.jar");
    let status = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n\
             names = ['META-INF/MANIFEST.MF', 'BOOT-INF/lib/spring-webmvc-6.2.19.jar', \
             'BOOT-INF/lib/tomcat-embed-core-10.1.55.jar', 'BOOT-INF/classes/a.class']\n\
             [z.writestr(n, 'x' * 100) for n in names]\n\
             z.comment = b'a comment'\n\
             z.close()\n",
        )
        .arg(&jar)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        jar_libs(&jar).unwrap(),
        [
            ("spring-webmvc".to_string(), "6.2.19".to_string()),
            ("tomcat-embed-core".into(), "10.1.55".into())
        ]
    );
    std::fs::write(&jar, "not a zip").unwrap();
    assert!(matches!(jar_libs(&jar), Err(JarError::NotZip)));
}

/// Every shipped target's default package (its framework's) resolves
/// from its own lockfile, with no runtime asked (a stand-in versions Go's
/// standard library).
#[test]
fn every_shipped_target_names_its_frameworks_version() {
    let found = manifest::discover(&targets_dir()).unwrap();
    assert!(found.targets.len() >= 10, "{:?}", found.broken);
    let go = Ok(Found {
        version: "go1.0".into(),
        source: "stand-in".into(),
    });
    for t in &found.targets {
        let names = t.provenance.clone().unwrap_or_else(|| default_packages(t));
        assert!(!names.is_empty(), "{}", t.name);
        // Every listed package resolves; the first is the framework, whose
        // version the manifest's `framework` names.
        for (i, p) in packages(t, &names, &go).into_iter().enumerate() {
            let found = p.version.unwrap_or_else(|e| panic!("{}: {e}", t.name));
            assert!(
                found.version.chars().any(|c| c.is_ascii_digit()),
                "{}: {found:?}",
                t.name
            );
            let minor = t.framework.split_whitespace().nth(1).unwrap_or_default();
            if i == 0 && minor.starts_with(|c: char| c.is_ascii_digit()) {
                // "actix-web 4.18" in the manifest, 4.18.x resolved.
                assert!(
                    found.version.trim_start_matches('v').starts_with(minor),
                    "{}: {} resolved, the manifest says {minor}",
                    t.name,
                    found.version
                );
            }
        }
    }
    let spring = target("java-spring");
    assert_eq!(default_packages(&spring), ["spring-boot-starter-parent"]);
    let actix = target("rust-actix");
    assert_eq!(default_packages(&actix), ["actix-web"]);
    let p = packages(&actix, &default_packages(&actix), &go).remove(0);
    assert_eq!(p.version.unwrap().source, "targets/Cargo.lock");
    let node = target("node-express");
    let p = packages(&node, &["left-pad".to_string()], &go).remove(0);
    assert_eq!(
        p.version.unwrap_err().to_string(),
        "not recorded: targets/node-express/package-lock.json has no node_modules/left-pad"
    );
}

#[test]
fn a_missing_lockfile_is_named() {
    let dir = crate::tempdir::Dir::new();
    let t = Target {
        toolchain: Toolchain::Node,
        framework: "express 5".into(),
        ..Target::command("app", &dir.path().join("app"), "true")
    };
    let e = packages(
        &t,
        &default_packages(&t),
        &Err(NotRecorded::Runtime("x".into())),
    )
    .remove(0)
    .version
    .unwrap_err();
    assert!(matches!(e, NotRecorded::NoLockfile { .. }), "{e}");
    assert!(
        e.to_string().ends_with("app/package-lock.json is missing"),
        "{e}"
    );
}

#[test]
fn runtime_reports_are_shortened() {
    let cases = [
        (
            Toolchain::Cargo,
            "rustc 1.91.0 (f8297e351 2025-10-28)\nbinary: rustc\nhost: x86_64\ncargo 1.91.0 (ea2d97820 2025-10-10)\n",
            "rustc 1.91.0",
        ),
        (Toolchain::Go, "go version go1.26.8 linux/amd64\n", "go1.26.8"),
        (Toolchain::Node, "v20.20.2\n10.8.2\n", "node v20.20.2"),
        (
            Toolchain::Python3,
            "Python 3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]\n",
            "CPython 3.11.7",
        ),
        (
            Toolchain::Maven,
            "Apache Maven 3.8.7\nJava version: 17.0.15, vendor: Debian\nopenjdk version \"17.0.15\" 2025-04-15\n",
            "Java 17.0.15",
        ),
        (
            Toolchain::Maven,
            "Apache Maven 3.8.7\nJava version: 21.0.2, vendor: Eclipse\n",
            "Java 21.0.2",
        ),
    ];
    for (toolchain, text, short) in cases {
        assert_eq!(
            short_runtime(toolchain, text).as_deref(),
            Some(short),
            "{text}"
        );
    }
    assert_eq!(short_runtime(Toolchain::Go, "go: not found"), None);
    assert_eq!(short_runtime(Toolchain::Node, ""), None);
}

/// The runtime as the build sees it: this machine's rustc, read through
/// the build cache's own version report.
#[test]
fn the_runtime_is_the_toolchains_own_report() {
    let out = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    let number = version.split_whitespace().nth(1).unwrap();
    let found = runtime(Toolchain::Cargo).unwrap();
    assert_eq!(found.version, format!("rustc {number}"));
    assert_eq!(found.source, "rustc -vV");
}

/// Each toolchain on this machine reports a version the parser reads:
/// the default study's targets all name their runtime.
#[test]
fn every_present_toolchain_names_its_runtime() {
    let all = [
        Toolchain::Cargo,
        Toolchain::Go,
        Toolchain::Python3,
        Toolchain::Node,
        Toolchain::Maven,
    ];
    for toolchain in all {
        if let Some(missing) = toolchain.missing() {
            shootout_testkit::missing(format!("{missing} is not on PATH"));
            continue;
        }
        let found = runtime(toolchain).unwrap_or_else(|e| panic!("{toolchain}: {e}"));
        assert!(
            found.version.chars().any(|c| c.is_ascii_digit()),
            "{toolchain}: {found:?}"
        );
    }
}

//! The guide stays true: every relative link and `#anchor` in the README, `docs/`,
//! `workloads/README.md` and `reports/BENCHMARKS.md` lands; every `tallrow ...` command line
//! shown in a code block parses with the real command line (a synopsis names only flags its
//! subcommand has); every workload file the guide names exists and validates.

use clap::{CommandFactory, Parser};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tallrow::cli::Cli;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The guide's files, relative to the repository.
fn guide() -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("workloads/README.md"),
        PathBuf::from("reports/BENCHMARKS.md"),
    ];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(REPO).unwrap().to_path_buf())
        .collect();
    chapters.sort();
    assert!(chapters.len() >= 10, "docs/ holds the guide's chapters: {chapters:?}");
    files.extend(chapters);
    files
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(Path::new(REPO).join(file)).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// A line of a Markdown file, with whether it is code (in a fenced block, or an indented
/// block after a blank line).
struct Line<'a> {
    number: usize,
    text: &'a str,
    code: bool,
}

fn lines(src: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut indented = false;
    let mut blank_before = true;
    for (i, text) in src.lines().enumerate() {
        let trimmed = text.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            out.push(Line {
                number: i + 1,
                text,
                code: true,
            });
            blank_before = false;
            continue;
        }
        let blank = trimmed.is_empty();
        if !fenced {
            let deep = text.starts_with("    ") && !blank;
            // An indented block starts after a blank line and goes on while lines stay
            // indented or blank.
            indented = deep && (indented || blank_before);
            if !deep && !blank {
                indented = false;
            }
        }
        out.push(Line {
            number: i + 1,
            text,
            code: fenced || indented,
        });
        blank_before = blank;
    }
    out
}

/// GitHub's anchor for a heading: lower case, every character but letters, digits, spaces,
/// hyphens and underscores dropped, spaces as hyphens; a repeated one gets `-1`, `-2`, ....
fn anchors(src: &str) -> Vec<String> {
    let link = regex_lite::Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for line in lines(src) {
        if line.code || !line.text.starts_with('#') {
            continue;
        }
        let title = line.text.trim_start_matches('#').trim();
        let title = link.replace_all(title, "$1");
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// Text outside inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_guide_lands() {
    let link = regex_lite::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in guide() {
        let src = read(&file);
        for line in lines(&src) {
            if line.code {
                continue;
            }
            for m in link.captures_iter(&prose(line.text)) {
                let target = m[1].to_string();
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let resolved = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let full = Path::new(REPO).join(&resolved);
                let at = format!("{}:{}: ({target})", file.display(), line.number);
                if !full.exists() {
                    broken.push(format!("{at}: no {}", resolved.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    if full.extension().is_none_or(|e| e != "md") {
                        broken.push(format!("{at}: an anchor into a file that is not Markdown"));
                    } else if !anchors(&std::fs::read_to_string(&full).unwrap())
                        .iter()
                        .any(|a| a == anchor)
                    {
                        broken.push(format!("{at}: no heading #{anchor} in {}", resolved.display()));
                    }
                }
            }
        }
    }
    assert!(checked > 20, "the guide's chapters link to each other: {checked} links");
    assert!(broken.is_empty(), "links that do not land:\n{}", broken.join("\n"));
}

/// A command line of the guide: where it is, and its words as a shell splits them.
struct Shown {
    at: String,
    text: String,
}

/// The `tallrow ...` (or `cargo run ... -- ...`) command lines in the guide's code blocks,
/// with continued lines joined: a trailing backslash, or, for a synopsis, the lines indented
/// under it.
fn commands() -> Vec<Shown> {
    let mut out = Vec::new();
    for file in guide() {
        let src = read(&file);
        let all = lines(&src);
        let mut i = 0;
        while i < all.len() {
            let line = &all[i];
            i += 1;
            if !line.code {
                continue;
            }
            let indent = line.text.len() - line.text.trim_start().len();
            let start = line.text.trim_start().trim_start_matches("$ ");
            let Some(rest) = start
                .strip_prefix("tallrow ")
                .map(str::to_string)
                .or_else(|| cargo_run(start))
            else {
                continue;
            };
            let mut text = format!("tallrow {rest}");
            while i < all.len() && all[i].code {
                let next = all[i].text;
                let next_indent = next.len() - next.trim_start().len();
                if text.ends_with('\\') {
                    text.pop();
                } else if !(next_indent > indent && next.trim_start().starts_with('[')) {
                    break;
                }
                text.push(' ');
                text.push_str(next.trim());
                i += 1;
            }
            out.push(Shown {
                at: format!("{}:{}", file.display(), line.number),
                text,
            });
        }
    }
    out
}

/// What follows `--` in `cargo run [...] -- ARGS`.
fn cargo_run(line: &str) -> Option<String> {
    let rest = line.strip_prefix("cargo run ")?;
    let (_, args) = rest.split_once(" -- ")?;
    Some(args.to_string())
}

/// Words as a POSIX shell splits them (quotes and backslashes), up to the first unquoted
/// `|`, `;`, `&&` or redirection.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '|' | ';' | '>' | '<' | '&' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

#[test]
fn every_command_line_in_the_guide_parses() {
    let shown = commands();
    assert!(shown.len() > 30, "the guide shows commands: {}", shown.len());
    let mut wrong = Vec::new();
    let mut synopses = 0;
    for s in &shown {
        let w = words(&s.text);
        if s.text.contains('[') || s.text.contains("...") {
            synopses += 1;
            if let Err(e) = synopsis_flags_exist(&w) {
                wrong.push(format!("{}: {}\n  {e}", s.at, s.text));
            }
        } else if let Err(e) = Cli::try_parse_from(&w) {
            let e = e.to_string();
            wrong.push(format!("{}: {}\n  {}", s.at, s.text, e.lines().next().unwrap_or("")));
        }
    }
    assert!(synopses > 5, "the guide shows synopses: {synopses}");
    assert!(
        wrong.is_empty(),
        "command lines the command line refuses:\n{}",
        wrong.join("\n")
    );
}

/// A synopsis (`tallrow load WORKLOAD [--backend URL] ...`): its subcommand exists, and every
/// `--flag` it names is one of that subcommand's.
fn synopsis_flags_exist(words: &[String]) -> Result<(), String> {
    let root = Cli::command();
    let mut cmd = &root;
    for w in &words[1..] {
        match cmd.find_subcommand(w) {
            Some(sub) => cmd = sub,
            None => break,
        }
    }
    if cmd.get_name() == "tallrow" {
        return Err(format!("no subcommand {:?}", words.get(1)));
    }
    let flag = regex_lite::Regex::new(r"--([a-z][a-z0-9-]*)").unwrap();
    for w in words {
        for m in flag.captures_iter(w) {
            let name = &m[1];
            let known = name == "help"
                || cmd
                    .get_arguments()
                    .any(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name)));
            if !known {
                return Err(format!("`tallrow {}` has no --{name}", cmd.get_name()));
            }
        }
    }
    Ok(())
}

#[test]
fn every_workload_file_the_guide_names_exists_and_validates() {
    let path = regex_lite::Regex::new(r"(?:\.\./)*((?:workloads|benches|tests/fixtures)/[a-z0-9_./-]+\.toml)").unwrap();
    let mut named = BTreeMap::new();
    for file in guide() {
        for (n, line) in read(&file).lines().enumerate() {
            for m in path.captures_iter(line) {
                named
                    .entry(m[1].to_string())
                    .or_insert_with(|| format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    assert!(named.contains_key("workloads/quickstart.toml"), "{named:?}");
    let mut wrong = Vec::new();
    assert!(named.contains_key("workloads/designs/blog.toml"), "{named:?}");
    for (name, at) in &named {
        // A design file is checked as one; a workload as a workload.
        let file = Path::new(REPO).join(name);
        let checked = if name.starts_with("workloads/designs/") {
            tallrow::design::Design::from_file(&file).map(drop)
        } else {
            tallrow::workload::Workload::from_file(&file).map(drop)
        };
        if let Err(e) = checked {
            wrong.push(format!("{at}: {name}: {e}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "workload files the guide names:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_readers_of_the_guide_find_what_they_check() {
    // The checks above read what they should: a heading's anchor, a continued synopsis, a
    // quoted URL.
    assert_eq!(
        anchors("# A\n### The highest rate that holds: `--find-max`\n## A\n"),
        ["a", "the-highest-rate-that-holds---find-max", "a-1"]
    );
    let src = "x\n\n    tallrow load W [--backend URL]\n                 [--no-bulk]\n\n```\ncargo run --release -- verify w.toml --backend \"hbase://$X?api=thrift2\" | head\n```\n";
    let all = lines(src);
    assert!(all[2].code && all[3].code && !all[0].code, "indented code");
    assert!(all[6].code, "fenced code");
    assert_eq!(
        words("tallrow verify w.toml --backend \"hbase://$X?api=thrift2\" | head"),
        ["tallrow", "verify", "w.toml", "--backend", "hbase://$X?api=thrift2"]
    );
    assert!(synopsis_flags_exist(&words("tallrow load W [--backend URL] [--no-bulk]")).is_ok());
    assert!(synopsis_flags_exist(&words("tallrow load W [--no-such-flag]")).is_err());
    assert!(Cli::try_parse_from(words("tallrow load w.toml --no-such-flag")).is_err());
}

/// `tallrow ARGS` through the real binary: its stdout, after it exited 0.
fn tallrow_out(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tallrow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The help names every backend form the parser takes (`load`, `run` and `verify --help`,
/// and `tallrow help backends` in full) and every exit code; `tallrow help SUBCOMMAND` is
/// that subcommand's long help, and an unknown topic is a command-line error.
#[test]
fn the_help_names_every_backend_form_and_exit_code() {
    use tallrow::cli::help::{FORMS, Kind, backends, exit_codes};
    for sub in ["load", "run", "verify"] {
        let help = tallrow_out(&[sub, "--help"]);
        assert!(
            help.contains("api=native") && help.contains("tallrow help backends"),
            "{help}"
        );
        for f in FORMS {
            let hfile = matches!(f.kind, Kind::HfileLocal | Kind::HfileHdfs);
            assert_eq!(
                help.contains(f.syntax),
                sub == "load" || !hfile,
                "{sub}: {} in {help}",
                f.syntax
            );
        }
    }
    assert_eq!(tallrow_out(&["help", "backends"]), backends());
    assert_eq!(tallrow_out(&["help", "exit-codes"]), exit_codes());
    let root = tallrow_out(&["--help"]);
    for code in [
        "0  done",
        "1  failed",
        "2  the command line",
        "3  run --start-at",
        "130  load stopped",
    ] {
        assert!(root.contains(code), "{code} in {root}");
    }
    let load = tallrow_out(&["help", "load"]);
    assert!(load.contains("tallrow load") && load.contains("--no-bulk"), "{load}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .args(["help", "backend"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("\"backend\"") && err.contains("backends, exit-codes"),
        "{err}"
    );
}

/// docs/workloads.md's table of the shipped workloads' mixes says what each file's `[run]`
/// makes of it: every operation with its share of the mix, the shares of reads and writes,
/// and how users are picked.
#[test]
fn the_table_of_mixes_is_each_workloads_own() {
    let doc = read(Path::new("docs/workloads.md"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("workloads"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    let mut wrong = Vec::new();
    for file in files {
        let w = tallrow::workload::Workload::from_file(&file).unwrap();
        if w.design.is_some() {
            // A design of the workload's own runs none of the seed designs' operations.
            continue;
        }
        let total: f64 = w.run.mix.iter().map(|(_, weight)| weight).sum();
        let share = |weight: f64| format!("{:.1}%", 100.0 * weight / total);
        let ops: Vec<String> = w
            .run
            .mix
            .iter()
            .map(|(op, weight)| format!("`{}` {}", op.name(), share(*weight)))
            .collect();
        let writes: f64 = w
            .run
            .mix
            .iter()
            .filter(|(op, _)| op.writes())
            .map(|(_, weight)| weight)
            .sum::<f64>()
            + 0.0; // an empty sum is -0.0
        let name = file.file_name().unwrap().to_str().unwrap();
        let row = format!(
            "| `{name}` | {} | {} / {} | {} |",
            ops.join(", "),
            share(total - writes),
            share(writes),
            format!("{:?}", w.run.skew).to_lowercase()
        );
        if !doc.lines().any(|l| l.starts_with(&row)) {
            wrong.push(row);
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/workloads.md lacks these rows (each then its last cell):\n{}",
        wrong.join("\n")
    );
}

/// `scripts/test_times.py --budget docs/testing.md ...` at the end of every suite run: the
/// budget tables in docs/testing.md parse, their steps add up to the suite's 30 minutes, and
/// a run is told, by step and by test area, what took longer than its line and by how much
/// (an area's time being its tests' share of their step's wall time), without failing.
#[test]
fn the_suites_budget_adds_up_to_30_minutes_and_a_run_is_told_what_is_over() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |steps: &str, default: &str, faults: &str| {
        std::fs::write(d.join("steps.tsv"), steps).unwrap();
        std::fs::write(d.join("default.xml"), default).unwrap();
        std::fs::write(d.join("faults.xml"), faults).unwrap();
        let out = std::process::Command::new("python3")
            .current_dir(REPO)
            .arg("scripts/test_times.py")
            .args(["--steps", d.join("steps.tsv").to_str().unwrap()])
            .args(["--budget", "docs/testing.md", d.join("times.tsv").to_str().unwrap()])
            .arg(format!("default={}", d.join("default.xml").display()))
            .arg(format!("faults={}", d.join("faults.xml").display()))
            .output()
            .expect("python3");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    let junit = |cases: &[(&str, &str, u32)]| {
        let mut x = String::from("<testsuites>");
        for (binary, test, s) in cases {
            x += &format!("<testsuite name=\"{binary}\"><testcase name=\"{test}\" time=\"{s}\"/></testsuite>");
        }
        x + "</testsuites>"
    };
    let steps = |clippy: u32, nextest: u32, faults: u32| {
        let mut at = 0;
        let mut out = String::new();
        for (name, took) in [
            ("Python test environment (.venv)", 60),
            ("Apache HBase on HDFS", 90),
            ("cargo fmt --check", 10),
            ("cargo clippy --all-targets -- -D warnings", clippy),
            ("cargo test --no-run --timings (every test target, built once)", 300),
            ("cargo test --doc", 10),
            ("cargo nextest run", nextest),
            ("cargo nextest run faults:: (regions split and moved)", faults),
            ("stopping the services", 30),
        ] {
            out += &format!("{at}\t{name}\n");
            at += took;
        }
        out + &format!("{at}\tend\n")
    };
    let faults = junit(&[("tallrow::it", "faults::d", 250)]);

    // 1,100 s of nextest shared 600:300:100 by the tests' times.
    let default = junit(&[
        ("tallrow::it", "contract::a", 600),
        ("tallrow::it", "native::b", 300),
        ("tallrow", "store::c", 100),
    ]);
    let over = run(&steps(90, 1100, 300), &default, &faults);
    let line = |name: &str| {
        let l = over
            .lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in {over}"));
        l[name.len()..].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // The steps' budget adds up to 30 minutes; this run took 33:10.
    assert_eq!(line("total"), "33:10 30:00 over by 3:10", "{over}");
    assert_eq!(
        line("formatting and both clippy passes"),
        "1:40 1:30 over by 0:10",
        "{over}"
    );
    assert_eq!(line("the services"), "2:30 2:30", "{over}");
    assert_eq!(
        line("the Store contract, model and DAO suites"),
        "11:00 5:30 over by 5:30",
        "{over}"
    );
    assert_eq!(line("unit tests"), "1:50 0:15 over by 1:35", "{over}");
    assert_eq!(line("the binary on the embedded store"), "0:00 1:00", "{over}");
    let verdict = over.lines().last().unwrap();
    assert!(
        verdict.starts_with(
            "over budget: formatting and both clippy passes by 0:10; nextest, all but the fault tests by 1:35; the fault tests by 1:30; unit tests by 1:35;"
        ),
        "{verdict}"
    );

    // Each area's tests taking its budget's share of 975 s, in 900 s of nextest: all within.
    let default = junit(&[
        ("tallrow", "store::c", 15),
        ("tallrow::it", "contract::a", 330),
        ("tallrow::it", "serve::e", 75),
        ("tallrow::it", "hbase::f", 75),
        ("tallrow::it", "native::b", 90),
        ("tallrow::it", "hfile::g", 180),
        ("tallrow::it", "secure::h", 105),
        ("tallrow::it", "kube::i", 45),
        ("tallrow::it", "run_cli::j", 60),
    ]);
    let within = run(&steps(80, 900, 200), &default, &faults);
    assert_eq!(within.lines().last(), Some("within budget"), "{within}");
}

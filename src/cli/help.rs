//! `tallrow help TOPIC`: what is not one subcommand's flags. `backends` lists every
//! `--backend` form with its options, built from the parsers' own option lists;
//! `exit-codes` what each exit status means. docs/backends.md and docs/running.md render
//! the same text, and tests hold the three together.

use crate::store::backend::Backend;
use std::fmt::Write as _;

/// One way of writing `--backend`: its syntax, an example the parser takes, and what it is.
pub struct Form {
    /// What the parser makes of it.
    pub kind: Kind,
    /// As written in the help: placeholders in capitals, options in brackets.
    pub syntax: &'static str,
    /// A URL of this form that [`Backend::parse`] accepts.
    pub example: &'static str,
    /// One line on what it reaches.
    pub what: &'static str,
}

/// The kinds of store a backend URL can name; [`Kind::of`] tells which a parsed URL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `embedded:`
    Embedded,
    /// `memory:`
    Memory,
    /// `null:`
    Null,
    /// `api=native` through ZooKeeper.
    NativeZooKeeper,
    /// `api=native` through the masters (`registry=rpc`).
    NativeMasters,
    /// A Thrift1 gateway.
    Thrift1,
    /// A Thrift2 gateway.
    Thrift2,
    /// `bigtable://`
    Bigtable,
    /// `hfile:` on the local file system.
    HfileLocal,
    /// `hfile:hdfs://`
    HfileHdfs,
    /// `delay:`
    Delay,
}

impl Kind {
    /// Every kind, for the tests that check the help names each.
    pub const ALL: [Kind; 11] = [
        Kind::Embedded,
        Kind::Memory,
        Kind::Null,
        Kind::NativeZooKeeper,
        Kind::NativeMasters,
        Kind::Thrift1,
        Kind::Thrift2,
        Kind::Bigtable,
        Kind::HfileLocal,
        Kind::HfileHdfs,
        Kind::Delay,
    ];

    /// The kind of a parsed backend (a new variant of [`Backend`] must be given one here).
    pub fn of(backend: &Backend) -> Kind {
        use hbase_client::Registry;
        match backend {
            Backend::Embedded(_) => Kind::Embedded,
            Backend::Memory => Kind::Memory,
            Backend::Null => Kind::Null,
            Backend::Native(spec) => match spec.registry {
                Registry::ZooKeeper { .. } => Kind::NativeZooKeeper,
                Registry::Rpc { .. } => Kind::NativeMasters,
            },
            Backend::Hbase(spec) => match spec.api {
                crate::wire::Api::Thrift1 => Kind::Thrift1,
                crate::wire::Api::Thrift2 => Kind::Thrift2,
            },
            Backend::Bigtable(_) => Kind::Bigtable,
            Backend::Hfile(dir) => match dir {
                crate::bulkload::fs::Location::Local(_) => Kind::HfileLocal,
                crate::bulkload::fs::Location::Hdfs { .. } => Kind::HfileHdfs,
            },
            Backend::Delay(..) => Kind::Delay,
        }
    }
}

/// Every backend form, in the order the help lists them.
pub const FORMS: &[Form] = &[
    Form {
        kind: Kind::Embedded,
        syntax: "embedded:PATH",
        example: "embedded:data/tour",
        what: "the embedded store (fjall) in PATH; the default, as embedded:data/NAME (NAME the workload's)",
    },
    Form {
        kind: Kind::Memory,
        syntax: "memory:",
        example: "memory:",
        what: "in this process only, gone when it exits",
    },
    Form {
        kind: Kind::Null,
        syntax: "null:",
        example: "null:",
        what: "checks writes and discards them, reads nothing: the loader's own cost",
    },
    Form {
        kind: Kind::NativeZooKeeper,
        syntax: "hbase://QUORUM[/PARENT]?api=native",
        example: "hbase://zk1.example.com,zk2.example.com:2181/hbase?api=native",
        what: "HBase's own RPC, as its Java client, found through ZooKeeper (QUORUM: HOST[:PORT],..., port 2181; PARENT: the znode, /hbase)",
    },
    Form {
        kind: Kind::NativeMasters,
        syntax: "hbase://MASTER[:PORT],...?api=native&registry=rpc",
        example: "hbase://master1.example.com,master2.example.com?api=native&registry=rpc",
        what: "HBase's own RPC, found through the masters, no ZooKeeper (HBase 2.5 and later; port 16000)",
    },
    Form {
        kind: Kind::Thrift1,
        syntax: "hbase://HOST:PORT[?api=thrift1]",
        example: "hbase://gw.example.com:9090",
        what: "a Thrift1 gateway (hbase thrift start) or tallrow serve",
    },
    Form {
        kind: Kind::Thrift2,
        syntax: "hbase://HOST:PORT?api=thrift2",
        example: "hbase://gw.example.com:9090?api=thrift2",
        what: "a Thrift2 gateway (hbase thrift2 start) or tallrow serve --api thrift2",
    },
    Form {
        kind: Kind::Bigtable,
        syntax: "bigtable://PROJECT/INSTANCE[?channels=N]",
        example: "bigtable://my-project/my-instance?channels=4",
        what: "Cloud Bigtable (application-default credentials), or its emulator where BIGTABLE_EMULATOR_HOST=HOST:PORT is set; N gRPC connections (1)",
    },
    Form {
        kind: Kind::HfileLocal,
        syntax: "hfile:DIR",
        example: "hfile:data/hfiles",
        what: "load only: HBase's HFiles in a local DIR, handed to HBase by tallrow bulkload",
    },
    Form {
        kind: Kind::HfileHdfs,
        syntax: "hfile:hdfs://NAMENODE:PORT/DIR",
        example: "hfile:hdfs://nn.example.com:8020/tallrow/hfiles",
        what: "load only: the same, written into HDFS",
    },
    Form {
        kind: Kind::Delay,
        syntax: "delay:DELAY[,stall=LENGTH@AT][,clock=virtual]:URL",
        example: "delay:2ms,stall=1s@10s,clock=virtual:memory:",
        what: "URL with DELAY added to every call (and a stall of LENGTH, AT after opening): checks the harness",
    },
];

/// `tallrow help backends`: every form on a line, then the options each family of forms
/// takes, as the parsers list them.
pub fn backends() -> String {
    let mut s = String::from("Backends: --backend URL, one of\n\n");
    let width = FORMS.iter().map(|f| f.syntax.len()).max().unwrap_or(0);
    for f in FORMS {
        let _ = writeln!(s, "  {:width$}  {}", f.syntax, f.what);
    }
    s.push_str("\nOptions after `?`, joined by `&`:\n\n  api=native:\n");
    wrap(
        &mut s,
        crate::store::hbase::native::OPTIONS.trim_start_matches("api=native, "),
    );
    s.push_str("  api=thrift1|thrift2:\n");
    wrap(&mut s, crate::store::hbase::OPTIONS);
    s.push_str(
        "\nKerberos and TLS: docs/secured.md; HBase's own RPC and its settings: docs/hbase.md;\n\
         what each store keeps and guarantees: docs/backends.md.\n",
    );
    s
}

/// `list` (comma-separated) on lines of at most 96 columns, indented by four.
fn wrap(s: &mut String, list: &str) {
    let mut line = String::from("   ");
    for item in list.split(", ") {
        if line.len() + 1 + item.len() + 1 > 96 {
            s.push_str(line.trim_end_matches(' '));
            s.push('\n');
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(item);
        line.push(',');
    }
    s.push_str(line.trim_end_matches(','));
    s.push('\n');
}

/// The exit statuses, each with what it means: `tallrow help exit-codes` and the root
/// `--help`.
pub const EXIT_CODES: &[(u8, &str)] = &[
    (
        0,
        "done: a load or bulk load complete, verify found no difference, a run met every --slo",
    ),
    (
        1,
        "failed: an error (one line says what and where), a difference verify found, a run that missed an --slo or was not valid, compare found a regression or could not judge a figure a threshold names",
    ),
    (2, "the command line is wrong (one line says what)"),
    (3, "run --start-at: the time had passed; nothing was measured"),
    (
        4,
        "history --fail-within K: a regression starts within the last K runs, at least --fail-above large, and no --acknowledged line names it",
    ),
    (
        130,
        "load stopped by Ctrl-C (SIGINT) or SIGTERM: what it wrote is journaled, and --resume continues it",
    ),
];

/// `tallrow help exit-codes`.
pub fn exit_codes() -> String {
    let mut s = String::from("Exit codes:\n\n");
    for (code, what) in EXIT_CODES {
        let _ = writeln!(s, "  {code}  {what}");
    }
    s
}

/// The `--backend` flag's help: every form's syntax (`hfile:` only for `load`).
pub fn backend_flag(load: bool) -> String {
    let forms: Vec<&str> = FORMS
        .iter()
        .filter(|f| load || !matches!(f.kind, Kind::HfileLocal | Kind::HfileHdfs))
        .map(|f| f.syntax)
        .collect();
    format!(
        "Where the data is (default embedded:data/NAME, NAME the workload's): {}. `tallrow help backends` says what each is and lists their options",
        forms.join(", ")
    )
}

/// `tallrow help [SUBCOMMAND|TOPIC]`: a topic's text, a subcommand's long help, or the
/// whole command's with the topics listed.
pub fn print(topic: Option<&str>) -> anyhow::Result<std::process::ExitCode> {
    match topic {
        Some("backends") => print!("{}", backends()),
        Some("exit-codes") => print!("{}", exit_codes()),
        Some(name) => {
            let mut cmd = super::command();
            let Some(sub) = cmd.find_subcommand_mut(name) else {
                let subs: Vec<String> = super::command()
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                let topics: Vec<&str> = TOPICS.iter().map(|t| t.0).collect();
                eprintln!(
                    "error: tallrow help: no subcommand or topic {name:?}; expected one of {} or {}",
                    subs.join(", "),
                    topics.join(", ")
                );
                return Ok(std::process::ExitCode::from(2));
            };
            let sub = sub.clone().bin_name(format!("tallrow {name}"));
            print!("{}", sub.clone().render_long_help());
        }
        None => {
            print!("{}", super::command().render_long_help());
            println!("\nTopics (tallrow help TOPIC):");
            for (t, what) in TOPICS {
                println!("  {t:10}  {what}");
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The topics `tallrow help` takes besides a subcommand's name.
pub const TOPICS: &[(&str, &str)] = &[
    ("backends", "every --backend URL form and its options"),
    ("exit-codes", "what each exit status means"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_parses_as_its_form_and_every_kind_has_a_form() {
        for f in FORMS {
            let b = Backend::parse(f.example, std::path::Path::new("data/x"))
                .unwrap_or_else(|e| panic!("{}: {e}", f.example));
            assert_eq!(Kind::of(&b), f.kind, "{}", f.example);
        }
        for k in Kind::ALL {
            assert!(FORMS.iter().any(|f| f.kind == k), "{k:?} has no line in the help");
        }
    }

    #[test]
    fn the_guide_renders_the_same_text() {
        let doc = |name: &str| std::fs::read_to_string(format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let fenced = |text: &str| format!("```text\n{text}```\n");
        assert!(
            doc("backends.md").contains(&fenced(&backends())),
            "docs/backends.md holds `tallrow help backends` as it prints:\n{}",
            backends()
        );
        assert!(
            doc("running.md").contains(&fenced(&exit_codes())),
            "docs/running.md holds `tallrow help exit-codes` as it prints:\n{}",
            exit_codes()
        );
    }
}

//! Pre-split loads and the per-region counts, through the binary: on the embedded store and
//! against real HBase's Thrift2 server, the regions the backend reports are the split points
//! of the load manifest, and the rows counted per region are what scans of each region's key
//! range read back. A run's report lists every region and draws the heat map.

use crate::common::{Harness, SchemaTables, real_hbase, real_hbase_there, small_fixture, tallrow};
use serde_json::Value;
use std::path::Path;
use tallrow::keys::to_string_binary;
use tallrow::store::{Scan, Store, scan_each};

fn manifest(reports: &Path) -> Value {
    let mut files: Vec<_> = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    serde_json::from_str(&std::fs::read_to_string(files.pop().unwrap()).unwrap()).unwrap()
}

/// Checks a `--regions asked` load's manifest against the regions `store` reports and
/// against scans of each region's key range; returns how many tables took `asked` regions.
fn check_against_scans(m: &Value, store: &dyn Store, asked: usize) -> usize {
    assert_eq!(m["regions_asked"], asked as u64);
    let mut full = 0;
    for (name, t) in m["tables"].as_object().unwrap() {
        let splits: Vec<&str> = t["split_points"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: split points in {t}"))
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        let reported = store.regions(name).unwrap();
        let shown: Vec<String> = reported.iter().map(|k| to_string_binary(k)).collect();
        assert_eq!(
            shown, splits,
            "{name}: the backend's regions are the split points asked for"
        );
        if reported.len() + 1 == asked {
            full += 1;
        }
        let regions = t["regions"].as_array().unwrap();
        assert_eq!(regions.len(), reported.len() + 1, "{name}");
        let written: u64 = regions.iter().map(|r| r["rows_written"].as_u64().unwrap()).sum();
        assert_eq!(
            written,
            t["row_writes"].as_u64().unwrap(),
            "{name}: every acknowledged row write counted once"
        );
        let mut starts = vec![Vec::new()];
        starts.extend(reported.iter().cloned());
        let mut ends = reported.clone();
        ends.push(Vec::new());
        for (i, r) in regions.iter().enumerate() {
            assert_eq!(r["start"], to_string_binary(&starts[i]), "{name} region {i}");
            assert_eq!(r["end"], to_string_binary(&ends[i]), "{name} region {i}");
            let mut scanned = 0u64;
            scan_each(
                store,
                name,
                &Scan::range(starts[i].clone(), ends[i].clone()),
                1000,
                |_| {
                    scanned += 1;
                    true
                },
            )
            .unwrap();
            let counted = r["rows_written"].as_u64().unwrap();
            if name == "weibo:relation" {
                // A relation row takes one mutation per follow that names it.
                assert!(
                    scanned <= counted && (scanned == 0) == (counted == 0),
                    "{name} region {i}"
                );
            } else {
                assert_eq!(
                    scanned, counted,
                    "{name} region {i}: counted rows = rows the region's scan reads"
                );
            }
        }
    }
    full
}

#[test]
fn a_pre_split_embedded_load_counts_each_region_as_its_scan_reads() {
    let dir = tempfile::tempdir().unwrap();
    let wl = small_fixture();
    let data = dir.path().join("data");
    let url = format!("embedded:{}", data.display());
    let out = tallrow(
        dir.path(),
        &["load", wl.to_str().unwrap(), "--backend", &url, "--regions", "8"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("hottest region"), "{}", out.stdout);
    let m = manifest(&dir.path().join("reports"));
    // The fixture salts actions into 16 buckets: 8 regions of 2 buckets each.
    let actions: Vec<&str> = m["tables"]["useractions"]["split_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(actions, ["\\x02", "\\x04", "\\x06", "\\x08", "\\x0A", "\\x0C", "\\x0E"]);
    {
        let store = tallrow::store::embedded::Embedded::open(&data).unwrap();
        let full = check_against_scans(&m, &store, 8);
        assert!(full >= 6, "most tables have 8 regions: {full}");
        // Quantile splits spread the load: no region of a big table takes twice its share.
        for t in ["weibo:content", "series", "blog"] {
            let ratio = m["tables"][t]["write_max_mean"].as_f64().unwrap();
            assert!((1.0..2.0).contains(&ratio), "{t}: {ratio}");
        }
    }

    // A run over the same data reports every region of every table it touched.
    let out = tallrow(
        dir.path(),
        &[
            "run",
            wl.to_str().unwrap(),
            "--backend",
            &url,
            "--ops",
            "400",
            "--warmup",
            "0s",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("regions (warm-up included"), "{}", out.stdout);
    let report = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a run report folder");
    let csv = std::fs::read_to_string(report.join("regions.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "table,start,end,rows_written,bytes_written,rows_read,bytes_read,write_share,read_share,region"
    );
    let series: Vec<&str> = csv.lines().filter(|l| l.starts_with("series,")).collect();
    assert_eq!(series.len(), 8, "{csv}");
    let read: u64 = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(5).unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(read > 0, "the run read rows: {csv}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    let regions = summary["regions"].as_array().unwrap();
    assert!(
        regions.iter().any(|r| r["read_max_mean"].as_f64().is_some()),
        "{regions:?}"
    );
    assert!(regions.iter().all(|r| r["regions"].as_u64().unwrap() >= 1));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<h2>Regions</h2>") && html.contains("regions.svg"));
    let svg = std::fs::read_to_string(report.join("regions.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("rows read"), "{svg}");
}

#[test]
fn region_counts_are_refused_outside_their_range() {
    let dir = tempfile::tempdir().unwrap();
    let wl = small_fixture();
    // The flag stands for load.regions: validated as the file's value.
    for (bad, says) in [
        ("0", "--regions 0: must be between 1 and 1024, got 0"),
        ("1025", "--regions 1025: must be between 1 and 1024, got 1025"),
        ("x", "invalid value 'x' for '--regions <N>'"),
    ] {
        let out = tallrow(
            dir.path(),
            &["load", wl.to_str().unwrap(), "--backend", "null:", "--regions", bad],
        );
        assert_ne!(out.code, 0);
        assert!(out.stderr.contains(says), "{}", out.stderr);
    }
    let text = std::fs::read_to_string(&wl).unwrap() + "regions = 0\n";
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, text).unwrap();
    let out = tallrow(dir.path(), &["load", bad.to_str().unwrap(), "--backend", "null:"]);
    assert_ne!(out.code, 0);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("load.regions"), "{}", out.stderr);
}

/// On real HBase through Thrift2: the table HBase creates has the regions asked for, and the
/// rows counted per region are what HBase's scans of each region read back. Through Thrift1,
/// which cannot pre-split, `--regions` is one line that points at `api=thrift2`.
#[test]
fn a_pre_split_load_on_real_hbase_counts_each_region_as_its_scan_reads() {
    if !real_hbase_there() {
        return;
    }
    let turn = SchemaTables::thrift2();
    let dir = tempfile::tempdir().unwrap();
    let wl = small_fixture();
    let url = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    let out = tallrow(
        dir.path(),
        &["load", wl.to_str().unwrap(), "--backend", &url, "--regions", "4"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let m = manifest(&dir.path().join("reports"));
    let full = check_against_scans(&m, &*turn.store(), 4);
    assert!(full >= 6, "most tables have 4 regions: {full}");
    drop(turn);

    let turn = SchemaTables::buffered_binary();
    let url = format!("hbase://{}", real_hbase("TALLROW_HBASE_THRIFT1").unwrap());
    let out = tallrow(
        dir.path(),
        &["load", wl.to_str().unwrap(), "--backend", &url, "--regions", "4"],
    );
    assert_ne!(out.code, 0);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("api=thrift2"), "{}", out.stderr);
    drop(turn);
}

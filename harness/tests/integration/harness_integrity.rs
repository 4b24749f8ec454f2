//! Snapshots that are not this run's, or not what was saved (issue 25,
//! cases 5 and 6): another scenario under the same name, edited fields,
//! a removed reserve, flipped bits. Each is refused before the run, naming
//! the field or the entry.

use crate::common;

use std::path::Path;

use common::{assert_refused, harness, small_toml, stderr, temp_dir, with_field};
use ecs_snapshot::json_checksum;
use serde_json::{Value, json};

const SMALL: &str = "scenarios/small.toml";

fn save(args: &[&str], path: &Path, at: &str) {
    let p = path.to_str().unwrap();
    let all = [args, &["--ticks", at, "--save-at", at, p]].concat();
    let output = harness(&all);
    assert!(output.status.success(), "{}", stderr(&output));
}

/// The `Run` resource's entry of a JSON snapshot.
fn run_entry(document: &mut Value) -> &mut Value {
    document["resources"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["name"] == "Run")
        .unwrap()
}

/// An edit of a snapshot's JSON.
type Edit = fn(&mut Value);

/// Recomputes the checksum of every resource entry, as
/// `ecs_snapshot::json_checksum` documents it.
fn reseal(document: &mut Value) {
    for entry in document["resources"].as_array_mut().unwrap() {
        let covered = json!([entry["name"], entry["value"]]);
        entry["checksum"] = json!(json_checksum(&covered));
    }
}

#[test]
fn case_5_the_same_name_with_other_rules_is_refused_naming_the_field() {
    let dir = temp_dir("identity");
    let snap = dir.path().join("small.bin");
    save(&["--scenario", SMALL, "--threads", "1"], &snap, "10");
    let other = dir.path().join("other.toml");
    std::fs::write(&other, with_field(&small_toml(), "speed_max", "250.0")).unwrap();
    let (o, s) = (other.to_str().unwrap(), snap.to_str().unwrap());
    assert_refused(
        &harness(&["--scenario", o, "--ticks", "20", "--load", s]),
        "taken with other rules: field `shmup.enemies.speed_max` is 200.0 in the snapshot \
         (of scenario `small`), but 250.0 in this run's scenario `small`",
    );
    // The scale, and a copy with the same rules under another file name,
    // which is the same run.
    assert_refused(
        &harness(&[
            "--scenario",
            SMALL,
            "--ticks",
            "20",
            "--scale",
            "2",
            "--load",
            s,
        ]),
        "taken with scale 1, but this run is with scale 2 (--scale)",
    );
    let copy = dir.path().join("copy.toml");
    std::fs::write(&copy, small_toml()).unwrap();
    let output = harness(&[
        "--scenario",
        copy.to_str().unwrap(),
        "--ticks",
        "20",
        "--load",
        s,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn case_6_edited_fields_are_refused_by_the_checksum_naming_the_entry() {
    let dir = temp_dir("edited");
    let snap = dir.path().join("small.json");
    save(&["--scenario", SMALL, "--threads", "1"], &snap, "10");
    let s = snap.to_str().unwrap();
    let saved: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    let edits: [(&str, Edit); 2] = [
        ("ticks", |d| {
            run_entry(d)["value"]["ticks"] = json!(20_000_000)
        }),
        ("reserves", |d| {
            run_entry(d)["value"]["reserves"] = json!([]);
        }),
    ];
    for (name, edit) in edits {
        let mut document = saved.clone();
        edit(&mut document);
        std::fs::write(&snap, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
        assert_refused(
            &harness(&["--scenario", SMALL, "--ticks", "30000000", "--load", s]),
            "snapshot damaged: resource `Run` (entry 1) does not match its checksum",
        );
        // Resealed, the same edits are refused by what the rules allow.
        reseal(&mut document);
        std::fs::write(&snap, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
        let expected = match name {
            "ticks" => {
                "resource `SpawnQueue`: waves planned: 0, but the director plans 333334 by tick 20000000"
            }
            _ => "field `reserves` of resource `Run` lists the systems []",
        };
        assert_refused(
            &harness(&["--scenario", SMALL, "--ticks", "30000000", "--load", s]),
            expected,
        );
    }
    // A removed key is a shape error, naming the field.
    let mut document = saved.clone();
    run_entry(&mut document)["value"]
        .as_object_mut()
        .unwrap()
        .remove("reserves");
    reseal(&mut document);
    std::fs::write(&snap, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    assert_refused(
        &harness(&["--scenario", SMALL, "--ticks", "20", "--load", s]),
        "missing field `reserves`",
    );
}

#[test]
fn case_6_flipped_bits_never_run() {
    let dir = temp_dir("flips");
    let snap = dir.path().join("small.bin");
    save(&["--scenario", SMALL, "--threads", "1"], &snap, "10");
    let bytes = std::fs::read(&snap).unwrap();
    let s = snap.to_str().unwrap();
    // Forty bits spread over the file, each refused as damage.
    for k in 0..40 {
        let at = k * (bytes.len() - 1) / 39;
        let mut damaged = bytes.clone();
        damaged[at] ^= 1 << (k % 8);
        std::fs::write(&snap, &damaged).unwrap();
        let output = harness(&[
            "--scenario",
            SMALL,
            "--threads",
            "1",
            "--ticks",
            "20",
            "--load",
            s,
        ]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "byte {at}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains("damaged") || message.contains("not a snapshot of format version 3"),
            "byte {at}: {message}"
        );
        assert_eq!(message.lines().count(), 1, "{message}");
    }
    // A damaged value is named with its entry and bytes.
    let mut damaged = bytes.clone();
    let at = bytes.len() / 2;
    damaged[at] ^= 0x40;
    std::fs::write(&snap, &damaged).unwrap();
    let output = harness(&["--scenario", SMALL, "--ticks", "20", "--load", s]);
    let message = stderr(&output);
    assert!(
        message.contains("(bytes ") || message.contains(", from byte "),
        "{message}"
    );
}

use super::*;

#[test]
fn the_builtin_scenarios_parse() {
    for name in BUILTIN_SCENARIOS {
        let scenario = Scenario::builtin(name).unwrap();
        assert_eq!(scenario.name, name);
    }
    assert!(matches!(
        Scenario::builtin("shmup").unwrap().kind(),
        ScenarioKind::Shmup(_)
    ));
    let particles = Scenario::builtin("particles").unwrap();
    let ScenarioKind::Particles(p) = particles.kind() else {
        panic!("particles is a particle scenario")
    };
    assert_eq!(p.count, 1_000_000);
    let movers = Scenario::builtin("movers").unwrap();
    assert_eq!((movers.ticks, movers.tick_rate), (100, 60.0));
    let ScenarioKind::Movers(m) = movers.kind() else {
        panic!("movers is a movers scenario")
    };
    assert_eq!(
        *m,
        Movers {
            count: 1000,
            spawn_per_tick: 10,
            speed: 20.0,
            min_x: 0.0,
            max_x: 100.0
        }
    );
}

#[test]
fn the_movers_band_must_be_ordered() {
    let text = MOVERS_TOML.replace("min_x = 0.0", "min_x = 150.0");
    let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
    assert_eq!(
        error,
        "scenario m.toml: field `min_x` of [movers] (150) must not exceed `max_x` (100)"
    );
    let text = MOVERS_TOML.replace("count = 1000", "count = 0");
    let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
    assert!(
        error.ends_with("field `count` of [movers] must be above 0, got 0"),
        "{error}"
    );
}

#[test]
fn every_float_is_checked_finite_and_in_size_nan_included() {
    for (from, to, field) in [
        ("speed_max = 200.0", "speed_max = nan", "speed_max"),
        (
            "amplitude_max = 90.0",
            "amplitude_max = inf",
            "amplitude_max",
        ),
        (
            "frequency_max = 1.0",
            "frequency_max = nan",
            "frequency_max",
        ),
        ("width = 640.0", "width = 1e10", "width"),
    ] {
        assert!(SHMUP_TOML.contains(from), "{from}");
        let text = SHMUP_TOML.replacen(from, to, 1);
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(
            error.contains(&format!("field `{field}` of [shmup.")),
            "{error}"
        );
        assert!(
            error.contains("must be a finite number between -1e9 and 1e9"),
            "{error}"
        );
    }
    let text = MOVERS_TOML.replace("max_x = 100.0", "max_x = nan");
    let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
    assert!(
        error.ends_with(
            "field `max_x` of [movers] must be a finite number between -1e9 and 1e9, got NaN"
        ),
        "{error}"
    );
}

#[test]
fn waves_must_be_a_tick_apart_and_the_tick_rate_in_range() {
    let text = SHMUP_TOML.replace("wave_interval = 2.5", "wave_interval = 0.01");
    let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
    assert!(
        error.ends_with("field `wave_interval` of [shmup.enemies] (0.01 s) must be at least one tick (1/tick_rate = 0.016666668 s), or every wave starts on the same tick"),
        "{error}"
    );
    let text = SHMUP_TOML.replace("wave_interval = 2.5", "wave_interval = 0.0167");
    assert!(Scenario::parse(&text, "t.toml").is_ok());
    for rate in ["0.0", "nan", "1e-300", "2e6"] {
        let text = SHMUP_TOML.replace("tick_rate = 60.0", &format!("tick_rate = {rate}"));
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(
            error.contains("field `tick_rate` must be between 0.001 and 1000000"),
            "{error}"
        );
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let scenario = Scenario::parse(&format!("\u{feff}{MOVERS_TOML}"), "b.toml").unwrap();
    assert_eq!(scenario.name, "movers");
    let error = Scenario::parse("\u{feff}name = 1\n", "b.toml")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("scenario b.toml: line 1, column 8: "),
        "{error}"
    );
    assert!(!error.contains('\u{feff}'), "{error}");
}

#[test]
fn a_name_resolves_to_a_builtin_and_a_path_to_a_file() {
    assert_eq!(Scenario::resolve("particles").unwrap().name, "particles");
    assert!(matches!(
        Scenario::resolve("tetris"),
        Err(HarnessError::UnknownScenario { name }) if name == "tetris"
    ));
    assert!(matches!(
        Scenario::resolve("missing/tetris.toml"),
        Err(HarnessError::ReadFile {
            what: "scenario",
            ..
        })
    ));
}

#[test]
fn a_missing_field_names_the_line_and_the_field() {
    let text = SHMUP_TOML.replace("height = 360.0\n", "");
    let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
    assert!(error.starts_with("scenario t.toml: line "), "{error}");
    assert!(
        error.ends_with(": missing field `height` (in [shmup.arena])"),
        "{error}"
    );
}

#[test]
fn a_wrong_type_names_the_line() {
    let text = SHMUP_TOML.replace("count = 2", "count = \"two\"");
    let line = text.lines().position(|l| l.contains("\"two\"")).unwrap() + 1;
    let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
    assert!(
        error.contains(&format!("line {line}, column 9: ")),
        "{error}"
    );
    assert!(
        error.ends_with("(field `count` of [shmup.players])"),
        "{error}"
    );
}

#[test]
fn a_misspelt_field_is_refused() {
    let text = SHMUP_TOML.replace("bounty =", "bounti =");
    let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
    assert!(error.contains("unknown field `bounti`"), "{error}");
}

#[test]
fn out_of_range_values_name_the_table_and_field() {
    let text = SHMUP_TOML.replace("sine_share = 0.5", "sine_share = 1.5");
    let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
    assert_eq!(
        error,
        "scenario t.toml: field `sine_share` of [shmup.enemies] must be between 0 and 1, got 1.5"
    );
    let error = Scenario::parse("name = \"empty\"\n", "e.toml")
        .unwrap_err()
        .to_string();
    assert!(error.contains("exactly one of the tables"), "{error}");
}

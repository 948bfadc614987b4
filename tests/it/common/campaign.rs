//! Campaign files for the tests: [`CampaignToml`] starts from a small campaign on the demo's
//! two components and takes setters for what a test changes, so each test states only its
//! difference from the usual file. Files no test changes are in `tests/fixtures/campaigns`.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// `tests/fixtures/campaigns/NAME`.
pub fn campaign_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/campaigns")
        .join(name)
}

/// One `[[component]]` of a campaign file.
#[derive(Debug, Clone)]
pub struct ComponentToml {
    name: String,
    timing_name: String,
    curve: String,
    allowed: Option<String>,
    limits: Option<(u32, u32)>,
}

impl ComponentToml {
    pub fn new(name: &str, timing_name: &str, curve: &str) -> Self {
        Self {
            name: name.into(),
            timing_name: timing_name.into(),
            curve: curve.into(),
            allowed: None,
            limits: None,
        }
    }

    /// The demo's IFS (LUCIA name ATMIFS, the bundled SR curve).
    pub fn demo_ifs() -> Self {
        Self::new("IFS", "ATMIFS", "curves/mn4_sr_cmip6_ifs.csv")
    }

    /// The demo's NEMO (LUCIA name oceanx, the bundled SR curve, the ORCA1 allowed list).
    pub fn demo_nemo() -> Self {
        Self::new("NEMO", "oceanx", "curves/mn4_sr_cmip6_nemo.csv")
            .allowed("nemo_orca1_allowed_nproc.txt")
    }

    pub fn name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }

    pub fn allowed(mut self, file: &str) -> Self {
        self.allowed = Some(file.into());
        self
    }

    pub fn no_allowed(mut self) -> Self {
        self.allowed = None;
        self
    }

    /// `min_nproc` and `max_nproc`.
    pub fn limits(mut self, min: u32, max: u32) -> Self {
        self.limits = Some((min, max));
        self
    }
}

/// A campaign file: top-level settings (in order), components, then tables written as given
/// (`[original]`, `[executor]`, ...).
#[derive(Debug, Clone)]
pub struct CampaignToml {
    settings: Vec<(String, String)>,
    components: Vec<ComponentToml>,
    tables: String,
}

impl Default for CampaignToml {
    /// Two predicted tests of two repetitions each, a few iterations, on the demo's IFS and
    /// NEMO ([`ComponentToml::demo_ifs`], [`ComponentToml::demo_nemo`]).
    fn default() -> Self {
        let settings = [
            ("max_nproc", "672"),
            ("step", "24"),
            ("top", "2"),
            ("initial_step", "48"),
            ("minimum_step", "24"),
            ("repetitions", "2"),
            ("period_s", "2700"),
        ];
        Self {
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            components: vec![ComponentToml::demo_ifs(), ComponentToml::demo_nemo()],
            tables: String::new(),
        }
    }
}

impl CampaignToml {
    /// Sets top-level `key` to `value` as TOML text (numbers as they are, strings quoted by
    /// the caller or with [`CampaignToml::set_str`]), in place when it is already there.
    pub fn set(mut self, key: &str, value: impl Display) -> Self {
        let value = value.to_string();
        match self.settings.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.settings.push((key.into(), value)),
        }
        self
    }

    /// Adds top-level `key` right after the setting `after` (for errors that name a line).
    pub fn set_after(mut self, after: &str, key: &str, value: impl Display) -> Self {
        let at = self.settings.iter().position(|(k, _)| k == after).unwrap() + 1;
        self.settings.insert(at, (key.into(), value.to_string()));
        self
    }

    /// Sets top-level `key` to the string `value`.
    pub fn set_str(self, key: &str, value: &str) -> Self {
        self.set(key, format!("{value:?}"))
    }

    pub fn components(mut self, components: Vec<ComponentToml>) -> Self {
        self.components = components;
        self
    }

    /// Appends `text` (whole tables) after the components.
    pub fn table(mut self, text: &str) -> Self {
        self.tables.push_str(text);
        self
    }

    /// The file's text.
    pub fn text(&self) -> String {
        let mut out = String::from("\n");
        for (key, value) in &self.settings {
            out.push_str(&format!("{key} = {value}\n"));
        }
        for c in &self.components {
            out.push_str(&format!(
                "\n[[component]]\nname = {:?}\ntiming_name = {:?}\ncurve = {:?}\n",
                c.name, c.timing_name, c.curve
            ));
            if let Some(allowed) = &c.allowed {
                out.push_str(&format!("allowed = {allowed:?}\n"));
            }
            if let Some((min, max)) = c.limits {
                out.push_str(&format!("min_nproc = {min}\nmax_nproc = {max}\n"));
            }
        }
        out.push_str(&self.tables);
        out
    }

    /// Writes the demo's inputs (curves, allowed list) into `dir` and the file as `dir/NAME`;
    /// returns the file's path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        autolb::campaign::demo::write_demo_inputs(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, self.text()).unwrap();
        path
    }
}

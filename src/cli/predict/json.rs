//! The shapes of `predict --json` and `predict --front --json`, as serialisable structs (the
//! key order is the field order, a contract for scripts).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Serialize as DeriveSerialize;

use autolb::interp::Method;
use autolb::machine::ResourceUse;
use autolb::model::ModelKind;
use autolb::predict::{Prediction, Scored, Settings};

/// PEs keyed by component name, in component order.
pub struct NamedPes<'a> {
    names: &'a [String],
    nproc: &'a [u32],
}

impl Serialize for NamedPes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.names.len()))?;
        for (name, p) in self.names.iter().zip(self.nproc) {
            map.serialize_entry(name, p)?;
        }
        map.end()
    }
}

/// Counts keyed by component name, in component order, computed for the output (ranks).
pub struct NamedCounts<'a> {
    names: &'a [String],
    counts: Vec<u32>,
}

impl Serialize for NamedCounts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        NamedPes {
            names: self.names,
            nproc: &self.counts,
        }
        .serialize(s)
    }
}

/// One resource's share of a configuration (without its name, which keys it).
#[derive(DeriveSerialize)]
struct ResourceJson {
    units: u32,
    nodes: u32,
    idle_units: u32,
    cost_share: f64,
}

/// The resources keyed by name, in the campaign file's order.
struct Resources<'a>(&'a [ResourceUse]);

impl Serialize for Resources<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for r in self.0 {
            map.serialize_entry(
                &r.name,
                &ResourceJson {
                    units: r.units,
                    nodes: r.nodes,
                    idle_units: r.idle_units,
                    cost_share: r.cost_share,
                },
            )?;
        }
        map.end()
    }
}

/// The bill of a configuration, with a machine or queues.
#[derive(DeriveSerialize)]
struct BillingJson<'a> {
    nodes: u32,
    billed_cores: u32,
    idle_cores: u32,
    cost: f64,
    queue: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Resources<'a>>,
}

/// One configuration. `fittingness` is left out on the front, which has no single TTS_w.
#[derive(DeriveSerialize)]
pub struct ConfigJson<'a> {
    /// Cores per component (MPI ranks x threads per rank).
    nproc: NamedPes<'a>,
    /// With a hybrid component only: MPI ranks and threads per rank of each component.
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<NamedCounts<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<NamedPes<'a>>,
    total_nproc: u32,
    sypd: f64,
    chsy: f64,
    coupling_cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    fittingness: Option<f64>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    billing: Option<BillingJson<'a>>,
}

impl<'a> ConfigJson<'a> {
    pub fn new(names: &'a [String], c: &'a Scored) -> Self {
        ConfigJson {
            nproc: NamedPes {
                names,
                nproc: &c.nproc,
            },
            ranks: c.is_threaded().then(|| NamedCounts {
                names,
                counts: c.ranks(),
            }),
            threads: c.is_threaded().then_some(NamedPes {
                names,
                nproc: &c.threads,
            }),
            total_nproc: c.total_nproc,
            sypd: c.sypd,
            chsy: c.chsy,
            coupling_cost: c.coupling_cost,
            fittingness: Some(c.fittingness),
            billing: c.billing.as_ref().map(|b| BillingJson {
                nodes: b.nodes,
                billed_cores: b.billed_cores,
                idle_cores: b.idle_cores,
                cost: b.cost,
                queue: b.queue.as_deref(),
                resources: (!b.resources.is_empty()).then_some(Resources(&b.resources)),
            }),
        }
    }

    /// Without fittingness (a point of the front).
    pub fn unranked(names: &'a [String], c: &'a Scored) -> Self {
        ConfigJson {
            fittingness: None,
            ..ConfigJson::new(names, c)
        }
    }
}

/// A proposal: its rank, the configuration and, with a calibrated model, its SYPD band.
#[derive(DeriveSerialize)]
struct Ranked<'a> {
    rank: usize,
    #[serde(flatten)]
    config: ConfigJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sypd_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sypd_high: Option<f64>,
}

/// What the prediction ran with, so that the output says what it answers.
#[derive(DeriveSerialize)]
struct SettingsJson {
    tts_w: f64,
    max_nproc: u32,
    step: u32,
    extra_pes: u32,
    interp: Method,
    model: ModelKind,
    top: usize,
}

/// The `predict --json` object.
#[derive(DeriveSerialize)]
pub struct PredictionJson<'a> {
    components: &'a [String],
    candidates: u64,
    considered: u64,
    baseline: ConfigJson<'a>,
    top: Vec<Ranked<'a>>,
    settings: SettingsJson,
    /// Which model ranked, with `--measured`/`--model`/`--steps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<ModelKind>,
}

impl<'a> PredictionJson<'a> {
    /// `bands` are the proposals' SYPD bands (empty for the standalone model); `model_kind`
    /// names the model when one was asked for.
    pub fn new(
        p: &'a Prediction,
        settings: &Settings,
        model_kind: Option<ModelKind>,
        bands: &[(f64, f64)],
    ) -> Self {
        let top = p
            .top
            .iter()
            .enumerate()
            .map(|(i, c)| Ranked {
                rank: i + 1,
                config: ConfigJson::new(&p.components, c),
                sypd_low: bands.get(i).map(|b| b.0),
                sypd_high: bands.get(i).map(|b| b.1),
            })
            .collect();
        PredictionJson {
            components: &p.components,
            candidates: p.configurations,
            considered: p.considered,
            baseline: ConfigJson::new(&p.components, &p.baseline),
            top,
            settings: SettingsJson {
                tts_w: settings.tts_w,
                max_nproc: settings.max_nproc,
                step: settings.step,
                extra_pes: settings.extra_pes,
                interp: settings.interp,
                model: model_kind.unwrap_or(ModelKind::Standalone),
                top: settings.top,
            },
            model: model_kind,
        }
    }
}

/// A configuration that is the top-1 for the TTS_w in `(tts_w_from, tts_w_to]`.
#[derive(DeriveSerialize)]
pub struct WinnerJson<'a> {
    pub tts_w_from: f64,
    pub tts_w_to: f64,
    #[serde(flatten)]
    pub config: ConfigJson<'a>,
}

/// The `predict --front --json` object.
#[derive(DeriveSerialize)]
pub struct FrontJson<'a> {
    pub components: &'a [String],
    pub front: Vec<ConfigJson<'a>>,
    pub winners: Vec<WinnerJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<&'static str>,
}

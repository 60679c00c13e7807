//! Ablations: which of recall's parts a run uses, so one command measures each part's
//! contribution on the same ingest and the same machine state.

use std::str::FromStr;

use crate::OptionError;
use crate::recall::{FusionMethod, RecallConfig};

/// Which dense rankings are fused with the keywords. `use` is the main (default) model, `e5`
/// the companion; a list switched off gets weight 0 and adds nothing to the fusion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DenseLists {
    /// Keywords only.
    None,
    /// The main model's list.
    Use,
    /// The companion's list.
    E5,
    /// Both (the default).
    #[default]
    Both,
}

impl DenseLists {
    pub const ALL: [DenseLists; 4] = [
        DenseLists::Both,
        DenseLists::Use,
        DenseLists::E5,
        DenseLists::None,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DenseLists::None => "none",
            DenseLists::Use => "use",
            DenseLists::E5 => "e5",
            DenseLists::Both => "both",
        }
    }

    /// `config` with the lists this leaves out weighted 0.
    pub fn apply(self, mut config: RecallConfig) -> RecallConfig {
        if matches!(self, DenseLists::None | DenseLists::E5) {
            config.dense_weight = 0.0;
        }
        if matches!(self, DenseLists::None | DenseLists::Use) {
            config.companion_weight = 0.0;
        }
        config
    }
}

impl FromStr for DenseLists {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DenseLists::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| OptionError::new("dense lists", s, "none, use, e5, both"))
    }
}

/// Whether the query priors (recency, named time spans, whose words) weigh the fused scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PriorsSwitch {
    #[default]
    On,
    Off,
}

impl PriorsSwitch {
    pub fn name(self) -> &'static str {
        match self {
            PriorsSwitch::On => "on",
            PriorsSwitch::Off => "off",
        }
    }

    pub fn apply(self, config: RecallConfig) -> RecallConfig {
        match self {
            PriorsSwitch::On => config,
            PriorsSwitch::Off => config.without_priors(),
        }
    }
}

impl FromStr for PriorsSwitch {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "on" => Ok(PriorsSwitch::On),
            "off" => Ok(PriorsSwitch::Off),
            _ => Err(OptionError::new("priors switch", s, "on, off")),
        }
    }
}

/// The label of a run with these switches.
pub fn arm_label(dense: DenseLists, priors: PriorsSwitch, fusion: FusionMethod) -> String {
    format!(
        "dense={},priors={},fusion={}",
        dense.name(),
        priors.name(),
        fusion.name()
    )
}

/// Every combination of dense lists and priors over `base` (labelled by [`arm_label`]), `base`
/// under the given switches first; then the other fusion methods with every list and the
/// priors on.
pub fn ablation_grid(base: &RecallConfig) -> Vec<(String, RecallConfig)> {
    let mut out = Vec::new();
    for priors in [PriorsSwitch::On, PriorsSwitch::Off] {
        for dense in DenseLists::ALL {
            out.push((
                arm_label(dense, priors, base.fusion),
                priors.apply(dense.apply(base.clone())),
            ));
        }
    }
    for fusion in FusionMethod::ALL {
        if fusion != base.fusion {
            out.push((
                arm_label(DenseLists::Both, PriorsSwitch::On, fusion),
                RecallConfig {
                    fusion,
                    ..base.clone()
                },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_lists_zero_exactly_the_lists_left_out() {
        let base = RecallConfig::default();
        let w = |d: DenseLists| {
            let c = d.apply(base.clone());
            (c.dense_weight, c.companion_weight, c.keyword_weight)
        };
        assert_eq!(w(DenseLists::None), (0.0, 0.0, base.keyword_weight));
        assert_eq!(
            w(DenseLists::Use),
            (base.dense_weight, 0.0, base.keyword_weight)
        );
        assert_eq!(
            w(DenseLists::E5),
            (0.0, base.companion_weight, base.keyword_weight)
        );
        assert_eq!(DenseLists::Both.apply(base.clone()), base);
        assert_eq!("e5".parse::<DenseLists>(), Ok(DenseLists::E5));
        assert!("bm25".parse::<DenseLists>().is_err());
    }

    #[test]
    fn the_grid_covers_every_combination_once() {
        let grid = ablation_grid(&RecallConfig::default());
        assert_eq!(grid.len(), 10);
        assert_eq!(grid[0].0, "dense=both,priors=on,fusion=above-chance");
        assert_eq!(grid[0].1, RecallConfig::default());
        let labels: std::collections::HashSet<&str> = grid.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(labels.len(), 10);
        let configs: Vec<&RecallConfig> = grid.iter().map(|g| &g.1).collect();
        assert!(
            configs
                .iter()
                .enumerate()
                .all(|(i, c)| configs[..i].iter().all(|d| d != c)),
            "every arm ranks differently"
        );
        assert_eq!(grid[9].0, "dense=both,priors=on,fusion=rank");
        assert_eq!(grid[9].1.fusion, FusionMethod::Rank);
        let off = &grid[7].1;
        assert_eq!(grid[7].0, "dense=none,priors=off,fusion=above-chance");
        assert_eq!(off.recency_half_life_days, 0.0);
        assert_eq!(off.time_window_boost, 1.0);
        assert_eq!(off.agent_words_weight, 1.0);
    }
}

/// The weights of the three fused lists, written `dense:keywords:companion` (`1:1.5:1`): an
/// arm of a weight grid, each measured on the same ingest as the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionWeights {
    /// The main model's list.
    pub dense: f64,
    /// The keyword list.
    pub keyword: f64,
    /// The companion's list.
    pub companion: f64,
}

impl FusionWeights {
    /// `config` with these weights.
    pub fn apply(self, mut config: RecallConfig) -> RecallConfig {
        config.dense_weight = self.dense;
        config.keyword_weight = self.keyword;
        config.companion_weight = self.companion;
        config
    }

    /// The arm's label in the report.
    pub fn label(self) -> String {
        format!("weights={}:{}:{}", self.dense, self.keyword, self.companion)
    }
}

impl FromStr for FusionWeights {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refused = || {
            OptionError::new(
                "weights",
                s,
                "three weights of 0 or more, dense:keywords:companion",
            )
        };
        let parts: Vec<f64> = s
            .split(':')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| refused())?;
        match parts[..] {
            [dense, keyword, companion] if parts.iter().all(|w| w.is_finite() && *w >= 0.0) => {
                Ok(Self {
                    dense,
                    keyword,
                    companion,
                })
            }
            _ => Err(refused()),
        }
    }
}

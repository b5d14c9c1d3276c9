//! The mechanism-setting flags of `dpqr release` (`--rounds`, `--eta`, …); their help
//! lists each mechanism's default, read from the catalogue.

use clap::{Args, ValueEnum};
use dp_bench::catalogue::setting_help;
use dp_bench::settings::{SettingKind, Settings};
use dp_mechanisms::iterative::OracleChoice;

/// `--oracle`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum OracleArg {
    Auto,
    Exhaustive,
    Maxcsp,
    Ilp,
}

/// A whole number for a count flag; 0 passes here and is refused, with the flag's name, by
/// [`Settings::check_values`].
fn whole_number(text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .map_err(|_| "give a whole number of at least 1".to_string())
}

#[derive(Args)]
pub(crate) struct SettingsArgs {
    #[arg(long, value_name = "N", help = setting_help(SettingKind::Rounds),
          value_parser = whole_number, allow_hyphen_values = true)]
    pub(crate) rounds: Option<usize>,
    #[arg(long, value_name = "ETA", help = setting_help(SettingKind::Eta),
          allow_hyphen_values = true)]
    pub(crate) eta: Option<f64>,
    #[arg(long, value_name = "S", help = setting_help(SettingKind::Samples),
          value_parser = whole_number, allow_hyphen_values = true)]
    pub(crate) samples: Option<usize>,
    #[arg(long, value_name = "ALPHA", help = setting_help(SettingKind::Alpha),
          allow_hyphen_values = true)]
    pub(crate) alpha: Option<f64>,
    #[arg(long, value_name = "TOL", help = setting_help(SettingKind::Tolerance),
          allow_hyphen_values = true)]
    pub(crate) tolerance: Option<f64>,
    #[arg(long, value_name = "N", help = setting_help(SettingKind::MaxIterations),
          value_parser = whole_number, allow_hyphen_values = true)]
    pub(crate) max_iterations: Option<usize>,
    #[arg(long, value_enum, help = setting_help(SettingKind::Oracle))]
    pub(crate) oracle: Option<OracleArg>,
}

impl SettingsArgs {
    /// The settings given (not yet checked: the catalogue entry checks them).
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            rounds: self.rounds,
            eta: self.eta,
            samples: self.samples,
            alpha: self.alpha,
            tolerance: self.tolerance,
            max_iterations: self.max_iterations,
            oracle: self.oracle.map(|o| match o {
                OracleArg::Auto => OracleChoice::Auto,
                OracleArg::Exhaustive => OracleChoice::Exhaustive,
                OracleArg::Maxcsp => OracleChoice::MaxCsp,
                OracleArg::Ilp => OracleChoice::Ilp,
            }),
        }
    }
}

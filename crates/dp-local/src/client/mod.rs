//! The client side: local randomizers. Everything here sees one client's private input and
//! produces the one message that leaves the client; nothing here may depend on
//! [`crate::server`] (checked by the test `client_code_never_imports_the_server`).

pub mod baselines;
pub mod encoding;
pub mod point_release;
pub mod table_sampled;

pub use baselines::{
    ExactDistribution, FourierParity, FrequencyOracle, OracleMessage, OracleReport, ParityMessage,
    PerAttributeRr, SampledTableOracle,
};
pub use encoding::{IncrementEncoding, MarginalEncoding, RoundedEncoding};
pub use point_release::{PointRelease, PointReleaseMessage};
pub use table_sampled::{SampledTableRelease, TableEncoding, TableMessage};

use rand::CryptoRng;

/// A local randomizer: an ε-LDP map from one client's private input to the message it
/// sends (seed 004 §5; Kasiviswanathan et al. 2011 for the local model).
///
/// **Guarantee.** For any two inputs `x, y` of one client and any set of messages `E`,
/// `P[randomize(x) ∈ E] ≤ e^ε · P[randomize(y) ∈ E]`: the *local* model, where the
/// neighbouring relation is "any two inputs of one client". A local ε composes across the
/// messages of one client, never across clients, and is not a central guarantee of the
/// same ε under replace-one or add/remove (it implies one, but the two are accounted
/// separately; see docs/mechanisms/local.md).
pub trait LocalRandomizer: Send + Sync {
    /// The private input of one client.
    type Input: ?Sized;
    /// The message the client sends.
    type Message: Send;

    /// The ε of the ε-LDP guarantee.
    fn epsilon(&self) -> f64;

    /// Randomize one client's input. Errors (never panics) on an input outside the
    /// randomizer's domain, before any randomness is drawn.
    fn randomize(
        &self,
        input: &Self::Input,
        rng: &mut dyn CryptoRng,
    ) -> crate::Result<Self::Message>;
}

//! The server side: aggregators of the clients' messages. Nothing here can reach a client's
//! raw input — only messages ([`crate::client::LocalRandomizer::Message`]) come in.

use crate::client::PointReleaseMessage;
use crate::{LocalError, Result};

/// The average `W̄ = (1/n) Σ W_{x_i}` of point-release messages (seed 004 Theorem 5.1, step
/// 2): an unbiased estimate of the clients' mean point, `c/√n`-subgaussian.
pub fn mean_point(messages: &[PointReleaseMessage]) -> Result<Vec<f64>> {
    let first = messages.first().ok_or_else(|| LocalError::Input {
        reason: "no messages to aggregate".into(),
    })?;
    let dim = first.0.len();
    let mut sum = vec![0.0; dim];
    for (i, m) in messages.iter().enumerate() {
        if m.0.len() != dim {
            return Err(LocalError::Input {
                reason: format!("message {i} has {} coordinates, expected {dim}", m.0.len()),
            });
        }
        for (s, v) in sum.iter_mut().zip(&m.0) {
            *s += v;
        }
    }
    let n = messages.len() as f64;
    Ok(sum.into_iter().map(|s| s / n).collect())
}

//! Projection onto a polytope `conv{a_0, …, a_{N−1}}` by accelerated projected gradient on
//! the convex weights ([`crate::FrankWolfeVariant::Accelerated`]):
//!
//! ```text
//!     min_{λ ∈ Δ_N} F(λ) = ‖Aλ − y‖²_W,     A = [a_0 … a_{N−1}],
//! ```
//!
//! FISTA (Beck–Teboulle 2009) with the Euclidean projection onto the simplex
//! (Michelot's algorithm), backtracking on the step size and function-value restarts
//! (O'Donoghue–Candès 2015). `∇F(λ) = −2Aᵀc` with `c = W(y − Aλ)`, i.e. one call of
//! [`AtomicBody::atom_scores`] (the oracle's batch kernel) and one of
//! [`AtomicBody::add_atoms_weighted`] (its adjoint) per iteration; the iterate is always a
//! convex combination of atoms, so a projection onto a hull of records stays a weighted
//! synthetic dataset.
//!
//! Certificate: the same Frank–Wolfe duality gap as the other variants,
//! `gap(v) = 2(max_a ⟨c, a⟩ − ⟨c, v⟩) ≥ f(v) − min_K f` at `v = Aλ`, evaluated every
//! [`CHECK_EVERY`] iterations and always for the returned point, with the same relative
//! stopping rule (`gap ≤ tol · f(v_0)`, `v_0` the oracle's vertex for `W·y`, which is also
//! the starting point).

use crate::bodies::{AtomicBody, argmax};
use crate::error::{GeometryError, Result};
use crate::frank_wolfe::{
    BestVertexStart, FrankWolfeResult, FrankWolfeSettings, SolveStatus, best_vertex_start, wdist,
};
use crate::points::dot;

/// Iterations between duality-gap evaluations (each costs one extra oracle call).
pub const CHECK_EVERY: usize = 8;

/// Euclidean projection of `v` onto the probability simplex, in place (Michelot 1986:
/// the threshold τ of `max(v_i − τ, 0)` is found by repeatedly dropping entries ≤ τ).
pub(crate) fn project_simplex(v: &mut [f64], idx: &mut Vec<usize>) {
    idx.clear();
    idx.extend(0..v.len());
    let mut tau = (v.iter().sum::<f64>() - 1.0) / v.len() as f64;
    loop {
        let before = idx.len();
        idx.retain(|&i| v[i] > tau);
        if idx.is_empty() {
            // only possible through round-off: keep the largest entry
            if let Some(i) = argmax(v) {
                v.fill(0.0);
                v[i] = 1.0;
            }
            return;
        }
        let s: f64 = idx.iter().map(|&i| v[i]).sum();
        tau = (s - 1.0) / idx.len() as f64;
        if idx.len() == before {
            break;
        }
    }
    for x in v.iter_mut() {
        *x = (*x - tau).max(0.0);
    }
}

/// The accelerated solver behind [`crate::frank_wolfe_project_atoms`] with
/// [`crate::FrankWolfeVariant::Accelerated`]; `w` are the validated norm weights and `y`
/// the validated target. `iterations` counts gradient steps (accepted or restarted),
/// `oracle_calls` counts calls of `atom_scores` (gradients, gap evaluations and the step-size
/// estimate).
pub(crate) fn accelerated_project_atoms<B: AtomicBody + ?Sized>(
    body: &B,
    y: &[f64],
    w: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let dim = body.dim();
    let n = body.num_atoms();
    let par = settings.parallelism;
    let BestVertexStart {
        mut c,
        mut scores,
        start,
        vertex: mut vx,
        f0,
    } = best_vertex_start(body, y, w, par)?;
    let mut oracle_calls = 1;
    let mut x = vec![0.0; n];
    x[start] = 1.0;
    let threshold = settings.relative_gap_tolerance * f0;

    // Step size: L ≥ 2·λ_max(AᵀWA) on sum-zero directions (projection onto the simplex
    // ignores constant shifts of the gradient), estimated by power iteration with a 1.1
    // safety factor; backtracking below repairs an underestimate.
    let mut lip = {
        let mut u: Vec<f64> = (0..n)
            .map(|i| ((i.wrapping_mul(2_654_435_761) >> 7) % 1024) as f64 - 511.5)
            .collect();
        let mut t = vec![0.0; dim];
        let mut lam: f64 = 0.0;
        for _ in 0..12 {
            let mean = u.iter().sum::<f64>() / n as f64;
            u.iter_mut().for_each(|v| *v -= mean);
            let norm = dot(&u, &u).sqrt();
            if norm == 0.0 {
                break;
            }
            u.iter_mut().for_each(|v| *v /= norm);
            t.fill(0.0);
            body.add_atoms_weighted(&u, &mut t, par);
            t.iter_mut().zip(w).for_each(|(tk, wk)| *tk *= wk);
            body.atom_scores(&t, &mut u, par);
            oracle_calls += 1;
            let mean = u.iter().sum::<f64>() / n as f64;
            lam = u
                .iter()
                .map(|v| (v - mean) * (v - mean))
                .sum::<f64>()
                .sqrt();
        }
        (2.2 * lam).max(f64::MIN_POSITIVE)
    };

    let mut x_prev = x.clone();
    let mut v_prev = vx.clone();
    let mut fx = f0;
    let mut momentum = 1.0f64;
    let mut z = vec![0.0; n];
    let mut vz = vec![0.0; dim];
    let mut x_new = vec![0.0; n];
    let mut v_new = vec![0.0; dim];
    let mut idx = Vec::with_capacity(n);
    let mut iterations = 0;
    let mut gap = f64::INFINITY;
    let status = loop {
        settings.report_iterations(iterations);
        if iterations % CHECK_EVERY == 0 || iterations >= settings.max_iterations {
            for k in 0..dim {
                c[k] = w[k] * (y[k] - vx[k]);
            }
            body.atom_scores(&c, &mut scores, par);
            oracle_calls += 1;
            let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let g = 2.0 * (best - dot(&c, &vx));
            if !g.is_finite() {
                return Err(GeometryError::Oracle(
                    "non-finite atom scores (overflow?)".into(),
                ));
            }
            gap = g.max(0.0);
            if f0 == 0.0 || gap <= threshold {
                break SolveStatus::Converged;
            }
            if iterations >= settings.max_iterations {
                break SolveStatus::MaxIterations;
            }
        }
        let next_momentum = (1.0 + (1.0 + 4.0 * momentum * momentum).sqrt()) / 2.0;
        let beta = (momentum - 1.0) / next_momentum;
        for i in 0..n {
            z[i] = x[i] + beta * (x[i] - x_prev[i]);
        }
        for k in 0..dim {
            vz[k] = vx[k] + beta * (vx[k] - v_prev[k]);
            c[k] = w[k] * (y[k] - vz[k]);
        }
        body.atom_scores(&c, &mut scores, par);
        oracle_calls += 1;
        let fz = wdist(&vz, y, w);
        // backtracking: F(x⁺) ≤ F(z) + ⟨∇F(z), x⁺ − z⟩ + (L/2)‖x⁺ − z‖²
        let f_new = loop {
            for i in 0..n {
                x_new[i] = z[i] + 2.0 * scores[i] / lip;
            }
            project_simplex(&mut x_new, &mut idx);
            v_new.fill(0.0);
            body.add_atoms_weighted(&x_new, &mut v_new, par);
            let f_new = wdist(&v_new, y, w);
            let (mut lin, mut sq) = (0.0, 0.0);
            for i in 0..n {
                let d = x_new[i] - z[i];
                lin -= 2.0 * scores[i] * d;
                sq += d * d;
            }
            let bound = fz + lin + 0.5 * lip * sq;
            if f_new <= bound + 1e-14 * fz.abs().max(f0) || !lip.is_finite() {
                break f_new;
            }
            lip *= 2.0;
        };
        iterations += 1;
        if !lip.is_finite() {
            break SolveStatus::Stalled;
        }
        if beta == 0.0 && x_new == x {
            break SolveStatus::Stalled;
        }
        if f_new > fx && beta > 0.0 {
            // restart: drop the momentum, keep x (the next step is a plain projected
            // gradient step from x, which does not increase F up to round-off)
            momentum = 1.0;
            x_prev.copy_from_slice(&x);
            v_prev.copy_from_slice(&vx);
            continue;
        }
        std::mem::swap(&mut x_prev, &mut x);
        std::mem::swap(&mut v_prev, &mut vx);
        std::mem::swap(&mut x, &mut x_new);
        std::mem::swap(&mut vx, &mut v_new);
        fx = f_new;
        momentum = next_momentum;
    };
    if status == SolveStatus::Stalled {
        // make the reported gap belong to the returned point
        for k in 0..dim {
            c[k] = w[k] * (y[k] - vx[k]);
        }
        body.atom_scores(&c, &mut scores, par);
        oracle_calls += 1;
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        gap = (2.0 * (best - dot(&c, &vx))).max(0.0);
    }
    let atoms: Vec<(usize, f64)> = x
        .iter()
        .enumerate()
        .filter(|(_, wt)| **wt > 0.0)
        .map(|(i, &wt)| (i, wt))
        .collect();
    settings.report_iterations(settings.max_iterations);
    Ok(FrankWolfeResult {
        objective: wdist(&vx, y, w),
        point: vx,
        atoms,
        gap,
        iterations,
        oracle_calls,
        status,
        gap_certified: true,
    })
}

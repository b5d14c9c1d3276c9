//! The workspace's layering rule, checked from `cargo metadata`: each layered crate may
//! depend (normally, at build time or in dev) only on crates before it in [`LAYERS`].

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// The layers, lowest first.
pub const LAYERS: [&str; 6] = [
    "dp-core",
    "dp-geometry",
    "dp-queries",
    "dp-mechanisms",
    "dp-local",
    "dp-bench",
];

/// Check the workspace at `root`; returns a summary line, or an error listing every
/// violation and every missing crate.
pub fn check(root: &Path) -> Result<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing cargo metadata")?;
    violations(&meta)
}

/// The pure part of [`check`]: find violations in parsed metadata.
pub fn violations(meta: &serde_json::Value) -> Result<String> {
    let rank = |name: &str| LAYERS.iter().position(|l| *l == name);
    let packages = meta["packages"]
        .as_array()
        .context("no packages in metadata")?;
    let mut bad = Vec::new();
    let mut present = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or_default();
        let Some(r) = rank(name) else { continue };
        present.push(name.to_string());
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or_default();
            if let Some(dr) = rank(dep)
                && dr >= r
            {
                let kind = d["kind"].as_str().unwrap_or("normal");
                bad.push(format!(
                    "{name} depends on {dep} ({kind}): a crate may use only crates before it in {}",
                    LAYERS.join(" < ")
                ));
            }
        }
    }
    let missing: Vec<&str> = LAYERS
        .iter()
        .filter(|l| !present.iter().any(|p| p == *l))
        .copied()
        .collect();
    if !bad.is_empty() || !missing.is_empty() {
        let mut msg = bad.join("\n");
        if !missing.is_empty() {
            msg.push_str(&format!("\ncrates missing: {}", missing.join(", ")));
        }
        bail!("layers: {msg}");
    }
    Ok(format!(
        "layers: ok ({} layered crates, every dependency points downward)",
        LAYERS.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_workspace_keeps_its_layers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let summary = check(&root).unwrap();
        assert!(summary.starts_with("layers: ok"));
    }

    #[test]
    fn an_upward_dependency_is_reported() {
        let meta = serde_json::json!({"packages": [
            {"name": "dp-core", "dependencies": [{"name": "dp-queries", "kind": null}]},
            {"name": "dp-geometry", "dependencies": []},
            {"name": "dp-queries", "dependencies": [{"name": "dp-core", "kind": null}]},
            {"name": "dp-mechanisms", "dependencies": []},
            {"name": "dp-local", "dependencies": []},
            {"name": "dp-bench", "dependencies": [{"name": "dp-bench", "kind": "dev"}]},
        ]});
        let err = violations(&meta).unwrap_err().to_string();
        assert!(err.contains("dp-core depends on dp-queries"), "{err}");
        assert!(err.contains("dp-bench depends on dp-bench (dev)"), "{err}");
        let missing = serde_json::json!({"packages": [{"name": "dp-core", "dependencies": []}]});
        assert!(
            violations(&missing)
                .unwrap_err()
                .to_string()
                .contains("crates missing")
        );
    }
}

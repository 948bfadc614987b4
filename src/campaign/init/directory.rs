//! The campaign directory before `init` writes into it: refused when it holds something else,
//! cleared with `--force`, cleared of what an interrupted `init` left; and, for a retried `init`,
//! how an existing campaign differs from the one the file would make.

use super::*;

/// Where an existing campaign differs from the one a campaign file would create, in words;
/// `None` when it is the same campaign (settings, components, executor, base directory and
/// the first iteration's tests).
pub(super) fn differences(existing: &State, planned: &State) -> Option<String> {
    let mut what = Vec::new();
    if existing.settings != planned.settings {
        what.push("settings");
    }
    if existing.components != planned.components {
        what.push("components");
    }
    if existing.executor != planned.executor {
        what.push("[executor]");
    }
    if existing.base_dir != planned.base_dir {
        what.push("campaign file directory");
    }
    let first = |s: &State| -> Vec<Vec<u32>> {
        s.iterations
            .first()
            .map(|it| it.tests.iter().map(|t| t.nproc.clone()).collect())
            .unwrap_or_default()
    };
    if first(existing) != first(planned) {
        what.push("first iteration's tests");
    }
    (!what.is_empty()).then(|| what.join(", "))
}

/// True when `dir` holds nothing but files autolb writes into a campaign directory.
pub(super) fn only_campaign_files(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(|e| e.ok()).all(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                is_campaign_file(&name) || name == state::LOCK_FILE || name.starts_with(".tmp")
            })
        })
        .unwrap_or(true)
}

/// Files and directories of a campaign that `--force` may remove.
pub(super) fn is_campaign_file(name: &str) -> bool {
    name == STATE_FILE
        || name == state::LOG_FILE
        || name == state::LAYOUT_FILE
        || name == CANCEL_REQUEST_FILE
        // A new campaign's viewers must not see the last one's lost driver.
        || name == crate::campaign::heartbeat::HEARTBEAT_FILE
        || name == "curves"
        || name.starts_with("iter-")
}

/// Creates `dir`, or checks that it is empty, or (with `force`) clears a previous campaign.
///
/// What an `init` that failed or was killed left (no `campaign.json`, only files `init`
/// writes: curves, the lock, temp files) does not count: it is cleared without `--force`, so a
/// failed `init` never blocks the next one. `campaign.json` is written last, so its presence
/// is what makes a directory a campaign.
pub(super) fn prepare_dir(dir: &Path, force: bool) -> Result<(), CampaignError> {
    let io = |what: &str, e| CampaignError::io(format!("{what} {}", dir.display()), e);
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create", e))?;
    let entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io("cannot list", e))?
        .filter_map(|e| e.ok())
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = entries
        .iter()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    let unfinished_init = !names.iter().any(|n| n == STATE_FILE)
        && names.iter().all(|n| {
            n == "curves" || n == LOCK_FILE || n == state::LAYOUT_FILE || n.starts_with(".tmp")
        });
    if !force && !unfinished_init {
        return Err(CampaignError::NotEmpty(dir.to_path_buf()));
    }
    let _lock = Lock::acquire(dir)?;
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        if !(is_campaign_file(&name) || name.starts_with(".tmp")) {
            continue;
        }
        let path = e.path();
        let result = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        result
            .map_err(|err| CampaignError::io(format!("cannot remove {}", path.display()), err))?;
    }
    Ok(())
}

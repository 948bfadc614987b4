#!/usr/bin/env bash
# Creates and runs the local autolb experiment with Autosubmit 4, end to end:
#
#   AUTOSUBMIT=/path/to/autosubmit bash assets/autosubmit/local/run-local.sh WORK_DIR [AUTOLB]
#
# Everything Autosubmit writes (its ~/.autosubmitrc, database, experiment) and the campaign
# stay under WORK_DIR: HOME is pointed there. AUTOLB defaults to `autolb` on PATH; AUTOSUBMIT
# to `autosubmit`. The campaign is WORK_DIR/campaign; the experiment's id is printed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 WORK_DIR [AUTOLB]" >&2; exit 2; }
mkdir -p "$1"
work=$(cd "$1" && pwd)
autolb=${2:-$(command -v autolb)}
autolb=$(cd "$(dirname "$autolb")" && pwd)/$(basename "$autolb")
autosubmit=${AUTOSUBMIT:-autosubmit}

export HOME="$work/home"
mkdir -p "$HOME" "$work/db" "$work/exps"
# Autosubmit colours its output; keep the logs readable.
plain() { sed 's/\x1b\[[0-9;]*m//g'; }

"$autosubmit" configure -db "$work/db" -dbf autosubmit.db -lr "$work/exps" </dev/null | plain
# Only `autosubmit report` talks to the API; keep it on this machine.
sed -i 's|^url = .*|url = http://127.0.0.1:8081|' "$HOME/.autosubmitrc"
"$autosubmit" install </dev/null | plain
"$autosubmit" expid -H local -d "autolb campaign" </dev/null | plain
# The new experiment is the one directory with a conf/ (beside Autosubmit's logs/ and metadata/).
expid=$(basename "$(dirname "$(ls -d "$work"/exps/*/conf | head -n 1)")")
# Sized from the campaign file with `autolb campaign plan`, before the campaign exists.
AUTOSUBMIT="$autosubmit" bash "$here/../fill-conf.sh" "$here" "$work/exps/$expid/conf" "$expid" \
  "$autolb" "$work/campaign"

"$autosubmit" create "$expid" -np </dev/null | plain
"$autosubmit" run "$expid" </dev/null | plain
echo "experiment $expid finished; campaign: $work/campaign"

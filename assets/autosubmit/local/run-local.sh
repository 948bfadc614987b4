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
config="$here/campaign.toml"

export HOME="$work/home"
mkdir -p "$HOME" "$work/db" "$work/exps"
# Autosubmit colours its output; keep the logs readable.
plain() { sed 's/\x1b\[[0-9;]*m//g'; }

"$autosubmit" configure -db "$work/db" -dbf autosubmit.db -lr "$work/exps" </dev/null | plain
# Only `autosubmit report` talks to the API; keep it on this machine.
sed -i 's|^url = .*|url = http://127.0.0.1:8081|' "$HOME/.autosubmitrc"
"$autosubmit" install </dev/null | plain
"$autosubmit" expid -H local -d "autolb campaign" </dev/null | plain
expid=$(cd "$work/exps" && ls -d [a-z0-9][a-z0-9][a-z0-9][a-z0-9] | head -n 1)
version=$("$autosubmit" -v 2>&1 | plain | tail -n 1)

# The job graph's sizes come from the campaign file, before the campaign exists.
eval "$("$autolb" campaign plan --config "$config" --env)"
members=$(printf 't%02d ' $AUTOLB_PLAN_TEST_IDS)
members=${members% }
chunks=$AUTOLB_PLAN_MAX_ITERATIONS
splits=$AUTOLB_PLAN_REPETITIONS
echo "autolb plan: members '$members', $chunks chunks, $splits splits"

conf="$work/exps/$expid/conf"
rm -f "$conf"/*.yml
for f in "$here"/conf/*.yml; do
  sed -e "s|@EXPID@|$expid|g" -e "s|@MEMBERS@|$members|g" -e "s|@NUMCHUNKS@|$chunks|g" \
      -e "s|@SPLITS@|$splits|g" -e "s|@PROJECT@|$here|g" -e "s|@AUTOLB@|$autolb|g" \
      -e "s|@CAMPAIGN@|$work/campaign|g" -e "s|@CONFIG@|$config|g" \
      -e "s|@AUTOSUBMIT_VERSION@|$version|g" "$f" > "$conf/$(basename "$f")"
done

"$autosubmit" create "$expid" -np </dev/null | plain
"$autosubmit" run "$expid" </dev/null | plain
echo "experiment $expid finished; campaign: $work/campaign"

#!/usr/bin/env bash
# Writes an experiment's Autosubmit configuration from one of the variants here, sized from the
# campaign file with `autolb campaign plan` (members = tests, chunks = an upper bound on the
# lb-iterations, splits = repetitions, PEs per run job):
#
#   bash assets/autosubmit/fill-conf.sh VARIANT_DIR EXP_CONF_DIR EXPID AUTOLB CAMPAIGN_DIR
#
# VARIANT_DIR is local/ or ecearth3-slurm/ (its conf/*.yml have @...@ values and its
# campaign.toml is the campaign file); EXP_CONF_DIR is the experiment's conf/ (from
# `autosubmit expid`; its own *.yml files are replaced); AUTOLB and CAMPAIGN_DIR are paths as
# the jobs see them (on the HPC for a remote platform; there, also set AUTOLB_ASSETS to the
# cluster's copy of assets/ and AUTOLB_PLANNER to an autolb that runs here).
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 VARIANT_DIR EXP_CONF_DIR EXPID AUTOLB CAMPAIGN_DIR" >&2; exit 2; }
variant=$(cd "$1" && pwd)
conf=$2 expid=$3 autolb=$4 campaign=$5
config="$variant/campaign.toml"
planner=${AUTOLB_PLANNER:-$autolb}   # the autolb that runs here, if the jobs' one is remote
# assets/ as the jobs see it (a copy on the cluster, same layout, for a remote platform).
assets=${AUTOLB_ASSETS:-$(cd "$variant/../.." && pwd)}

eval "$("$planner" campaign plan --config "$config" --env)"
members=$(printf 't%02d ' $AUTOLB_PLAN_TEST_IDS)
members=${members% }
version=$("${AUTOSUBMIT:-autosubmit}" -v 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tail -n 1)
echo "autolb plan: members '$members', $AUTOLB_PLAN_MAX_ITERATIONS chunks," \
     "$AUTOLB_PLAN_REPETITIONS splits, $AUTOLB_PLAN_JOB_NPROC PEs per run"

rm -f "$conf"/*.yml
for f in "$variant"/conf/*.yml; do
  sed -e "s|@EXPID@|$expid|g" -e "s|@MEMBERS@|$members|g" \
      -e "s|@NUMCHUNKS@|$AUTOLB_PLAN_MAX_ITERATIONS|g" -e "s|@SPLITS@|$AUTOLB_PLAN_REPETITIONS|g" \
      -e "s|@JOB_NPROC@|$AUTOLB_PLAN_JOB_NPROC|g" -e "s|@PROJECT@|$variant|g" \
      -e "s|@AUTOLB@|$autolb|g" -e "s|@CAMPAIGN@|$campaign|g" -e "s|@CONFIG@|$config|g" \
      -e "s|@ASSETS@|$assets|g" -e "s|@AUTOSUBMIT_VERSION@|$version|g" "$f" > "$conf/$(basename "$f")"
done

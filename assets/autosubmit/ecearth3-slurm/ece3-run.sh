#!/usr/bin/env bash
# One EC-Earth3 SR run inside a RUN job's allocation, started by `autolb campaign exec` in the
# run's directory with AUTOLB_RUN, AUTOLB_RUN_DIR, AUTOLB_NPROC_IFS, AUTOLB_NPROC_NEMO and
# AUTOLB_TOTAL_NPROC set. Argument: the prepared EC-Earth3 runtime directory. autolb records
# the run from the lucia.* files this leaves in the run directory (or as failed).
set -euo pipefail
ece_runtime=$1
: "${AUTOLB_RUN_DIR:?run me through autolb campaign exec}"
cd "$AUTOLB_RUN_DIR"
echo "autolb run $AUTOLB_RUN: IFS $AUTOLB_NPROC_IFS, NEMO $AUTOLB_NPROC_NEMO, $AUTOLB_TOTAL_NPROC tasks"

# ---- site set-up: edit for your machine ----------------------------------------------------
if command -v module > /dev/null; then
  module purge
  module load intel impi netcdf hdf5 grib_api
fi
# ---------------------------------------------------------------------------------------------

# 1. A private run directory: symbolic links to the big inputs, own copies of what is edited.
cp -rs "$ece_runtime"/. .
for f in namcouple fort.4 namelist_cfg; do
  rm -f "$f"
  cp "$ece_runtime/$f" .
done

# 2. The decomposition. IFS takes NPROC from fort.4 (NAMPAR0); NEMO decomposes itself
#    (jpni = jpnj = 0) over jpnij processes (the campaign keeps it to its allowed list).
sed -i "s/^\( *NPROC *=\).*/\1 ${AUTOLB_NPROC_IFS},/" fort.4
sed -i -e "s/^\( *jpni *=\).*/\1 0/" -e "s/^\( *jpnj *=\).*/\1 0/" \
       -e "s/^\( *jpnij *=\).*/\1 ${AUTOLB_NPROC_NEMO}/" namelist_cfg

# 3. LUCIA timing on: the line after $NLOGPRT in namcouple becomes "1 -1".
awk 'p { print "  1 -1"; p = 0; next } /^ *\$NLOGPRT/ { p = 1 } { print }' namcouple > namcouple.new
mv namcouple.new namcouple

# 4. The coupled run on the run's own PEs (the job holds the most any run needs): IFS on the
#    first ranks, NEMO on the next, then the runoff mapper and XIOS.
ifs_end=$((AUTOLB_NPROC_IFS - 1))
nemo_end=$((ifs_end + AUTOLB_NPROC_NEMO))
cat > multi-prog.conf <<CONF
0-$ifs_end ./ifsmaster-ecconf -v ecmwf -e a0b1
$((ifs_end + 1))-$nemo_end ./nemo.exe
$((nemo_end + 1)) ./runoff-mapper.exe
$((nemo_end + 2)) ./xios_server.exe
CONF
srun --kill-on-bad-exit=1 --ntasks="$AUTOLB_TOTAL_NPROC" --multi-prog multi-prog.conf

# 5. A run that leaves no LUCIA files fails here; autolb records it as failed.
ls lucia.* > /dev/null

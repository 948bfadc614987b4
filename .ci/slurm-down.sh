#!/bin/bash
# Stop the daemons started by slurm-up.sh, each by the PID in its pid file
# (checking the PID still belongs to that daemon), slurmd first, munged last.
for pair in /run/slurmd.pid:slurmd /run/slurmctld.pid:slurmctld /run/slurmdbd.pid:slurmdbd \
            /run/mysqld/mysqld.pid:mariadbd /run/munge/munged.pid:munged; do
  f=${pair%%:*}; name=${pair##*:}
  [ -s "$f" ] || continue
  p=$(cat "$f")
  [ "$(cat /proc/$p/comm 2>/dev/null)" = "$name" ] || continue
  kill "$p"
  # a dead daemon stays a zombie until PID 1 reaps it (~1-2 s here): check /proc state
  for _ in $(seq 1 100); do
    st=$(awk '/^State:/{print $2}' /proc/$p/status 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ] && break
    sleep 0.1
  done
  st=$(awk '/^State:/{print $2}' /proc/$p/status 2>/dev/null)
  if [ -n "$st" ] && [ "$st" != Z ]; then echo "$name ($p) still alive after 10 s: SIGKILL"; kill -9 "$p"; fi
done
exit 0

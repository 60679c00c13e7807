#!/bin/sh
# Idle footprint of hearthd with the timer and files plugins loaded (debug build: build
# hearthd, hearth, hearth-timer and hearth-files first). IDLE_SECS sets the idle window.
set -e
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
D=$(mktemp -d /tmp/hearth-idle-XXXX)
mkdir -p $D/plugins/timer $D/plugins/files $D/share
cp $ROOT/runtime/plugins/timer/plugin.json $ROOT/target/debug/hearth-timer $D/plugins/timer/
cp $ROOT/runtime/plugins/files/plugin.json $ROOT/target/debug/hearth-files $D/plugins/files/
python3 - "$D" <<'PY'
import sqlite3, sys, json, time
d = sys.argv[1]
c = sqlite3.connect(d + "/settings.db")
c.execute("CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, updated_ms INTEGER NOT NULL)")
c.execute("INSERT INTO settings VALUES (?, ?, ?)", ("plugin.files.roots", json.dumps([d + "/share"]), int(time.time()*1000)))
c.commit(); c.close()
PY
printf 'data_dir = "%s"\nprobe_loopback = false\nmemory_model = false\n[embedded]\nenabled = false\n' $D > $D/hearth.toml
start=$(date +%s%N)
HEARTH_LOG=error $ROOT/target/debug/hearthd --config $D/hearth.toml >/dev/null 2>$D/err.log &
PID=$!
while [ ! -S $D/hearth.sock ]; do sleep 0.0005; done
ready=$(date +%s%N)
# Both plugin children up (their handshakes done shows as two children).
while [ $(ls /proc/$PID/task | wc -l) -lt 1 ] || [ $(pgrep -P $PID | wc -l) -lt 2 ]; do sleep 0.001; done
kids=$(date +%s%N)
sleep 3
rss() { awk '/VmRSS/ {print $2}' /proc/$1/status; }
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
echo "socket accepting after $(( (ready-start)/1000 )) us; both plugin processes spawned after $(( (kids-start)/1000 )) us"
echo "daemon pid $PID RSS $(rss $PID) kB"
for k in $(pgrep -P $PID); do echo "child $k $(tr '\0' ' ' < /proc/$k/cmdline) RSS $(rss $k) kB"; done
T0=$(ticks $PID); K0=""; for k in $(pgrep -P $PID); do K0="$K0 $(ticks $k)"; done
sleep ${IDLE_SECS:-30}
$ROOT/target/debug/hearth --socket $D/hearth.sock plugin list 2>&1 | head -30
T1=$(ticks $PID); K1=""; for k in $(pgrep -P $PID); do K1="$K1 $(ticks $k)"; done
echo "idle ${IDLE_SECS:-30} s: daemon $((T1-T0)) CPU ticks; children ticks before [$K0 ] after [$K1 ]"
kill -TERM $PID; wait $PID || true
cat $D/err.log | tail -3
rm -rf $D

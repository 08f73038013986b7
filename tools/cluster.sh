# cluster.sh - a throwaway Ceph cluster on loopback for Tessera's RADOS tests and benchmarks:
# one monitor and N OSDs started as plain processes (no containers, no systemd), a pool
# `tessera` with one replica, the Lua object class loadable. Run by `tessera cluster`, which
# embeds this text; it is run as `sh -c TEXT cluster.sh start|stop DIR [NOSDS STORE CEPHX
# TRACKER]`.
#   start DIR N STORE CEPHX TRACKER  STORE memstore|bluestore, CEPHX 0|1, TRACKER 0|1 (the OSDs'
#                            op tracker, off by default: see the conf); writes DIR/ceph.conf,
#                            starts the daemons (pids in DIR/run/*.pid), creates the pool, waits
#                            until every placement group of the pool is active, prints the time.
#   stop DIR                 ends exactly the daemons whose pid files are in DIR/run (TERM, then
#                            KILL after 10 s), removes DIR/ceph.conf and nothing else.
set -eu
cmd=$1 dir=$2
conf=$dir/ceph.conf

stop_daemons() {
    pids=""
    for pidf in "$dir"/run/*.pid; do
        [ -f "$pidf" ] || continue
        pid=$(cat "$pidf")
        # the pid file may be stale: only signal a ceph daemon whose conf is ours
        if [ -n "$pid" ] && [ -r /proc/"$pid"/cmdline ] && tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null | grep -q -- "$conf"; then
            kill -TERM "$pid" 2>/dev/null || true
            pids="$pids $pid"
        fi
        rm -f "$pidf"
    done
    # all at once: TERM, up to 10 s for them to end, then KILL
    i=0
    for pid in $pids; do
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# a cluster that is not running has no conf: whatever would connect to it finds none (the
# RADOS tests then skip instead of waiting for a timeout)
if [ "$cmd" = stop ]; then
    stop_daemons
    rm -f "$conf"
    exit 0
fi

nosd=$3 store=$4 cephx=$5 tracker=$6
t0=$(date +%s.%N)
mkdir -p "$dir/run" "$dir/log" "$dir/mon"
if ls "$dir"/run/*.pid >/dev/null 2>&1; then
    echo "cluster.sh: $dir already has running daemons (stop it first)" >&2
    exit 1
fi
# what an earlier cluster in dir left (its daemons are gone): start afresh
rm -rf "$dir/mon" "$dir"/osd[0-9]* "$dir/monmap" "$dir/keyring" "$dir/osd_create.txt" \
    "$dir/ceph.conf" "$dir/log"
for prog in ceph-mon ceph-osd ceph monmaptool ceph-authtool rados; do
    command -v $prog >/dev/null || { echo "cluster.sh: $prog is not installed" >&2; exit 77; }
done
mkdir -p "$dir/log" "$dir/mon"
# a free loopback port for the monitor
port=""
for try in 1 2 3 4 5 6 7 8 9 10; do
    p=$(( 20000 + ($(od -An -N2 -tu2 /dev/urandom) % 30000) ))
    if ! ss -ltnH "sport = :$p" 2>/dev/null | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "cluster.sh: no free port" >&2; exit 1; }
fsid=$(cat /proc/sys/kernel/random/uuid)
if [ "$cephx" = 1 ]; then auth=cephx; else auth=none; fi
if [ "$tracker" = 1 ]; then tracker=true; else tracker=false; fi
# The debug levels and the op tracker as benchmarks usually set them: no log entries gathered in
# memory (Ceph's defaults keep up to level 5 of most subsystems, e.g. debug_osd 1/5), no op
# tracker (about 1% of an OSD's samples during datatype reads; TRACKER 1 keeps it, for
# dump_historic_ops).
debug_off=$(for s in ms osd objclass memdb bluestore bluefs bdev rocksdb filestore journal \
        auth monc mon paxos objecter rados finisher throttle context buffer optracker \
        perfcounter heartbeatmap asok crypto prioritycache reserver; do
    printf 'debug %s = 0/0\n' "$s"
done)
cat > "$conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$port
mon initial members = a
auth cluster required = $auth
auth service required = $auth
auth client required = $auth
keyring = $dir/keyring
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
ms bind ipv4 = true
ms bind ipv6 = false
public addr = 127.0.0.1
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 16
osd pool default pgp num = 16
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
auth allow insecure global id reclaim = false
osd class load list = *
osd class default list = *
osd objectstore = $store
memstore device bytes = ${TESS_CLUSTER_OSD_BYTES:-1073741824}
bluestore block create = true
bluestore block size = ${TESS_CLUSTER_OSD_BYTES:-1073741824}
bluestore fsck on mount = false
osd max object size = 134217728
osd op complaint time = 300
mon data avail warn = 1
mon data avail crit = 0
$debug_off
osd enable op tracker = $tracker
[mon.a]
mon data = $dir/mon
[osd]
osd data = $dir/osd\$id
osd journal size = 16
bluestore block path = $dir/osd\$id.block
osd heartbeat grace = 5
osd memory target = 268435456
bluestore cache size = 67108864
CONF
ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
    --cap mgr 'allow *' >/dev/null
i=0
while [ $i -lt "$nosd" ]; do
    ceph-authtool "$dir/keyring" --gen-key -n osd.$i --cap mon 'allow profile osd' \
        --cap osd 'allow *' >/dev/null
    i=$((i + 1))
done
monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/keyring"
ceph-mon -c "$conf" -i a
# one batch of monitor commands (one client process): the OSD ids
i=0
: > "$dir/osd_create.txt"
while [ $i -lt "$nosd" ]; do
    mkdir -p "$dir/osd$i"
    cat /proc/sys/kernel/random/uuid > "$dir/osd$i/uuid.txt"
    echo "osd create $(cat "$dir/osd$i/uuid.txt") $i" >> "$dir/osd_create.txt"
    ceph-authtool --create-keyring "$dir/osd$i/keyring" --add-key "$(ceph-authtool "$dir/keyring" -n osd.$i -p)" \
        -n osd.$i >/dev/null
    i=$((i + 1))
done
timeout 60 ceph -c "$conf" < "$dir/osd_create.txt" >/dev/null
i=0
while [ $i -lt "$nosd" ]; do
    ceph-osd -c "$conf" -i $i --mkfs --osd-uuid "$(cat "$dir/osd$i/uuid.txt")" \
        --keyring "$dir/osd$i/keyring" >>"$dir/log/mkfs.log" 2>&1 &
    i=$((i + 1))
done
wait
i=0
while [ $i -lt "$nosd" ]; do
    ceph-osd -c "$conf" -i $i --keyring "$dir/osd$i/keyring" 2>>"$dir/log/start.log" &
    i=$((i + 1))
done
wait
timeout 60 ceph -c "$conf" >/dev/null <<CMDS
osd pool create tessera 16 16
osd pool application enable tessera tessera
CMDS
# healthy: every OSD up, then every placement group of the pool active (listing the pool
# visits every PG and waits for it to be active)
waited=0
while :; do
    up=$(timeout 30 ceph -c "$conf" osd stat 2>/dev/null | sed -n 's/.* \([0-9]*\) up.*/\1/p')
    [ "$up" = "$nosd" ] && break
    waited=$((waited + 1))
    i=0
    while [ $i -lt "$nosd" ]; do
        [ -f "$dir/run/osd.$i.pid" ] && kill -0 "$(cat "$dir/run/osd.$i.pid")" 2>/dev/null ||
            { echo "cluster.sh: osd.$i is not running (see $dir/log)" >&2; exit 1; }
        i=$((i + 1))
    done
    [ $waited -lt 120 ] || { echo "cluster.sh: OSDs did not come up (see $dir/log)" >&2; exit 1; }
    sleep 0.5
done
timeout 120 rados -c "$conf" -p tessera ls >/dev/null
t1=$(date +%s.%N)
echo "$t0 $t1" | awk '{printf "cluster: started in %.1f s\n", $2 - $1}'

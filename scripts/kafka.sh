#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft, combined broker+controller) for the
# tests and benchmarks, run from the Maven Central jars that
# scripts/deps/install-kafka.sh puts in .deps/kafka/lib (installed on first use).
#
#   scripts/kafka.sh start [DIR]        start a fresh broker; data, config and
#                                       logs in DIR (default: a new mktemp dir;
#                                       DIR must be absent or empty). Waits
#                                       until it serves metadata, then prints
#                                         BOOTSTRAP=127.0.0.1:PORT
#                                         KAFKA_DIR=DIR
#                                         KAFKA_PID_FILE=DIR/kafka.pid
#                                         KAFKA_PID=... KAFKA_LOG=...
#                                         KAFKA_START_SECONDS=...
#   scripts/kafka.sh stop DIR [--keep]  SIGTERM, SIGKILL after a timeout, then
#                                       remove DIR (unless --keep)
#   scripts/kafka.sh topics DIR ARGS... org.apache.kafka.tools.TopicCommand
#                                       (--bootstrap-server added if absent)
#   scripts/kafka.sh perf DIR ARGS...   org.apache.kafka.tools.ProducerPerformance
#                                       (bootstrap.servers preset through
#                                       --producer.config DIR/client.properties;
#                                       later --producer-props still win)
#   scripts/kafka.sh consume DIR ARGS...  console consumer (bootstrap added)
#   scripts/kafka.sh status DIR         exit 0 and print BOOTSTRAP= if running
#
# A cluster of N combined broker+controller nodes (KRaft quorum of N voters),
# node ids 1..N, each with its own ports, data dir and log in DIR/node-ID:
#
#   scripts/kafka.sh start-cluster [DIR] [N]  start N nodes (default 3); waits
#                                       until every node serves, then prints
#                                         BOOTSTRAP=127.0.0.1:P1,...,127.0.0.1:PN
#                                         KAFKA_DIR=DIR  KAFKA_NODES=1 2 ... N
#                                         NODE_<ID>_PORT= _PID= _DIR= _LOG=
#                                         KAFKA_START_SECONDS=...
#                                       Defaults: default.replication.factor=
#                                       min(3,N), min.insync.replicas=min(2,N),
#                                       offsets/transaction state topics the
#                                       same; auto.create.topics.enable=false.
#   scripts/kafka.sh stop DIR [--keep]  (a cluster dir) stops every node
#   scripts/kafka.sh nodes DIR          NODE_<ID>_PORT/_PID/_STATE (running,
#                                       paused, dead) for every node
#   scripts/kafka.sh kill DIR ID        SIGKILL node ID (kill -9), wait till gone
#   scripts/kafka.sh stop-node DIR ID   SIGTERM node ID (controlled shutdown)
#   scripts/kafka.sh pause DIR ID       SIGSTOP node ID (a hung broker)
#   scripts/kafka.sh resume DIR ID      SIGCONT node ID
#   scripts/kafka.sh restart DIR ID     stop node ID if running (SIGKILL with
#                                       --kill), start it again on the same
#                                       ports and data, wait until it serves;
#                                       prints NODE_<ID>_PID=
#   scripts/kafka.sh move-leader DIR TOPIC P[,P...] [TO]
#                                       make TO (default: the next in-sync
#                                       replica) the partition's leader:
#                                       reorder its replicas, then a preferred
#                                       election (scripts/kafka-leaders.java)
#   scripts/kafka.sh leader-mover DIR   the same as a stdin/stdout service:
#                                       `move TOPIC P[,P...] [TO]`, `leaders TOPIC`
#   topics / perf / consume / status work on a cluster dir too.
#
# Environment:
#   THAW_KAFKA_PORT            client port (default: a free port; `start` only)
#   THAW_KAFKA_CONTROLLER_PORT controller port (default: a free port; `start` only)
#   THAW_KAFKA_HEAP_OPTS       broker heap (default: -Xms256m -Xmx512m; in a
#                              cluster -Xms128m -Xmx384m per node)
#   THAW_KAFKA_JVM_OPTS        extra JVM options for the broker
#   THAW_KAFKA_EXTRA_CONFIG    extra server.properties lines (they override)
#   THAW_KAFKA_SSL_KEYSTORE    a PEM file (unencrypted PKCS#8 key, then its certificate chain):
#                              `start` also opens an SSL listener with it on a free port,
#                              printed as SSL_BOOTSTRAP=HOST:PORT (single node only)
#   THAW_KAFKA_SASL_USERS      with THAW_KAFKA_SSL_KEYSTORE: `start` also opens a SASL_SSL
#                              listener (SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN), printed as
#                              SASL_SSL_BOOTSTRAP=HOST:PORT, and turns authorization on
#                              (StandardAuthorizer, allow.everyone.if.no.acl.found=false).
#                              The value is NAME:PASSWORD[,NAME:PASSWORD...] (letters, digits,
#                              '-', '_'): SCRAM users written at format time (kafka-storage
#                              --add-scram, both mechanisms), the same users for PLAIN in the
#                              listener's JAAS config (librdkafka < 2.6.1 cannot do SCRAM with
#                              Kafka 4, librdkafka#4895). The first is a super user (the admin that
#                              grants ACLs); so is User:ANONYMOUS, the principal of the
#                              PLAINTEXT and controller listeners, which stay open for the
#                              broker itself and the test harness (loopback only).
#   THAW_KAFKA_START_TIMEOUT   seconds to wait for readiness (default 90)
#   THAW_KAFKA_STOP_TIMEOUT    seconds between SIGTERM and SIGKILL (default 20;
#                              8 when a whole cluster stops)
#   THAW_KAFKA_OWNER_PID       if set, a watchdog stops the broker (and removes
#                              DIR) once that process is gone
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
self="$here/$(basename "$0")"
lib="$root/.deps/kafka/lib"
marker=".thaw-kafka"

die() { echo "[kafka] FAILED: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

ensure_jars() {
  if ! compgen -G "$lib/kafka_2.13-*.jar" >/dev/null; then
    "$root/scripts/deps/install-kafka.sh" >&2 || die "cannot install the Kafka jars"
  fi
  command -v java >/dev/null 2>&1 || die "java not found (need a JDK >= 17)"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  local p i
  for i in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Is the pid in DIR/kafka.pid alive and really our broker (not a reused pid)?
broker_pid() {
  local dir="$1" pid
  [[ -f "$dir/kafka.pid" ]] || return 1
  pid="$(cat "$dir/kafka.pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/server.properties" || return 1
  echo "$pid"
}

check_dir() { # DIR -> absolute path of a dir made by `start`
  [[ -n "${1:-}" ]] || die "missing DIR argument"
  [[ -d "$1" ]] || die "no such directory: $1"
  local d; d="$(cd "$1" && pwd -P)"
  [[ -f "$d/$marker" ]] || die "$d was not made by scripts/kafka.sh start"
  echo "$d"
}

write_config() { # DIR PORT CPORT [NODE_ID VOTERS REPLICATION MIN_ISR]
  local dir="$1" port="$2" cport="$3" id="${4:-1}" voters="${5:-1@127.0.0.1:$3}" rf="${6:-1}" isr="${7:-1}"
  local what="single-node KRaft broker+controller"
  [[ "$voters" == *,* ]] && what="node $id of a KRaft cluster of combined broker+controller nodes"
  cat >"$dir/server.properties" <<EOF
# Written by scripts/kafka.sh: $what for tests.
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport${ssl_port:+,SSL://127.0.0.1:$ssl_port}${sasl_port:+,SASL_SSL://127.0.0.1:$sasl_port}
advertised.listeners=PLAINTEXT://127.0.0.1:$port${ssl_port:+,SSL://127.0.0.1:$ssl_port}${sasl_port:+,SASL_SSL://127.0.0.1:$sasl_port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${ssl_port:+,SSL:SSL}${sasl_port:+,SASL_SSL:SASL_SSL}
log.dirs=$dir/data
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
# Tests replay 1 MiB values (plus batch/record overhead).
message.max.bytes=10485760
replica.fetch.max.bytes=10485760
# Small machine (2 cores), small heap.
num.network.threads=2
num.io.threads=4
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=16777216
EOF
  if [[ "$voters" == *,* ]]; then
    cat >>"$dir/server.properties" <<EOF
# Cluster: one replica fetcher, and a dead or paused node is fenced and
# dropped from the ISR within seconds (defaults: 9 s and 30 s).
num.io.threads=2
num.replica.fetchers=1
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=6000
replica.lag.time.max.ms=10000
EOF
  fi
  if [[ -n "${ssl_port:-}" ]]; then
    printf '%s\n' "ssl.keystore.type=PEM" "ssl.keystore.location=$THAW_KAFKA_SSL_KEYSTORE" >>"$dir/server.properties"
  fi
  if [[ -n "${sasl_port:-}" ]]; then
    local admin="${THAW_KAFKA_SASL_USERS%%:*}" plain="" entry
    local -a entries
    IFS=',' read -r -a entries <<<"$THAW_KAFKA_SASL_USERS"
    for entry in "${entries[@]}"; do plain+=" user_${entry%%:*}=\"${entry#*:}\""; done
    cat >>"$dir/server.properties" <<EOF
# SASL_SSL listener: SCRAM users (written by kafka-storage format), the same
# users for PLAIN, ACLs.
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain;
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$THAW_KAFKA_SSL_KEYSTORE
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:$admin;User:ANONYMOUS
EOF
  fi
  if [[ -n "${THAW_KAFKA_EXTRA_CONFIG:-}" ]]; then
    printf '%s\n' "# THAW_KAFKA_EXTRA_CONFIG" "$THAW_KAFKA_EXTRA_CONFIG" >>"$dir/server.properties"
  fi
  echo "bootstrap.servers=127.0.0.1:$port" >"$dir/client.properties"
  echo "127.0.0.1:$port" >"$dir/bootstrap"
}

write_log_configs() { # DIR
  local dir="$1"
  cat >"$dir/log4j2.properties" <<EOF
# Broker logs go to a file, never to the terminal.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.state.name = state.change.logger
logger.state.level = warn
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = info
EOF
  cat >"$dir/tools-log4j2.properties" <<'EOF'
# Command-line tools: warnings and errors on stderr only.
status = warn
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = STDERR
EOF
}

cmd_start() {
  local dir="${1:-}"
  ensure_jars
  if [[ -z "$dir" ]]; then
    dir="$(mktemp -d "${TMPDIR:-/tmp}/thaw-kafka.XXXXXX")"
  else
    mkdir -p "$dir"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty (start needs a fresh directory)"
  fi
  dir="$(cd "$dir" && pwd -P)"
  touch "$dir/$marker"
  mkdir -p "$dir/logs" "$dir/data"
  write_log_configs "$dir"

  local t0; t0="$(now_ms)"
  local port cport attempt
  # SCRAM users for a SASL_SSL listener: --add-scram arguments for format.
  local -a scram=()
  if [[ -n "${THAW_KAFKA_SASL_USERS:-}" ]]; then
    [[ -n "${THAW_KAFKA_SSL_KEYSTORE:-}" ]] || die "THAW_KAFKA_SASL_USERS needs THAW_KAFKA_SSL_KEYSTORE (the SASL_SSL listener's certificate)"
    local entry user pass mech
    local IFS_save="$IFS"; IFS=','
    for entry in $THAW_KAFKA_SASL_USERS; do
      user="${entry%%:*}"; pass="${entry#*:}"
      [[ "$entry" =~ ^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$ ]] || { IFS="$IFS_save"; die "THAW_KAFKA_SASL_USERS: '$user' is not NAME:PASSWORD (letters, digits, - and _)"; }
      for mech in SCRAM-SHA-256 SCRAM-SHA-512; do scram+=(--add-scram "$mech=[name=$user,password=$pass]"); done
    done
    IFS="$IFS_save"
  fi
  # A cluster id starting with '-' would be read as an option by StorageTool.
  local cid; cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
  while [[ "$cid" == -* ]]; do cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"; done
  local heap="${THAW_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
  local -a jvm=(-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties"
    -Dkafka.logs.dir="$dir/logs")

  for attempt in 1 2 3; do
    port="${THAW_KAFKA_PORT:-$(free_port)}"
    cport="${THAW_KAFKA_CONTROLLER_PORT:-$(free_port)}"
    [[ "$port" != "$cport" ]] || cport="$(free_port)"
    ssl_port=""
    if [[ -n "${THAW_KAFKA_SSL_KEYSTORE:-}" ]]; then
      ssl_port="$(free_port)"
      while [[ "$ssl_port" == "$port" || "$ssl_port" == "$cport" ]]; do ssl_port="$(free_port)"; done
    fi
    sasl_port=""
    if [[ -n "${THAW_KAFKA_SASL_USERS:-}" ]]; then
      sasl_port="$(free_port)"
      while [[ "$sasl_port" == "$port" || "$sasl_port" == "$cport" || "$sasl_port" == "$ssl_port" ]]; do
        sasl_port="$(free_port)"
      done
    fi
    write_config "$dir" "$port" "$cport"

    if [[ ! -f "$dir/data/meta.properties" ]]; then
      # shellcheck disable=SC2086
      if ! java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
            -Dlog4j2.configurationFile="$dir/tools-log4j2.properties" \
            -cp "$lib/*" kafka.tools.StorageTool format -t "$cid" \
            -c "$dir/server.properties" ${scram[@]+"${scram[@]}"} >"$dir/logs/format.log" 2>&1; then
        cat "$dir/logs/format.log" >&2
        die "kafka-storage format failed (dir kept: $dir)"
      fi
    fi

    : >"$dir/logs/server.log"
    # Own session (no terminal signals); stdin/stdout/stderr detached so the
    # caller's pipes close when this script exits.
    # shellcheck disable=SC2086
    setsid bash -c 'echo $$ >"$1/kafka.pid"; shift; exec "$@"' _ "$dir" \
      java $heap "${jvm[@]}" ${THAW_KAFKA_JVM_OPTS:-} -cp "$lib/*" \
      kafka.Kafka "$dir/server.properties" \
      </dev/null >"$dir/logs/stdout.log" 2>&1 &
    local launcher=$!

    local deadline=$((SECONDS + ${THAW_KAFKA_START_TIMEOUT:-90})) pid="" ready=0
    while ((SECONDS < deadline)); do
      [[ -n "$pid" ]] || pid="$(cat "$dir/kafka.pid" 2>/dev/null || true)"
      if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then break; fi
      if [[ -z "$pid" ]] && ! kill -0 "$launcher" 2>/dev/null; then break; fi
      if grep -q "Kafka Server started" "$dir/logs/server.log" 2>/dev/null && port_open "$port"; then
        ready=1; break
      fi
      sleep 0.1
    done
    ((ready)) && break

    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      tail -n 30 "$dir/logs/server.log" >&2
      die "broker not ready after ${THAW_KAFKA_START_TIMEOUT:-90} s (dir kept: $dir)"
    fi
    wait "$launcher" 2>/dev/null || true
    if [[ -z "${THAW_KAFKA_PORT:-}" && -z "${THAW_KAFKA_CONTROLLER_PORT:-}" && $attempt -lt 3 ]] \
       && grep -qi "address already in use" "$dir/logs/server.log" "$dir/logs/stdout.log" 2>/dev/null; then
      continue   # lost a port race: pick new ports
    fi
    tail -n 30 "$dir/logs/server.log" "$dir/logs/stdout.log" >&2
    die "broker exited during start-up (dir kept: $dir)"
  done
  local ms=$(( $(now_ms) - t0 ))

  if [[ -n "${THAW_KAFKA_OWNER_PID:-}" ]]; then
    local owner="$THAW_KAFKA_OWNER_PID"
    setsid bash -c '
      owner=$1 pid=$2 dir=$3 self=$4
      echo $$ >"$dir/watchdog.pid"
      while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 2; done
      if kill -0 "$pid" 2>/dev/null; then "$self" stop "$dir"; fi
    ' _ "$owner" "$pid" "$dir" "$self" </dev/null >/dev/null 2>&1 &
  fi

  echo "BOOTSTRAP=127.0.0.1:$port"
  [[ -z "${ssl_port:-}" ]] || echo "SSL_BOOTSTRAP=127.0.0.1:$ssl_port"
  [[ -z "${sasl_port:-}" ]] || echo "SASL_SSL_BOOTSTRAP=127.0.0.1:$sasl_port"
  echo "KAFKA_DIR=$dir"
  echo "KAFKA_PID_FILE=$dir/kafka.pid"
  echo "KAFKA_PID=$pid"
  echo "KAFKA_LOG=$dir/logs/server.log"
  printf 'KAFKA_START_SECONDS=%d.%02d\n' $((ms / 1000)) $((ms % 1000 / 10))
}

cmd_stop() {
  local dir keep=0
  dir="$(check_dir "${1:-}")"
  [[ "${2:-}" == "--keep" ]] && keep=1
  if is_cluster "$dir"; then cmd_stop_cluster "$dir" "$keep"; return; fi
  local pid
  if pid="$(broker_pid "$dir")"; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + ${THAW_KAFKA_STOP_TIMEOUT:-20}))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "[kafka] broker $pid ignored SIGTERM for ${THAW_KAFKA_STOP_TIMEOUT:-20} s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
  fi
  local wd
  wd="$(cat "$dir/watchdog.pid" 2>/dev/null || true)"
  if [[ "$wd" =~ ^[0-9]+$ && "$wd" != "$$" && "$wd" != "$PPID" ]]; then
    kill -TERM "$wd" 2>/dev/null || true
  fi
  if ((keep)); then
    rm -f "$dir/kafka.pid" "$dir/watchdog.pid"
  else
    rm -rf "$dir"
  fi
}

# ---------------------------------------------------------------------------
# Clusters: DIR/.thaw-kafka-cluster lists the node ids; node ID lives in
# DIR/node-ID (server.properties, data, logs, kafka.pid, port).

is_cluster() { [[ -f "$1/.thaw-kafka-cluster" ]]; }

cluster_nodes() { cat "$1/.thaw-kafka-cluster"; }

node_dir() { # DIR ID -> DIR/node-ID, checked
  local dir="$1" id="$2"
  is_cluster "$dir" || die "$dir is not a cluster made by scripts/kafka.sh start-cluster"
  [[ " $(cluster_nodes "$dir") " == *" $id "* ]] || die "no node $id in $dir (nodes: $(cluster_nodes "$dir"))"
  echo "$dir/node-$id"
}

node_launch() { # NODEDIR: start the node's JVM in its own session
  local nd="$1"
  local heap="${THAW_KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}"
  rm -f "$nd/kafka.pid"
  printf '\n[%s] scripts/kafka.sh: starting\n' "$(date -u +%FT%TZ)" >>"$nd/logs/server.log"
  # shellcheck disable=SC2086
  setsid bash -c 'echo $$ >"$1/kafka.pid"; shift; exec "$@"' _ "$nd" \
    java $heap -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 \
    -XX:CICompilerCount=2 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$nd/log4j2.properties" -Dkafka.logs.dir="$nd/logs" \
    ${THAW_KAFKA_JVM_OPTS:-} -cp "$lib/*" kafka.Kafka "$nd/server.properties" \
    </dev/null >>"$nd/logs/stdout.log" 2>&1 &
}

node_wait() { # NODEDIR DEADLINE(SECONDS) -> 0 serving, 1 exited, 2 timed out
  local nd="$1" deadline="$2" port pid="" started
  port="$(cat "$nd/port")"
  # Only "started" lines written after the last launch count.
  started() { awk '/scripts\/kafka.sh: starting/{s=0} /Kafka Server started/{s=1} END{exit !s}' "$nd/logs/server.log"; }
  while ((SECONDS < deadline)); do
    [[ -n "$pid" ]] || pid="$(cat "$nd/kafka.pid" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    if started 2>/dev/null && port_open "$port"; then return 0; fi
    sleep 0.2
  done
  return 2
}

node_state() { # NODEDIR -> running|paused|dead
  local pid st
  if ! pid="$(broker_pid "$1")"; then echo dead; return; fi
  st="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
  if [[ "$st" == T || "$st" == t ]]; then echo paused; else echo running; fi
}

node_stop() { # NODEDIR SIGNAL: TERM (then KILL after the timeout) or KILL; waits until gone
  local nd="$1" sig="$2" pid
  pid="$(broker_pid "$nd")" || return 0
  kill -CONT "$pid" 2>/dev/null || true
  kill "-$sig" "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + ${THAW_KAFKA_STOP_TIMEOUT:-20}))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "[kafka] node $(basename "$nd") ($pid) ignored SIG$sig for ${THAW_KAFKA_STOP_TIMEOUT:-20} s: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$nd/kafka.pid"
}

print_nodes() { # DIR
  local dir="$1" id nd
  for id in $(cluster_nodes "$dir"); do
    nd="$dir/node-$id"
    echo "NODE_${id}_PORT=$(cat "$nd/port")"
    echo "NODE_${id}_PID=$(cat "$nd/kafka.pid" 2>/dev/null || true)"
    echo "NODE_${id}_STATE=$(node_state "$nd")"
    echo "NODE_${id}_DIR=$nd"
    echo "NODE_${id}_LOG=$nd/logs/server.log"
  done
}

cmd_start_cluster() {
  local dir="${1:-}" n="${2:-3}"
  [[ "$n" =~ ^[1-9]$ ]] || die "node count must be 1..9, not '$n'"
  ensure_jars
  if [[ -z "$dir" ]]; then
    dir="$(mktemp -d "${TMPDIR:-/tmp}/thaw-kafka-cluster.XXXXXX")"
  else
    mkdir -p "$dir"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty (start-cluster needs a fresh directory)"
  fi
  dir="$(cd "$dir" && pwd -P)"
  touch "$dir/$marker"
  seq -s ' ' 1 "$n" >"$dir/.thaw-kafka-cluster"
  write_log_configs "$dir"
  local rf=$((n < 3 ? n : 3)) isr=$((n < 2 ? n : 2))
  local t0; t0="$(now_ms)"
  local cid; cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
  while [[ "$cid" == -* ]]; do cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"; done
  local id nd attempt voters bootstrap ok
  for id in $(seq 1 "$n"); do
    nd="$dir/node-$id"
    mkdir -p "$nd/logs" "$nd/data"
    write_log_configs "$nd"
  done
  for attempt in 1 2 3; do
    local -A port=() cport=()
    local used=" "
    for id in $(seq 1 "$n"); do
      local p
      for p in port cport; do
        local v; v="$(free_port)"
        while [[ "$used" == *" $v "* ]]; do v="$(free_port)"; done
        used+="$v "
        if [[ $p == port ]]; then port[$id]=$v; else cport[$id]=$v; fi
      done
    done
    voters="" bootstrap=""
    for id in $(seq 1 "$n"); do
      voters+="${voters:+,}$id@127.0.0.1:${cport[$id]}"
      bootstrap+="${bootstrap:+,}127.0.0.1:${port[$id]}"
    done
    local -a fmt=()
    for id in $(seq 1 "$n"); do
      nd="$dir/node-$id"
      write_config "$nd" "${port[$id]}" "${cport[$id]}" "$id" "$voters" "$rf" "$isr"
      echo "${port[$id]}" >"$nd/port"
      if [[ ! -f "$nd/data/meta.properties" ]]; then
        java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
          -Dlog4j2.configurationFile="$dir/tools-log4j2.properties" \
          -cp "$lib/*" kafka.tools.StorageTool format -t "$cid" \
          -c "$nd/server.properties" >"$nd/logs/format.log" 2>&1 &
        fmt+=($!)
      fi
    done
    local f
    for f in "${fmt[@]}"; do
      wait "$f" || { cat "$dir"/node-*/logs/format.log >&2; die "kafka-storage format failed (dir kept: $dir)"; }
    done
    for id in $(seq 1 "$n"); do node_launch "$dir/node-$id"; done
    local deadline=$((SECONDS + ${THAW_KAFKA_START_TIMEOUT:-90})) rc
    ok=1
    for id in $(seq 1 "$n"); do
      rc=0; node_wait "$dir/node-$id" "$deadline" || rc=$?
      if ((rc != 0)); then ok=0; break; fi
    done
    ((ok)) && break
    local lost_race=0
    for id in $(seq 1 "$n"); do
      nd="$dir/node-$id"
      grep -qi "address already in use" "$nd/logs/server.log" "$nd/logs/stdout.log" 2>/dev/null && lost_race=1
      node_stop "$nd" KILL
    done
    if ((lost_race && attempt < 3)); then continue; fi
    tail -n 30 "$dir"/node-*/logs/server.log >&2
    die "cluster did not come up: node $id $([[ $rc == 1 ]] && echo exited || echo "not ready after ${THAW_KAFKA_START_TIMEOUT:-90} s") (dir kept: $dir)"
  done
  local ms=$(( $(now_ms) - t0 ))
  echo "bootstrap.servers=$bootstrap" >"$dir/client.properties"
  echo "$bootstrap" >"$dir/bootstrap"

  if [[ -n "${THAW_KAFKA_OWNER_PID:-}" ]]; then
    setsid bash -c '
      owner=$1 dir=$2 self=$3
      echo $$ >"$dir/watchdog.pid"
      while kill -0 "$owner" 2>/dev/null && [[ -f "$dir/.thaw-kafka-cluster" ]]; do sleep 2; done
      if [[ -f "$dir/.thaw-kafka-cluster" ]]; then "$self" stop "$dir"; fi
    ' _ "$THAW_KAFKA_OWNER_PID" "$dir" "$self" </dev/null >/dev/null 2>&1 &
  fi

  echo "BOOTSTRAP=$bootstrap"
  echo "KAFKA_DIR=$dir"
  echo "KAFKA_NODES=$(cluster_nodes "$dir")"
  print_nodes "$dir"
  printf 'KAFKA_START_SECONDS=%d.%02d\n' $((ms / 1000)) $((ms % 1000 / 10))
}

cmd_stop_cluster() { # DIR KEEP
  local dir="$1" keep="$2" id
  # The last nodes of a stopping cluster wait for a quorum that is gone: do
  # not wait long before SIGKILL.
  local THAW_KAFKA_STOP_TIMEOUT="${THAW_KAFKA_STOP_TIMEOUT:-8}"
  local -a pids=()
  # All nodes at once: stopping them one by one leaves the last ones waiting
  # for a controller quorum that is gone.
  for id in $(cluster_nodes "$dir"); do
    node_stop "$dir/node-$id" TERM &
    pids+=($!)
  done
  local p; for p in "${pids[@]}"; do wait "$p" || true; done
  local wd
  wd="$(cat "$dir/watchdog.pid" 2>/dev/null || true)"
  if [[ "$wd" =~ ^[0-9]+$ && "$wd" != "$$" && "$wd" != "$PPID" ]]; then
    kill -TERM "$wd" 2>/dev/null || true
  fi
  if ((keep)); then
    rm -f "$dir/watchdog.pid"
  else
    rm -rf "$dir"
  fi
}

cmd_node() { # kill|stop-node|pause|resume|restart DIR ID [--kill]
  local op="$1" dir nd pid
  dir="$(check_dir "${2:-}")"
  [[ -n "${3:-}" ]] || die "missing node id"
  nd="$(node_dir "$dir" "$3")"
  case "$op" in
    kill) node_stop "$nd" KILL ;;
    stop-node) node_stop "$nd" TERM ;;
    pause|resume)
      pid="$(broker_pid "$nd")" || die "node $3 is not running"
      if [[ $op == pause ]]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi ;;
    restart)
      ensure_jars
      if [[ "${4:-}" == "--kill" ]]; then node_stop "$nd" KILL; else node_stop "$nd" TERM; fi
      node_launch "$nd"
      local rc=0
      node_wait "$nd" $((SECONDS + ${THAW_KAFKA_START_TIMEOUT:-90})) || rc=$?
      if ((rc != 0)); then
        tail -n 30 "$nd/logs/server.log" >&2
        die "node $3 did not come back ($([[ $rc == 1 ]] && echo exited || echo timed out); log: $nd/logs/server.log)"
      fi
      echo "NODE_${3}_PID=$(cat "$nd/kafka.pid")" ;;
  esac
}

tool() { # DIR MAINCLASS ARGS...
  local dir="$1" main="$2"; shift 2
  ensure_jars
  # shellcheck disable=SC2086
  exec java ${THAW_KAFKA_TOOL_HEAP_OPTS:--Xmx512m} -XX:+UseSerialGC \
    -Dlog4j2.configurationFile="$dir/tools-log4j2.properties" \
    -cp "$lib/*" "$main" "$@"
}

has_arg() { local want="$1" a; shift; for a in "$@"; do [[ "$a" == "$want" ]] && return 0; done; return 1; }

cmd="${1:-}"; shift || true
case "$cmd" in
  start) cmd_start "$@" ;;
  start-cluster) cmd_start_cluster "$@" ;;
  stop) cmd_stop "$@" ;;
  kill|stop-node|pause|resume|restart) cmd_node "$cmd" "$@" ;;
  nodes)
    dir="$(check_dir "${1:-}")"
    is_cluster "$dir" || die "$dir is a single broker, not a cluster"
    print_nodes "$dir" ;;
  status)
    dir="$(check_dir "${1:-}")"
    if is_cluster "$dir"; then
      up=0
      for id in $(cluster_nodes "$dir"); do [[ "$(node_state "$dir/node-$id")" == running ]] && up=$((up + 1)); done
      ((up > 0)) || { echo "[kafka] no node running ($dir)" >&2; exit 1; }
      echo "BOOTSTRAP=$(cat "$dir/bootstrap")"
      echo "NODES_RUNNING=$up"
    else
      broker_pid "$dir" >/dev/null || { echo "[kafka] not running ($dir)" >&2; exit 1; }
      echo "BOOTSTRAP=$(cat "$dir/bootstrap")"
    fi ;;
  topics)
    dir="$(check_dir "${1:-}")"; shift
    if has_arg --bootstrap-server "$@"; then
      tool "$dir" org.apache.kafka.tools.TopicCommand "$@"
    else
      tool "$dir" org.apache.kafka.tools.TopicCommand --bootstrap-server "$(cat "$dir/bootstrap")" "$@"
    fi ;;
  perf)
    dir="$(check_dir "${1:-}")"; shift
    tool "$dir" org.apache.kafka.tools.ProducerPerformance --producer.config "$dir/client.properties" "$@" ;;
  consume)
    dir="$(check_dir "${1:-}")"; shift
    if has_arg --bootstrap-server "$@"; then
      tool "$dir" org.apache.kafka.tools.consumer.ConsoleConsumer "$@"
    else
      tool "$dir" org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$(cat "$dir/bootstrap")" "$@"
    fi ;;
  move-leader)
    dir="$(check_dir "${1:-}")"; shift
    [[ $# -ge 2 ]] || die "usage: move-leader DIR TOPIC PARTITION[,PARTITION...] [TO_NODE]"
    tool "$dir" "$here/kafka-leaders.java" "$(cat "$dir/bootstrap")" "$@" ;;
  leader-mover)
    dir="$(check_dir "${1:-}")"
    tool "$dir" "$here/kafka-leaders.java" "$(cat "$dir/bootstrap")" ;;
  ""|-h|--help|help) usage ;;
  *) echo "[kafka] unknown command: $cmd" >&2; usage ;;
esac

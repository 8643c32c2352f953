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
# Environment:
#   THAW_KAFKA_PORT            client port (default: a free port)
#   THAW_KAFKA_CONTROLLER_PORT controller port (default: a free port)
#   THAW_KAFKA_HEAP_OPTS       broker heap (default: -Xms256m -Xmx512m)
#   THAW_KAFKA_JVM_OPTS        extra JVM options for the broker
#   THAW_KAFKA_EXTRA_CONFIG    extra server.properties lines (they override)
#   THAW_KAFKA_START_TIMEOUT   seconds to wait for readiness (default 90)
#   THAW_KAFKA_STOP_TIMEOUT    seconds between SIGTERM and SIGKILL (default 20)
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

write_config() { # DIR PORT CPORT
  local dir="$1" port="$2" cport="$3"
  cat >"$dir/server.properties" <<EOF
# Written by scripts/kafka.sh: single-node KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
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
    write_config "$dir" "$port" "$cport"

    if [[ ! -f "$dir/data/meta.properties" ]]; then
      # shellcheck disable=SC2086
      if ! java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
            -Dlog4j2.configurationFile="$dir/tools-log4j2.properties" \
            -cp "$lib/*" kafka.tools.StorageTool format -t "$cid" \
            -c "$dir/server.properties" >"$dir/logs/format.log" 2>&1; then
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
  stop) cmd_stop "$@" ;;
  status)
    dir="$(check_dir "${1:-}")"
    broker_pid "$dir" >/dev/null || { echo "[kafka] not running ($dir)" >&2; exit 1; }
    echo "BOOTSTRAP=$(cat "$dir/bootstrap")" ;;
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
  ""|-h|--help|help) usage ;;
  *) echo "[kafka] unknown command: $cmd" >&2; usage ;;
esac

#!/usr/bin/env bash
# Installs the Kafka clients the `thaw serve` tests consume with (pinned,
# idempotent; called by `scripts/deps/install.sh --test`):
#   * Python: scripts/deps/requirements-test.txt (kafka-python; moto[server] and
#     psycopg2-binary for the object-store / PostgreSQL tests; duckdb with its
#     iceberg and avro extension wheels for the archive tests; confluent-kafka's
#     schema registry serializers) into .deps/venv
#     (confluent-kafka comes from requirements.txt).
#   * Node: kafkajs from tests/clients/package.json + package-lock.json, `npm ci`
#     into .deps/node (the tests run node with NODE_PATH=.deps/node/node_modules).
#   * Java: nothing to install; the Kafka jars of install-kafka.sh
#     (.deps/kafka/lib) hold KafkaConsumer, ConsoleConsumer and
#     ConsumerGroupCommand.
#   * kcat: the Debian package (scripts/deps/debian-packages.txt); checked here.
# Each step keeps a stamp of its pin files' hash in .deps/stamps.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
stamps="$root/.deps/stamps"
mkdir -p "$stamps"
die() { echo "[deps] clients: FAILED: $*" >&2; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# --- Python ----------------------------------------------------------------
venv="$root/.deps/venv"
[[ -x "$venv/bin/python" ]] || die "no venv at $venv (run scripts/deps/install.sh first)"
want="$(hash_of "$here/requirements-test.txt")"
if [[ "$(cat "$stamps/clients-py" 2>/dev/null)" != "$want" ]] || ! "$venv/bin/python" -c 'import kafka, moto, psycopg2, duckdb, duckdb_extension_iceberg, duckdb_extension_avro, fastavro, google.protobuf, confluent_kafka.schema_registry.avro' 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements-test.txt" \
    || die "pip install -r $here/requirements-test.txt"
  echo "$want" > "$stamps/clients-py"
  echo "[deps] clients: installed $(grep -v '^#' "$here/requirements-test.txt" | xargs) into $venv"
fi

# --- Node (kafkajs) --------------------------------------------------------
command -v npm >/dev/null || die "npm not found (Debian package npm)"
node_dir="$root/.deps/node"
pkg="$root/tests/clients"
want="$(hash_of "$pkg/package.json" "$pkg/package-lock.json")"
if [[ "$(cat "$stamps/clients-node" 2>/dev/null)" != "$want" || ! -f "$node_dir/node_modules/kafkajs/package.json" ]]; then
  mkdir -p "$node_dir"
  cp "$pkg/package.json" "$pkg/package-lock.json" "$node_dir/"
  (cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) \
    || die "npm ci in $node_dir"
  echo "$want" > "$stamps/clients-node"
  echo "[deps] clients: installed kafkajs $(node -p "require('$node_dir/node_modules/kafkajs/package.json').version") into $node_dir"
fi

# --- kcat, Java ------------------------------------------------------------
command -v kcat >/dev/null || die "kcat not found (Debian package kcat, scripts/deps/debian-packages.txt)"
command -v java >/dev/null || die "java not found (scripts/deps/install-java.sh)"
echo "[deps] clients: ok (kafka-python, kafkajs, kcat $(dpkg-query -W -f='${Version}' kcat 2>/dev/null || echo '?'))"

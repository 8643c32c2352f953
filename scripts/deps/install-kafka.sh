#!/usr/bin/env bash
# Installs a real Apache Kafka broker (KRaft) and its command-line tools for
# the tests and benchmarks: every jar of tests/kafka/pom.xml (kafka_2.13,
# kafka-tools, log4j2 binding), copied from Maven Central into
# .deps/kafka/lib (stamp-checked: see copy-maven-jars.sh). Run the broker with
# scripts/kafka.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$here/copy-maven-jars.sh" kafka "$root/tests/kafka/pom.xml" "$root/.deps/kafka" \
  'kafka_2.13-*.jar' 'kafka-tools-[0-9]*.jar' 'log4j-core-*.jar'

#!/usr/bin/env bash
# Idempotent, pinned installation of everything Thaw needs to build and test.
#   scripts/deps/install.sh          Debian packages + Python venv + Kafka message specs (build + demo)
#   scripts/deps/install.sh --test   also the test peers (Java jars, Kafka, the Iceberg REST
#                                    catalog server, clients, moto, PostgreSQL, the
#                                    schema registry)
# Each step records a stamp keyed by the hash of its pin file, so a re-run
# with unchanged pins does nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
stamps="$root/.deps/stamps"
mkdir -p "$stamps"

stamp_ok() { # name file...
  local name="$1"; shift
  local h; h="$(cat "$@" | sha256sum | cut -c1-16)"
  [[ -f "$stamps/$name" && "$(cat "$stamps/$name")" == "$h" ]]
}
stamp_set() {
  local name="$1"; shift
  cat "$@" | sha256sum | cut -c1-16 > "$stamps/$name"
}

# --- Debian packages -------------------------------------------------------
# debian-packages.txt: to build and run; debian-test-packages.txt (--test):
# servers the tests start (PostgreSQL for the SQL catalog).
install_debian() { # pin-file
  local pkgs missing=() spec name want have
  mapfile -t pkgs < <(grep -v '^\s*#' "$1" | sed '/^\s*$/d')
  for spec in "${pkgs[@]}"; do
    name="${spec%%=*}"; want="${spec#*=}"
    have="$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)"
    [[ "$have" == "$want" ]] || missing+=("$spec")
  done
  if ((${#missing[@]})); then
    echo "[deps] installing Debian packages: ${missing[*]}"
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}
install_debian "$here/debian-packages.txt"
[[ "${1:-}" == "--test" ]] && install_debian "$here/debian-test-packages.txt"

# --- Python venv (pyarrow provides Arrow C++ / Parquet) ---------------------
venv="$root/.deps/venv"
if ! stamp_ok venv "$here/requirements.txt" || [[ ! -x "$venv/bin/python" ]]; then
  echo "[deps] creating Python venv with pinned packages"
  py="${PYTHON:-python3}"
  [[ -x "$venv/bin/python" ]] || "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  stamp_set venv "$here/requirements.txt"
fi

# Unversioned symlinks (libarrow.so -> libarrow.so.2600) inside the venv's
# pyarrow so the linker finds -larrow / -lparquet.
"$venv/bin/python" - <<'PY'
import pyarrow, os, glob
d = pyarrow.get_library_dirs()[0]
if not os.path.exists(os.path.join(d, "libparquet.so")):
    pyarrow.create_library_symlinks()
PY

# Kafka's protocol message specs, from which the build generates the codec.
"$here/install-kafka-specs.sh"

if [[ "${1:-}" == "--test" ]]; then
  "$here/install-java.sh"
  "$here/install-kafka.sh"
  "$here/install-rest-catalog.sh"
  "$here/install-clients.sh"
  "$here/install-schema-registry.sh"
fi
echo "[deps] ok"

#!/usr/bin/env bash
# Man pages from `thaw --help` and each command's `--help`, by help2man:
#   gen-man.sh THAW_BINARY OUTDIR VERSION
# writes OUTDIR/thaw.1.gz and OUTDIR/thaw-{inspect,replay,serve,archive,maintain}.1.gz.
set -euo pipefail
thaw="$1"; out="$2"; version="$3"
help2man="${HELP2MAN:-help2man}"
command -v "$help2man" >/dev/null || {
  echo "gen-man.sh: help2man not found: run scripts/deps/install.sh (it is pinned in debian-packages.txt)" >&2
  exit 1
}
here="$(cd "$(dirname "$0")" && pwd)"
commands=(inspect replay serve archive maintain)
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The page's date: the source's last commit, so a rebuild gives the same page.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH="$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)"
  export SOURCE_DATE_EPOCH
fi

see_also() { # page name to leave out
  local pages=() c
  [[ "$1" == thaw ]] || pages+=("thaw (1)")
  for c in "${commands[@]}"; do [[ "$1" == "thaw-$c" ]] || pages+=("thaw-$c (1)"); done
  local IFS=,
  printf '[SEE ALSO]\n%s\n.PP\n' "$(echo "${pages[*]}" | sed 's/,/, /g; s/\([a-z-]*\) (1)/.BR \1 (1)/g; s/, /,\n/g')"
  printf 'The full documentation is in the docs/ directory of the Thaw source.\n'
}

page() { # name, description, command line
  local name="$1" desc="$2"; shift 2
  local inc="$tmp/$name.h2m"
  see_also "$name" > "$inc"
  if [[ "$name" == thaw ]]; then
    cat >> "$inc" <<'H2M'
[FILES]
.TP
.I /etc/thaw/NAME.toml
settings of the systemd units
.BR thaw-serve@NAME.service " and " thaw-archive@NAME.service
(a --config file; /etc/thaw/example.toml shows the keys)
.TP
.I /var/lib/thaw
the services' state directory
H2M
  fi
  # help2man runs "$*" --help through the shell; its synopsis is the help's
  # "Usage:" line with the directory of the binary left out.
  "$help2man" --no-info --no-discard-stderr --section 1 --source "Thaw $version" \
    --version-string "$name $version" --name "$desc" --include "$inc" --output "$tmp/$name.1" "$*"
  gzip -9nc "$tmp/$name.1" > "$out/$name.1.gz"
}

page thaw "turn Apache Iceberg tables back into Apache Kafka streams" "$thaw"
for c in "${commands[@]}"; do
  # The first line of a command's help is its one-line description.
  desc="$("$thaw" "$c" --help)"
  desc="${desc%%$'\n'*}"
  page "thaw-$c" "${desc,}" "$thaw" "$c"
done

"""``acme-labs/shtools``: Shell scripts sharing ``lib/*.sh`` through ``source``, bats tests and one
poor-quality script."""

from __future__ import annotations

import random

LOG_SH = '''#!/usr/bin/env bash
# Logging helpers: log_info, log_warn, log_error, die. Source this file; do not execute it.

if [[ -t 2 ]]; then
  _C_RED=$'\\e[31m' _C_YEL=$'\\e[33m' _C_DIM=$'\\e[2m' _C_OFF=$'\\e[0m'
else
  _C_RED='' _C_YEL='' _C_DIM='' _C_OFF=''
fi

_log() {
  local level=$1 color=$2
  shift 2
  printf '%s%s%s %s%-5s%s %s\\n' "$_C_DIM" "$(date '+%Y-%m-%d %H:%M:%S')" "$_C_OFF" "$color" "$level" "$_C_OFF" "$*" >&2
}

log_info()  { _log INFO "" "$@"; }
log_warn()  { _log WARN "$_C_YEL" "$@"; }
log_error() { _log ERROR "$_C_RED" "$@"; }

# die MESSAGE [STATUS]: log an error and exit.
die() {
  log_error "$1"
  exit "${2:-1}"
}
'''

COMMON_SH = '''#!/usr/bin/env bash
# Shared setup for every script in bin/: strict mode, logging, and small helpers.
set -euo pipefail

SHTOOLS_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/log.sh
source "$SHTOOLS_LIB/log.sh"

# require_cmd NAME...: fail early when a dependency is missing.
require_cmd() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || die "missing required command: $cmd" 127
  done
}

# confirm PROMPT: ask y/N unless ASSUME_YES=1.
confirm() {
  [[ "${ASSUME_YES:-0}" == 1 ]] && return 0
  local reply
  read -r -p "$1 [y/N] " reply
  [[ "$reply" =~ ^[Yy]$ ]]
}

# human_size BYTES: 1536 -> 1.5K
human_size() {
  numfmt --to=iec --suffix= "$1"
}
'''

NET_SH = '''#!/usr/bin/env bash
# Network helpers. Requires lib/common.sh to be sourced first.

# wait_for_port HOST PORT [TIMEOUT]: poll until a TCP port accepts connections.
wait_for_port() {
  local host=$1 port=$2 timeout=${3:-30} i
  for ((i = 0; i < timeout; i++)); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
      return 0
    fi
    sleep 1
  done
  return 1
}

# http_status URL: print the HTTP status code of a GET request.
http_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$1"
}
'''

# (script name, description, options for getopts, body)
SCRIPTS = [
    ("backup", "Archive a directory into a dated tarball.", "d:k:", 'require_cmd tar\n[[ -n "${dest:-}" ]] || die "usage: backup -d DEST [-k KEEP] DIR"\nsrc=${1:?directory to back up}\nstamp=$(date +%Y%m%d-%H%M%S)\narchive="$dest/$(basename "$src")-$stamp.tar.gz"\ntar -czf "$archive" -C "$(dirname "$src")" "$(basename "$src")"\nlog_info "wrote $archive ($(human_size "$(stat -c %s "$archive")"))"\nls -1t "$dest"/*.tar.gz | tail -n +"$(( ${keep:-7} + 1 ))" | xargs -r rm --'),
    ("rotate-logs", "Compress logs older than N days and delete very old ones.", "n:", 'dir=${1:?log directory}\ndays=${n:-7}\nfind "$dir" -name "*.log" -mtime +"$days" -print0 | xargs -0 -r gzip -9\nfind "$dir" -name "*.log.gz" -mtime +"$((days * 4))" -delete\nlog_info "rotated logs in $dir"'),
    ("healthcheck", "Check that services answer with HTTP 200.", "t:", 'source "$SHTOOLS_LIB/net.sh"\nrequire_cmd curl\nfailed=0\nfor url in "$@"; do\n  code=$(http_status "$url")\n  if [[ "$code" != 200 ]]; then\n    log_warn "$url returned $code"\n    failed=$((failed + 1))\n  fi\ndone\n(( failed == 0 )) || die "$failed service(s) unhealthy" 2\nlog_info "all $# services healthy"'),
    ("cleanup-tmp", "Delete files in /tmp not accessed for N days.", "n:", 'days=${n:-10}\ncount=$(find /tmp -xdev -type f -atime +"$days" | wc -l)\nconfirm "delete $count files?" || exit 0\nfind /tmp -xdev -type f -atime +"$days" -delete\nlog_info "deleted $count files"'),
    ("disk-usage", "Warn when a filesystem is fuller than a threshold.", "p:", 'limit=${p:-90}\ndf -P | awk \'NR > 1 { gsub("%", "", $5); print $5, $6 }\' | while read -r used mount; do\n  if (( used >= limit )); then\n    log_warn "$mount is ${used}% full"\n  fi\ndone'),
    ("git-prune", "Delete local branches already merged into main.", "r:", 'require_cmd git\nmain=${r:-main}\ngit fetch --prune --quiet\ngit branch --merged "$main" | grep -vE "^\\*|\\b$main\\b" | while read -r branch; do\n  git branch -d "$branch"\n  log_info "deleted $branch"\ndone'),
    ("db-dump", "Dump a PostgreSQL database with a timestamp.", "o:", 'require_cmd pg_dump\ndb=${1:?database name}\nout=${o:-.}/"$db-$(date +%F).sql.gz"\npg_dump --no-owner "$db" | gzip > "$out"\nlog_info "dumped $db to $out"'),
    ("cert-check", "Report TLS certificates that expire soon.", "w:", 'require_cmd openssl\nwarn_days=${w:-21}\nfor host in "$@"; do\n  end=$(echo | openssl s_client -servername "$host" -connect "$host:443" 2>/dev/null | openssl x509 -noout -enddate | cut -d= -f2)\n  left=$(( ($(date -d "$end" +%s) - $(date +%s)) / 86400 ))\n  if (( left < warn_days )); then log_warn "$host expires in $left days"; else log_info "$host ok ($left days)"; fi\ndone'),
    ("deploy", "Rsync a build directory to a host and restart the service.", "h:s:", 'require_cmd rsync ssh\n[[ -n "${h:-}" && -n "${s:-}" ]] || die "usage: deploy -h HOST -s SERVICE DIR"\nsrc=${1:?build directory}\nrsync -az --delete "$src/" "$h:/srv/$s/"\nssh "$h" "sudo systemctl restart $s"\nlog_info "deployed $s to $h"'),
    ("sync-assets", "Upload changed static assets to object storage.", "b:", 'require_cmd aws\nbucket=${b:?bucket}\naws s3 sync "${1:-public}" "s3://$bucket" --delete --exact-timestamps\nlog_info "synced to $bucket"'),
    ("wait-for", "Wait until a TCP port is open, then run a command.", "t:", 'source "$SHTOOLS_LIB/net.sh"\nhostport=${1:?HOST:PORT}\nshift\nwait_for_port "${hostport%:*}" "${hostport#*:}" "${t:-30}" || die "timed out waiting for $hostport" 3\nexec "$@"'),
    ("find-large", "List the largest files under a directory.", "n:", 'dir=${1:-.}\nfind "$dir" -xdev -type f -printf "%s %p\\n" | sort -rn | head -n "${n:-20}" | while read -r size path; do\n  printf "%8s  %s\\n" "$(human_size "$size")" "$path"\ndone'),
    ("ssh-keys-audit", "List authorized SSH keys with their comments.", "u:", 'user=${u:-$USER}\nfile=$(getent passwd "$user" | cut -d: -f6)/.ssh/authorized_keys\n[[ -r "$file" ]] || die "cannot read $file"\nawk \'!/^#/ && NF { print NR": "$NF }\' "$file"'),
    ("port-scan-local", "Show listening TCP ports and their processes.", "", 'require_cmd ss\nss -ltnpH | awk \'{ print $4, $6 }\' | sort -u'),
]

OLD_BACKUP = '''#!/bin/sh
# old backup script DO NOT USE
D=/backup
S=$1
if [ "$S" = "" ]; then
echo "no"
exit
fi
if [ -d $D ]; then
if [ -d $S ]; then
if [ -w $D ]; then
tar czf $D/`basename $S`-`date +%s`.tgz $S
if [ $? = 0 ]; then
echo ok
else
echo fail
fi
else
echo "cant write"
fi
else
echo "no src"
fi
else
mkdir $D
tar czf $D/`basename $S`-`date +%s`.tgz $S
if [ $? = 0 ]; then
echo ok
else
echo fail
fi
fi
'''


def script(name: str, desc: str, opts: str, body: str) -> str:
    letters = [c for c in opts if c != ":"]
    cases = "".join(f'    {c}) {c}=$OPTARG ;;\n' for c in letters)
    usage_opts = " ".join(f"[-{c} VALUE]" for c in letters)
    return f'''#!/usr/bin/env bash
# {name}: {desc}
# shellcheck source=../lib/common.sh
source "$(dirname "${{BASH_SOURCE[0]}}")/../lib/common.sh"

usage() {{
  echo "usage: {name} {usage_opts} ARGS..." >&2
  exit 64
}}

while getopts "{opts}h" opt; do
  case $opt in
{cases}    h | *) usage ;;
  esac
done
shift $((OPTIND - 1))

{body}
'''


def bats_test(name: str) -> str:
    return f'''#!/usr/bin/env bats

setup() {{
  SCRIPT="$BATS_TEST_DIRNAME/../bin/{name}.sh"
}}

@test "{name} prints usage with -h" {{
  run "$SCRIPT" -h
  [ "$status" -eq 64 ]
  [[ "$output" == *"usage: {name}"* ]]
}}

@test "{name} rejects unknown options" {{
  run "$SCRIPT" -Z
  [ "$status" -ne 0 ]
}}
'''


def shtools(rng: random.Random) -> list[tuple[str, str]]:
    files = [
        ("README.md", "# shtools\n\nSmall operations scripts that share `lib/common.sh` (strict mode, logging, "
                      "helpers).\n\n| script | purpose |\n|---|---|\n" + "".join(f"| `bin/{n}.sh` | {d} |\n" for n, d, _, _ in SCRIPTS)
                      + "\nRun the tests with `bats test/`. `bin/old_backup.sh` is kept for the legacy cron job only.\n"),
        ("Makefile", "PREFIX ?= /usr/local\n\n.PHONY: test lint install\n\ntest:\n\tbats test/\n\nlint:\n\tshellcheck bin/*.sh lib/*.sh install.sh\n\n"
                     "install:\n\t./install.sh $(PREFIX)\n"),
        ("install.sh", '#!/usr/bin/env bash\nset -euo pipefail\nprefix=${1:-/usr/local}\ninstall -d "$prefix/lib/shtools" "$prefix/bin"\n'
                       'install -m 0644 lib/*.sh "$prefix/lib/shtools/"\nfor f in bin/*.sh; do\n  install -m 0755 "$f" "$prefix/bin/$(basename "$f" .sh)"\ndone\n'
                       'echo "installed to $prefix"\n'),
        (".shellcheckrc", "external-sources=true\nsource-path=SCRIPTDIR\n"),
        ("lib/log.sh", LOG_SH),
        ("lib/common.sh", COMMON_SH),
        ("lib/net.sh", NET_SH),
        ("bin/old_backup.sh", OLD_BACKUP),
    ]
    for name, desc, opts, body in SCRIPTS:
        files.append((f"bin/{name}.sh", script(name, desc, opts, body)))
    for name, _, _, _ in SCRIPTS[:8]:
        files.append((f"test/{name}.bats", bats_test(name)))
    return files

#!/usr/bin/env bash
# Installs the Debian packages accessbench needs, only those missing (so a second run is
# instant). Root installs directly; otherwise sudo is used when present.
set -euo pipefail

packages=(postgresql-15 gcc make pkg-config libpq-dev libsqlite3-dev libjansson-dev unixodbc unixodbc-dev odbc-postgresql libsqliteodbc
          pgbouncer  # the pooler paths
          mariadb-server libmariadb-dev odbc-mariadb  # the mariadb target, libmariadb (C, mysqlclient, Connector/Python), its ODBC driver
          chromium chromium-driver)  # the HTML report's test opens it in headless Chromium
# Debian's own python3 needs python3-venv for `python3 -m venv`; other Pythons bring it.
python3 -c 'import ensurepip' 2>/dev/null || packages+=(python3-venv)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}"
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

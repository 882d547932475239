#!/usr/bin/env bash
# Installs the Debian packages accessbench needs, only those missing (so a second run is
# instant). Root installs directly; otherwise sudo is used when present.
#
#   install-system-deps.sh build   what the builds need: compilers, headers, client libraries
#   install-system-deps.sh run     what runs and is measured: servers, poolers, interpreters and
#                                  their drivers, the app servers, load generators, the browser
#   install-system-deps.sh         both
#
# `make setup` installs `build` first and `run` beside the builds (apt downloads and unpacks
# while the workers compile: nothing a build reads is in `run`).
set -euo pipefail

build=(gcc g++ make pkg-config libpq-dev libsqlite3-dev libjansson-dev unixodbc-dev
       libmariadb-dev  # libmariadb (C, mysqlclient, Connector/Python, Rust's mysqlclient-sys)
       libpqxx-dev libsoci-dev nlohmann-json3-dev  # the C++ worker
       # Debian's own Python for the Python pages (an interpreter the app server's unprivileged
       # user can run), its venv, and the headers mysqlclient compiles against
       python3 python3-venv python3-dev
       )
run=(postgresql-15 unixodbc odbc-postgresql libsqliteodbc
     pgbouncer pgpool2  # the pooler paths: PgBouncer (pooler) and pgpool-II (pgpool)
     iproute2  # network namespaces and veth links: --cluster local:N's hosts, the netem paths
     mariadb-server odbc-mariadb  # the mariadb target and its ODBC driver
     chromium chromium-driver  # the HTML report's test opens it in headless Chromium
     # the web tier (docs/tier.md): Apache with mod_php and PHP-FPM, PHP's drivers, the load generators
     apache2 apache2-utils libapache2-mod-php8.2 php8.2-cli php8.2-fpm php8.2-pgsql php8.2-mysql wrk
     # the Ruby, PHP and Perl workers: Debian's interpreters, drivers and layers
     ruby ruby-pg ruby-mysql2 ruby-sqlite3 ruby-sequel ruby-activerecord php8.2-sqlite3
     puma ruby-rack  # the web tier's Ruby pages: a Rack app under Puma (docs/tier.md)
     perl libdbi-perl libdbd-pg-perl libdbd-mariadb-perl libdbd-sqlite3-perl libbsd-resource-perl libcpanel-json-xs-perl
     starman libplack-perl libhtml-parser-perl  # the web tier's Perl pages: a PSGI app under Starman, HTML::Entities
     linux-perf  # run --profile: the sampler of native workers and of the servers' backends
     )
case "${1:-all}" in
  build) packages=("${build[@]}") ;;
  run) packages=("${run[@]}") ;;
  all) packages=("${build[@]}" "${run[@]}") ;;
  *) echo "install-system-deps.sh: '$1': say build, run or nothing (both)" >&2; exit 2 ;;
esac
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
# Installing a server package must not start its service (Apache would take port 80, PHP-FPM
# its pool): accessbench starts its own servers on loopback ports and stops them. A
# policy-rc.d that refuses is Debian's way to say so, for this install only.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  run sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy"
  trap 'run rm -f "$policy"' EXIT
fi
run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

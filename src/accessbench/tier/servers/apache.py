"""PHP under Apache httpd: the prefork MPM with mod_php (study S5's stack: a PHP interpreter in
every Apache process) or the event MPM handing .php to PHP-FPM over FastCGI (today's usual
stack). Both from Debian's packages, each with a configuration of its own written for the run
(nothing of /etc/apache2 is read), no access log, on a loopback port."""

from __future__ import annotations

import glob
import os
import subprocess
import time

from .base import ROOT, STATIC_PAGE, TFB_PAGES, AppServer, ServerFailed

MODULES = "/usr/lib/apache2/modules"
PHP_VERSION = "8.2"  # Debian 12's
PAGES = ROOT / "workers" / "php"


def _php_ini(sapi: str) -> str:
    return f"/etc/php/{PHP_VERSION}/{sapi}/php.ini"


def _opcache(sapi: str) -> str:
    return "on" if glob.glob(f"/etc/php/{PHP_VERSION}/{sapi}/conf.d/*opcache.ini") else "off"


class Apache(AppServer):
    pages = {"static": "/static.html", "hello": "/hello.php", "op": "/op.php",
             **{page: f"{url}.php" for page, url in TFB_PAGES.items()}}  # TechEmpower's tests: db.php …
    mpm = ""

    def modules(self) -> list[str]:
        return [f"mpm_{self.mpm}", "authz_core", "mime", "dir", "alias", "env"]

    def handler(self) -> str:
        raise NotImplementedError

    def mpm_settings(self) -> dict[str, int]:
        raise NotImplementedError

    def configure(self) -> None:
        loads = "\n".join(f"LoadModule {m}_module {MODULES}/mod_{m}.so" for m in self.modules())
        mpm = "\n".join(f"{k} {v}" for k, v in self.mpm_settings().items())
        passed = " ".join(k for k in self.env if k.startswith("ACCESSBENCH_"))
        (self.dir / "httpd.conf").write_text(f"""# accessbench: Apache httpd for one tier method ({self.name})
ServerName 127.0.0.1
Listen 127.0.0.1:{self.port}
PidFile {self.dir}/httpd.pid
DefaultRuntimeDir {self.dir}
Mutex file:{self.dir} default
ErrorLog {self.dir}/error.log
LogLevel warn
{loads}
TypesConfig /etc/mime.types
{mpm}
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
DocumentRoot {PAGES}
<Directory {PAGES}>
    Require all granted
</Directory>
Alias /static.html {STATIC_PAGE}
<Directory {STATIC_PAGE.parent}>
    Require all granted
</Directory>
{f"PassEnv {passed}" if passed else ""}
{self.handler()}
""")

    def commands(self) -> list[list[str]]:
        return [["/usr/sbin/apache2", "-f", str(self.dir / "httpd.conf"), "-DFOREGROUND"]]

    def settings(self) -> dict[str, str]:
        return {"app server": f"Apache httpd {_version(['/usr/sbin/apache2', '-v'], 'Apache/')}, {self.mpm} MPM",
                "MPM": ", ".join(f"{k} {v}" for k, v in self.mpm_settings().items()),
                "keep-alive": "on (100 requests, 5 s)", "access log": "off"}


class ModPhp(Apache):
    """Prefork: each Apache process is single-threaded and embeds PHP; a persistent connection
    belongs to the process (so one per process, MaxRequestWorkers of them)."""

    name = "mod_php"
    mpm = "prefork"
    binaries = ("/usr/sbin/apache2", f"{MODULES}/libphp{PHP_VERSION}.so")

    def configure(self) -> None:
        super().configure()
        with open(self.dir / "httpd.conf", "a") as conf:
            conf.write(f"LoadModule php_module {MODULES}/libphp{PHP_VERSION}.so\n")

    def handler(self) -> str:
        return '<FilesMatch "\\.php$">\n    SetHandler application/x-httpd-php\n</FilesMatch>'

    def mpm_settings(self) -> dict[str, int]:
        # A fixed pool, as gunicorn's workers and FPM's static pool are: the processes asked for
        # are there from the start and no more are spawned (no spawning inside a trial, and no
        # 11th process holding an 11th persistent connection the run's room did not count —
        # MinSpareServers equal to the pool used to spawn one whenever one process was busy).
        return {"StartServers": self.processes, "MinSpareServers": 1, "MaxSpareServers": self.processes,
                "ServerLimit": self.processes, "MaxRequestWorkers": self.processes, "MaxConnectionsPerChild": 0}

    def settings(self) -> dict[str, str]:
        return {**super().settings(), "PHP": f"{PHP_VERSION} as mod_php, {_php_ini('apache2')}, "
                                              f"opcache {_opcache('apache2')}"}


class Fpm(Apache):
    """Event MPM in front, a static pool of PHP-FPM processes behind it on a unix socket; a
    persistent connection belongs to an FPM process."""

    name = "fpm"
    mpm = "event"
    binaries = ("/usr/sbin/apache2", f"/usr/sbin/php-fpm{PHP_VERSION}")

    def modules(self) -> list[str]:
        return [*super().modules(), "proxy", "proxy_fcgi"]

    @property
    def socket(self) -> str:
        return str(self.dir / "php-fpm.sock")

    def handler(self) -> str:
        return (f'<FilesMatch "\\.php$">\n    SetHandler "proxy:unix:{self.socket}|fcgi://localhost"\n</FilesMatch>')

    def mpm_settings(self) -> dict[str, int]:
        return {"StartServers": 2, "ThreadsPerChild": 25, "MaxRequestWorkers": 150}  # Debian's

    def configure(self) -> None:
        super().configure()
        (self.dir / "php-fpm.conf").write_text(f"""; accessbench: PHP-FPM for one tier method
[global]
pid = {self.dir}/php-fpm.pid
error_log = {self.dir}/php-fpm.log
daemonize = no

[pages]
listen = {self.socket}
pm = static
pm.max_children = {self.processes}
clear_env = no
catch_workers_output = yes
""")

    def commands(self) -> list[list[str]]:
        return [[f"/usr/sbin/php-fpm{PHP_VERSION}", "--nodaemonize", "--fpm-config", str(self.dir / "php-fpm.conf"),
                 "-c", _php_ini("fpm")], *super().commands()]

    def _started(self, proc) -> None:
        if proc is self.procs[0]:  # FPM first: Apache hands requests to its socket
            deadline = time.monotonic() + 15
            while not os.path.exists(self.socket):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise ServerFailed(f"PHP-FPM did not open its socket ({self.dir / 'php-fpm.log'})")
                time.sleep(0.05)

    def settings(self) -> dict[str, str]:
        return {**super().settings(),
                "PHP": f"{PHP_VERSION} under PHP-FPM (pm static, {self.processes} processes), {_php_ini('fpm')}, "
                       f"opcache {_opcache('fpm')}"}


def _version(command: list[str], marker: str) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    word = next((w for w in out.split() if w.startswith(marker)), "?")
    return word.removeprefix(marker)

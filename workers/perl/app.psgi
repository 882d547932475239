# The web tier's Perl pages (docs/tier.md) as one PSGI application, lib/AccessBench/Web.pm, which
# the tier worker serves with Starman (src/accessbench/tier/servers/starman.py):
#
#   ACCESSBENCH_TIER_DIR=… starman --listen 127.0.0.1:PORT --workers N --disable-keepalive workers/perl/app.psgi
use strict;
use warnings;
use File::Basename ();
use lib File::Basename::dirname(__FILE__) . '/lib';

use AccessBench::Web;

AccessBench::Web::app();

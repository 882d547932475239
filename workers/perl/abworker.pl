#!/usr/bin/perl
# abworker-perl: the Perl worker of accessbench (protocol/PROTOCOL.md, version 1).
#
#   perl workers/perl/abworker.pl METHOD      (a method of the registry, lib/AccessBench/Worker/Registry.pm)
#
# One JSON object per line on stdin, one answer per line on stdout, nothing else on stdout.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";

use AccessBench::Worker::Host;

exit AccessBench::Worker::Host::main(@ARGV);

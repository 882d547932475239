package AccessBench::Worker::Registry;
# The registry: every method base this worker knows → its driver module (a subclass of
# AccessBench::Worker::Driver). hello's `methods`, the usage line and the `unknown method` answer
# all come from it.
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Errors qw(unsupported);

use Exporter 'import';
our @EXPORT_OK = qw(load_driver method_names);

my %DRIVERS = (
    'pl-dbi-pg'      => 'AccessBench::Worker::Driver::Pg',
    'pl-dbi-mariadb' => 'AccessBench::Worker::Driver::MariaDB',
    'pl-dbi-sqlite'  => 'AccessBench::Worker::Driver::SQLite',
);

sub method_names { sort keys %DRIVERS }

# The driver of a method name: a base of the registry followed by optional `/key=value,…`
# settings, each given to the driver's `configure`. A method that cannot be used (unknown base or
# setting, a DBD that does not load) dies `unsupported` with the reason, which the worker then
# answers to every message.
sub load_driver {
    my ($method) = @_;
    my ($base, $settings) = split m{/}, $method, 2;
    my $class = $DRIVERS{$base}
        or unsupported("unknown method '$base' (abworker-perl knows " . join(', ', method_names()) . ')');
    (my $file = "$class.pm") =~ s{::}{/}g;
    eval { require $file; 1 } or do {
        print STDERR $@;
        unsupported("$base: its driver does not load: " . ((split /\n/, $@)[0]));
    };
    my $driver = $class->new($method);
    for my $kv (split /,/, $settings // '') {
        my ($key, $value) = $kv =~ /\A([^=]+)=(.*)\z/ or unsupported("$method: setting '$kv' is not key=value");
        $driver->configure($key, $value);
    }
    return $driver;
}

1;

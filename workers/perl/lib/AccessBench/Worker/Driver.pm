package AccessBench::Worker::Driver;
# The driver interface: what a driver module (registered in Registry.pm) implements, and all the
# host (Host.pm, Step.pm) uses of it; the host never looks at a driver's class. A driver
# supplies operations, never loops.
#
# An op is one operation of a step: a function of one argument made before the clock (a
# parameter row, a literal statement text, a batch group, or undef) returning the rows it read
# (an array of rows, every value decoded) or, for statements that read none, the number of rows
# it changed.
#
#   driver_name, driver_version, dbms, modes, batch_style, settings, load_policies   hello
#   configure(key, value)           a `key=value` setting of the method name
#   use_endpoint(ep)                untimed: the connection's settings from the endpoint
#   connect → conn                  one connection (timed as open's connect_ns, per request, …)
#   opened(conn) → {server_pid, server_version}   untimed, after open's connect; it becomes the session's
#   disconnect(conn), close, session, server_pid
#   adapt(rows, types), adapt_batch(rows, types, step)   parameters in the driver's form, before the clock
#   op_for(step, conn) → op         the op of a step's kind and mode on a connection
#   per_request_op(make) → op       connect, make(conn)'s op, disconnect, inside the operation's time
#   kinds, width                    the checksum kinds and the number of the columns last read
#   txn_begin(conn), txn_commit(conn)   commit_every
#   recover                         after a db error: the session's connection usable again
#   load_op(step, conn), levels, count_statements(on), statements   where the driver has `load` steps
#   end_step                        after every step, untimed
#   for_step → driver               the same endpoint and connection for one more step at a time (pages)
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Errors qw(unsupported);

sub new {
    my ($class, $method) = @_;
    return bless {method => $method, conn => undef}, $class;
}

sub configure {
    my ($self, $key, $value) = @_;
    my ($base) = split m{/}, $self->{method};
    unsupported("$base has no setting $key=$value");
}

sub modes { [qw(literal extended prepared)] }
sub load_policies { [qw(persistent per-request)] }

sub adapt { $_[1] }
sub adapt_batch { my ($self, $rows, $types) = @_; return $self->adapt($rows, $types) }

sub session { $_[0]{conn} }

sub kinds { $_[0]{kinds} }
sub width { $_[0]{kinds} ? scalar @{$_[0]{kinds}} : undef }

# loads: each level's [count, kinds] of the last load, and the statements sent while counting
# (the verification pass counts; the timed one does not)
sub levels { $_[0]{levels} }
sub count_statements { $_[0]{statements} = $_[1] ? 0 : undef }
sub statements { $_[0]{statements} }

sub end_step { }

# A driver of the same endpoint and session connection with a step's state of its own (the result
# plan a step chooses at its first result): a page's process keeps many steps at once, where the
# worker runs one and ends it (end_step) before the next.
sub for_step {
    my ($self) = @_;
    my $copy = bless {%$self}, ref $self;
    $copy->end_step;
    return $copy;
}

1;

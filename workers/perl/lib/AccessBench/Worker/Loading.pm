package AccessBench::Worker::Loading;
# Loading associations (protocol/PROTOCOL.md, "Loading associations"): a `load` step reads a
# parent table's rows and, level by level, the rows of each child table that reference the level
# above (users → posts → comments). One operation is one whole load; it answers every entity it
# read, each once: the parents, then the children, then the grandchildren, as rows of their tables'
# columns in table order, so that every strategy and every method checksum the same rows.
#
# The three strategies as a programmer writes them by hand, written once for every driver:
#   lazy      the parents' statement, then the level's `one` statement for each distinct value of
#             the referenced column read at the level above (N+1: one statement per parent and
#             per child);
#   selectin  the parents' statement, then one `in` statement per level over the distinct values
#             read at the level above (none when it read no rows);
#   joined    the one `joined` statement, each row split by the levels' column counts, each entity
#             kept once by its key (a level whose key is NULL in a row has no entity there).
# The driver runs each statement: `query(sql, values, types)` → (rows, kinds), values bound in its
# extended mode by their types.
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Checksum;
use AccessBench::Worker::Errors qw(protocol_error);

use Exporter 'import';
our @EXPORT_OK = qw(plan_of load_entities);

use constant HAND_WRITTEN => 'hand-written, as a programmer writes each strategy (Loading.pm): lazy = the parents\' '
    . 'statement, then the message\'s `one` statement per parent and per child (N+1); selectin = the parents, then '
    . 'one `in` statement per level over the distinct keys read; joined = the message\'s one LEFT JOIN statement, '
    . 'each row split by the levels\' column counts, each entity kept once by its key; every statement as the '
    . 'extended mode runs it, a value read bound by the type of its column; statements counted by this code as it '
    . 'sends them';

my %STRATEGIES = map { $_ => __PACKAGE__->can("_$_") } qw(lazy selectin joined);

# the kind of a column → the type its values are bound as
my %TYPE_OF_KIND = (I => 'int', S => 'text', D => 'decimal', F => 'float', d => 'date', T => 'timestamp',
                    B => 'bool', X => 'bytes', t => 'int');

sub _index_of {
    my ($list, $name) = @_;
    my ($i) = grep { $list->[$_] eq $name } 0 .. $#$list;
    return $i;
}

# The load step's plan, from its message: the parents' statement, table and key, and each level.
sub plan_of {
    my ($msg, $shape) = @_;
    my $load = $msg->{load};
    protocol_error('a load step needs load: {strategy, levels, joined}') unless ref $load eq 'HASH';
    my $strategy = $load->{strategy} // '';
    protocol_error("unknown load strategy '$strategy'") unless $STRATEGIES{$strategy};
    protocol_error("a load step's shape is the select of its parents' table (table_columns, key)")
        unless ref $shape eq 'HASH' && ref $shape->{table_columns} eq 'ARRAY' && ref $shape->{key} eq 'ARRAY';
    protocol_error('load.levels must be a list') unless ref $load->{levels} eq 'ARRAY' && @{$load->{levels}};
    my $above = $shape->{table_columns};
    my @levels;
    for my $l (@{$load->{levels}}) {
        exists $l->{$_} or protocol_error("load.levels[]: missing field '$_'")
            for qw(table column parent_column one in table_columns key);
        my $at = _index_of($above, $l->{parent_column})
            // protocol_error("load: $l->{parent_column} is not a column of the level above");
        push @levels, {columns => $l->{table_columns}, key => $l->{key}, one => $l->{one}, in => $l->{in}, above => $at};
        $above = $l->{table_columns};
    }
    return {strategy => $strategy, sql => $msg->{sql}, columns => $shape->{table_columns}, key => $shape->{key},
            levels => \@levels, joined => $load->{joined}};
}

# the distinct non-NULL values of column `at` of `rows`, in the order first read
sub _distinct {
    my ($rows, $at) = @_;
    my %seen;
    return grep { defined && !$seen{$_}++ } map { $_->[$at] } @$rows;
}

# the type a value read is bound as: its column's kind (or, without one, the value's own)
sub _type_of {
    my ($kinds, $at, $value) = @_;
    my $kind = ($kinds && $kinds->[$at]) // AccessBench::Worker::Checksum::dynamic_kind($value);
    return $TYPE_OF_KIND{$kind};
}

sub _lazy {
    my ($plan, $query, $args, $types) = @_;
    my @parts = ([$query->($plan->{sql}, $args, $types)]);
    for my $level (@{$plan->{levels}}) {
        my ($above, @rows, $kinds) = ($parts[-1]);
        for my $value (_distinct($above->[0], $level->{above})) {
            my ($found, $k) = $query->($level->{one}, [$value], [_type_of($above->[1], $level->{above}, $value)]);
            push @rows, @$found;
            $kinds = $k;
        }
        push @parts, [\@rows, $kinds];
    }
    return @parts;
}

sub _selectin {
    my ($plan, $query, $args, $types) = @_;
    my @parts = ([$query->($plan->{sql}, $args, $types)]);
    for my $level (@{$plan->{levels}}) {
        my $above = $parts[-1];
        my @values = _distinct($above->[0], $level->{above});
        unless (@values) {
            push @parts, [[], undef];
            next;
        }
        my $sql = $level->{in}[0] . join(', ', ('?') x @values) . $level->{in}[1];
        push @parts, [$query->($sql, \@values, [map { _type_of($above->[1], $level->{above}, $_) } @values])];
    }
    return @parts;
}

# joined rows → each level's entities, each once by its key (none where its key is NULL)
sub _joined {
    my ($plan, $query, $args, $types) = @_;
    my ($rows, $kinds) = $query->($plan->{joined}, $args, $types);
    my @tables = ([$plan->{columns}, $plan->{key}], map { [$_->{columns}, $_->{key}] } @{$plan->{levels}});
    my ($from, @parts) = (0);
    for my $table (@tables) {
        my ($columns, $key) = @$table;
        my ($width, @at) = (scalar @$columns, map { _index_of($columns, $_) } @$key);
        my (%seen, @found);
        for my $row (@$rows) {
            my @values = @$row[map { $from + $_ } @at];
            next if grep { !defined } @values;
            push @found, [@$row[$from .. $from + $width - 1]] unless $seen{join "\0", @values}++;
        }
        push @parts, [\@found, $kinds ? [@$kinds[$from .. $from + $width - 1]] : undef];
        $from += $width;
    }
    return @parts;
}

# One load: (its entities, level after level, and [count, kinds] of each level)
sub load_entities {
    my ($plan, $query, $args, $types) = @_;
    my @parts = $STRATEGIES{$plan->{strategy}}->($plan, $query, $args, $types);
    return ([map { @{$_->[0]} } @parts], [map { [scalar @{$_->[0]}, $_->[1]] } @parts]);
}

1;

package AccessBench::Worker::Json;
# JSON Lines in and out (Cpanel::JSON::XS). Integers stay exact: a seed in [2^63, 2^64) is read
# as an unsigned integer (UV) holding the same 64 bits, and every integer this worker writes is
# a Perl integer, written as a JSON number; strings stay strings (a hex checksum is never taken
# for a number).
use strict;
use warnings;
use utf8;

use B ();
use Cpanel::JSON::XS ();

use Exporter 'import';
our @EXPORT_OK = qw(decode_line encode_line is_bool is_string json_bool);

my $CODEC = Cpanel::JSON::XS->new->utf8->allow_nonref;

sub decode_line { $CODEC->decode($_[0]) }
sub encode_line { $CODEC->encode($_[0]) }

sub is_bool { Cpanel::JSON::XS::is_bool($_[0]) }

# a JSON string as decoded (as opposed to a number): the scalar holds a string and no number
sub is_string {
    my $flags = B::svref_2object(\$_[0])->FLAGS;
    return ($flags & B::SVp_POK) && !($flags & (B::SVp_IOK | B::SVp_NOK));
}

sub json_bool { $_[0] ? Cpanel::JSON::XS::true() : Cpanel::JSON::XS::false() }

1;

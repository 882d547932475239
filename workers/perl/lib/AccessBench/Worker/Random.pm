package AccessBench::Worker::Random;
# splitmix64 (protocol/PROTOCOL.md, Generators) on Perl's 64-bit integers. Debian's perl is built
# with 64-bit IVs and -fwrapv: a multiplication under `use integer` wraps mod 2^64 (signed, the
# same bits), while shifts and xors outside it work on the unsigned value (UV), so each step of
# the mix is written where its semantics are the unsigned ones.
use strict;
use warnings;
use utf8;

use constant {
    GOLDEN => -7046029254386353131,    # 0x9E3779B97F4A7C15 as a signed 64-bit integer
    M1     => -4658895280553007687,    # 0xBF58476D1CE4E5B9
    M2     => -7723592293110705685,    # 0x94D049BB133111EB
    TWO_M53 => 2**-53,
};

sub new {
    my ($class, $seed) = @_;
    my $state = $seed // 0;
    return bless \$state, $class;
}

# the next 64-bit output, as an unsigned integer (UV)
sub next_u64 {
    my ($self) = @_;
    my $z;
    { use integer; $$self = $$self + GOLDEN; $z = $$self; }
    $z = $z ^ ($z >> 30);
    { use integer; $z = $z * M1; }
    $z = $z ^ ($z >> 27);
    { use integer; $z = $z * M2; }
    return $z ^ ($z >> 31);
}

# a double in [0, 1) from the top 53 bits
sub unit {
    my ($self) = @_;
    return ($self->next_u64 >> 11) * TWO_M53;
}

1;

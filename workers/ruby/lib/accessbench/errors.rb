# frozen_string_literal: true

# The errors the host answers by kind (protocol/PROTOCOL.md, "Answers and errors"). A driver's
# own database errors are answered as kind `db` by the driver's `db_error?` (driver.rb); every
# other exception is kind `internal`.
module Accessbench
  # The message was malformed: an unknown op, a missing field, a step before open.
  class ProtocolError < StandardError; end

  # The driver cannot do what was asked, as asked (a mode it has not, a key it cannot map).
  class Unsupported < StandardError; end
end

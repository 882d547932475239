# frozen_string_literal: true

require_relative 'errors'

# What an endpoint asks of a driver's TLS and compression (protocol/PROTOCOL.md, open: libpq's
# words for both DBMSs — sslmode, sslrootcert, tls_version, sslnegotiation — and MariaDB's
# compress), read and checked once at open. Each DBMS maps it onto its drivers' own settings in
# one place: drivers/postgresql.rb (libpq's keywords), drivers/mariadb.rb (mysql2's options).
module Accessbench
  TlsAsk = Struct.new(:mode, :ca, :version, :direct, :compress) do
    self::ENCRYPTED = %w[require verify-ca verify-full].freeze

    def self.of(ep)
      mode = ep['sslmode'].to_s.empty? ? nil : ep['sslmode']
      unless mode.nil? || %w[disable prefer].include?(mode) || self::ENCRYPTED.include?(mode)
        raise Unsupported, "sslmode=#{mode}: expected disable, prefer, require, verify-ca or verify-full"
      end

      negotiation = ep['sslnegotiation'].to_s.empty? ? 'postgres' : ep['sslnegotiation']
      unless %w[postgres direct].include?(negotiation)
        raise Unsupported, "sslnegotiation=#{negotiation}: expected postgres or direct"
      end

      version = ep['tls_version'].to_s.empty? ? nil : ep['tls_version']
      unless [nil, 'TLSv1.2', 'TLSv1.3'].include?(version)
        raise Unsupported, "tls_version=#{version}: expected TLSv1.2 or TLSv1.3"
      end

      new(mode, ep['sslrootcert'].to_s.empty? ? nil : ep['sslrootcert'], version, negotiation == 'direct',
          ep['compress'] == true).check
    end

    def encrypted? = self.class::ENCRYPTED.include?(mode)

    # the chain is checked against `ca` (verify-ca, verify-full)
    def verifies? = %w[verify-ca verify-full].include?(mode)

    # a version or direct negotiation asked without TLS (disable, prefer, absent): refused rather
    # than silently left to the driver's default
    def check
      return self if encrypted? || !(version || direct)

      raise Unsupported, "#{version ? 'tls_version' : 'sslnegotiation=direct'} needs sslmode require, verify-ca or " \
                         "verify-full, not #{mode || 'none'}"
    end
  end
end

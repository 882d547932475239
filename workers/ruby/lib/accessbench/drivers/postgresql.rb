# frozen_string_literal: true

require 'pg'
require_relative '../errors'
require_relative '../tls_ask'

module Accessbench
  module Drivers
    # What every PostgreSQL method of this worker shares (rb-pg, and a layer over it): the
    # endpoint as libpq's connection keywords — the TLS keys are libpq's own words, so they
    # pass as they are where libpq has them — the session parameters in the startup packet, and
    # the server's errors with their SQLSTATE.
    module Postgresql
      LIBPQ = PG.library_version

      module_function

      # libpq's keywords for an endpoint: host (a directory: a unix socket directory), port,
      # dbname, user, password when given; the session parameters as options='-c k=v …';
      # the TLS keys; client_encoding pinned to UTF8
      def conninfo(ep)
        info = { host: ep['host'], port: ep['port'], dbname: ep['database'], user: ep['user'],
                 client_encoding: 'UTF8' }
        info[:password] = ep['password'] unless ep['password'].to_s.empty?
        options = startup_parameters(ep).map { |k, v| "-c #{k}=#{v}" }.join(' ')
        info[:options] = options unless options.empty?
        info.merge(tls(TlsAsk.of(ep)))
      end

      # sent in the startup packet so that no statement sets them: the schema's search_path,
      # and for a read_only endpoint default_transaction_read_only=on (the server refuses every
      # write, SQLSTATE 25006)
      def startup_parameters(ep)
        p = {}
        p['search_path'] = ep['schema'] unless ep['schema'].to_s.empty?
        p['default_transaction_read_only'] = 'on' if ep['read_only'] == true
        p
      end

      def tls(ask)
        kw = {}
        kw[:sslmode] = ask.mode if ask.mode
        kw[:sslrootcert] = ask.ca if ask.verifies? && ask.ca # with require libpq would check the chain against it
        kw[:ssl_min_protocol_version] = kw[:ssl_max_protocol_version] = ask.version if ask.version
        if ask.direct
          raise Unsupported, "libpq #{version_text} has no sslnegotiation=direct (libpq 17 and later)" if LIBPQ < 170_000

          kw[:sslnegotiation] = 'direct'
        end
        kw
      end

      def version_text = "#{LIBPQ / 10_000}.#{LIBPQ % 10_000}"

      TLS_SETTING = "libpq's own keywords (ruby-pg hands them to PQconnectStartParams): sslmode as given (absent: " \
                    "none passed, libpq's default prefer); sslrootcert with verify-ca/verify-full only (with require " \
                    'libpq would check the chain against it); ssl_min_protocol_version = ssl_max_protocol_version = ' \
                    "the pinned tls_version; sslnegotiation=direct: unsupported (this libpq is #{version_text}; it " \
                    'needs 17). libpq reads the CA file and makes its SSL context inside every connect'

      READ_ONLY_SETTING = "endpoint read_only: libpq's options='-c default_transaction_read_only=on' in the startup " \
                          "packet beside search_path, for every connection (open's, a connect step's, " \
                          'per-request\'s): every transaction READ ONLY, so the server refuses writes (SQLSTATE ' \
                          '25006); absent or false: not sent'

      def db_error?(error) = error.is_a?(PG::Error)

      def error_message(error)
        r = error.respond_to?(:result) ? error.result : nil
        sev = r && r.error_field(PG::PG_DIAG_SEVERITY)
        primary = r && r.error_field(PG::PG_DIAG_MESSAGE_PRIMARY)
        sev && primary ? "#{sev}: #{primary}" : "#{error.class}: #{error.message}"
      end

      def sqlstate(error)
        r = error.respond_to?(:result) ? error.result : nil
        r&.error_field(PG::PG_DIAG_SQLSTATE)
      end
    end
  end
end

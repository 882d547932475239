# frozen_string_literal: true

require 'mysql2'
require_relative '../errors'
require_relative '../tls_ask'

module Accessbench
  module Drivers
    # What every MariaDB method of this worker shares (rb-mysql2, and a layer over mysql2): the
    # endpoint as mysql2's connection options — CLIENT_FOUND_ROWS, the TLS keys and compress
    # mapped onto what mysql2 0.5.3 over libmariadb can do, read_only as the init command — the
    # serving thread's id, and the server's errors.
    module Mariadb
      # the serving thread's OS id (the runner reads its CPU clock), the version, and whether the
      # session is in autocommit (the server's default: mysql2 sends nothing about it)
      SERVER = 'SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()'
      COMPRESSION = "SHOW SESSION STATUS LIKE 'Compression'"
      READ_ONLY = 'SET SESSION TRANSACTION READ ONLY'

      module_function

      # mysql2's options for an endpoint (Mysql2::Client.new takes them all): the connection,
      # the flags, the TLS keys and the read-only init command; `query` the result options
      # every query and statement inherits
      def options(ep, query)
        opts = { username: ep['user'], database: ep['database'], encoding: 'utf8mb4',
                 flags: Mysql2::Client::FOUND_ROWS, reconnect: false, **query }
        opts[:password] = ep['password'] unless ep['password'].to_s.empty?
        if ep['socket'].to_s.empty?
          opts[:host] = ep['host']
          opts[:port] = ep['port'].to_i
        else
          opts[:socket] = ep['socket']
        end
        opts[:init_command] = READ_ONLY if ep['read_only'] == true
        ask = TlsAsk.of(ep)
        opts[:flags] |= Mysql2::Client::COMPRESS if ask.compress
        opts.merge(tls(ask))
      end

      # mysql2 0.5.3 over libmariadb 3.3 (checked against a server of its own CA and another's):
      # ssl_set (any TLS option, or the :sslverify key) makes libmariadb ask for TLS, but it
      # goes on in plain text when the server offers none (`encrypted!` then refuses the
      # connection); a CA makes it check the chain in the handshake. Nothing makes it check the
      # host name: mysql2's sslverify sets CLIENT_SSL_VERIFY_SERVER_CERT in the connect flags,
      # which this libmariadb ignores (it takes MYSQL_OPT_SSL_VERIFY_SERVER_CERT, which mysql2
      # never sets); its ssl_mode= does nothing on this library (mysql2 applies it to MySQL's
      # client 5.7.3+ only), and it has no TLS version option.
      def tls(ask)
        if ask.direct
          raise Unsupported, 'mysql2 has no sslnegotiation=direct (the MariaDB protocol starts TLS after the ' \
                             "server's greeting, at the client's SSL request)"
        end
        if ask.version
          raise Unsupported, "mysql2 0.5.3 has no TLS version option (libmariadb's MYSQL_OPT_TLS_VERSION is not " \
                             'exposed; its ssl_mode= is ignored on this client library), so tls_version cannot be pinned'
        end
        case ask.mode
        when 'require' then { sslverify: false }
        when 'verify-ca' then { sslca: ask.ca || no_ca, sslverify: false }
        when 'verify-full'
          raise Unsupported, 'mysql2 0.5.3 cannot make libmariadb 3.3 check the host name (its sslverify sets ' \
                             'CLIENT_SSL_VERIFY_SERVER_CERT in the connect flags, which this libmariadb ignores; ' \
                             'MYSQL_OPT_SSL_VERIFY_SERVER_CERT is not exposed): verify-ca checks the chain'
        else {} # disable, prefer, absent: no TLS option, so libmariadb 3.3 asks for no TLS
        end
      end

      def no_ca
        raise Unsupported, 'verify-ca needs sslrootcert with mysql2: without a CA file libmariadb checks no chain'
      end

      # TLS asked, and the server did not start it (libmariadb then goes on in plain text): the
      # connection is closed and refused. A local call (mysql_get_ssl_cipher), inside the connect.
      def encrypted!(client, ep)
        return client if client.ssl_cipher || !TlsAsk::ENCRYPTED.include?(ep['sslmode'])

        client.close
        raise Mysql2::Error, "sslmode=#{ep['sslmode']}: the server did not start TLS (libmariadb went on in plain text)"
      end

      TLS_SETTING = "mysql2 0.5.3's options over libmariadb #{Mysql2::Client.info[:version]}: disable, and " \
                    'prefer or absent (mysql2 has no working preferred mode here) → no TLS option: no TLS, no SSL ' \
                    'request; require → sslverify: false (mysql_ssl_set with no files: TLS asked for, nothing ' \
                    'checked); verify-ca → sslca = sslrootcert, sslverify: false (the chain checked in the ' \
                    'handshake, no host name; without sslrootcert unsupported); with either, a connection the ' \
                    'server did not encrypt (libmariadb goes on in plain text) is closed and refused ' \
                    '(client.ssl_cipher, a local call); verify-full: unsupported (mysql2\'s sslverify sets ' \
                    'CLIENT_SSL_VERIFY_SERVER_CERT in the connect flags, which libmariadb 3.3 ignores: no host name ' \
                    'is checked); tls_version: unsupported (mysql2 0.5.3 exposes no MYSQL_OPT_TLS_VERSION, and its ' \
                    'ssl_mode= is ignored with this client library); sslnegotiation=direct: unsupported (no such ' \
                    'handshake in the MariaDB protocol); libmariadb makes its TLS context and reads the CA file ' \
                    'inside every connect'
      COMPRESS_SETTING = 'compress: the CLIENT_COMPRESS flag in mysql2\'s flags when the endpoint asks (zlib), ' \
                         "checked at open to be granted (SHOW SESSION STATUS LIKE 'Compression', untimed); otherwise off"
      READ_ONLY_SETTING = "endpoint read_only: init_command: '#{READ_ONLY}' (libmariadb's MYSQL_INIT_COMMAND, " \
                          "run first on every connection: open's, a connect step's, per-request's, inside its " \
                          'connect), so the server refuses writes (error 1792, SQLSTATE 25006); absent or false: none'

      # {server_pid, server_version} of a connection, untimed; refused when the server starts
      # sessions without autocommit or did not grant compression asked for
      def describe(client, ep)
        tid, version, autocommit = client.query(SERVER, as: :array).first
        if autocommit.to_i != 1
          raise Unsupported, 'the server starts sessions with autocommit off (mysql2 would send nothing)'
        end
        if ep['compress'] == true && client.query(COMPRESSION, as: :array).first&.last != 'ON'
          raise Unsupported, 'the server did not grant CLIENT_COMPRESS: mysql2 connected uncompressed'
        end

        { 'server_pid' => tid.to_i, 'server_version' => version }
      end

      def db_error?(error) = error.is_a?(Mysql2::Error)

      def error_message(error) = "#{['Mysql2::Error', error.error_number].compact.join(' ')}: #{error.message}"

      def sqlstate(error)
        state = error.sql_state
        state if state.is_a?(String) && state.match?(/\A[0-9A-Z]{5}\z/)
      end
    end
  end
end

# frozen_string_literal: true

require_relative 'layer'

module Accessbench
  module Layers
    # The driver under a layer (ActiveRecord's or Sequel's adapter over pg, mysql2 or sqlite3),
    # one module per driver: the endpoint read through the bare method's own shared piece (so
    # TLS, read-only and the pinned connection settings are the bare driver's), the parameters in
    # the bare driver's Ruby values, and the driver's errors found under the layer's wrapper
    # (its `cause`) and answered as the bare driver answers them. `bare` is an instance of the
    # bare method's driver class, used for those pieces only (it never connects).
    module Over
      def db_error?(error) = !Layers.driver_error(error, driver_error_class).nil?
      def error_message(error) = bare.error_message(Layers.driver_error(error, driver_error_class) || error)

      def sqlstate(error)
        found = Layers.driver_error(error, driver_error_class)
        found && bare.sqlstate(found)
      end

      # the generated values in the bare driver's form (its `adapt`, before the clock)
      def driver_values(rows, types) = bare.adapt(rows, types)

      def driver_version = "#{layer_version} (#{bare.driver_name} #{bare.driver_version})"
    end

    # PostgreSQL through ruby-pg: libpq's keywords from Drivers::Postgresql, as rb-pg connects.
    module OverPg
      include Over

      def dbms = ['postgresql']
      def bare = @bare ||= Drivers::Pg.new('rb-pg')
      def driver_error_class = PG::Error

      def endpoint=(ep)
        @ep = ep
        @libpq = Drivers::Postgresql.conninfo(ep)
      end

      def raw_describe(raw)
        { 'server_pid' => raw.backend_pid, 'server_version' => raw.parameter_status('server_version') }
      end

      def over_settings
        { 'tls' => "as rb-pg: #{Drivers::Postgresql::TLS_SETTING}",
          'read_only' => "as rb-pg: #{Drivers::Postgresql::READ_ONLY_SETTING}" }
      end
    end

    # MariaDB through mysql2: Drivers::Mariadb's options (FOUND_ROWS, TLS, compress, the
    # read-only init command), as rb-mysql2 connects.
    module OverMysql2
      include Over

      def dbms = ['mariadb']
      def bare = @bare ||= Drivers::Mysql2Driver.new('rb-mysql2')
      def driver_error_class = Mysql2::Error

      def endpoint=(ep)
        @ep = ep
        @mysql2 = Drivers::Mariadb.options(ep, {})
      end

      def raw_describe(raw) = Drivers::Mariadb.describe(raw, @ep)

      def over_settings
        { 'tls' => "as rb-mysql2: #{Drivers::Mariadb::TLS_SETTING}",
          'compress' => "as rb-mysql2: #{Drivers::Mariadb::COMPRESS_SETTING}",
          'read_only' => "as rb-mysql2: #{Drivers::Mariadb::READ_ONLY_SETTING}" }
      end
    end

    # SQLite through sqlite3-ruby: the file, read-only where the endpoint says, as rb-sqlite3.
    module OverSqlite3
      include Over

      def dbms = ['sqlite']
      def bare = @bare ||= Drivers::Sqlite3Driver.new('rb-sqlite3')
      def driver_error_class = SQLite3::Exception

      def endpoint=(ep)
        raise ProtocolError, 'the sqlite endpoint needs a file' unless ep['file'].is_a?(String)

        @ep = ep
        @file = ep['file']
        @read_only = ep['read_only'] == true
      end

      def raw_describe(_raw) = { 'server_version' => SQLite3::SQLITE_VERSION }

      def over_settings
        { 'read_only' => 'endpoint read_only: the layer hands sqlite3-ruby readonly: true (sqlite3_open_v2 ' \
                         'SQLITE_OPEN_READONLY) for every connection, so SQLite refuses writes (SQLITE_READONLY); ' \
                         'absent or false: read-write' }
      end
    end
  end
end

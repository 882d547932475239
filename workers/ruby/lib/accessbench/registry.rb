# frozen_string_literal: true

require_relative 'errors'

# The one list of drivers: method base name → the driver module's file and class. hello's
# `methods`, the usage line and the `unknown method` answer all come from it. A driver's file
# is required only when its method is asked for, so a gem that is not installed makes only its
# own methods unavailable (answered `unsupported`, naming the gem).
module Accessbench
  module Registry
    DRIVERS = {
      'rb-pg' => ['drivers/pg', 'Pg'],
      'rb-mysql2' => ['drivers/mysql2', 'Mysql2Driver'],
      'rb-sqlite3' => ['drivers/sqlite3', 'Sqlite3Driver'],
      'rb-activerecord+pg' => ['layers/active_record', 'ActiveRecordPg'],
      'rb-activerecord+mysql2' => ['layers/active_record', 'ActiveRecordMysql2'],
      'rb-activerecord+sqlite3' => ['layers/active_record', 'ActiveRecordSqlite3'],
      'rb-sequel+pg' => ['layers/sequel', 'SequelPg'],
      'rb-sequel+mysql2' => ['layers/sequel', 'SequelMysql2'],
      'rb-sequel+sqlite3' => ['layers/sequel', 'SequelSqlite3']
    }.freeze

    module_function

    def names = DRIVERS.keys.sort

    # METHOD = base[@VERSION][/key=value,…] → a configured driver
    def load(method_name)
      head, settings = method_name.split('/', 2)
      base, version = head.split('@', 2)
      file, klass = DRIVERS[base]
      raise Unsupported, "unknown method #{base.inspect} (this worker has #{names.join(', ')})" unless file

      driver = instantiate(file, klass, method_name)
      settings.to_s.split(',').each { |kv| driver.configure(*kv.split('=', 2)) }
      check_version(driver, base, version) if version
      driver
    end

    def instantiate(file, klass, method_name)
      require_relative file
      Drivers.const_get(klass).new(method_name)
    rescue LoadError => e
      raise Unsupported, "#{method_name.split('/').first}: its gem is not installed (#{e.message})"
    end

    def check_version(driver, base, version)
      loaded = driver.driver_version.split.first
      return if loaded == version

      raise Unsupported, "#{base}@#{version}: this worker loads #{driver.driver_name} #{loaded} only (Debian's package)"
    end
  end
end

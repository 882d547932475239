# frozen_string_literal: true

# abworker-ruby: the Ruby worker of accessbench (protocol/PROTOCOL.md, version 1).
#
#   ruby workers/ruby/main.rb METHOD      (a method of the registry, lib/accessbench/registry.rb)
#
# One JSON object per line each way: stdin carries messages, stdout the answers and nothing
# else — the real stdout is kept for them and fd 1 is pointed at stderr, so whatever a library
# prints (Ruby's or C's) goes to the log.

require 'json'
require_relative 'lib/accessbench/host'
require_relative 'lib/accessbench/registry'

module Accessbench
  module Main
    module_function

    def run(argv)
      answers = $stdout.dup
      answers.sync = true
      $stdout.reopen($stderr)
      log = ->(text) { warn "abworker-ruby: #{text}" }
      if argv.length != 1
        log.call("usage: ruby workers/ruby/main.rb METHOD[/key=value,...]  (#{Registry.names.join(', ')})")
        exit 2
      end
      serve(host_for(argv[0], log), answers, log)
    end

    def host_for(method_name, log)
      Host.new(method_name, Registry.load(method_name), nil, log)
    rescue Unsupported => e
      log.call(e.message)
      Host.new(method_name, nil, e.message, log)
    end

    def serve(host, answers, log)
      $stdin.each_line do |line|
        next if line.strip.empty?

        op = nil
        answer = begin
          msg = JSON.parse(line)
          op = msg['op'] if msg.is_a?(Hash)
          { 'ok' => true }.merge(host.handle(msg))
        rescue StandardError => e
          host.error_answer(e)
        end
        answers.write(encode(answer, log), "\n")
        return if op == 'bye'
      end
      host.close # end of input: close what is open and leave
    end

    def encode(answer, log)
      JSON.generate(answer)
    rescue JSON::GeneratorError, EncodingError => e
      log.call("unencodable answer: #{e.message}")
      JSON.generate({ 'ok' => false, 'error' => { 'kind' => 'internal', 'message' => 'unencodable answer' } })
    end
  end
end

Accessbench::Main.run(ARGV)

# frozen_string_literal: true

# The Ruby pages of the web tier (docs/tier.md, lib/accessbench/web.rb), as Puma loads them:
#
#   puma --workers N --threads 1:1 --preload workers/ruby/config.ru
require_relative 'lib/accessbench/web'

run Accessbench::Web::App.new

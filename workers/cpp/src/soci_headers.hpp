// SOCI's headers, without Boost. Debian's SOCI 4.0.3 is built with Boost (its soci-config.h
// defines SOCI_HAVE_BOOST), but only bind-values.h reads that, for its templates over
// Boost.Fusion sequences, which this worker does not use: nothing of the libraries' ABI
// depends on it, and Boost's headers need not be installed.
#pragma once

#include <soci/soci-config.h>
#undef SOCI_HAVE_BOOST
#undef SOCI_HAVE_BOOST_DATE_TIME

#include <soci/blob-exchange.h>
#include <soci/blob.h>
#include <soci/connection-pool.h>
#include <soci/into.h>
#include <soci/row-exchange.h>
#include <soci/row.h>
#include <soci/session.h>
#include <soci/statement.h>
#include <soci/transaction.h>
#include <soci/use.h>
#include <soci/version.h>

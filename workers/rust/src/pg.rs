//! What the two drivers built on tokio-postgres share (rust-tokio-postgres and the sync
//! rust-postgres, which wraps it): the connection settings, parameters that adapt to the
//! types the server infers, decoding by column type (binary results and simple-query text),
//! errors, what a step needs before the clock, and the operations of a scan and of an exec
//! step in every mode, written once over the calls both crates have (`Calls`).

use crate::assoc::{Fetch, LoadPlan, Markers};
use crate::protocol::{Gv, Sink, Val};
use crate::step::{Endpoint, Fail, Mode, Res, Step};
use bytes::BytesMut;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use rust_decimal::Decimal;
use std::error::Error as StdError;
use std::str::FromStr;
use crate::step::TlsVersion;
use openssl::error::ErrorStack;
use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode, SslVersion};
use postgres_openssl::MakeTlsConnector;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::config::{SslMode, SslNegotiation};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{Row, SimpleQueryMessage, SimpleQueryRow, Statement, ToStatement};

pub const EPOCH_DAYS_CE: i32 = 719_163; // NaiveDate(1970-01-01).num_days_from_ce()

/// libpq-style settings from the endpoint: `host` (a directory is a unix socket directory),
/// port, dbname, user, password when given, the startup options (`startup_options`), and
/// the endpoint's TLS (`tls`): the config's sslmode and sslnegotiation, and the connector
/// both drivers connect with.
pub fn config(ep: &Endpoint) -> Res<(tokio_postgres::Config, Tls)> {
    let mut c = tokio_postgres::Config::new();
    if let Some(h) = &ep.host {
        c.host(h.as_str());
    }
    if let Some(p) = ep.port {
        c.port(p);
    }
    if let Some(d) = &ep.database {
        c.dbname(d);
    }
    if let Some(u) = &ep.user {
        c.user(u);
    }
    if let Some(p) = &ep.password {
        c.password(p);
    }
    if let Some(o) = startup_options(ep) {
        c.options(o);
    }
    let t = tls(ep, &mut c)?;
    Ok((c, t))
}

/// The server settings every PostgreSQL connection of the worker starts with, in its startup
/// packet (tokio-postgres, postgres, libpq's conninfo for Diesel, sqlx): `search_path` when
/// the endpoint names a schema, `default_transaction_read_only=on` when it is `read_only`
/// (the server then refuses every write: SQLSTATE 25006). None of them: no options at all.
pub fn startup_settings(ep: &Endpoint) -> Vec<(&'static str, &str)> {
    let mut s = Vec::new();
    if let Some(schema) = &ep.schema {
        s.push(("search_path", schema.as_str()));
    }
    if ep.read_only {
        s.push(("default_transaction_read_only", "on"));
    }
    s
}

/// `startup_settings` as one `options` value (`-c name=value`, space-separated), None when
/// there is none (no `options` in the startup packet).
pub fn startup_options(ep: &Endpoint) -> Option<String> {
    let s = startup_settings(ep);
    (!s.is_empty()).then(|| s.iter().map(|(k, v)| format!("-c {k}={v}")).collect::<Vec<_>>().join(" "))
}

/// hello's `read_only` of every PostgreSQL method (`startup_settings`).
pub const READ_ONLY_SETTING: &str = "endpoint read_only: -c default_transaction_read_only=on in the startup packet's options (beside -c search_path=<schema> when the schema is given), on every connection: the server refuses writes (SQLSTATE 25006)";

/// Whether the endpoint's host is a unix socket directory.
pub fn unix_socket(ep: &Endpoint) -> bool {
    ep.host.as_deref().is_some_and(|h| h.starts_with('/'))
}

// ---- TLS ------------------------------------------------------------------------------------

/// How both tokio-postgres drivers (and their pools) connect, one `MakeTlsConnect`:
/// postgres-openssl's `MakeTlsConnector` over an OpenSSL `SslConnector` built once at open,
/// or, with sslmode=disable (and on a unix socket), none at all — tokio-postgres asks its
/// `MakeTlsConnect` for a connector on every connection whatever the sslmode, and `Off` makes
/// none (no SSL object), as `NoTls` did before.
#[derive(Clone)]
pub enum Tls {
    Off,
    On(MakeTlsConnector),
}

/// The stream of a connection: postgres-openssl's (never made with `Tls::Off`, whose
/// connections stay plain: sslmode=disable).
pub type TlsStream = postgres_openssl::TlsStream<tokio_postgres::Socket>;

pub enum TlsConnector {
    Off,
    On(postgres_openssl::TlsConnector),
}

impl<S> MakeTlsConnect<S> for Tls
where
    S: AsyncRead + AsyncWrite + Unpin + Debug + Send + Sync + 'static,
{
    type Stream = postgres_openssl::TlsStream<S>;
    type TlsConnect = TlsConnector;
    type Error = ErrorStack;

    fn make_tls_connect(&mut self, domain: &str) -> Result<TlsConnector, ErrorStack> {
        match self {
            Tls::Off => Ok(TlsConnector::Off),
            Tls::On(m) => <MakeTlsConnector as MakeTlsConnect<S>>::make_tls_connect(m, domain).map(TlsConnector::On),
        }
    }
}

type TlsFuture<S> = Pin<Box<dyn Future<Output = Result<postgres_openssl::TlsStream<S>, Box<dyn StdError + Send + Sync>>> + Send>>;

impl<S> TlsConnect<S> for TlsConnector
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = postgres_openssl::TlsStream<S>;
    type Error = Box<dyn StdError + Send + Sync>;
    type Future = TlsFuture<S>;

    fn connect(self, stream: S) -> TlsFuture<S> {
        match self {
            TlsConnector::On(c) => c.connect(stream),
            // tokio-postgres never asks it: sslmode=disable sends no SSLRequest
            TlsConnector::Off => Box::pin(async { Err("TLS is off (sslmode=disable)".into()) }),
        }
    }
}

/// The endpoint's TLS onto tokio-postgres's config and a postgres-openssl connector: sslmode
/// disable → `SslMode::Disable` and no connector; prefer → `SslMode::Prefer` (tokio-postgres's
/// default: TLS when the server offers it), certificate not checked (as libpq's prefer);
/// require → `SslMode::Require`, `SslVerifyMode::NONE`; verify-ca → `Require`, the chain
/// checked against `sslrootcert` (`set_ca_file`, besides OpenSSL's default paths), host name
/// not (`ConnectConfiguration::set_verify_hostname(false)` in the connector's callback);
/// verify-full → the chain and the host name (OpenSSL's check of the name or IP address the
/// driver connects to). `tls_version` → `set_min_proto_version` and `set_max_proto_version`
/// both; sslnegotiation=direct → `SslNegotiation::Direct` and ALPN `postgresql`
/// (`postgres_openssl::set_postgresql_alpn`, which PostgreSQL 17 requires of a direct
/// handshake). As in libpq, TLS is never used on a unix socket.
pub fn tls(ep: &Endpoint, c: &mut tokio_postgres::Config) -> Res<Tls> {
    let verify = match ep.sslmode.as_str() {
        _ if unix_socket(ep) => None,
        "disable" => None,
        "prefer" => Some(Verify::None),
        "require" => Some(Verify::None),
        "verify-ca" => Some(Verify::Chain),
        "verify-full" => Some(Verify::Full),
        other => return Err(Fail::unsupported(format!("tokio-postgres has no sslmode={other} (its SslMode: disable, prefer, require)"))),
    };
    let Some(verify) = verify else {
        c.ssl_mode(SslMode::Disable);
        return Ok(Tls::Off);
    };
    c.ssl_mode(if ep.sslmode == "prefer" { SslMode::Prefer } else { SslMode::Require });
    let ssl = |e: ErrorStack| Fail::db(format!("TLS setup (OpenSSL): {e}"), None);
    let mut b = SslConnector::builder(SslMethod::tls_client()).map_err(ssl)?;
    match verify {
        Verify::None => b.set_verify(SslVerifyMode::NONE),
        Verify::Chain | Verify::Full => {
            b.set_verify(SslVerifyMode::PEER);
            if let Some(ca) = &ep.sslrootcert {
                b.set_ca_file(ca).map_err(|e| Fail::db(format!("sslrootcert {ca}: {e}"), None))?;
            }
        }
    }
    if let Some(v) = ep.tls_version {
        let v = Some(match v {
            TlsVersion::V12 => SslVersion::TLS1_2,
            TlsVersion::V13 => SslVersion::TLS1_3,
        });
        b.set_min_proto_version(v).map_err(ssl)?;
        b.set_max_proto_version(v).map_err(ssl)?;
    }
    if ep.direct {
        c.ssl_negotiation(SslNegotiation::Direct);
        postgres_openssl::set_postgresql_alpn(&mut b).map_err(ssl)?;
    }
    let mut m = MakeTlsConnector::new(b.build());
    if verify == Verify::Chain {
        m.set_callback(|cc, _| {
            cc.set_verify_hostname(false);
            Ok(())
        });
    }
    Ok(Tls::On(m))
}

#[derive(Clone, Copy, PartialEq)]
enum Verify {
    None,
    Chain,
    Full,
}

/// hello's `tls` of both drivers.
pub const TLS_SETTING: &str = "postgres-openssl's MakeTlsConnector (system OpenSSL), its SslConnector built once at open (the CA file read then) and shared by every later connection (per connection only the SSL object: SslConnector::configure); sslmode disable → SslMode::Disable and no connector (no SSL object made, no SSLRequest); prefer (or absent) → SslMode::Prefer, tokio-postgres's default: TLS when the server offers it, the certificate not checked (as libpq's prefer); require → SslMode::Require, SslVerifyMode::NONE; verify-ca → Require, SslVerifyMode::PEER with set_ca_file(sslrootcert) (besides OpenSSL's default verify paths), the host name not checked (ConnectConfiguration::set_verify_hostname(false) in the connector's callback); verify-full → the same with the host name (or IP address) checked by OpenSSL; tls_version → SslConnectorBuilder::set_min_proto_version and set_max_proto_version both; sslnegotiation=direct → Config::ssl_negotiation(Direct) and ALPN postgresql (postgres_openssl::set_postgresql_alpn); on a unix socket TLS is never used (as libpq); the handshake is inside connect (a connect step's time)";

pub fn fail(e: tokio_postgres::Error) -> Fail {
    if let Some(db) = e.as_db_error() {
        return Fail::db(format!("{}: {}", db.severity(), db.message()), Some(db.code().code().to_string()));
    }
    // tokio-postgres's Display names the kind only ("error performing TLS handshake"): its
    // cause (OpenSSL's reason, an I/O error) is the source
    let message = match StdError::source(&e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    };
    Fail::db(message, e.code().map(|c| c.code().to_string()))
}

// ---- parameters -----------------------------------------------------------------------------

/// A generated parameter as the Rust type tokio-postgres binds it (bool, i64, f64,
/// rust_decimal::Decimal, String, chrono NaiveDate / NaiveDateTime, bytes): the generated
/// value with its date and timestamp made chrono's before the clock (`Gv::with_time`). It is
/// encoded in the binary format of whatever type the server inferred for its marker (the
/// server infers parameter types at Parse; tokio-postgres then asks each value to encode
/// itself as that type): a value of the column's own type is sent as that type (boolean,
/// float8, numeric, date, timestamp, bytea), and an integer can go into a smallint, integer
/// or bigint column as the driver would send a Rust integer of that width. A NULL is NULL
/// of whatever type was inferred.
pub type Param = Gv<NaiveDate, NaiveDateTime>;

/// The `parameters` setting of both drivers.
pub const PARAMETERS: &str = "each value held as its spec type's Rust value (bool, i64, f64, rust_decimal::Decimal, String, chrono NaiveDate/NaiveDateTime, Vec<u8>) and encoded, binary, as the type the server inferred for its marker (from its column: boolean, int2/int4/int8, float8, numeric, text types, date, timestamp, bytea); a NULL as NULL of that type";

pub fn naive_ts(us: i64) -> NaiveDateTime {
    DateTime::from_timestamp_micros(us).map(|d| d.naive_utc()).unwrap_or_default()
}

pub fn naive_date(days: i32) -> NaiveDate {
    NaiveDate::from_num_days_from_ce_opt(days + EPOCH_DAYS_CE).unwrap_or_default()
}

type BoxErr = Box<dyn StdError + Sync + Send>;

fn is_text(ty: &Type) -> bool {
    matches!(ty.oid(), 25 | 1043 | 1042 | 19 | 705) || ty.name() == "citext"
}

impl ToSql for Param {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxErr> {
        match self {
            Gv::Null => Ok(IsNull::Yes),
            Gv::Int(v) => match ty.oid() {
                21 => i16::try_from(*v)?.to_sql(ty, out),
                23 => i32::try_from(*v)?.to_sql(ty, out),
                20 => v.to_sql(ty, out),
                26 => u32::try_from(*v)?.to_sql(ty, out),
                700 => (*v as f32).to_sql(ty, out),
                701 => (*v as f64).to_sql(ty, out),
                1700 => Decimal::from(*v).to_sql(ty, out),
                16 => (*v != 0).to_sql(ty, out),
                _ if is_text(ty) => v.to_string().as_str().to_sql(ty, out),
                _ => Err(format!("cannot send an integer as {ty}").into()),
            },
            Gv::Float(v) => match ty.oid() {
                700 => (*v as f32).to_sql(ty, out),
                701 => v.to_sql(ty, out),
                1700 => Decimal::try_from(*v)?.to_sql(ty, out),
                _ if is_text(ty) => crate::protocol::float_text(*v).as_str().to_sql(ty, out),
                _ => Err(format!("cannot send a float as {ty}").into()),
            },
            Gv::Bool(b) => match ty.oid() {
                16 => b.to_sql(ty, out),
                _ if is_text(ty) => (if *b { "true" } else { "false" }).to_sql(ty, out),
                _ => Err(format!("cannot send a boolean as {ty}").into()),
            },
            Gv::Dec(d) => match ty.oid() {
                1700 => d.to_sql(ty, out),
                _ if is_text(ty) => d.to_string().as_str().to_sql(ty, out),
                _ => Err(format!("cannot send a decimal as {ty}").into()),
            },
            Gv::Date(d) => match ty.oid() {
                1082 => d.to_sql(ty, out),
                _ if is_text(ty) => d.to_string().as_str().to_sql(ty, out),
                _ => Err(format!("cannot send a date as {ty}").into()),
            },
            Gv::Bytes(b) => match ty.oid() {
                17 => b.as_slice().to_sql(ty, out),
                _ => Err(format!("cannot send bytes as {ty}").into()),
            },
            Gv::Text(s) => {
                if is_text(ty) {
                    s.as_str().to_sql(ty, out)
                } else {
                    Err(format!("cannot send text as {ty}").into())
                }
            }
            Gv::Ts(t) => match ty.oid() {
                1114 => t.to_sql(ty, out),
                // a naive timestamp for a timestamptz marker is taken as UTC
                1184 => t.and_utc().to_sql(ty, out),
                1082 => t.date().to_sql(ty, out),
                _ if is_text(ty) => crate::protocol::format_ts(t.and_utc().timestamp_micros(), false).as_str().to_sql(ty, out),
                _ => Err(format!("cannot send a timestamp as {ty}").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

// ---- decoding -----------------------------------------------------------------------------------

/// How a column is decoded, from its type OID.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Col {
    Bool,
    I16,
    I32,
    I64,
    Oid,
    F32,
    F64,
    Numeric,
    Text,
    Char,
    Ts,
    TsTz,
    Date,
    Time,
    Bytea,
    Other,
}

pub fn col_of(ty: &Type) -> Col {
    match ty.oid() {
        16 => Col::Bool,
        21 => Col::I16,
        23 => Col::I32,
        20 => Col::I64,
        26 | 28 | 29 => Col::Oid,
        700 => Col::F32,
        701 => Col::F64,
        1700 => Col::Numeric,
        25 | 1043 | 1042 | 19 | 705 => Col::Text,
        18 => Col::Char,
        1114 => Col::Ts,
        1184 => Col::TsTz,
        1082 => Col::Date,
        1083 => Col::Time,
        17 => Col::Bytea,
        _ if ty.name() == "citext" => Col::Text,
        _ => Col::Other,
    }
}

/// float4 as a text-format driver sees it: PostgreSQL prints the shortest text that
/// round-trips as a float4, and the driver parses that text as a double.
pub fn f32_as_text(f: f32) -> f64 {
    if !f.is_finite() {
        return f as f64;
    }
    struct Buf {
        b: [u8; 96],
        n: usize,
    }
    impl std::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let end = self.n + s.len();
            if end > self.b.len() {
                return Err(std::fmt::Error);
            }
            self.b[self.n..end].copy_from_slice(s.as_bytes());
            self.n = end;
            Ok(())
        }
    }
    let mut buf = Buf { b: [0; 96], n: 0 };
    use std::fmt::Write as _;
    if write!(buf, "{f:e}").is_err() {
        return f as f64;
    }
    std::str::from_utf8(&buf.b[..buf.n]).ok().and_then(|s| s.parse().ok()).unwrap_or(f as f64)
}

pub fn ts_micros(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

pub fn date_days(d: NaiveDate) -> i32 {
    use chrono::Datelike;
    d.num_days_from_ce() - EPOCH_DAYS_CE
}

pub fn time_micros(t: NaiveTime) -> i64 {
    t.num_seconds_from_midnight() as i64 * 1_000_000 + (t.nanosecond() / 1000) as i64
}

/// Any value as its raw bytes (types the worker does not know).
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxErr> {
        Ok(Raw(raw))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The decoders of a result's columns.
pub fn cols_of(row: &Row) -> Vec<Col> {
    row.columns().iter().map(|c| col_of(c.type_())).collect()
}

/// A binary-format row's values by index: a query's `Row`, or a binary COPY's row.
pub trait Values {
    fn get<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, tokio_postgres::Error>;
}

impl Values for Row {
    fn get<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, tokio_postgres::Error> {
        self.try_get(i)
    }
}

impl Values for tokio_postgres::binary_copy::BinaryCopyOutRow {
    fn get<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, tokio_postgres::Error> {
        self.try_get(i)
    }
}

/// One binary-format row: every value decoded into a Rust value by its column's type.
pub fn decode_row<R: Values>(row: &R, cols: &[Col], sink: &mut Sink) -> Result<(), tokio_postgres::Error> {
    sink.begin_row();
    for (i, c) in cols.iter().enumerate() {
        match c {
            Col::Bool => sink.val(row.get::<Option<bool>>(i)?.map_or(Val::Null, Val::Bool)),
            Col::I16 => sink.val(row.get::<Option<i16>>(i)?.map_or(Val::Null, |x| Val::Int(x as i64))),
            Col::I32 => sink.val(row.get::<Option<i32>>(i)?.map_or(Val::Null, |x| Val::Int(x as i64))),
            Col::I64 => sink.val(row.get::<Option<i64>>(i)?.map_or(Val::Null, Val::Int)),
            Col::Oid => sink.val(row.get::<Option<u32>>(i)?.map_or(Val::Null, |x| Val::Int(x as i64))),
            Col::F32 => sink.val(row.get::<Option<f32>>(i)?.map_or(Val::Null, |x| Val::Float(f32_as_text(x)))),
            Col::F64 => sink.val(row.get::<Option<f64>>(i)?.map_or(Val::Null, Val::Float)),
            Col::Numeric => sink.val(row.get::<Option<Decimal>>(i)?.map_or(Val::Null, Val::Dec)),
            Col::Text => sink.val(row.get::<Option<&str>>(i)?.map_or(Val::Null, Val::Text)),
            Col::Char => match row.get::<Option<i8>>(i)? {
                Some(x) => {
                    let b = [x as u8];
                    sink.val(Val::Text(std::str::from_utf8(&b).unwrap_or("")))
                }
                None => sink.val(Val::Null),
            },
            Col::Ts => sink.val(row.get::<Option<NaiveDateTime>>(i)?.map_or(Val::Null, |t| Val::Ts(ts_micros(t)))),
            Col::TsTz => {
                sink.val(row.get::<Option<DateTime<Utc>>>(i)?.map_or(Val::Null, |t| Val::Ts(t.timestamp_micros())))
            }
            Col::Date => sink.val(row.get::<Option<NaiveDate>>(i)?.map_or(Val::Null, |d| Val::Date(date_days(d)))),
            Col::Time => sink.val(row.get::<Option<NaiveTime>>(i)?.map_or(Val::Null, |t| Val::Time(time_micros(t)))),
            Col::Bytea => sink.val(row.get::<Option<&[u8]>>(i)?.map_or(Val::Null, Val::Bytes)),
            Col::Other => sink.val(row.get::<Option<Raw>>(i)?.map_or(Val::Null, |r| Val::Bytes(r.0))),
        }
    }
    sink.end_row(cols.len());
    Ok(())
}

/// Every row of a buffered result; returns the row count.
pub fn decode_rows(rows: &[Row], sink: &mut Sink) -> Res<i64> {
    let Some(first) = rows.first() else { return Ok(0) };
    let cols = cols_of(first);
    for row in rows {
        decode_row(row, &cols, sink).map_err(fail)?;
    }
    Ok(rows.len() as i64)
}

fn text_err(col: Col, text: &str, e: impl std::fmt::Display) -> Fail {
    Fail::db(format!("cannot decode {text:?} as {col:?}: {e}"), None)
}

fn hex_nibble(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// One simple-query row (every value is text): each value parsed by its column's type.
pub fn decode_text_row(row: &SimpleQueryRow, cols: &[Col], sink: &mut Sink) -> Res<()> {
    decode_text(row.len(), |i| row.try_get(i).map_err(fail), cols, sink)
}

/// A row of `n` text values (`value(i)`, None for NULL), each parsed by its column's type: a
/// simple query's row, or a line of COPY text.
pub fn decode_text<'a>(n: usize, value: impl Fn(usize) -> Res<Option<&'a str>>, cols: &[Col], sink: &mut Sink) -> Res<()> {
    if n != cols.len() {
        return Err(Fail::internal(format!("a row of {} values for {} known columns", n, cols.len())));
    }
    sink.begin_row();
    for (i, &c) in cols.iter().enumerate() {
        let Some(t) = value(i)? else {
            sink.val(Val::Null);
            continue;
        };
        match c {
            Col::Bool => sink.val(Val::Bool(t == "t")),
            Col::I16 | Col::I32 | Col::I64 | Col::Oid => {
                sink.val(Val::Int(t.parse::<i64>().map_err(|e| text_err(c, t, e))?))
            }
            Col::F32 | Col::F64 => sink.val(Val::Float(t.parse::<f64>().map_err(|e| text_err(c, t, e))?)),
            Col::Numeric => sink.val(Val::Dec(Decimal::from_str(t).map_err(|e| text_err(c, t, e))?)),
            Col::Text | Col::Char | Col::Other => sink.val(Val::Text(t)),
            Col::Ts => {
                let v = NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f").map_err(|e| text_err(c, t, e))?;
                sink.val(Val::Ts(ts_micros(v)))
            }
            Col::TsTz => {
                let v = DateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f%#z").map_err(|e| text_err(c, t, e))?;
                sink.val(Val::Ts(v.timestamp_micros()))
            }
            Col::Date => {
                let v = NaiveDate::parse_from_str(t, "%Y-%m-%d").map_err(|e| text_err(c, t, e))?;
                sink.val(Val::Date(date_days(v)))
            }
            Col::Time => {
                let v = NaiveTime::parse_from_str(t, "%H:%M:%S%.f").map_err(|e| text_err(c, t, e))?;
                sink.val(Val::Time(time_micros(v)))
            }
            Col::Bytea => {
                let hex = t.strip_prefix("\\x").ok_or_else(|| text_err(c, t, "not in bytea hex format"))?.as_bytes();
                let mut b = Vec::with_capacity(hex.len() / 2);
                for pair in hex.chunks(2) {
                    match (hex_nibble(pair[0]), pair.get(1).and_then(|&x| hex_nibble(x))) {
                        (Some(hi), Some(lo)) => b.push(hi << 4 | lo),
                        _ => return Err(text_err(c, t, "bad hex")),
                    }
                }
                sink.val(Val::Bytes(&b))
            }
        }
    }
    sink.end_row(cols.len());
    Ok(())
}

/// A simple query's answer: its rows decoded from text (when the statement reads rows), or
/// the rows its commands changed. Returns that count.
pub fn simple_rows(msgs: &[SimpleQueryMessage], reads: bool, cols: &[Col], sink: &mut Sink) -> Res<i64> {
    let mut count = 0i64;
    for m in msgs {
        match m {
            SimpleQueryMessage::Row(r) if reads => {
                decode_text_row(r, cols, sink)?;
                count += 1;
            }
            SimpleQueryMessage::CommandComplete(n) if !reads => count += *n as i64,
            _ => {}
        }
    }
    Ok(count)
}


/// The answer of the untimed query at open: the backend's pid, the server version and the
/// DateStyle (text timestamps are parsed in the ISO form).
pub const OPEN_INFO_SQL: &str =
    "SELECT pg_backend_pid(), current_setting('server_version'), current_setting('DateStyle')";

pub fn open_info(msgs: &[tokio_postgres::SimpleQueryMessage]) -> (Option<i64>, Option<String>, bool) {
    for m in msgs {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            let pid = r.get(0).and_then(|p| p.parse().ok());
            let version = r.get(1).map(str::to_string);
            let iso = r.get(2).is_some_and(|d| d.starts_with("ISO"));
            return (pid, version, iso);
        }
    }
    (None, None, true)
}

/// The answer of the open query: the backend's pid, the version, and where the server's
/// default DateStyle is not ISO, `SET DateStyle = ISO` (once; `iso` records it for every
/// later connection of the session, which sets it as it connects).
pub async fn describe<K: Calls>(c: &mut K, iso: &mut bool) -> Res<crate::host::Described> {
    let msgs = c.simple_query(OPEN_INFO_SQL).await.map_err(fail)?;
    let (pid, version, server_iso) = open_info(&msgs);
    if !server_iso && *iso {
        c.batch_execute("SET DateStyle = ISO").await.map_err(fail)?;
        *iso = false;
    }
    Ok(crate::host::Described { server_pid: pid, server_version: version })
}

// ---- the operations both drivers share ------------------------------------------------------

/// A load's statements (`assoc`): `query(&str, params)` as the extended mode runs a statement
/// (a named statement prepared, executed and closed), rows decoded as an exec step's.
struct PgFetch<'a, K>(&'a mut K);

impl<K: Calls> Fetch for PgFetch<'_, K> {
    async fn fetch(&mut self, sql: &str, params: &[Gv], _types: &[crate::protocol::Ty], rows: &mut Sink) -> Res<()> {
        let p: Vec<Param> = params.iter().map(|v| v.with_time(naive_date, naive_ts)).collect();
        let refs: Vec<P<'_>> = p.iter().map(|x| x as P).collect();
        let got = self.0.query(sql, &refs).await.map_err(fail)?;
        decode_rows(&got, rows)?;
        Ok(())
    }
}

pub type P<'a> = &'a (dyn ToSql + Sync);

/// The calls an operation makes on a connection: tokio-postgres's, awaited, or the postgres
/// crate's blocking ones (each blocks on the connection's own runtime).
#[allow(async_fn_in_trait)]
pub trait Calls {
    async fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, tokio_postgres::Error>;
    async fn query<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<Vec<Row>, tokio_postgres::Error>;
    async fn execute<T: ?Sized + ToStatement + Sync>(&mut self, q: &T, p: &[P<'_>]) -> Result<u64, tokio_postgres::Error>;
    async fn prepare(&mut self, sql: &str) -> Result<Statement, tokio_postgres::Error>;
    async fn batch_execute(&mut self, sql: &str) -> Result<(), tokio_postgres::Error>;
    async fn check_connection(&mut self) -> Result<(), tokio_postgres::Error>;
}

/// What a step needs, made before the clock: the statement with `$n` markers, the
/// parameters as the server will infer them, and a literal statement's column decoders.
pub struct Plan {
    pub sql: String,
    pub params: Vec<Param>,
    pub cols: Vec<Col>,
    /// a load step's statements (`assoc`)
    pub load: Option<LoadPlan>,
}

/// Column decoders of a literal statement: the simple protocol returns text with no type
/// information in tokio-postgres's API, so the types are learnt before the clock by
/// preparing the first statement text once (Parse + Describe, then Close, waited for).
pub async fn plan<K: Calls>(c: &mut K, st: &Step) -> Res<Plan> {
    let mut cols = Vec::new();
    if st.mode == Mode::Literal && st.reads() && st.n > 0 {
        let stmt = c.prepare(&st.texts[0]).await.map_err(fail)?;
        cols = stmt.columns().iter().map(|col| col_of(col.type_())).collect();
        drop(stmt); // sends Close + Sync
        c.check_connection().await.map_err(fail)?; // and waits for it, before the clock
    }
    let params = st.values.iter().map(|v| v.with_time(naive_date, naive_ts)).collect();
    let load = if st.kind == crate::step::Kind::Load { Some(LoadPlan::new(st, Markers::Dollar)?) } else { None };
    Ok(Plan { sql: crate::protocol::dollar_markers(&st.sql, &st.marks), params, cols, load })
}

/// One client's operations of a scan or exec step, and the statement it prepared (the
/// prepared mode's, or a batch's).
pub struct Ops<'c> {
    pub st: &'c Step,
    pub load: Option<&'c LoadPlan>,
    pub sql: &'c str,
    pub refs: Vec<P<'c>>,
    pub cols: &'c [Col],
    pub stmt: Option<Statement>,
}

impl<'c> Ops<'c> {
    pub fn new(plan: &'c Plan, st: &'c Step) -> Ops<'c> {
        Ops { st, load: plan.load.as_ref(), sql: &plan.sql, refs: plan.params.iter().map(|p| p as P).collect(), cols: &plan.cols, stmt: None }
    }

    /// The parameters of row r.
    #[inline]
    pub fn row(&self, r: usize) -> &[P<'c>] {
        let np = self.st.nparams;
        &self.refs[r * np..(r + 1) * np]
    }

    /// A scan: `query(sql, &[])`, i.e. as extended; binary results, buffered.
    pub async fn scan<K: Calls>(&self, c: &mut K, sink: &mut Sink) -> Res<i64> {
        let rows = c.query(self.st.sql.as_str(), &[]).await.map_err(fail)?;
        decode_rows(&rows, sink)
    }

    /// Operation i of a load step (`assoc`): its statements as the extended mode runs them.
    pub async fn load<K: Calls>(&self, c: &mut K, i: usize, sink: &mut Sink) -> Res<i64> {
        let plan = self.load.ok_or_else(|| Fail::internal("a load step without its plan"))?;
        crate::assoc::load(&mut PgFetch(c), plan, self.st.row(i), sink).await
    }

    /// Operation i of an exec step in its mode.
    pub async fn exec<K: Calls>(&mut self, c: &mut K, i: usize, sink: &mut Sink) -> Res<i64> {
        let np = self.st.nparams;
        let p = &self.refs[i * np..(i + 1) * np];
        let reads = self.st.reads();
        Ok(match self.st.mode {
            // record-level access is MariaDB's HANDLER: main answers it unsupported first
            Mode::Record => return Err(crate::step::no_record()),
            Mode::Literal => {
                let msgs = c.simple_query(&self.st.texts[i]).await.map_err(fail)?;
                simple_rows(&msgs, reads, self.cols, sink)?
            }
            Mode::Extended => {
                if reads {
                    let rows = c.query(self.sql, p).await.map_err(fail)?;
                    decode_rows(&rows, sink)?
                } else {
                    c.execute(self.sql, p).await.map_err(fail)? as i64
                }
            }
            Mode::Prepared => {
                if self.stmt.is_none() {
                    // parsed once, inside the first operation's time
                    self.stmt = Some(c.prepare(self.sql).await.map_err(fail)?);
                }
                let s = self.stmt.as_ref().unwrap();
                if reads {
                    let rows = c.query(s, p).await.map_err(fail)?;
                    decode_rows(&rows, sink)?
                } else {
                    c.execute(s, p).await.map_err(fail)? as i64
                }
            }
        })
    }
}
